/**
 * kube-scheduler against the real apiserver (pair tests over the engine): capacity from node
 * allocatable `pods`, cpu requests, NotReady nodes, PodScheduled=False/Unschedulable, retries
 * when pods or nodes change; Terminating pods keep occupying their node until gone.
 */
import test from 'ava';
import type { Pod } from '@podsim/api';
import { create, createNode, delOldestPod, mkNode, mkReplicaSet, runCluster, S } from './helpers/cluster.js';

const scheduledCond = (p: Pod) => p.status?.conditions?.find((c) => c.type === 'PodScheduled');

test('the scheduler never exceeds node capacity and leaves the rest Pending with PodScheduled=False', (t) => {
  const run = runCluster({
    steps: [
      createNode(0, mkNode('n1', { pods: 3 })),
      createNode(0, mkNode('n2', { pods: 3 })),
      createNode(0, mkNode('n4', { pods: 3, ready: false })),
      create(1 * S, 'replicasets', mkReplicaSet('web', 8, { annotations: { 'test/stop-after-seconds': '5' } })),
      delOldestPod(20 * S, 'web-', {}, 'delete a bound pod'),
      createNode(40 * S, mkNode('n3', { pods: 3 })),
    ],
    kubelet: { nodes: ['n1', 'n2', 'n3'], startDelayUs: 1 * S },
    untilUs: 60 * S,
  });
  // At every observed point no node holds more than 3 pods, Terminating ones included.
  let maxPerNode = 0;
  let boundAt10 = 0;
  run.replay<Pod>('test-pods', (at, live) => {
    const per = new Map<string, number>();
    for (const p of live.values()) if (p.spec.nodeName) per.set(p.spec.nodeName, (per.get(p.spec.nodeName) ?? 0) + 1);
    maxPerNode = Math.max(maxPerNode, ...per.values());
    if (per.has('n4')) t.fail('a pod was bound to the NotReady node');
    if (at < 10 * S) boundAt10 = [...live.values()].filter((p) => p.spec.nodeName).length;
  });
  t.is(maxPerNode, 3);
  t.is(boundAt10, 6);

  // The two unschedulable pods: Pending, PodScheduled=False, reason Unschedulable.
  const pendingAt = (at: number) => {
    let out: Pod[] = [];
    run.replay<Pod>('test-pods', (tt, live) => {
      if (tt <= at) out = [...live.values()].filter((p) => !p.spec.nodeName);
    });
    return out;
  };
  const pending = pendingAt(10 * S);
  t.is(pending.length, 2);
  for (const p of pending) {
    t.is(p.status?.phase, 'Pending');
    t.like(scheduledCond(p), {
      status: 'False',
      reason: 'Unschedulable',
      message: "0/3 nodes are available: 1 node(s) had taint {node.kubernetes.io/not-ready: }, that the pod didn't tolerate, 2 Too many pods.",
    });
  }
  // A deleted pod's replacement cannot go to its node while the old pod is Terminating; once it
  // is gone (t≈25 s) a pending pod takes its place.
  const del = run.all('test.result', (r) => r.data!.label === 'delete a bound pod')[0].data!.body as Pod;
  const freedNode = del.spec.nodeName!;
  const goneAt = run.pods().find((e) => e.type === 'DELETED' && e.object.metadata.uid === del.metadata.uid)!.t;
  t.true(goneAt >= 25 * S && goneAt < 25.1 * S);
  const binds = run.all('scheduler.bind').filter((r) => r.t > 20 * S && r.t < 40 * S);
  t.is(binds.length, 1);
  t.is(binds[0].data!.node, freedNode);
  t.true(binds[0].t > goneAt && binds[0].t - goneAt < 5000, `bound ${(binds[0].t - goneAt) / 1000} ms after the old pod was gone`);
  t.is(pendingAt(39 * S).length, 2, 'still two pending: 8 replicas + 1 terminating replacement… until n3 arrives');
  // A new Ready node: the pending pods are retried and bound to it.
  const late = run.all('scheduler.bind').filter((r) => r.t >= 40 * S);
  t.deepEqual(late.map((r) => r.data!.node), ['n3', 'n3']);
  t.true(late.every((r) => r.t < 40.1 * S));
  t.is(pendingAt(60 * S).length, 0);
});

test('cpu requests are fitted against allocatable cpu, least-allocated first', (t) => {
  const rs = mkReplicaSet('cpu', 5, { cpu: '500m' });
  const run = runCluster({
    steps: [createNode(0, mkNode('big', { cpu: '2', memory: '8Gi' })), createNode(0, mkNode('small', { cpu: '1', memory: '8Gi' })), create(1 * S, 'replicasets', rs)],
    untilUs: 10 * S,
  });
  const binds = run.all('scheduler.bind').map((r) => r.data!.node);
  // LeastAllocated = mean of the cpu and memory scores (memory uses the 200 MiB non-zero default):
  // big 86 / small 73 → big; then big 72 / small 73 → small; big 60 / small 47 → big;
  // big 45 / small 47 → small; small is then full (1500m > 1000m) → big. (Bind replies may
  // arrive out of decision order: the bind latency has jitter.)
  t.is(binds.length, 5);
  t.deepEqual([binds.filter((n) => n === 'big').length, binds.filter((n) => n === 'small').length], [3, 2]);
  const pending = [...run.live<Pod>('test-pods').values()].filter((p) => !p.spec.nodeName);
  t.is(pending.length, 0);
});

test('insufficient cpu leaves the pod Pending with an Insufficient cpu message', (t) => {
  const run = runCluster({
    steps: [createNode(0, mkNode('n1', { cpu: '1' })), create(1 * S, 'replicasets', mkReplicaSet('hog', 3, { cpu: '600m' }))],
    untilUs: 10 * S,
  });
  const pending = [...run.live<Pod>('test-pods').values()].filter((p) => !p.spec.nodeName);
  t.is(pending.length, 2);
  t.is(scheduledCond(pending[0])?.message, '0/1 nodes are available: 1 Insufficient cpu.');
});
