/**
 * Pure tests of the node lifecycle controller's bookkeeping (node-lifecycle spec §3.3–§3.8, the
 * §7 formulas) and of the taint manager's timers (§5): table-driven, a fake clock, no engine.
 */
import test from 'ava';
import type { Lease, Node, Pod, Toleration } from '@podsim/api';
import { Clock, DEFAULT_EPOCH_UNIX_SECONDS } from '@podsim/api';
import { ControllerEventRecorder } from '../src/events.js';
import { Informer } from '../src/informer.js';
import {
  computeZoneState,
  decideNodeHealth,
  DEFAULT_NODE_LIFECYCLE_CONFIG,
  getZoneKey,
  noScheduleTaintDiff,
  swapTaints,
  zoneEvictionQPS,
  type NodeHealthData,
} from '../src/nodelifecycle/nodeHealth.js';
import { NodeLifecycleController } from '../src/nodelifecycle/nodeLifecycleController.js';
import { RateLimitedTimedQueue } from '../src/nodelifecycle/rateLimitedQueue.js';
import { getMatchingTolerations, getMinTolerationTimeUs, NoExecuteTaintManager } from '../src/nodelifecycle/taintManager.js';
import { FakeApi, FakeEnv } from './helpers/fakeEnv.js';

const S = 1_000_000;
const clock = new Clock(DEFAULT_EPOCH_UNIX_SECONDS);
const fmt = (us: number) => clock.format(us);
const cfg = DEFAULT_NODE_LIFECYCLE_CONFIG;

function node(name: string, ready?: { status: 'True' | 'False' | 'Unknown'; hb: number; tr: number }, extra: Partial<Node> = {}): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, uid: `uid-${name}`, creationTimestamp: fmt(0), resourceVersion: '1', ...extra.metadata },
    spec: { ...extra.spec },
    status: ready
      ? {
          conditions: [
            { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: fmt(ready.hb), lastTransitionTime: fmt(0), reason: 'KubeletHasSufficientMemory' },
            { type: 'Ready', status: ready.status, lastHeartbeatTime: fmt(ready.hb), lastTransitionTime: fmt(ready.tr), reason: 'KubeletReady' },
            { type: 'NetworkUnavailable', status: 'False', lastHeartbeatTime: fmt(0), lastTransitionTime: fmt(0) },
          ],
        }
      : {},
  };
}

test('defaults are the kube-controller-manager v1.22 flags (spec §7 table)', (t) => {
  t.deepEqual(cfg, {
    nodeMonitorPeriodUs: 5 * S,
    nodeMonitorGracePeriodUs: 40 * S,
    nodeStartupGracePeriodUs: 60 * S,
    evictionLimiterQPS: 0.1,
    secondaryEvictionLimiterQPS: 0.01,
    largeClusterThreshold: 50,
    unhealthyZoneThreshold: 0.55,
  });
});

