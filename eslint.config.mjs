// Lint: typescript-eslint's recommended rules everywhere, plus the determinism rules of
// DESIGN.md §3 on actor logic. Actor logic gets time, randomness, ids and timers only from
// the engine's ActorContext; only packages/sim, the codec in packages/api and the thin
// `src/actor/` shells may touch threads, comlink, msgpackr or piscina.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const actorLogic = [
  'packages/api/src/**/*.ts',
  'packages/apiserver/src/**/*.ts',
  'packages/runtime/src/**/*.ts',
  'packages/kubelet/src/**/*.ts',
  'packages/controllers/src/**/*.ts',
  'packages/proxy/src/**/*.ts',
  'packages/harness/src/driver/**/*.ts',
];

const clockAndRandom = {
  'no-restricted-globals': [
    'error',
    { name: 'Date', message: 'Actor logic reads virtual time from ctx.now (api/time.ts formats it).' },
    { name: 'performance', message: 'Actor logic reads virtual time from ctx.now.' },
    { name: 'setTimeout', message: 'Use ctx.setTimer (virtual time).' },
    { name: 'setInterval', message: 'Use ctx.setTimer (virtual time).' },
    { name: 'setImmediate', message: 'Use ctx.setTimer (virtual time).' },
    { name: 'queueMicrotask', message: 'Actor logic is synchronous; use ctx.setTimer.' },
    { name: 'crypto', message: 'Use ctx.random / ctx.newId (seeded).' },
  ],
  'no-restricted-properties': [
    'error',
    { object: 'Math', property: 'random', message: 'Use ctx.random() (seeded).' },
    { object: 'Date', property: 'now', message: 'Use ctx.now (virtual µs).' },
    { object: 'performance', property: 'now', message: 'Use ctx.now (virtual µs).' },
  ],
};

const transportImports = {
  'no-restricted-imports': [
    'error',
    {
      paths: [
        { name: 'node:worker_threads', message: 'Only packages/sim hosts threads.' },
        { name: 'worker_threads', message: 'Only packages/sim hosts threads.' },
        { name: 'comlink', message: 'Only packages/sim uses comlink.' },
        { name: 'msgpackr', message: 'Only packages/api/src/codec.ts encodes.' },
        { name: 'piscina', message: 'Only the harness sweep runner uses piscina.' },
        { name: 'nanoid', message: 'Use ctx.newId (seeded nanoid in packages/api/src/ids.ts).' },
        { name: 'node:crypto', message: 'Use ctx.random / ctx.newId (seeded).' },
        { name: 'crypto', message: 'Use ctx.random / ctx.newId (seeded).' },
        { name: 'node:timers', message: 'Use ctx.setTimer (virtual time).' },
      ],
    },
  ],
};

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '*.config.js', '*.config.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: actorLogic,
    rules: clockAndRandom,
  },
  {
    files: actorLogic,
    ignores: ['packages/*/src/actor/**', 'packages/api/src/codec.ts', 'packages/api/src/ids.ts'],
    rules: transportImports,
  },
);
