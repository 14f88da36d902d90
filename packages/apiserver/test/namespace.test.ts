/**
 * Namespace lifecycle in the apiserver (pkg/registry/core/namespace/storage `REST.Delete`,
 * `ShouldDeleteNamespaceDuringUpdate`, the finalize and status subresources, NamespaceLifecycle
 * admission): a DELETE makes a namespace Terminating, creates into it are 403, the finalize
 * that empties spec.finalizers removes it; default / kube-system / kube-public cannot be deleted.
 */
import test from 'ava';
import type { Namespace, Pod, ReplicaSet } from '@podsim/api';
import { Harness, status } from './helpers.js';

function withNamespace(name = 'demo'): Harness {
  const h = new Harness();
  const r = h.req({ type: 'ApiCreate', resource: 'namespaces', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } as Namespace });
  if (r.code !== 201) throw new Error(`create namespace: ${r.code}`);
  return h;
}

const ns = (h: Harness, name = 'demo') => h.req({ type: 'ApiGet', resource: 'namespaces', name });
const finalize = (h: Harness, obj: Namespace, finalizers: string[]) =>
  h.req({ type: 'ApiUpdate', resource: 'namespaces', name: obj.metadata.name!, subresource: 'finalize', object: { ...obj, spec: { finalizers } } as Namespace });

test('a created namespace is Active with spec.finalizers [kubernetes]', (t) => {
  const h = withNamespace();
  const got = ns(h).body as Namespace;
  t.deepEqual(got.spec, { finalizers: ['kubernetes'] });
  t.deepEqual(got.status, { phase: 'Active' });
});

test('DELETE: one MODIFIED with deletionTimestamp and phase Terminating, 200 with the namespace; a second DELETE writes nothing', (t) => {
  const h = withNamespace();
  h.createPod('p', {}, {}, 'demo');
  const w0 = h.writes.length;
  const r = h.at(10).req({ type: 'ApiDelete', resource: 'namespaces', name: 'demo', options: { propagationPolicy: 'Background' } });
  t.is(r.code, 200);
  const body = r.body as Namespace;
  t.is(body.kind, 'Namespace');
  t.is(body.status?.phase, 'Terminating');
  t.is(body.metadata.deletionTimestamp, '2025-01-01T00:00:10Z');
  t.is(body.metadata.deletionGracePeriodSeconds, undefined);
  t.deepEqual(body.spec, { finalizers: ['kubernetes'] });
  t.deepEqual(h.writes.slice(w0).map((w) => `${w.type} ${w.resource} ${w.name}`), ['MODIFIED namespaces demo']);
  // The pod is untouched by the apiserver (the namespace controller deletes it).
  t.is(h.get('p', 'pods', 'demo').code, 200);
  const again = h.at(20).req({ type: 'ApiDelete', resource: 'namespaces', name: 'demo' });
  t.is(again.code, 200);
  t.is((again.body as Namespace).metadata.deletionTimestamp, '2025-01-01T00:00:10Z');
  t.is(h.writes.length, w0 + 1);
});

test('creates in a Terminating namespace are 403 with the NamespaceTerminating cause; in a missing one 404', (t) => {
  const h = withNamespace();
  h.req({ type: 'ApiDelete', resource: 'namespaces', name: 'demo' });
  const pod = { metadata: { name: 'late' }, spec: { containers: [{ name: 'c', image: 'i' }] } } as Pod;
  const r = h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'demo', object: pod });
  t.is(r.code, 403);
  t.deepEqual(status(r), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'pods "late" is forbidden: unable to create new content in namespace demo because it is being terminated',
    reason: 'Forbidden',
    details: { name: 'late', kind: 'pods', causes: [{ reason: 'NamespaceTerminating', message: 'namespace demo is being terminated', field: 'metadata.namespace' }] },
    code: 403,
  });
  // A ReplicaSet controller's generateName pod is named by its generateName; apps resources carry the group.
  const gen = h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'demo', object: { ...pod, metadata: { generateName: 'web-' } } });
  t.is(status(gen).message, 'pods "web-" is forbidden: unable to create new content in namespace demo because it is being terminated');
  const rs = h.req({
    type: 'ApiCreate',
    resource: 'replicasets',
    namespace: 'demo',
    object: { metadata: { name: 'web' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: pod.spec } } } as ReplicaSet,
  });
  t.is(status(rs).message, 'replicasets.apps "web" is forbidden: unable to create new content in namespace demo because it is being terminated');
  const missing = h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'gone', object: pod });
  t.is(missing.code, 404);
  t.is(status(missing).message, 'namespaces "gone" not found');
});

