/**
 * comlink's Node adapter, typed for NodeNext ESM (STACK.md §2, pitfall P6: the UMD module's
 * default import is the function at runtime, but its d.ts types it as a namespace).
 */
import nodeAdapterCjs from 'comlink/dist/umd/node-adapter.js';

export const nodeEndpoint = nodeAdapterCjs as unknown as typeof nodeAdapterCjs.default;
