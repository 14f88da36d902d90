/**
 * Entry point of a host worker thread: serves {@link HostShell} to the main thread over comlink
 * (the control plane). The data plane (batches, trace chunks) and the window signals use the
 * ports and the SharedArrayBuffer handed over in `init`.
 */
import { parentPort } from 'node:worker_threads';
import * as Comlink from 'comlink';
import { nodeEndpoint } from './comlinkNode.js';
import { HostShell } from './hostShell.js';

if (!parentPort) throw new Error('hostWorker.js must run in a worker thread');
Comlink.expose(new HostShell(), nodeEndpoint(parentPort));