test('tryUpdateNodeHealth: a renewed lease moves the probe to the controller clock; Unknown only after probe + 40 s (§3.3, §7.2)', (t) => {
  const n = node('w1', { status: 'True', hb: 0, tr: 0 });
  // First sight: probe = now (a restarted controller gives every node a fresh 40 s).
  let d = decideNodeHealth(n, undefined, 3 * S, 5 * S, 0, cfg, fmt);
  t.is(d.health.probeTimestamp, 5 * S);
  t.is(d.update, undefined);
  let h: NodeHealthData = d.health;
  // The lease renewed at 13 s is seen at 15 s: probe = 15 s (our clock, not renewTime).
  d = decideNodeHealth(n, h, 13 * S, 15 * S, 0, cfg, fmt);
  t.is(d.health.probeTimestamp, 15 * S);
  h = d.health;
  // No renewal after that: at exactly probe + 40 s nothing happens (strictly after).
  d = decideNodeHealth(n, h, 13 * S, 55 * S, 0, cfg, fmt);
  t.is(d.update, undefined);
  t.is(d.current?.status, 'True');
  // First pass past the grace: Ready and MemoryPressure Unknown, NetworkUnavailable untouched.
  d = decideNodeHealth(n, h, 13 * S, 55 * S + 1, 0, cfg, fmt);
  t.truthy(d.update);
  t.is(d.observed.status, 'True');
  t.is(d.current?.status, 'Unknown');
  const conds = d.update!.status!.conditions!;
  const by = (type: string) => conds.find((c) => c.type === type)!;
  t.like(by('Ready'), { status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastHeartbeatTime: fmt(0), lastTransitionTime: fmt(55 * S + 1) });
  t.like(by('MemoryPressure'), { status: 'Unknown', reason: 'NodeStatusUnknown' });
  t.like(by('NetworkUnavailable'), { status: 'False' });
  // Missing DiskPressure / PIDPressure are added as never updated.
  t.like(by('DiskPressure'), { status: 'Unknown', reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.', lastHeartbeatTime: fmt(0) });
  t.like(by('PIDPressure'), { status: 'Unknown', reason: 'NodeStatusNeverUpdated' });
});

test('tryUpdateNodeHealth: a changed lastHeartbeatTime alone also counts as proof of life; the same one does not', (t) => {
  const h0 = decideNodeHealth(node('w1', { status: 'True', hb: 0, tr: 0 }), undefined, undefined, 0, 0, cfg, fmt).health;
  const same = decideNodeHealth(node('w1', { status: 'True', hb: 0, tr: 0 }), h0, undefined, 30 * S, 0, cfg, fmt);
  t.is(same.health.probeTimestamp, 0);
  const changed = decideNodeHealth(node('w1', { status: 'True', hb: 30 * S, tr: 0 }), h0, undefined, 31 * S, 0, cfg, fmt);
  t.is(changed.health.probeTimestamp, 31 * S);
  t.is(changed.health.readyTransitionTimestamp, 0, 'same transition time: readyTransition kept');
  t.is(decideNodeHealth(node('w1', { status: 'True', hb: 0, tr: 0 }), h0, undefined, 40 * S + 1, 0, cfg, fmt).current?.status, 'Unknown');
});

test('tryUpdateNodeHealth: a node that never posted status gets the 60 s startup grace from its creationTimestamp', (t) => {
  const n = node('new');
  const d1 = decideNodeHealth(n, undefined, undefined, 59 * S, 0, cfg, fmt);
  t.is(d1.gracePeriodUs, 60 * S);
  t.is(d1.update, undefined);
  t.is(d1.current, undefined);
  const d2 = decideNodeHealth(n, d1.health, undefined, 60 * S + 1, 0, cfg, fmt);
  t.like(d2.current, { status: 'Unknown', reason: 'NodeStatusNeverUpdated' });
});

test('tryUpdateNodeHealth: an already Unknown node is not PUT again', (t) => {
  const n = node('w1', { status: 'Unknown', hb: 0, tr: 50 * S });
  n.status!.conditions = n.status!.conditions!.map((c) => ({ ...c, status: c.type === 'NetworkUnavailable' ? 'False' : 'Unknown' }));
  n.status!.conditions!.push({ type: 'DiskPressure', status: 'Unknown' }, { type: 'PIDPressure', status: 'Unknown' });
  const h = decideNodeHealth(n, undefined, undefined, 0, 0, cfg, fmt).health;
  t.is(decideNodeHealth(n, h, undefined, 100 * S, 0, cfg, fmt).update, undefined);
});

test('ComputeZoneState and the per-state tainting rate (§3.7)', (t) => {
  const c = (s: string) => ({ type: 'Ready', status: s as 'True' });
  const rows: [string[], number, string][] = [
    [['True', 'True', 'True'], 0, 'Normal'],
    [['True', 'True', 'Unknown'], 1, 'Normal'],
    [['Unknown', 'Unknown'], 2, 'FullDisruption'],
    [['True', 'Unknown', 'Unknown', 'False'], 3, 'PartialDisruption'], // 3 > 2 and 0.75 ≥ 0.55
    [['True', 'True', 'Unknown', 'Unknown', 'False'], 3, 'PartialDisruption'], // 0.6
    [['True', 'True', 'True', 'Unknown', 'Unknown', 'False'], 3, 'Normal'], // 0.5 < 0.55
    [['True', 'Unknown', 'Unknown'], 2, 'Normal'], // notReady must be > 2
  ];
  for (const [conds, notReady, state] of rows) t.deepEqual(computeZoneState(conds.map(c), 0.55), [notReady, state], conds.join(','));
  t.deepEqual(computeZoneState([undefined, c('True')], 0.55), [1, 'Normal'], 'a missing condition counts as not ready');
  t.is(zoneEvictionQPS('Normal', 4, cfg), 0.1);
  t.is(zoneEvictionQPS('PartialDisruption', 4, cfg), 0, 'small zone: tainting stops');
  t.is(zoneEvictionQPS('PartialDisruption', 51, cfg), 0.01, 'large zone: secondary rate');
  t.is(zoneEvictionQPS('FullDisruption', 4, cfg), 0.1);
});

test('GetZoneKey: region and zone labels, the beta failure-domain label first (component-helpers topology.GetZoneKey), "" without', (t) => {
  t.is(getZoneKey(node('a')), '');
  t.is(getZoneKey(node('a', undefined, { metadata: { name: 'a', labels: { 'topology.kubernetes.io/region': 'r', 'topology.kubernetes.io/zone': 'z' } } })), 'r:\x00:z');
  t.is(getZoneKey(node('a', undefined, { metadata: { name: 'a', labels: { 'failure-domain.beta.kubernetes.io/zone': 'z' } } })), ':\x00:z');
  // Both labels with different values: upstream reads the beta one (podsim read the GA one before).
  t.is(getZoneKey(node('a', undefined, { metadata: { name: 'a', labels: { 'failure-domain.beta.kubernetes.io/zone': 'old', 'topology.kubernetes.io/zone': 'new' } } })), ':\x00:old');
});

test('RateLimitedTimedQueue: burst 1 at 0.1/s taints one node every 10 s; handled names stay in the set until Remove', (t) => {
  const q = new RateLimitedTimedQueue(0.1, 0);
  for (const n of ['a', 'b', 'c']) t.true(q.add(n, n, 0));
  t.false(q.add('a', 'a', 0), 'already queued');
  const done: [string, number][] = [];
  for (let now = 0; now <= 25 * S; now += 100_000) q.try(now, (v) => (done.push([v.value, now]), [true, 0]));
  t.deepEqual(done, [['a', 0], ['b', 10 * S], ['c', 20 * S]]);
  t.false(q.add('a', 'a', 30 * S), 'handled: Add refuses until Remove');
  t.true(q.remove('a'));
  t.true(q.add('a', 'a', 30 * S));
});

test('RateLimitedTimedQueue.SwapLimiter: 0 stops tainting; a swap from an empty bucket cannot hand out a free token', (t) => {
  const q = new RateLimitedTimedQueue(0.1, 0);
  q.add('a', 'a', 0);
  q.add('b', 'b', 0);
  const done: string[] = [];
  q.try(0, (v) => (done.push(v.value), [true, 0]));
  t.deepEqual(done, ['a']);
  q.swapLimiter(0, 1 * S);
  q.try(100 * S, (v) => (done.push(v.value), [true, 0]));
  t.deepEqual(done, ['a'], 'never limiter');
  // Back to 0.1 from the never limiter (which has no token): the new bucket is drained once.
  q.swapLimiter(0.1, 100 * S);
  q.try(100 * S, (v) => (done.push(v.value), [true, 0]));
  t.deepEqual(done, ['a']);
  q.try(110 * S, (v) => (done.push(v.value), [true, 0]));
  t.deepEqual(done, ['a', 'b']);
});

test('NoSchedule tainting pass: condition taints follow the status; other NoSchedule taints are left alone (§3.5)', (t) => {
  const n = node('w1', { status: 'Unknown', hb: 0, tr: 0 }, { spec: { taints: [{ key: 'node-role.kubernetes.io/master', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] } });
  const [add, remove] = noScheduleTaintDiff(n);
  t.deepEqual(add, [{ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }]);
  t.deepEqual(remove, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
  const ready = node('w1', { status: 'True', hb: 0, tr: 0 }, { spec: { unschedulable: true } });
  t.deepEqual(noScheduleTaintDiff(ready), [[{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }], []]);
  const next = swapTaints(n.spec!.taints, add, remove, fmt(7 * S))!;
  t.deepEqual(next, [
    { key: 'node-role.kubernetes.io/master', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule', timeAdded: fmt(7 * S) },
  ]);
  t.is(swapTaints(next, [{ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }], [], fmt(9 * S)), undefined, 'present already: no update');
});

const DEFAULT_TOLERATIONS: Toleration[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
];

test('getMatchingTolerations / getMinTolerationTime (§5.2)', (t) => {
  const unreachable = [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' as const }];
  t.deepEqual(getMatchingTolerations(unreachable, DEFAULT_TOLERATIONS), [true, [DEFAULT_TOLERATIONS[1]]]);
  t.deepEqual(getMatchingTolerations([{ key: 'maint', value: 'true', effect: 'NoExecute' }], DEFAULT_TOLERATIONS), [false, []]);
  t.deepEqual(getMatchingTolerations(unreachable, [{ operator: 'Exists' }]), [true, [{ operator: 'Exists' }]], 'a blanket Exists tolerates everything');
  t.is(getMinTolerationTimeUs([DEFAULT_TOLERATIONS[1]]), 300 * S);
  t.is(getMinTolerationTimeUs([{ operator: 'Exists' }]), -1, 'no seconds: forever');
  t.is(getMinTolerationTimeUs([{ operator: 'Exists', tolerationSeconds: 60 }, { operator: 'Exists', tolerationSeconds: 0 }]), 0);
  t.is(getMinTolerationTimeUs([{ operator: 'Exists', tolerationSeconds: 60 }, { operator: 'Exists', tolerationSeconds: 30 }]), 30 * S);
});

function pod(name: string, nodeName: string, tolerations: Toleration[]): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: `uid-${name}` }, spec: { nodeName, tolerations, containers: [{ name: 'c', image: 'i' }] } } as Pod;
}

function taintManagerFixture() {
  const env = new FakeEnv();
  const api = new FakeApi();
  api.auto = () => ({ type: 'ApiResult', code: 200, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 } as never });
  const nodes = new Informer<Node>('nodes');
  const pods = new Informer<Pod>('pods');
  const byNode = (n: string) => [...pods.values()].filter((p) => p.spec.nodeName === n);
  const put = <T extends Node | Pod>(inf: Informer<T>, obj: T) => inf.applyEvent({ type: inf.get(keyOf(obj)) ? 'MODIFIED' : 'ADDED', object: obj } as never);
  const sentAt = new Map<unknown, number>();
  const transport = api.transport;
  const client = new (api.client(env).constructor as never as typeof import('../src/client.js').ApiClient)(env, (req, cb) => {
    sentAt.set(req, env.now);
    transport(req, cb);
  }, { name: 'test', qps: 0, burst: 0, timeoutUs: 60 * S });
  const deletes = () => api.sent.filter((r) => r.type === 'ApiDelete').map((r) => [(r as { name: string }).name, sentAt.get(r)! / S, JSON.stringify((r as { options?: unknown }).options)]);
  const tm = new NoExecuteTaintManager(env, nodes, byNode, (k) => pods.get(k), client, new ControllerEventRecorder(env, client, 'taint-controller'));
  tm.register(pods);
  const events = () => api.sent.filter((r) => r.type === 'ApiCreate' && r.resource === 'events').map((r) => ((r as unknown as { object: { message: string } }).object.message));
  return { env, api, nodes, pods, tm, put, deletes, events };
}

function keyOf(o: Node | Pod): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata.name ?? '');
}

