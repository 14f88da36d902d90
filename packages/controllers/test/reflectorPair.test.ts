/**
 * The informers' reflector (client-go `ListAndWatch`) against the real apiserver: watches that
 * time out after minWatchTimeout × (1 + rand) resume from the last resourceVersion without losing
 * or repeating events; a broken connection (fault `disconnect`: an engine partition plus
 * `apiConnectionLossesUs`) ends the watch, the lost re-watch times out, the relist catches up;
 * requests and replies lost with the connection time out (504) and the work queue retries them.
 */
import test from 'ava';
import type { Fault, Pod } from '@podsim/api';
import { create, createNode, delOldestPod, mkNode, mkReplicaSet, runCluster, S, type ClusterRun } from './helpers/cluster.js';

const KCM = 'kube-controller-manager';
const created = (run: ClusterRun) => run.all('controller.rs.create', (r) => r.data?.uid !== undefined).map((r) => r.t / S);
const active = (pods: ReadonlyMap<string, Pod>) => [...pods.values()].filter((p) => !p.metadata.deletionTimestamp).length;

test('watches time out and resume from the last resourceVersion: every deleted pod is replaced exactly once', (t) => {
  const run = runCluster({
    steps: [createNode(0, mkNode('n1')), create(1 * S, 'replicasets', mkReplicaSet('web', 3)), delOldestPod(20 * S, 'web-'), delOldestPod(35 * S, 'web-'), delOldestPod(50 * S, 'web-')],
    kcm: { minWatchTimeoutUs: 5 * S },
    scheduler: { minWatchTimeoutUs: 5 * S },
    kubelet: { nodes: ['n1'], stopDelayUs: 2 * S },
    untilUs: 70 * S,
  });
  const rewatches = run.all('reflector.watch', (r) => r.actor === KCM && r.data?.resource === 'pods' && r.msg.includes('(timeout)')).map((r) => r.t / S);
  t.true(rewatches.length >= 6, `pod re-watches at ${rewatches.join(', ')}`);
  t.deepEqual(run.all('reflector.list'), [], 'no relist');
  t.is(created(run).length, 6, `creations at ${created(run).join(', ')}`);
  const live = run.live<Pod>('test-pods');
  t.is(live.size, 3);
  t.true([...live.values()].every((p) => p.status?.phase === 'Running' && p.spec.nodeName === 'n1'));
});

test('disconnect: a pod deleted while the controller manager could not hear it is replaced after the relist; a bare partition loses it for good', (t) => {
  const partition: Fault = { kind: 'partition', a: KCM, b: 'apiserver', startUs: 20 * S, endUs: 40 * S };
  const base = {
    steps: [createNode(0, mkNode('n1')), create(1 * S, 'replicasets', mkReplicaSet('web', 3)), delOldestPod(25 * S, 'web-')],
    kubelet: { nodes: ['n1'], stopDelayUs: 2 * S },
    faults: [partition],
    untilUs: 100 * S,
  };
  const run = runCluster({ ...base, kcm: { apiConnectionLossesUs: [20 * S] } });
  // The re-watch sent at 20 s is lost; it times out at 80 s (504), the reflector relists 800 ms later.
  const relists = run.all('reflector.list', (r) => r.actor === KCM && r.data?.resource === 'pods').map((r) => r.t / S);
  t.true(relists.length === 1 && Math.abs(relists[0] - 80.8) < 0.1, `relist at ${relists.join(', ')}`);
  const c = created(run);
  t.is(c.length, 4);
  t.true(c[3] > 80.8 && c[3] < 81, `replacement created at ${c[3]}`);
  t.is(active(run.live<Pod>('test-pods')), 3);

  // Without the connection loss (and without watch timeouts) the MODIFIED and DELETED of the pod
  // were dropped inside a live watch stream: the ReplicaSet never learns and stays one short.
  const gap = runCluster({ ...base, kcm: { minWatchTimeoutUs: 0 } });
  t.is(created(gap).length, 3);
  t.is(active(gap.live<Pod>('test-pods')), 2);
});

test('disconnect during a slow scale-up: lost creates and lost replies time out and are retried, never overshooting', (t) => {
  const run = runCluster({
    steps: [createNode(0, mkNode('n1')), create(5 * S, 'replicasets', mkReplicaSet('web', 10))],
    // 2 QPS: the ten creates take ~4 s, so the partition cuts through them.
    kcm: { kubeAPIQPS: 2, kubeAPIBurst: 2, apiConnectionLossesUs: [6 * S] },
    scheduler: { apiConnectionLossesUs: [6 * S] },
    kubelet: { nodes: ['n1'] },
    faults: [
      { kind: 'partition', a: KCM, b: 'apiserver', startUs: 6 * S, endUs: 8 * S },
      { kind: 'partition', a: 'kube-scheduler', b: 'apiserver', startUs: 6 * S, endUs: 8 * S },
    ],
    untilUs: 120 * S,
  });
  const timedOut = run.all('controller.rs.create', (r) => r.data?.code === 504);
  t.true(timedOut.length >= 1, 'some creates timed out');
  let most = 0;
  run.replay<Pod>('test-pods', (_t, live) => (most = Math.max(most, active(live))));
  t.is(most, 10, 'never more than 10 active pods');
  const live = run.live<Pod>('test-pods');
  t.is(live.size, 10);
  t.true([...live.values()].every((p) => p.spec.nodeName === 'n1' && p.status?.phase === 'Running'), 'all bound and running');
});
