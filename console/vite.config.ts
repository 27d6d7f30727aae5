// Builds the developer web console into console/dist (not in git: `npm ci` builds it, `prepare` script; the image in a
// stage of its own). `npm run check` rebuilds it into a temporary folder and compares.
// Served by the gateway at /console/ (gateway/src/http/console-app.ts). No CDN: everything is bundled.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  logLevel: 'warn',
  build: {
    outDir: process.env.CONSOLE_OUT_DIR ?? 'dist',
    emptyOutDir: true,
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1000,
  },
  oxc: { jsx: { runtime: 'automatic' } },
});