test('taint manager: unreachable:NoExecute deletes a default-toleration pod 300 s after it saw the taint, with empty DeleteOptions; a DaemonSet-style pod stays', (t) => {
  const f = taintManagerFixture();
  f.put(f.nodes, node('w2', { status: 'Unknown', hb: 0, tr: 0 }));
  f.put(f.pods, pod('web', 'w2', DEFAULT_TOLERATIONS));
  // AddOrUpdateDaemonPodTolerations: both keys, no seconds.
  f.put(f.pods, pod('agent', 'w2', [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  ]));
  f.env.advance(43 * S);
  f.put(f.nodes, node('w2', { status: 'Unknown', hb: 0, tr: 0 }, { spec: { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: fmt(43 * S) }] } }));
  f.env.advance(299 * S);
  t.deepEqual(f.deletes(), []);
  f.env.advance(1 * S);
  t.deepEqual(f.deletes(), [['web', 343, '{}']], 'no grace override (invariant §8.7)');
  t.deepEqual(f.events(), ['Marking for deletion Pod default/web']);
  // A later taint change does not delete it again (the fired key stays).
  f.put(f.nodes, node('w2', { status: 'False', hb: 0, tr: 0 }, { spec: { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }] } }));
  f.env.advance(400 * S);
  t.is(f.deletes().length, 1);
});

