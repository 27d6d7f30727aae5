// Builds the developer web console into console/dist (not in git: `npm ci` builds it, `prepare` script; the image in a
// stage of its own). `npm run check` rebuilds it into a temporary folder and compares.
// Served by the gateway at /console/ (gateway/src/http/console-app.ts). No CDN: everything is bundled.
// Every text file of the build is also written pre-compressed (name.gz, gzip -9, and name.br, Brotli at quality 11,
// both node:zlib, deterministic), which the gateway serves to a browser that accepts them: nothing is compressed
// per request.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

/** Files worth compressing: text, above 1 KiB (below that, the headers weigh more than the saving). */
const COMPRESSIBLE = /\.(js|css|html|svg|json|txt)$/;
const COMPRESS_MIN_BYTES = 1024;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

function precompress(): Plugin {
  return {
    name: 'console-precompress',
    apply: 'build',
    writeBundle(options) {
      const dir = options.dir;
      if (!dir) return;
      for (const file of filesUnder(dir)) {
        if (!COMPRESSIBLE.test(file)) continue;
        const content = readFileSync(file);
        if (content.length < COMPRESS_MIN_BYTES) continue;
        writeFileSync(`${file}.gz`, gzipSync(content, { level: 9 }));
        writeFileSync(
          `${file}.br`,
          brotliCompressSync(content, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
              [constants.BROTLI_PARAM_SIZE_HINT]: content.length,
            },
          }),
        );
      }
    },
  };
}

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
    // Brotli at quality 11 takes a few seconds at build time, on purpose: no timing warning about it.
    rolldownOptions: { checks: { pluginTimings: false } },
  },
  plugins: [precompress()],
  oxc: { jsx: { runtime: 'automatic' } },
});
