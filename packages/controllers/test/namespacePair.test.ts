/**
 * The namespace controller against the real apiserver (pair tests over the engine): a deleted
 * namespace is Terminating at once, emptied 5 s later (`namespaceDeletionGracePeriod`) — its
 * Deployment, ReplicaSet and pods deleted with the default propagation, the ReplicaSet's
 * replacements refused (403, NamespaceTerminating) — and removed by the finalize only after its
 * last pod is gone; the requeue follows `estimate/2 + 1` s from the pods' grace.
 */
import test from 'ava';
import type { Namespace, Pod, TraceRecord } from '@podsim/api';
import { CONCURRENT_NAMESPACE_SYNCS, NAMESPACE_DELETION_GRACE_PERIOD_US, NAMESPACE_RATE_LIMIT_MAX_US } from '../src/namespace/namespaceController.js';
import { mkDeployment, mkNode, runCluster, S, type Step } from './helpers/cluster.js';

const inDemo = <T extends { metadata: { namespace?: string } }>(o: T): T => ({ ...o, metadata: { ...o.metadata, namespace: 'demo' } });

function steps(stopAfterSeconds: number, tgps: number): Step[] {
  const d = inDemo(mkDeployment('web', 2, { tgps, annotations: { 'test/stop-after-seconds': String(stopAfterSeconds) } }));
  return [
    { at: 0, req: { type: 'ApiCreate', resource: 'nodes', object: mkNode('n1') }, label: 'create node' },
    { at: 0.1 * S, req: { type: 'ApiCreate', resource: 'namespaces', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } } as Namespace }, label: 'create ns' },
    { at: 0.5 * S, req: { type: 'ApiCreate', resource: 'deployments', namespace: 'demo', object: d }, label: 'create deployment' },
    { at: 10 * S, req: { type: 'ApiDelete', resource: 'namespaces', name: 'demo', options: { propagationPolicy: 'Background' } }, label: 'delete ns' },
    {
      at: 11 * S,
      req: { type: 'ApiCreate', resource: 'pods', namespace: 'demo', object: { metadata: { name: 'late' }, spec: { containers: [{ name: 'c', image: 'i' }] } } as Pod },
      label: 'create late',
    },
  ];
}

const nsWrites = (traces: TraceRecord[]) => traces.filter((r) => r.kind === 'api.write' && r.data?.resource === 'namespaces' && r.data?.name === 'demo');

test('namespace controller constants are v1.22.8 kube-controller-manager defaults', (t) => {
  t.is(NAMESPACE_DELETION_GRACE_PERIOD_US, 5 * S);
  t.is(CONCURRENT_NAMESPACE_SYNCS, 10);
  t.is(NAMESPACE_RATE_LIMIT_MAX_US, 60 * S);
});

test('delete ns: Terminating at once, content deleted after 5 s, replacements refused 403, namespace DELETED only after its last pod', (t) => {
  const run = runCluster({ steps: steps(2, 30), kubelet: { nodes: ['n1'] }, untilUs: 120 * S });
  const late = run.all('test.result', (r) => r.data?.label === 'create late')[0];
  t.is(late.data!.code, 403);
  t.is((late.data!.body as { message: string }).message, 'pods "late" is forbidden: unable to create new content in namespace demo because it is being terminated');

  const writes = nsWrites(run.traces);
  const terminating = writes.find((w) => w.data?.event === 'MODIFIED' && w.data?.deletionTimestamp)!;
  t.true(terminating.t >= 10 * S && terminating.t < 10.01 * S, 'Terminating at the DELETE');
  const deleted = writes.find((w) => w.data?.event === 'DELETED');
  t.truthy(deleted, 'namespace removed');

  // The controller deletes the Deployment, its ReplicaSet and both pods 5 s after the DELETE.
  const dels = run.all('controller.namespace.delete');
  const first = (resource: string) => dels.find((r) => r.data?.resource === resource);
  for (const r of ['pods', 'deployments', 'replicasets']) {
    t.truthy(first(r), `${r} deleted`);
    t.true(first(r)!.t >= 15 * S && first(r)!.t < 15.5 * S, `${r} deleted at ~15 s (${first(r)!.t})`);
  }
  // Pods go through graceful deletion (a deletionTimestamp with the 30 s grace), then the kubelet's final DELETE.
  const pods = run.pods();
  const names = [...new Set(pods.map((e) => e.object.metadata.name))];
  t.is(names.length, 2, 'no replacement pod was created in the terminating namespace');
  for (const n of names) {
    const term = pods.find((e) => e.object.metadata.name === n && e.object.metadata.deletionTimestamp)!;
    t.is(term.object.metadata.deletionGracePeriodSeconds, 30);
    const gone = pods.find((e) => e.object.metadata.name === n && e.type === 'DELETED')!;
    t.true(gone.t >= term.t + 2 * S, 'gone after the kubelet stopped it');
    t.true(deleted!.t > gone.t, 'namespace DELETED after its pods');
  }
  // The ReplicaSet controller's replacement was refused, and (NamespaceTerminating) not retried in a loop.
  const refused = run.all('controller.rs.create', (r) => r.t > 10 * S && r.data?.code === 403);
  t.true(refused.length >= 1 && refused.length <= 2, `${refused.length} refused creates`);
  t.is(run.all('controller.rs.create', (r) => r.t > 10 * S && r.data?.code === undefined).length, 0);
  // Finalized through the finalize subresource; its last status says all content is removed.
  t.is(run.all('controller.namespace.finalize').length, 1);
  const final = writes.filter((w) => w.data?.event === 'MODIFIED').at(-1)!;
  t.true(final.t < deleted!.t);
});

