/**
 * Entry point of a host worker thread: serves the {@link HostControl} calls of the main thread
 * over comlink (the control plane). Each `init` builds a fresh {@link HostShell}, so a parked
 * thread can serve the next simulation (Simulation's `reuseThreads`). The data plane (batches,
 * trace chunks) and the window signals use the ports and the SharedArrayBuffer of `init`.
 */
import { parentPort } from 'node:worker_threads';
import * as Comlink from 'comlink';
import type { HostControl } from '@podsim/api/protocol/control';
import { nodeEndpoint } from './comlinkNode.js';
import { HostShell } from './hostShell.js';

if (!parentPort) throw new Error('hostWorker.js must run in a worker thread');

let shell: HostShell | undefined;
const current = (): HostShell => {
  if (!shell) throw new Error('host not initialised');
  return shell;
};

const control: HostControl = {
  async init(cfg) {
    const s = new HostShell();
    await s.init(cfg);
    shell = s;
  },
  segment: (targetUs) => current().segment(targetUs),
  deliver: (envs) => current().deliver(envs),
  addFault: (fault, nowUs) => current().addFault(fault, nowUs),
  digests: () => current().digests(),
  metrics: () => current().metrics(),
  heapStatistics: () => current().heapStatistics(),
  writeHeapSnapshot: (path) => current().writeHeapSnapshot(path),
  flushTraces: () => current().flushTraces(),
  stop: () => {
    current().stop();
    shell = undefined;
  },
};

Comlink.expose(control, nodeEndpoint(parentPort));
