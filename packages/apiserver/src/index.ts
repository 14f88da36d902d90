/**
 * @podsim/apiserver: an in-memory kube-apiserver (v1.22.8 semantics) for podsim — MVCC storage,
 * generic registry with graceful deletion, watch cache, Table printers — and its actor shell.
 */
export * from './apiServer.js';
export * from './errors.js';
export * from './objects.js';
export * from './duration.js';
export * from './printers.js';
export * from './patch.js';
export * from './defaults.js';
export * from './validation.js';
export * from './selectors/fields.js';
export * from './storage/interfaces.js';
export * from './storage/memoryStorage.js';
export * from './registry/strategy.js';
export * from './registry/rest.js';
export * from './registry/store.js';
export * from './registry/podStrategy.js';
export * from './registry/podBinding.js';
export * from './registry/scale.js';
export * from './watch/cacher.js';
export { createActor } from './actor/apiserverActor.js';
