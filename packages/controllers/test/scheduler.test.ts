/** kube-scheduler pieces as tables: filters and their reasons, FitError text, scoring, queue backoff. */
import test from 'ava';
import type { Node, Pod } from '@podsim/api';
import { filterNode, fitErrorMessage, leastAllocatedScore, numFeasibleNodesToFind, toleratesTaint } from '../src/scheduler/framework.js';
import { NodeInfo, podResources } from '../src/scheduler/nodeInfo.js';
import { updatePodScheduledCondition } from '../src/scheduler/scheduler.js';
import { isPodUpdated, SchedulingQueue } from '../src/scheduler/schedulingQueue.js';

const S = 1_000_000;

function mkPod(name: string, o: { cpu?: string; mem?: string; tolerations?: Pod['spec']['tolerations']; nodeSelector?: Record<string, string>; priority?: number } = {}): Pod {
  const requests: Record<string, string> = {};
  if (o.cpu) requests.cpu = o.cpu;
  if (o.mem) requests.memory = o.mem;
  return {
    metadata: { name, namespace: 'ns', uid: name },
    spec: { containers: [{ name: 'c', resources: { requests } }], tolerations: o.tolerations, nodeSelector: o.nodeSelector, priority: o.priority },
  };
}

function mkInfo(node: Node, pods = 0): NodeInfo {
  const i = new NodeInfo(node.metadata.name!);
  i.setNode(node, 110);
  for (let k = 0; k < pods; k++) i.addPod(`p${k}`, podResources(mkPod(`p${k}`)));
  return i;
}

function node(name: string, o: { pods?: string; cpu?: string; ready?: 'True' | 'False' | 'Unknown'; taints?: NonNullable<Node['spec']>['taints']; unschedulable?: boolean; labels?: Record<string, string> } = {}): Node {
  return {
    metadata: { name, labels: o.labels },
    spec: { taints: o.taints, unschedulable: o.unschedulable },
    status: { allocatable: { ...(o.pods ? { pods: o.pods } : {}), ...(o.cpu ? { cpu: o.cpu } : {}) }, conditions: [{ type: 'Ready', status: o.ready ?? 'True' }] },
  };
}

const cases: [string, Node, number, Pod, string[]][] = [
  ['fits', node('n', { pods: '3' }), 2, mkPod('x'), []],
  ['pods full', node('n', { pods: '3' }), 3, mkPod('x'), ['Too many pods']],
  ['default max pods 110', node('n'), 110, mkPod('x'), ['Too many pods']],
  ['cpu', node('n', { cpu: '1' }), 0, mkPod('x', { cpu: '1500m' }), ['Insufficient cpu']],
  ['not ready → not-ready taint', node('n', { ready: 'False' }), 0, mkPod('x'), ["node(s) had taint {node.kubernetes.io/not-ready: }, that the pod didn't tolerate"]],
  ['unknown → unreachable taint', node('n', { ready: 'Unknown' }), 0, mkPod('x'), ["node(s) had taint {node.kubernetes.io/unreachable: }, that the pod didn't tolerate"]],
  ['tolerated not-ready', node('n', { ready: 'False' }), 0, mkPod('x', { tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }] }), []],
  ['cordoned', node('n', { unschedulable: true }), 0, mkPod('x'), ['node(s) were unschedulable']],
  ['taint before resources', node('n', { pods: '1', taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] }), 1, mkPod('x'), ["node(s) had taint {k: v}, that the pod didn't tolerate"]],
  ['PreferNoSchedule ignored', node('n', { taints: [{ key: 'k', effect: 'PreferNoSchedule' }] }), 0, mkPod('x'), []],
  ['nodeSelector', node('n', { labels: { zone: 'a' } }), 0, mkPod('x', { nodeSelector: { zone: 'b' } }), ["node(s) didn't match Pod's node affinity/selector"]],
];

for (const [name, n, existing, pod, reasons] of cases) {
  test(`filter: ${name}`, (t) => {
    t.deepEqual(filterNode(pod, podResources(pod), mkInfo(n, existing)), reasons);
  });
}

test('toleratesTaint: empty operator is Equal; empty key with Exists tolerates everything', (t) => {
  t.true(toleratesTaint({ key: 'k', value: 'v' }, { key: 'k', value: 'v', effect: 'NoSchedule' }));
  t.false(toleratesTaint({ key: 'k', value: 'w' }, { key: 'k', value: 'v', effect: 'NoSchedule' }));
  t.true(toleratesTaint({ operator: 'Exists' }, { key: 'any', effect: 'NoExecute' }));
  t.false(toleratesTaint({ key: 'k', operator: 'Exists', effect: 'NoExecute' }, { key: 'k', effect: 'NoSchedule' }));
});