test('pods/binding into a Terminating namespace is 403 (NamespaceLifecycle admits subresource creates too)', (t) => {
  const h = withNamespace();
  h.createPod('p', {}, {}, 'demo');
  h.req({ type: 'ApiDelete', resource: 'namespaces', name: 'demo' });
  const r = h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'demo', name: 'p', subresource: 'binding', object: { metadata: { name: 'p' }, target: { kind: 'Node', name: 'node-1' } } as never });
  t.is(r.code, 403);
  t.is(status(r).message, 'pods "p" is forbidden: unable to create new content in namespace demo because it is being terminated');
});

// kubectl drain of a node whose pods are in a namespace being deleted: v1.22.8's
// NamespaceLifecycle refuses the pods/eviction create like any create (kubectl drain retries on
// that cause until the namespace controller has marked the pod). The eviction used to be
// admitted: 201 and a graceful delete of the pod in the Terminating namespace.
test('pods/eviction in a Terminating namespace is 403 with the NamespaceTerminating cause and leaves the pod alone', (t) => {
  const h = withNamespace();
  h.createPod('p', { nodeName: 'node-1' }, {}, 'demo');
  h.req({ type: 'ApiDelete', resource: 'namespaces', name: 'demo' });
  const r = h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'demo', name: 'p', subresource: 'eviction', object: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p', namespace: 'demo' } } as never });
  t.is(r.code, 403);
  t.is(status(r).message, 'pods "p" is forbidden: unable to create new content in namespace demo because it is being terminated');
  t.deepEqual(status(r).details?.causes?.map((c) => c.reason), ['NamespaceTerminating']);
  const pod = h.req({ type: 'ApiGet', resource: 'pods', namespace: 'demo', name: 'p' }).body as Pod;
  t.is(pod.metadata.deletionTimestamp, undefined);
});

test('finalize emptying spec.finalizers removes a Terminating namespace (DELETED, then 404); updates and status keep spec.finalizers', (t) => {
  const h = withNamespace();
  h.at(5).req({ type: 'ApiDelete', resource: 'namespaces', name: 'demo' });
  const cur = ns(h).body as Namespace;
  // A plain PUT cannot touch spec.finalizers (prepareForUpdate keeps them), nor status.
  const put = h.req({ type: 'ApiUpdate', resource: 'namespaces', name: 'demo', object: { ...cur, spec: { finalizers: [] }, status: { phase: 'Active' } } as Namespace });
  t.is(put.code, 200);
  t.deepEqual((put.body as Namespace).spec, { finalizers: ['kubernetes'] });
  t.is((put.body as Namespace).status?.phase, 'Terminating');
  // The status subresource keeps spec and checks the phase against deletionTimestamp.
  const latest = () => ns(h).body as Namespace;
  const bad = h.req({ type: 'ApiUpdate', resource: 'namespaces', name: 'demo', subresource: 'status', object: { ...latest(), status: { phase: 'Active' } } as Namespace });
  t.is(bad.code, 422);
  t.regex(status(bad).message!, /status.Phase: Invalid value: "Active": may only be 'Terminating' if `deletionTimestamp` is not empty/);
  const cond = { type: 'NamespaceContentRemaining', status: 'True' as const, reason: 'SomeResourcesRemain', message: 'Some resources are remaining: pods. has 1 resource instances' };
  const st = h.req({ type: 'ApiUpdate', resource: 'namespaces', name: 'demo', subresource: 'status', object: { ...latest(), spec: { finalizers: [] }, status: { phase: 'Terminating', conditions: [cond] } } as Namespace });
  t.is(st.code, 200);
  t.deepEqual((st.body as Namespace).spec, { finalizers: ['kubernetes'] });
  t.deepEqual((st.body as Namespace).status?.conditions, [cond]);
  // A bad finalizer name is 422; GET and PATCH of finalize are 405.
  t.is(finalize(h, latest(), ['not a name']).code, 422);
  t.is(h.req({ type: 'ApiGet', resource: 'namespaces', name: 'demo', subresource: 'finalize' }).code, 405);
  t.is(h.req({ type: 'ApiPatch', resource: 'namespaces', name: 'demo', subresource: 'finalize', patchType: 'merge', patch: { spec: { finalizers: [] } } }).code, 405);
  const w0 = h.writes.length;
  const fin = finalize(h, ns(h).body as Namespace, []);
  t.is(fin.code, 200);
  t.deepEqual(h.writes.slice(w0).map((w) => `${w.type} ${w.resource} ${w.name}`), ['DELETED namespaces demo']);
  t.is(ns(h).code, 404);
});

