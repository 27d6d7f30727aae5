// Jest's one timeout (jest.config.js testTimeout, 20 s) is for tests; a test that starts servers, programs or a
// browser names its own. Set-up and tear-down hooks start and stop those for a whole file (PostgreSQL databases and
// migrations, whole systems, Chromium), which on a shared, loaded machine takes far longer than a test: a hook
// without a timeout of its own gets HOOK_TIMEOUT_MS instead of the tests' 20 s. Loaded by setupFilesAfterEnv.
export const HOOK_TIMEOUT_MS = 180_000;

type Hook = (fn: jest.ProvidesHookCallback, timeout?: number) => void;
const hooks = globalThis as unknown as Record<'beforeAll' | 'afterAll' | 'beforeEach' | 'afterEach', Hook>;
for (const name of ['beforeAll', 'afterAll', 'beforeEach', 'afterEach'] as const) {
  const hook = hooks[name];
  hooks[name] = (fn, timeout) => hook(fn, timeout ?? HOOK_TIMEOUT_MS);
}
