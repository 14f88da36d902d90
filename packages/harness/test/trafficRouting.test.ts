/**
 * The per-request routing decision of node-port and ClientIP-affinity traffic (issue #18; spec
 * endpoints-traffic §7.5, §11.2), on hand-written traces: kube-proxy views (`proxy.sync`), pod
 * networks and processes. ETP Local sends a node's node-port traffic only to its Ready local
 * endpoints and drops it when it has none; ETP Cluster uses every Ready endpoint; ClientIP
 * affinity sticks per node while the endpoint stays in the rules and within the timeout.
 */
import test from 'ava';
import type { TraceRecord } from '@podsim/api';
import { TraceModel } from '../src/checkers/model.js';
import { affinityHolds, evaluateTraffic, type TrafficSourceResult } from '../src/traffic/evaluate.js';
import { proxyViews } from '../src/traffic/proxyViews.js';
import type { TrafficSourceSpec } from '../src/scenario/schema.js';

const S = 1_000_000;
const PODS = [
  { name: 'web-a', uid: 'ua', ip: '10.244.0.2', node: 'node-a' },
  { name: 'web-b', uid: 'ub', ip: '10.244.1.2', node: 'node-b' },
  { name: 'web-c', uid: 'uc', ip: '10.244.1.3', node: 'node-b' },
] as const;

let seq = 0;
const rec = (t: number, actor: string, kind: string, data: Record<string, unknown>): TraceRecord => ({ t, actor, seq: seq++, kind, msg: kind, data });

/** Every pod running and listening from t=0 on its node; `views` are the proxy.sync records. */
function trace(views: TraceRecord[]): TraceRecord[] {
  const out: TraceRecord[] = [];
  for (const p of PODS) {
    out.push(rec(0, `runtime/${p.node}`, 'cri.start', { containerId: `c-${p.uid}`, podUid: p.uid, pod: p.name, container: 'app' }));
    out.push(rec(0, `runtime/${p.node}`, 'cri.network', { podUid: p.uid, pod: p.name, ip: p.ip, up: true }));
  }
  return [...out, ...views];
}

const target = (p: (typeof PODS)[number]): [string, string] => [p.ip, p.uid];

/** A proxy.sync of `node` at t giving default/web this full view. */
function sync(t: number, node: string, view: Record<string, unknown>): TraceRecord {
  return rec(t, `kube-proxy/${node}`, 'proxy.sync', { node, startUs: t, services: { 'default/web': { clusterIP: '10.96.0.10', reject: false, ...view } } });
}

function run(records: TraceRecord[], sources: TrafficSourceSpec[], endUs = 20 * S): readonly TrafficSourceResult[] {
  return evaluateTraffic(records, new TraceModel(records), sources, { seed: 7, namespace: 'default', nodes: ['node-a', 'node-b'], stepStartUs: {}, endUs }).sources;
}

const src = (s: Partial<TrafficSourceSpec>): TrafficSourceSpec => ({ service: 'web', rate: 50, ...s }) as TrafficSourceSpec;

test('ETP Local: node-a\'s node port reaches only node-a\'s Ready pod; once it leaves node-a\'s rules, node-port requests there are dropped (timeouts), cluster traffic still served', (t) => {
  const all = PODS.map(target);
  const records = trace([
    sync(1 * S, 'node-a', { targets: all, nodePorts: [30080], local: [PODS[0].ip] }),
    sync(1 * S, 'node-b', { targets: all, nodePorts: [30080], local: [PODS[1].ip, PODS[2].ip] }),
    // web-a goes not-ready: node-a's XLB chain is empty, its cluster chain keeps web-b and web-c.
    sync(10 * S, 'node-a', { add: [], remove: [target(PODS[0])], count: 2, nodePorts: [30080], local: [] }),
  ]);
  const [viaA, viaB, inCluster] = run(records, [
    src({ id: 'via-a', nodePort: true, toNodes: ['node-a'], clients: 3, start: 2 * S }),
    src({ id: 'via-b', nodePort: true, toNodes: ['node-b'], clients: 3, start: 2 * S }),
    src({ id: 'cluster', fromNodes: ['node-a'], start: 2 * S }),
  ]);
  const podsOf = (r: TrafficSourceResult) => [...new Set(Object.values(r.servedByClient ?? {}).flatMap((m) => Object.keys(m)))].sort();
  t.deepEqual(podsOf(viaA), ['web-a']);
  t.deepEqual(podsOf(viaB), ['web-b', 'web-c']);
  // From 10 s on (8 of the 18 s) every request through node-a's node port is dropped.
  t.deepEqual(Object.keys(viaA.byCause), ['DROP_NO_LOCAL']);
  t.true(viaA.byOutcome.timedOut > 0.3 * viaA.requests && viaA.byOutcome.timedOut < 0.6 * viaA.requests, JSON.stringify(viaA.byOutcome));
  t.true(Object.keys(viaA.bySecond).every((s) => Number(s) >= 10), JSON.stringify(viaA.bySecond));
  t.deepEqual(viaA.byNode, { 'node-a': viaA.failed });
  t.is(viaB.failed, 0);
  t.is(inCluster.failed, 0, JSON.stringify(inCluster.byCause));
});

