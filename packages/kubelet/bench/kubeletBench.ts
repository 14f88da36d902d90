/**
 * Kubelet benchmark: N pods on one node (capacity raised), all created at t=1 s and deleted at
 * once at t=`deleteAtS`, over the in-thread engine with the real apiserver and runtime. Prints
 * one JSON line: wall time, events processed, virtual time of the last DELETED, per-pod kubelet
 * API requests. Usage: node packages/kubelet/dist/bench/kubeletBench.js [pods] [qps]
 */
import { performance } from 'node:perf_hooks';
import { mkPod, runPair, S, type Step } from '../test/pairHarness.js';

const pods = Number(process.argv[2] ?? 1000);
const qps = Number(process.argv[3] ?? 5);
const deleteAtS = Number(process.argv[4] ?? 20 + pods / qps);
const steps: Step[] = [];
for (let i = 0; i < pods; i++) steps.push({ at: 1 * S, create: mkPod(`p${i}`, { annotations: { 'podsim.dev/on-sigterm': 'exit:0s:0' } }) });
for (let i = 0; i < pods; i++) steps.push({ at: deleteAtS * S, delete: `p${i}` });
const t0 = performance.now();
const run = runPair({
  steps,
  kubelet: { kubeAPIQPS: qps, kubeAPIBurst: 2 * qps, eventsEnabled: false, capacity: { cpu: '1000', memory: '4Ti', pods: String(pods + 10) } },
  untilS: deleteAtS + (pods * 5) / qps + 60,
});
const wallMs = performance.now() - t0;
const deleted = run.all('client.watch', (r) => r.data?.type === 'DELETED').map((r) => r.t / S - deleteAtS);
const kubeletRequests = run.all('api.request', (r) => r.data?.client === `kubelet/n1` && r.t >= deleteAtS * S).length;
console.log(
  JSON.stringify({
    name: 'kubelet.massDelete',
    seed: 1,
    config: { pods, kubeAPIQPS: qps, deleteAtS },
    wallMs: Math.round(wallMs),
    events: run.sim.core.processed,
    eventsPerSec: Math.round(run.sim.core.processed / (wallMs / 1000)),
    deleted: deleted.length,
    lastDeletedAfterS: deleted.length ? Math.max(...deleted) : null,
    kubeletRequestsPerPodAfterDelete: kubeletRequests / pods,
  }),
);
