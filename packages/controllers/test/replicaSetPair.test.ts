/**
 * ReplicaSet controller against the real apiserver (pair tests over the engine): spec §12,
 * invariant 13, case C14.
 */
import test from 'ava';
import type { Pod, ReplicaSet } from '@podsim/api';
import { create, createNode, delOldestPod, mkDeployment, mkNode, runCluster, S } from './helpers/cluster.js';

const MS = 1000;

test('C14: a deleted Deployment pod is replaced at once; the replacement prints Pending 0s and runs beside the Terminating pod', (t) => {
  const run = runCluster({
    steps: [
      createNode(0, mkNode('n1')),
      createNode(0, mkNode('n2')),
      createNode(0, mkNode('n3')),
      create(1 * S, 'deployments', mkDeployment('web', 3, { tgps: 60, annotations: { 'test/stop-after-seconds': '45' } })),
      delOldestPod(10 * S, 'web-', {}, 'kubectl delete pod'),
    ],
    kubelet: { nodes: ['n1', 'n2', 'n3'], startDelayUs: 1 * S },
    untilUs: 70 * S,
  });
  const del = run.all('test.result', (r) => r.data?.label === 'kubectl delete pod')[0];
  t.is(del.data!.code, 200);
  const victim = del.data!.body as Pod;
  t.truthy(victim.metadata.deletionTimestamp, 'graceful delete: the pod is Terminating');
  const pods = run.pods();
  const terminatingAt = pods.find((e) => e.object.metadata.uid === victim.metadata.uid && e.object.metadata.deletionTimestamp)!.t;
  const goneAt = pods.find((e) => e.object.metadata.uid === victim.metadata.uid && e.type === 'DELETED')!.t;
  const replacement = pods.find((e) => e.type === 'ADDED' && e.t > terminatingAt);
  t.truthy(replacement, 'a replacement pod was created');
  // The replacement is created within milliseconds of the MODIFIED that set the deletionTimestamp…
  t.true(replacement!.t - terminatingAt < 10 * MS, `replacement after ${(replacement!.t - terminatingAt) / MS} ms`);
  // …long before the old pod is gone (the fake kubelet confirms after 45 s).
  t.true(goneAt >= 55 * S && goneAt < 56 * S, `old pod gone at ${goneAt / S}s`);
  t.true(replacement!.object.metadata.name!.startsWith('web-'));
  t.regex(replacement!.object.metadata.name!, /^web-[a-z0-9]+-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  // kubectl get pods -w (the apiserver's printer): the new pod is Pending at AGE 0s.
  const row = run.rows().find((r) => r.type === 'ADDED' && r.cells[0] === replacement!.object.metadata.name);
  t.deepEqual(row?.cells.slice(0, 5), [replacement!.object.metadata.name, '0/1', 'Pending', '0', '0s']);
  const oldRow = run.rows().find((r) => r.t >= terminatingAt && r.cells[0] === victim.metadata.name);
  t.is(oldRow?.cells[2], 'Terminating');

  // Four pod objects exist while the old one terminates: three active plus the Terminating one.
  let maxObjects = 0;
  let maxActive = 0;
  run.replay<Pod>('test-pods', (at, live) => {
    if (at < 5 * S) return;
    maxObjects = Math.max(maxObjects, live.size);
    maxActive = Math.max(maxActive, [...live.values()].filter((p) => !p.metadata.deletionTimestamp).length);
  });
  t.is(maxObjects, 4);
  t.is(maxActive, 3);
  t.is(run.live<Pod>('test-pods').size, 3);

  // status.replicas never counts the Terminating pod. Upstream computes the status from the pods
  // listed before manageReplicas, so the sync that creates the replacement writes 2 and the next
  // one 3 (replica_set.go syncReplicaSet: calculateStatus(rs, filteredPods, …)).
  // So from the value current at the delete, status.replicas reads exactly 3 → 2 → 3 (distinct
  // consecutive values; `every(n => n === 2 || n === 3)` held for an empty list or any mix).
  const writes = run.replicaSets().map((e) => ({ t: e.t, replicas: (e.object as ReplicaSet).status?.replicas }));
  const from = writes.findLastIndex((w) => w.t <= terminatingAt);
  t.true(from >= 0, 'a ReplicaSet status before the delete');
  const sequence = writes.slice(from).map((w) => w.replicas).filter((n, i, xs) => i === 0 || n !== xs[i - 1]);
  t.deepEqual(sequence, [3, 2, 3], `rs.status.replicas from the delete on: ${writes.slice(from).map((w) => w.replicas).join(', ')}`);
  // The 2 comes from the sync that creates the replacement, within milliseconds of the delete.
  const two = writes.find((w) => w.t > terminatingAt && w.replicas === 2)!;
  t.true(two.t - terminatingAt < 10 * MS, `status 2 written ${(two.t - terminatingAt) / MS} ms after the delete`);
});

test('same seed, same run: trace digest and generated names are reproducible', (t) => {
  const steps = [
    createNode(0, mkNode('n1')),
    createNode(0, mkNode('n2')),
    create(1 * S, 'deployments', mkDeployment('web', 5, { tgps: 10 })),
    delOldestPod(5 * S, 'web-'),
  ];
  const run = (seed: number) => runCluster({ seed, steps, kubelet: { nodes: ['n1', 'n2'] }, untilUs: 20 * S });
  const a = run(3);
  const b = run(3);
  const names = (r: ReturnType<typeof run>) => r.pods().map((e) => `${e.type} ${e.object.metadata.name} ${e.object.spec.nodeName ?? ''}`);
  t.is(a.sim.digest(), b.sim.digest());
  t.deepEqual(names(a), names(b));
  t.notDeepEqual(names(run(4)), names(a));
});