test('FitError message: reasons counted and sorted', (t) => {
  const m = new Map([
    ['a', ['Too many pods']],
    ['b', ['Insufficient cpu', 'Too many pods']],
    ['c', ['node(s) were unschedulable']],
  ]);
  t.is(fitErrorMessage(3, m), '0/3 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable, 2 Too many pods.');
});

test('numFeasibleNodesToFind: all below 100 nodes, then 50% − n/125 (≥ 5%), at least 100', (t) => {
  t.is(numFeasibleNodesToFind(50, 0), 50);
  t.is(numFeasibleNodesToFind(150, 0), 100);
  t.is(numFeasibleNodesToFind(300, 0), 144);
  t.is(numFeasibleNodesToFind(5000, 0), 500);
  t.is(numFeasibleNodesToFind(10000, 0), 500);
  t.is(numFeasibleNodesToFind(300, 100), 300);
});

test('LeastAllocated: more free cpu and memory scores higher; pod count when neither is reported', (t) => {
  const pod = mkPod('x', { cpu: '500m' });
  const r = podResources(pod);
  const big = mkInfo({ metadata: { name: 'big' }, status: { allocatable: { cpu: '4', memory: '8Gi' } } });
  const small = mkInfo({ metadata: { name: 'small' }, status: { allocatable: { cpu: '1', memory: '8Gi' } } });
  t.true(leastAllocatedScore(r, big) > leastAllocatedScore(r, small));
  t.is(leastAllocatedScore(r, mkInfo(node('a', { pods: '10' }), 4)), 50);
  t.is(leastAllocatedScore(r, mkInfo(node('b', { pods: '10' }), 0)), 90);
});

test('queue: priority first, then FIFO; backoff 1 s doubling to 10 s; unschedulable pods wait for a move', (t) => {
  const q = new SchedulingQueue();
  q.add(mkPod('low'), 0);
  q.add(mkPod('high', { priority: 10 }), 1);
  q.add(mkPod('low2'), 2);
  t.deepEqual([q.pop()!.uid, q.pop()!.uid, q.pop()!.uid], ['high', 'low', 'low2']);
  const info = { pod: mkPod('p'), uid: 'p', timestamp: 0, attempts: 0, initialAttemptTimestamp: 0 };
  const ds: number[] = [];
  for (let i = 1; i <= 6; i++) {
    info.attempts = i;
    ds.push(q.backoffDuration(info) / S);
  }
  t.deepEqual(ds, [1, 2, 4, 8, 10, 10]);
  // A failed pod parks in unschedulableQ until a cluster event moves it (to backoff while backing off).
  const q2 = new SchedulingQueue();
  q2.add(mkPod('u'), 0);
  const u = q2.pop()!;
  q2.addUnschedulableIfNotPresent(u, q2.schedulingCycle, 5 * S);
  t.is(q2.unschedulable.size, 1);
  q2.moveAllToActiveOrBackoffQueue(5.5 * S);
  t.is(q2.backoffLength, 1, 'still within its 1 s backoff');
  t.is(q2.flushBackoffQCompleted(5.9 * S), 0);
  t.is(q2.flushBackoffQCompleted(6 * S), 1);
  t.is(q2.pop()!.attempts, 2);
  // A move request during the pod's cycle sends it to backoff instead of unschedulable.
  const q3 = new SchedulingQueue();
  q3.add(mkPod('v'), 0);
  const v = q3.pop()!;
  const cycle = q3.schedulingCycle;
  q3.moveAllToActiveOrBackoffQueue(0);
  q3.addUnschedulableIfNotPresent(v, cycle, 0);
  t.is(q3.unschedulable.size, 0);
  t.is(q3.backoffLength, 1);
});

test('a status-only update does not move an unschedulable pod; a spec change does', (t) => {
  const p = mkPod('p');
  const withStatus = { ...p, status: { conditions: [{ type: 'PodScheduled', status: 'False' as const }] }, metadata: { ...p.metadata, resourceVersion: '9' } };
  t.false(isPodUpdated(p, withStatus));
  t.true(isPodUpdated(p, { ...p, metadata: { ...p.metadata, labels: { a: 'b' } } }));
});

test('PodScheduled=False is patched only when it changes; lastTransitionTime kept while the status stays', (t) => {
  const cond = { type: 'PodScheduled', status: 'False' as const, reason: 'Unschedulable', message: 'm1', lastProbeTime: null };
  const first = updatePodScheduledCondition(mkPod('p'), cond, 't1')!;
  t.deepEqual(first, [{ ...cond, lastTransitionTime: 't1' }]);
  const p2 = { ...mkPod('p'), status: { conditions: first } };
  t.is(updatePodScheduledCondition(p2, cond, 't2'), undefined);
  t.deepEqual(updatePodScheduledCondition(p2, { ...cond, message: 'm2' }, 't2'), [{ ...cond, message: 'm2', lastTransitionTime: 't1' }]);
});