test('requeue follows the pods grace: 30 s grace, pods gone after 25 s: syncs at +5 s, +10 s (status event), +26 s (estimate/2 + 1), finalized at +42 s', (t) => {
  const run = runCluster({ steps: steps(25, 30), kubelet: { nodes: ['n1'] }, untilUs: 150 * S });
  const since = (r: { t: number }) => Math.round((r.t - 10 * S) / S);
  // 5 s after the DELETE (namespaceDeletionGracePeriod): estimate 30 → AddAfter 16 s; the
  // conditions update's own event brings a sync 5 s later; then 16 s after that, still < 30 s.
  t.deepEqual(
    run.all('controller.namespace.remaining').map((r) => [since(r), r.data!.estimate]),
    [
      [5, 30],
      [10, 30],
      [26, 30],
    ],
  );
  const podsGone = Math.max(...run.pods().filter((e) => e.type === 'DELETED').map((e) => e.t));
  t.is(since({ t: podsGone }), 30, 'pods gone 25 s after the controller deleted them');
  // At +42 s 32 s have passed since the deletionTimestamp: estimate 0, nothing left, finalized.
  const deleted = nsWrites(run.traces).find((w) => w.data?.event === 'DELETED')!;
  t.is(since(deleted), 42);
  t.deepEqual(run.all('controller.namespace.finalize').map((r) => [since(r), r.data!.code]), [[42, 200]]);
});

// kubectl delete ns demo --cascade=orphan / --cascade=foreground: the first DELETE puts the
// orphan / foregroundDeletion finalizer on the namespace (REST.Delete); the garbage collector,
// which watches namespaces like every other deletable resource, removes it (the namespace has no
// dependents), and the namespace is gone once the namespace controller has finalized it. The GC
// used to watch only pods, ReplicaSets and Deployments, so the namespace stayed Terminating
// forever with `finalizers: [orphan]`.
for (const policy of ['Orphan', 'Foreground'] as const) {
  test(`delete ns with propagationPolicy ${policy}: the GC removes its ${policy === 'Orphan' ? 'orphan' : 'foregroundDeletion'} finalizer, the namespace is DELETED after its pods`, (t) => {
    const s = steps(2, 30).map((st) => (st.label === 'delete ns' ? { ...st, req: { type: 'ApiDelete' as const, resource: 'namespaces' as const, name: 'demo', options: { propagationPolicy: policy } } } : st));
    const run = runCluster({ steps: s, kubelet: { nodes: ['n1'] }, untilUs: 120 * S });
    const finalizer = policy === 'Orphan' ? 'orphan' : 'foregroundDeletion';
    const writes = nsWrites(run.traces);
    const terminating = writes.find((w) => w.data?.deletionTimestamp)!;
    t.deepEqual(terminating.data!.finalizers, [finalizer]);
    t.deepEqual(
      run.all('controller.gc.removeFinalizer', (r) => r.data?.resource === 'namespaces').map((r) => [r.data!.name, r.data!.finalizer, r.data!.code]),
      [['demo', finalizer, 200]],
    );
    const deleted = writes.find((w) => w.data?.event === 'DELETED');
    t.truthy(deleted, `namespace removed (last write: ${JSON.stringify(writes.at(-1)?.data)})`);
    const podsGone = run.pods().filter((e) => e.type === 'DELETED');
    t.is(podsGone.length, 2);
    for (const p of podsGone) t.true(deleted!.t > p.t, 'namespace DELETED after its pods');
  });
}