test('taint manager: the countdown is fixed by its first scheduling; untaint cancels it with an event', (t) => {
  const f = taintManagerFixture();
  f.put(f.pods, pod('web', 'w2', DEFAULT_TOLERATIONS));
  f.put(f.nodes, node('w2', undefined, { spec: { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] } }));
  f.env.advance(100 * S);
  // unreachable → not-ready swap at 100 s: still due at 300 s.
  f.put(f.nodes, node('w2', undefined, { spec: { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }] } }));
  f.env.advance(199 * S);
  t.deepEqual(f.deletes(), []);
  f.env.advance(1 * S);
  t.deepEqual(f.deletes(), [['web', 300, '{}']]);

  const g = taintManagerFixture();
  g.put(g.pods, pod('web', 'w2', DEFAULT_TOLERATIONS));
  g.put(g.nodes, node('w2', undefined, { spec: { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] } }));
  g.env.advance(100 * S);
  g.put(g.nodes, node('w2', undefined, { spec: { taints: [] } }));
  g.env.advance(500 * S);
  t.deepEqual(g.deletes(), []);
  t.deepEqual(g.events(), ['Cancelling deletion of Pod default/web']);
});

test('taint manager: a manual NoExecute taint deletes non-tolerating pods at once and honours tolerationSeconds (case N07)', (t) => {
  const f = taintManagerFixture();
  f.put(f.nodes, node('w1', { status: 'True', hb: 0, tr: 0 }));
  f.put(f.pods, pod('web-a', 'w1', DEFAULT_TOLERATIONS));
  f.put(f.pods, pod('tol60', 'w1', [...DEFAULT_TOLERATIONS, { key: 'maint', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }]));
  f.put(f.pods, pod('tolinf', 'w1', [...DEFAULT_TOLERATIONS, { key: 'maint', operator: 'Exists', effect: 'NoExecute' }]));
  f.put(f.pods, pod('proxy', 'w1', [{ operator: 'Exists' }]));
  f.env.advance(10 * S);
  f.put(f.nodes, node('w1', { status: 'True', hb: 0, tr: 0 }, { spec: { taints: [{ key: 'maint', value: 'true', effect: 'NoExecute' }] } }));
  f.env.flush();
  t.deepEqual(f.deletes(), [['web-a', 10, '{}']]);
  f.env.advance(60 * S);
  t.deepEqual(f.deletes(), [['web-a', 10, '{}'], ['tol60', 70, '{}']]);
  f.env.advance(1000 * S);
  t.is(f.deletes().length, 2, 'tolinf and proxy tolerate forever');
});

