/**
 * @podsim/harness/internal: everything the harness modules export, for podsim's own tests and
 * tools. Not a stable surface: it changes with the code. Users import `@podsim/harness`.
 */
export * from './duration.js';
export * from './driver/steps.js';
export * from './driver/kubectl.js';
export * from './scenario/source.js';
export * from './scenario/schema.js';
export * from './scenario/load.js';
export * from './scenario/compile.js';
export * from './checkers/model.js';
export * from './checkers/invariants.js';
export * from './expect/evaluate.js';
export * from './report/tabwriter.js';
export * from './report/report.js';
export * from './engine.js';
export * from './run.js';
export * from './library.js';
export * from './scenario/userActors.js';