test('IPVS mode: the same ETP Local node port with no local real server is refused (ICMP port unreachable), not dropped', (t) => {
  const ipvs = (r: TraceRecord): TraceRecord => ({ ...r, data: { ...(r.data as object), mode: 'ipvs' } });
  const records = trace([ipvs(sync(1 * S, 'node-a', { targets: PODS.map(target), nodePorts: [30080], local: [] }))]);
  const [viaA] = run(records, [src({ nodePort: true, toNodes: ['node-a'], start: 2 * S })]);
  t.deepEqual(Object.keys(viaA.byCause), ['REJECT_NO_ENDPOINTS']);
  t.is(viaA.byOutcome.refused, viaA.requests);
});

test('ETP Cluster: a node port spreads over every Ready endpoint; no Ready endpoint at all is REJECT (refused), not a drop', (t) => {
  const records = trace([
    sync(1 * S, 'node-a', { targets: PODS.map(target), nodePorts: [30080] }),
    sync(10 * S, 'node-a', { add: [], remove: PODS.map(target), count: 0, reject: true, nodePorts: [30080] }),
  ]);
  const [viaA] = run(records, [src({ nodePort: true, toNodes: ['node-a'], start: 2 * S })]);
  t.deepEqual(Object.keys(viaA.byPod), ['']);
  t.deepEqual(Object.keys(viaA.byCause), ['REJECT_NO_ENDPOINTS']);
  const served = run(records, [src({ nodePort: true, toNodes: ['node-a'], clients: 1, start: 2 * S, stop: 9 * S })])[0];
  t.deepEqual(Object.keys(served.servedByClient!['client-0']).sort(), ['web-a', 'web-b', 'web-c']);
});

test('node-port traffic to a node whose rules have no node port (a ClusterIP view) finds no rule: timed out', (t) => {
  const records = trace([sync(1 * S, 'node-a', { targets: PODS.map(target) })]);
  const [viaA] = run(records, [src({ nodePort: true, toNodes: ['node-a'], start: 2 * S })]);
  t.deepEqual(Object.keys(viaA.byCause), ['NO_RULES']);
  t.is(viaA.served, 0);
});

test('ClientIP affinity: each client sticks to one pod; the clients of a pod that leaves the rules move once and stick again', (t) => {
  const all = PODS.map(target);
  const records = trace([
    sync(1 * S, 'node-a', { targets: all, affinitySeconds: 10800 }),
    sync(10 * S, 'node-a', { add: [], remove: [target(PODS[1])], count: 2, affinitySeconds: 10800 }),
  ]);
  const [r] = run(records, [src({ fromNodes: ['node-a'], clients: 12, start: 2 * S })]);
  t.is(r.failed, 0);
  const per = Object.entries(r.servedByClient!);
  t.is(per.length, 12);
  const moved = per.filter(([, m]) => Object.keys(m).length > 1);
  const stayed = per.filter(([, m]) => Object.keys(m).length === 1);
  t.true(moved.length > 0 && stayed.length > 0, JSON.stringify(r.servedByClient));
  // Only web-b's clients moved, each to exactly one other pod.
  for (const [c, m] of moved) {
    t.true('web-b' in m && Object.keys(m).length === 2, `${c}: ${JSON.stringify(m)}`);
  }
  // Without affinity every client is spread over all pods.
  const plain = trace([sync(1 * S, 'node-a', { targets: all })]);
  const [p] = run(plain, [src({ fromNodes: ['node-a'], clients: 12, start: 2 * S })]);
  t.true(Object.values(p.servedByClient!).every((m) => Object.keys(m).length === 3), JSON.stringify(p.servedByClient));
});

test('ClientIP affinity: the stickiness lapses once a client was idle longer than timeoutSeconds', (t) => {
  const view = (secs: number) => trace([sync(1 * S, 'node-a', { targets: PODS.map(target), affinitySeconds: secs })]);
  // 20 clients at 4 req/s in all: each client sends every ~5 s on average.
  const spread = (secs: number) => {
    const [r] = run(view(secs), [src({ fromNodes: ['node-a'], clients: 20, rate: 4, start: 2 * S })], 200 * S);
    return Object.values(r.servedByClient!).filter((m) => Object.keys(m).length > 1).length;
  };
  t.is(spread(10800), 0);
  t.true(spread(1) >= 15, String(spread(1)));
});

test('affinityHolds: a table is gone once its endpoint left the chain, even if it came back; ETP Local node-port traffic checks the XLB chain', (t) => {
  const a = target(PODS[0]);
  const b = target(PODS[1]);
  const points = proxyViews([
    sync(1 * S, 'node-a', { targets: [a, b], affinitySeconds: 100, nodePorts: [30080], local: [a[0]] }),
    sync(5 * S, 'node-a', { add: [], remove: [a], count: 1, affinitySeconds: 100, nodePorts: [30080], local: [] }),
    sync(6 * S, 'node-a', { add: [a], remove: [], count: 2, affinitySeconds: 100, nodePorts: [30080], local: [a[0]] }),
  ])
    .get('node-a')!
    .get('default/web')!;
  t.true(affinityHolds(points, { target: a, at: 2 * S }, 4 * S, false));
  t.false(affinityHolds(points, { target: a, at: 2 * S }, 7 * S, false), 'web-a left at 5 s: its recent table went with its chain');
  t.true(affinityHolds(points, { target: a, at: 6.5 * S }, 7 * S, false));
  t.false(affinityHolds(points, { target: a, at: 6.5 * S }, 107 * S, false), 'older than timeoutSeconds');
  t.true(affinityHolds(points, { target: b, at: 2 * S }, 7 * S, false));
  t.false(affinityHolds(points, { target: b, at: 2 * S }, 7 * S, true), 'web-b is not in node-a\'s XLB chain');
});
