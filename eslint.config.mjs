// Lint: typescript-eslint's recommended rules everywhere, plus the determinism rules of
// DESIGN.md §3 on actor logic. Actor logic gets time, randomness, ids and timers only from
// the engine's ActorContext; only packages/sim, the codec in packages/api and the thin
// `src/actor/` shells may touch threads, comlink, msgpackr or piscina.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { clockAndRandomRules, transportImportRules, podsimDeterminism } from './packages/sim/eslint-determinism.js';

const actorLogic = [
  'packages/api/src/**/*.ts',
  'packages/apiserver/src/**/*.ts',
  'packages/runtime/src/**/*.ts',
  'packages/kubelet/src/**/*.ts',
  'packages/controllers/src/**/*.ts',
  'packages/proxy/src/**/*.ts',
  'packages/harness/src/driver/**/*.ts',
];

// The rule sets live in packages/sim/eslint-determinism.js, which users apply to their own actors.
const clockAndRandom = clockAndRandomRules;
const transportImports = transportImportRules;

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
  // The example operator (examples/operator-finalizer): actor logic of a user's own, under the
  // rules the README tells users to enable.
  ...podsimDeterminism(['examples/*/src/**/*.ts']),
);
