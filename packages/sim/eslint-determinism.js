// The determinism rules of DESIGN.md §3 as an ESLint flat-config block, for podsim's own actor
// logic (eslint.config.js) and for actors of your own (README "Your own actor in the cluster"):
//
//   // eslint.config.js of your project
//   import { podsimDeterminism } from '@podsim/sim/eslint';
//   export default [...podsimDeterminism(['src/**/*.ts'])];
//
// An actor gets time, randomness, ids and timers only from the engine (ctx.now, ctx.random,
// ctx.newId, ctx.setTimer, or the ControllerEnv of @podsim/controllers): reading the wall clock
// or Math.random would make the trace depend on more than the seed, and a replay would diverge.

/** Globals and properties an actor must not read. */
export const clockAndRandomRules = {
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

/** Modules an actor must not import (threads, transport, unseeded randomness, real timers). */
export const transportImportRules = {
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

/**
 * Flat-config blocks applying both rule sets to `files` (globs), except `ignores`.
 * @param {string[]} files
 * @param {string[]} [ignores]
 */
export function podsimDeterminism(files, ignores = []) {
  return [{ files, ignores, rules: { ...clockAndRandomRules, ...transportImportRules } }];
}
