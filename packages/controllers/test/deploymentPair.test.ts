/**
 * Deployment controller against the real apiserver (pair tests over the engine): Recreate
 * (case C15), RollingUpdate bounds (maxSurge / maxUnavailable), scaling through deployments/scale,
 * status, conditions and revision annotations.
 */
import test from 'ava';
import type { Deployment, Pod, ReplicaSet } from '@podsim/api';
import { create, createNode, delOldestPod, mkDeployment, mkNode, runCluster, S, scale, setImage } from './helpers/cluster.js';

const MS = 1000;
const image = (p: Pod) => p.spec.containers[0].image;

test('C15: Recreate replaces a manually deleted pod at once, but a rollout waits until the old pod is gone', (t) => {
  const run = runCluster({
    steps: [
      createNode(0, mkNode('n1')),
      create(1 * S, 'deployments', mkDeployment('d', 1, { tgps: 60, strategy: { type: 'Recreate' }, annotations: { 'test/stop-after-seconds': '30' } })),
      delOldestPod(10 * S, 'd-', {}, 'part A: kubectl delete pod'),
      setImage(200 * S, 'd', 'nginx:1.22'),
    ],
    kubelet: { nodes: ['n1'], startDelayUs: 1 * S },
    untilUs: 300 * S,
  });
  const pods = run.pods();
  const firstDts = (uid: string) => pods.find((e) => e.object.metadata.uid === uid && e.object.metadata.deletionTimestamp)?.t;
  const gone = (uid: string) => pods.find((e) => e.object.metadata.uid === uid && e.type === 'DELETED')?.t;
  const added = pods.filter((e) => e.type === 'ADDED');
  t.is(added.length, 3, 'old-1, its replacement old-2, and the new-template pod');
  const [old1, old2, new1] = added;

  // Part A: plain ReplicaSet replacement, whatever the strategy.
  const aDel = firstDts(old1.object.metadata.uid!)!;
  t.true(aDel >= 10 * S && aDel < 10 * S + 10 * MS);
  t.true(old2.t - aDel < 10 * MS, `replacement ${(old2.t - aDel) / MS} ms after the delete`);
  t.true(gone(old1.object.metadata.uid!)! >= 40 * S, 'old-1 terminates for 30 s beside old-2');
  t.is(image(old2.object), 'nginx:1.21');

  // Part B: the old RS is scaled to 0 at once; the new pod waits until old-2 is gone from the API
  // (it is Terminating with phase Running meanwhile: oldPodsRunning).
  const bDel = firstDts(old2.object.metadata.uid!)!;
  t.true(bDel >= 200 * S && bDel < 200 * S + 10 * MS, `old-2 Terminating at ${bDel / S}s`);
  const old2Gone = gone(old2.object.metadata.uid!)!;
  t.true(old2Gone >= 230 * S, `old-2 gone at ${old2Gone / S}s`);
  t.is(image(new1.object), 'nginx:1.22');
  t.true(new1.t > old2Gone, `new pod created at ${new1.t / S}s, after old-2 was gone at ${old2Gone / S}s`);
  t.true(new1.t - old2Gone < 10 * MS);
  const rss = run.replicaSets();
  const newRS = rss.find((e) => e.type === 'ADDED' && e.t > 200 * S)!;
  t.true(newRS.t > old2Gone, 'the new ReplicaSet is created only after the old pods are gone');
  t.is(newRS.object.metadata.annotations?.['deployment.kubernetes.io/revision'], '2');
  // Never an old and a new pod active at once during the rollout.
  run.replay<Pod>('test-pods', (at, live) => {
    if (at < 200 * S) return;
    const images = new Set([...live.values()].filter((p) => p.status?.phase !== 'Succeeded').map(image));
    if (images.size > 1) t.fail(`old and new pods coexist at ${at / S}s`);
  });
  const d = run.deployments().at(-1)!.object;
  t.is(d.metadata.annotations?.['deployment.kubernetes.io/revision'], '2');
  t.like(d.status, { replicas: 1, updatedReplicas: 1, availableReplicas: 1 });
});

