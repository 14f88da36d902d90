// Compiled mode: `tsc -b` runs first (see the root `test` script); ava then runs the emitted
// JavaScript under packages/*/dist/test.
const pkgs = ['api', 'sim', 'apiserver', 'runtime', 'kubelet', 'controllers', 'proxy', 'harness'];
export default {
  files: ['packages/*/test/**/*.test.ts'],
  typescript: {
    rewritePaths: Object.fromEntries(pkgs.map((p) => [`packages/${p}/test/`, `packages/${p}/dist/test/`])),
    compile: false,
  },
  workerThreads: false,
  timeout: '120s',
};