test('a namespace finalized while Active stays until deleted, then goes at once; a finalizer of another controller keeps it', (t) => {
  const h = withNamespace();
  const fin = finalize(h, ns(h).body as Namespace, ['example.com/keep']);
  t.is(fin.code, 200);
  t.deepEqual((fin.body as Namespace).spec, { finalizers: ['example.com/keep'] });
  h.req({ type: 'ApiDelete', resource: 'namespaces', name: 'demo' });
  t.is((ns(h).body as Namespace).status?.phase, 'Terminating');
  t.is(finalize(h, ns(h).body as Namespace, []).code, 200);
  t.is(ns(h).code, 404);

  const h2 = withNamespace('other');
  finalize(h2, ns(h2, 'other').body as Namespace, []);
  const w0 = h2.writes.length;
  const r = h2.req({ type: 'ApiDelete', resource: 'namespaces', name: 'other' });
  t.is(r.code, 200);
  // First DELETE marks it (MODIFIED); the second finds it finalized and deletes it (DELETED).
  t.deepEqual(h2.writes.slice(w0).map((w) => w.type), ['MODIFIED']);
  h2.req({ type: 'ApiDelete', resource: 'namespaces', name: 'other' });
  t.deepEqual(h2.writes.slice(w0).map((w) => w.type), ['MODIFIED', 'DELETED']);
});

test('default, kube-system and kube-public may not be deleted: 403 before any lookup', (t) => {
  const h = new Harness();
  for (const name of ['default', 'kube-system', 'kube-public']) {
    const r = h.req({ type: 'ApiDelete', resource: 'namespaces', name });
    t.is(r.code, 403, name);
    t.is(status(r).message, `namespaces "${name}" is forbidden: this namespace may not be deleted`);
    t.is(status(r).reason, 'Forbidden');
  }
  t.is((ns(h, 'default').body as Namespace).status?.phase, 'Active');
});

test('DELETE preconditions: a wrong UID or resourceVersion is 409 and writes nothing; Orphan propagation adds the orphan finalizer', (t) => {
  const h = withNamespace();
  const w0 = h.writes.length;
  const uid = h.req({ type: 'ApiDelete', resource: 'namespaces', name: 'demo', options: { preconditions: { uid: 'nope' } } });
  t.is(uid.code, 409);
  t.regex(status(uid).message!, /^Operation cannot be fulfilled on namespaces "demo": Precondition failed: UID in precondition: nope, UID in object meta: /);
  const rv = h.req({ type: 'ApiDelete', resource: 'namespaces', name: 'demo', options: { preconditions: { resourceVersion: '1' } } });
  t.is(rv.code, 409);
  t.is(h.writes.length, w0);
  const orphan = h.req({ type: 'ApiDelete', resource: 'namespaces', name: 'demo', options: { propagationPolicy: 'Orphan' } });
  t.deepEqual((orphan.body as Namespace).metadata.finalizers, ['orphan']);
  t.is(h.req({ type: 'ApiDelete', resource: 'namespaces', name: 'missing' }).code, 404);
});
