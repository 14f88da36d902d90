// Compiled mode: `tsc -b` runs first (see the root `test` script); ava then runs the emitted
// JavaScript under packages/*/dist/test.
// Workspace packages under examples/ (a user's project as it would depend on podsim).
const examples = ['operator-finalizer', 'library-usage'];
const pkgs = ['api', 'sim', 'apiserver', 'runtime', 'kubelet', 'controllers', 'proxy', 'report', 'harness'];
export default {
  files: ['packages/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
  typescript: {
    rewritePaths: {
      ...Object.fromEntries(pkgs.map((p) => [`packages/${p}/test/`, `packages/${p}/dist/test/`])),
      ...Object.fromEntries(examples.map((e) => [`examples/${e}/test/`, `examples/${e}/dist/test/`])),
    },
    compile: false,
  },
  workerThreads: false,
  timeout: '120s',
};