test('NodeLifecycleController: Ready True → Unknown at the first pass after probe + 40 s, NoSchedule at once, NoExecute one pass later (§1, §3.4)', (t) => {
  const env = new FakeEnv();
  const api = new FakeApi();
  const nodes = new Informer<Node>('nodes');
  const pods = new Informer<Pod>('pods');
  const leases = new Informer<Lease>('leases');
  const ok = (body: unknown) => ({ type: 'ApiResult' as const, code: 200, body: body as never });
  const writes: string[] = [];
  api.auto = (req) => {
    if (req.type === 'ApiGet' && req.resource === 'nodes') return ok(nodes.get(req.name));
    if (req.type === 'ApiUpdate' && req.resource === 'nodes') {
      writes.push(`${env.now / S} status ${JSON.stringify((req.object as Node).status!.conditions!.find((c) => c.type === 'Ready')!.status)}`);
      nodes.applyEvent({ type: 'MODIFIED', object: req.object } as never);
      return ok(req.object);
    }
    if (req.type === 'ApiPatch' && req.resource === 'nodes') {
      const n = nodes.get(req.name)!;
      const taints = (req.patch as { spec: { taints: Node['spec'] extends infer X ? X : never } }).spec.taints as unknown as NonNullable<Node['spec']>['taints'];
      writes.push(`${env.now / S} taints ${taints!.map((x) => `${x.key}:${x.effect}`).join(',')}`);
      nodes.applyEvent({ type: 'MODIFIED', object: { ...n, spec: { ...n.spec, taints } } } as never);
      return ok(nodes.get(req.name));
    }
    return ok({});
  };
  nodes.applyEvent({ type: 'ADDED', object: node('w1', { status: 'True', hb: 0, tr: 0 }) } as never);
  nodes.applyEvent({ type: 'ADDED', object: node('w2', { status: 'True', hb: 0, tr: 0 }) } as never);
  const lease = (name: string, renewUs: number): Lease => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: 'kube-node-lease' }, spec: { holderIdentity: name, renewTime: clock.formatMicro(renewUs) } });
  for (const n of ['w1', 'w2']) leases.applyEvent({ type: 'ADDED', object: lease(n, 0) } as never);
  const c = new NodeLifecycleController(env, nodes, pods, leases, api.client(env));
  c.start();
  // w1 renews every 10 s throughout (phase 2 s); w2 until 22 s, then silence.
  for (let r = 2; r < 100; r += 10) {
    env.advance(r * S - env.now);
    leases.applyEvent({ type: 'MODIFIED', object: lease('w1', r * S) } as never);
    if (r <= 22) leases.applyEvent({ type: 'MODIFIED', object: lease('w2', r * S) } as never);
  }
  env.advance(100 * S - env.now);
  // Passes at 0, 5, 10 …: the 22 s renewal is seen by the 25 s pass (probe 25), so Ready goes
  // Unknown at the first pass after 65 s (70 s), NoSchedule at once, NoExecute on the next pass
  // (75 s) plus the 100 ms tainting grid.
  t.deepEqual(writes, ['70 status "Unknown"', '70 taints node.kubernetes.io/unreachable:NoSchedule', '75.1 taints node.kubernetes.io/unreachable:NoSchedule,node.kubernetes.io/unreachable:NoExecute']);
  t.deepEqual(
    api.sent.filter((r) => r.type === 'ApiCreate' && r.resource === 'events').map((r) => (r as unknown as { object: { reason: string } }).object.reason),
    ['RegisteredNode', 'RegisteredNode', 'NodeNotReady'],
  );
  t.is(c.zoneStates.get(''), 'Normal');

  // w2's kubelet is back at 100 s: it posts Ready=True with a new heartbeat; the next pass removes
  // both taints (NoExecute on the pass, NoSchedule on the node update).
  writes.length = 0;
  const back = node('w2', { status: 'True', hb: 101 * S, tr: 101 * S }, { spec: nodes.get('w2')!.spec });
  nodes.applyEvent({ type: 'MODIFIED', object: back } as never);
  env.advance(10 * S);
  t.deepEqual(writes, ['100 taints node.kubernetes.io/unreachable:NoExecute', '105 taints ']);
  t.is(nodes.get('w2')!.spec!.taints!.length, 0);
});
