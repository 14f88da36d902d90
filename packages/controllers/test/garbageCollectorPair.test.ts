/**
 * The garbage collector against the real apiserver (pair tests over the engine): background,
 * foreground and orphan propagation when a ReplicaSet or Deployment is deleted (spec §2.8).
 */
import test from 'ava';
import type { Deployment, Pod, ReplicaSet } from '@podsim/api';
import { create, createNode, del, mkDeployment, mkNode, mkReplicaSet, runCluster, S } from './helpers/cluster.js';

test('deleting a ReplicaSet (background, as kubectl) garbage-collects its pods', (t) => {
  const run = runCluster({
    steps: [createNode(0, mkNode('n1')), create(1 * S, 'replicasets', mkReplicaSet('web', 3)), del(10 * S, 'replicasets', 'web', { propagationPolicy: 'Background' })],
    kubelet: { nodes: ['n1'], startDelayUs: 1 * S, stopDelayUs: 2 * S },
    untilUs: 30 * S,
  });
  const rsGone = run.replicaSets().find((e) => e.type === 'DELETED')!.t;
  t.true(rsGone >= 10 * S && rsGone < 10.01 * S, 'the ReplicaSet itself is removed at once');
  const pods = run.pods();
  const uids = [...new Set(pods.map((e) => e.object.metadata.uid))];
  t.is(uids.length, 3, 'no replacement pods once the ReplicaSet is gone');
  for (const uid of uids) {
    const dts = pods.find((e) => e.object.metadata.uid === uid && e.object.metadata.deletionTimestamp)!;
    t.true(dts.t > rsGone && dts.t < rsGone + 0.1 * S, 'each pod is deleted gracefully right after its owner');
    t.is(dts.object.metadata.deletionGracePeriodSeconds, 30);
  }
  t.is(run.live<Pod>('test-pods').size, 0);
  const gc = run.all('controller.gc.delete');
  t.deepEqual(
    gc.map((r) => [r.data!.resource, r.data!.policy, r.data!.code]),
    [
      ['pods', 'Background', 200],
      ['pods', 'Background', 200],
      ['pods', 'Background', 200],
    ],
  );
});

test('foreground deletion of a Deployment waits for pods, then the ReplicaSet, then the Deployment', (t) => {
  const run = runCluster({
    steps: [
      createNode(0, mkNode('n1')),
      create(1 * S, 'deployments', mkDeployment('web', 2)),
      del(10 * S, 'deployments', 'web', { propagationPolicy: 'Foreground' }, 'kubectl delete deploy --cascade=foreground'),
    ],
    kubelet: { nodes: ['n1'], startDelayUs: 1 * S, stopDelayUs: 3 * S },
    untilUs: 40 * S,
  });
  const res = run.all('test.result', (r) => r.data!.label === 'kubectl delete deploy --cascade=foreground')[0];
  t.is(res.data!.code, 200);
  t.deepEqual((res.data!.body as Deployment).metadata.finalizers, ['foregroundDeletion']);
  const podsGone = Math.max(...run.pods().filter((e) => e.type === 'DELETED').map((e) => e.t));
  const rsGone = run.replicaSets().find((e) => e.type === 'DELETED')!.t;
  const dGone = run.deployments().find((e) => e.type === 'DELETED')!.t;
  t.true(podsGone >= 13 * S, `pods gone at ${podsGone / S}s (after the kubelet's 3 s)`);
  t.true(rsGone > podsGone, 'the ReplicaSet waits for its pods');
  t.true(dGone > rsGone, 'the Deployment waits for its ReplicaSet');
  t.true(dGone - podsGone < 0.1 * S);
  // The ReplicaSet went through foreground deletion too.
  const rsDeleting = run.replicaSets().find((e) => e.object.metadata.deletionTimestamp);
  t.deepEqual(rsDeleting?.object.metadata.finalizers, ['foregroundDeletion']);
  // The ReplicaSet is deleted in the foreground (it has dependents), each pod in the background.
  // A pod may be deleted twice: the graph can lag behind the first delete, as upstream's does (the
  // second DELETE is a no-op: no write, 200).
  const gc = run.all('controller.gc.delete');
  t.deepEqual(gc[0].data!.resource, 'replicasets');
  t.deepEqual(gc[0].data!.policy, 'Foreground');
  const podDeletes = gc.filter((r) => r.data!.resource === 'pods');
  t.true(podDeletes.every((r) => r.data!.policy === 'Background' && r.data!.code === 200));
  t.is(new Set(podDeletes.map((r) => r.data!.uid)).size, 2);
  // Meanwhile no replacement pods: a ReplicaSet being deleted does not manage replicas.
  t.is(new Set(run.pods().map((e) => e.object.metadata.uid)).size, 2);
});

test('orphan deletion of a ReplicaSet leaves its pods running without an owner', (t) => {
  const run = runCluster({
    steps: [createNode(0, mkNode('n1')), create(1 * S, 'replicasets', mkReplicaSet('web', 2)), del(10 * S, 'replicasets', 'web', { propagationPolicy: 'Orphan' })],
    kubelet: { nodes: ['n1'], startDelayUs: 1 * S },
    untilUs: 20 * S,
  });
  t.is(run.live<ReplicaSet>('test-rs').size, 0);
  const pods = [...run.live<Pod>('test-pods').values()];
  t.is(pods.length, 2);
  for (const p of pods) {
    t.falsy(p.metadata.deletionTimestamp);
    t.deepEqual(p.metadata.ownerReferences ?? [], []);
  }
  t.is(run.all('controller.gc.orphan')[0]?.data!.dependents, 2);
});
