/**
 * Controllers benchmark: one Deployment of N replicas over N/100 nodes with the real apiserver,
 * kube-controller-manager, kube-scheduler and the test rig's fake kubelet (pods Running after
 * 1 s, final delete 2 s after the deletionTimestamp). Phases: scale up from 0 to N, then scale to
 * 0. Prints one JSON line per configuration: wall ms, engine events, virtual seconds at which the
 * phase completed, and requests by client. Usage:
 *   node packages/controllers/dist/bench/controllersBench.js [N ...] [--unlimited]
 */
import { performance } from 'node:perf_hooks';
import type { TraceRecord } from '@podsim/api';
import { create, createNode, mkDeployment, mkNode, runCluster, S, scale } from '../test/helpers/cluster.js';

function once(n: number, unlimited: boolean): Record<string, unknown> {
  const nodes = Math.max(1, Math.ceil(n / 100));
  const steps = [];
  for (let i = 0; i < nodes; i++) steps.push(createNode(0, mkNode(`node-${i}`)));
  // With the default client QPS (20 per controller) creating N pods takes about N/20 s.
  const upS = unlimited ? 60 : Math.ceil(n / 20) + 60;
  const downS = unlimited ? 60 : Math.ceil(n / 20) + 60;
  steps.push(create(1 * S, 'deployments', mkDeployment('web', n, { tgps: 30 })));
  steps.push(scale((upS + 1) * S, 'web', 0));
  const qps = unlimited ? { kubeAPIQPS: 0 } : {};
  const t0 = performance.now();
  const run = runCluster({
    steps,
    kcm: { ...qps, podGC: {} },
    scheduler: unlimited ? { kubeAPIQPS: 0 } : {},
    kubelet: { nodes: Array.from({ length: nodes }, (_, i) => `node-${i}`), startDelayUs: 1 * S, stopDelayUs: 2 * S },
    untilUs: (upS + downS + 2) * S,
    traceFilter: ['controller.', 'scheduler.', 'test.', 'api.request'],
    watches: false,
  });
  const wallMs = performance.now() - t0;
  const pods = run.all('api.request', (r: TraceRecord) => r.data!.verb === 'create' && r.data!.resource === 'pods' && !r.data!.subresource);
  const binds = run.all('scheduler.bind');
  const deletes = run.all('controller.rs.delete');
  const clients = new Map<string, number>();
  for (const r of run.all('api.request')) clients.set(String(r.data!.client), (clients.get(String(r.data!.client)) ?? 0) + 1);
  return {
    name: 'controllers.deployment-up-down',
    seed: 1,
    pods: n,
    nodes,
    unlimitedQps: unlimited,
    wallMs: Math.round(wallMs),
    events: run.sim.core.processed,
    eventsPerSec: Math.round(run.sim.core.processed / (wallMs / 1000)),
    lastCreateS: pods.length ? (pods.at(-1)!.t / S).toFixed(1) : null,
    lastBindS: binds.length ? (binds.at(-1)!.t / S).toFixed(1) : null,
    lastRsDeleteS: deletes.length ? (deletes.at(-1)!.t / S).toFixed(1) : null,
    created: pods.length,
    bound: binds.length,
    deleted: deletes.length,
    finalDeletes: run.all('test.kubelet', (r: TraceRecord) => String(r.msg).startsWith('final delete')).length,
    requests: Object.fromEntries([...clients].sort()),
  };
}

const args = process.argv.slice(2);
const unlimited = args.includes('--unlimited');
const sizes = args.filter((a) => /^\d+$/.test(a)).map(Number);
for (const n of sizes.length ? sizes : [1000]) console.log(JSON.stringify(once(n, unlimited)));