test('RollingUpdate keeps within maxSurge and maxUnavailable at every observed point', (t) => {
  const replicas = 4;
  const run = runCluster({
    steps: [
      createNode(0, mkNode('n1')),
      createNode(0, mkNode('n2')),
      create(1 * S, 'deployments', mkDeployment('web', replicas, { tgps: 30, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } } })),
      setImage(20 * S, 'web', 'nginx:1.22'),
    ],
    kubelet: { nodes: ['n1', 'n2'], startDelayUs: 2 * S, stopDelayUs: 5 * S },
    untilUs: 120 * S,
  });
  const ready = (p: Pod) => (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  let maxActive = 0;
  let minReady = Infinity;
  run.replay<Pod>('test-pods', (at, live) => {
    if (at < 20 * S) return;
    const active = [...live.values()].filter((p) => !p.metadata.deletionTimestamp);
    maxActive = Math.max(maxActive, active.length);
    minReady = Math.min(minReady, active.filter(ready).length);
  });
  t.is(maxActive, replicas + 1, 'maxSurge 1: at most 5 active pods');
  t.is(minReady, replicas - 1, 'maxUnavailable 1: at least 3 ready pods');
  // The same bounds on the ReplicaSets' spec.replicas.
  let maxSpec = 0;
  run.replay<ReplicaSet>('test-rs', (at, live) => {
    if (at < 20 * S) return;
    maxSpec = Math.max(maxSpec, [...live.values()].reduce((n, rs) => n + (rs.spec.replicas ?? 0), 0));
  });
  t.is(maxSpec, replicas + 1);
  // Rollout done: four new pods, old RS at 0 and kept for history.
  const live = [...run.live<Pod>('test-pods').values()];
  t.is(live.length, replicas);
  t.true(live.every((p) => image(p) === 'nginx:1.22'));
  const rss = [...run.live<ReplicaSet>('test-rs').values()].sort((a, b) => Number(a.metadata.annotations?.['deployment.kubernetes.io/revision']) - Number(b.metadata.annotations?.['deployment.kubernetes.io/revision']));
  t.deepEqual(
    rss.map((rs) => [rs.metadata.annotations?.['deployment.kubernetes.io/revision'], rs.spec.replicas, rs.status?.replicas]),
    [
      ['1', 0, 0],
      ['2', 4, 4],
    ],
  );
  t.true(rss.every((rs) => rs.metadata.name!.startsWith('web-') && rs.metadata.labels?.['pod-template-hash'] === rs.metadata.name!.slice(4)));
  t.deepEqual(rss[1].metadata.annotations?.['deployment.kubernetes.io/max-replicas'], '5');
  const d = run.deployments().at(-1)!.object as Deployment;
  t.like(d.status, { observedGeneration: 2, replicas: 4, updatedReplicas: 4, readyReplicas: 4, availableReplicas: 4 });
  const cond = (type: string) => d.status?.conditions?.find((c) => c.type === type);
  t.like(cond('Available'), { status: 'True', reason: 'MinimumReplicasAvailable' });
  t.like(cond('Progressing'), { status: 'True', reason: 'NewReplicaSetAvailable' });
});

test('scaling a Deployment through deployments/scale up and down', (t) => {
  const run = runCluster({
    steps: [
      createNode(0, mkNode('n1')),
      create(1 * S, 'deployments', mkDeployment('web', 2, { tgps: 30 })),
      scale(10 * S, 'web', 5),
      scale(30 * S, 'web', 1),
    ],
    kubelet: { nodes: ['n1'], startDelayUs: 1 * S, stopDelayUs: 3 * S },
    untilUs: 60 * S,
  });
  const activeAt = (at: number) => {
    let n = 0;
    run.replay<Pod>('test-pods', (tt, live) => {
      if (tt <= at) n = [...live.values()].filter((p) => !p.metadata.deletionTimestamp).length;
    });
    return n;
  };
  t.is(activeAt(9 * S), 2);
  t.is(activeAt(20 * S), 5);
  t.is(activeAt(50 * S), 1);
  t.is(run.live<Pod>('test-pods').size, 1);
  // Scaling uses the one RS (no new ReplicaSet) and records desired-replicas on it.
  const rss = [...run.live<ReplicaSet>('test-rs').values()];
  t.is(rss.length, 1);
  t.like(rss[0], { spec: { replicas: 1 }, metadata: { annotations: { 'deployment.kubernetes.io/desired-replicas': '1' } } });
  // Scaled down to 1: the 4 pods deleted are the newest (equal ready time buckets, same node).
  const deleted = run.all('controller.rs.delete').map((r) => r.data!.pod as string);
  t.is(deleted.length, 4);
  const d = run.deployments().at(-1)!.object as Deployment;
  t.like(d.status, { replicas: 1, availableReplicas: 1, observedGeneration: 3 });
});

test('minReadySeconds: pods count as available only minReadySeconds after they became Ready', (t) => {
  const run = runCluster({
    steps: [createNode(0, mkNode('n1')), create(1 * S, 'deployments', mkDeployment('web', 3, { minReadySeconds: 10 }))],
    kubelet: { nodes: ['n1'], startDelayUs: 1 * S },
    untilUs: 30 * S,
  });
  const rsEvents = run.replicaSets();
  const readyAt = rsEvents.find((e) => e.object.status?.readyReplicas === 3)!.t;
  const availableAt = rsEvents.find((e) => e.object.status?.availableReplicas === 3)!.t;
  t.true(readyAt >= 2 * S && readyAt < 3 * S, `ready at ${readyAt / S}s`);
  // Ready's lastTransitionTime has whole seconds (t=2): available strictly after 2 + 10 s; the
  // controller rechecks minReadySeconds + 1 s after the pod became Ready.
  t.true(availableAt > 12 * S && availableAt <= 13.1 * S, `available at ${availableAt / S}s`);
  const d = run.deployments().at(-1)!.object as Deployment;
  t.like(d.status, { availableReplicas: 3, readyReplicas: 3 });
  const before = run.deployments().filter((e) => e.t < 12 * S).at(-1)!.object as Deployment;
  t.like(before.status, { readyReplicas: 3, availableReplicas: 0, unavailableReplicas: 3 });
});
