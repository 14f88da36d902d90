/**
 * The generic registry and strategies through the ApiServer: create (defaults, generateName,
 * uid, creationTimestamp, validation, namespaces), update / patch (optimistic concurrency,
 * status subresource, generation), pods/binding, deployments/scale, events and lists.
 */
import test from 'ava';
import type { Deployment, Event, KubeList, Namespace, Pod, ReplicaSet, Scale, Status, Table } from '@podsim/api';
import { KUBE_NAME_ALPHABET } from '@podsim/api';
import { Harness, status } from './helpers.js';

const deployment = (name = 'web', spec: Partial<Deployment['spec']> = {}): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels: { app: 'web' } },
  spec: {
    selector: { matchLabels: { app: 'webd' } },
    template: { metadata: { labels: { app: 'webd' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } },
    ...spec,
  },
});

test('pod create: 201 with uid, RV, creationTimestamp from virtual time, Pending + qosClass, and the v1 defaults', (t) => {
  const h = new Harness();
  const r = h.at(65).req({
    type: 'ApiCreate',
    resource: 'pods',
    namespace: 'default',
    object: { metadata: { name: 'solo' }, spec: { containers: [{ name: 'c', image: 'busybox', ports: [{ containerPort: 80 }], readinessProbe: { httpGet: { port: 80 } } }] } } as Pod,
  });
  t.is(r.code, 201);
  const p = r.body as Pod;
  t.is(p.kind, 'Pod');
  t.is(p.apiVersion, 'v1');
  t.regex(p.metadata.uid!, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  t.regex(p.metadata.resourceVersion!, /^\d+$/);
  t.is(p.metadata.namespace, 'default');
  t.is(p.metadata.creationTimestamp, '2025-01-01T00:01:05Z');
  t.deepEqual(p.status, { phase: 'Pending', qosClass: 'BestEffort' });
  t.is(p.spec.terminationGracePeriodSeconds, 30);
  t.is(p.spec.restartPolicy, 'Always');
  t.is(p.spec.dnsPolicy, 'ClusterFirst');
  t.is(p.spec.schedulerName, 'default-scheduler');
  t.is(p.spec.enableServiceLinks, true);
  t.deepEqual(p.spec.securityContext, {});
  t.is(p.spec.serviceAccountName, 'default');
  t.is(p.spec.priority, 0);
  t.deepEqual(p.spec.tolerations, [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  ]);
  const c = p.spec.containers[0];
  t.is(c.imagePullPolicy, 'Always'); // no tag = latest
  t.is(c.terminationMessagePath, '/dev/termination-log');
  t.is(c.terminationMessagePolicy, 'File');
  t.is(c.ports![0].protocol, 'TCP');
  t.like(c.readinessProbe, { timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3, httpGet: { path: '/', scheme: 'HTTP', port: 80 } });
  t.is(h.createPod('tagged', {}, {}).spec.containers[0].imagePullPolicy, 'IfNotPresent');
});

test('the create request body is not mutated (message bodies are immutable)', (t) => {
  const h = new Harness();
  const body = { metadata: { name: 'x' }, spec: { containers: [{ name: 'c', image: 'i' }] } } as Pod;
  const before = JSON.stringify(body);
  h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'default', object: body });
  t.is(JSON.stringify(body), before);
});

test('generateName: base + 5 characters of the Kubernetes name alphabet, drawn from the seeded ids', (t) => {
  const h = new Harness();
  const names = [1, 2, 3].map(() => h.createPod('', {}, { generateName: 'web-5d8f-' }).metadata.name!);
  for (const n of names) {
    t.regex(n, /^web-5d8f-.{5}$/);
    for (const ch of n.slice(-5)) t.true(KUBE_NAME_ALPHABET.includes(ch));
  }
  t.is(new Set(names).size, 3);
  // Same seed, same names.
  const h2 = new Harness();
  t.deepEqual([1, 2, 3].map(() => h2.createPod('', {}, { generateName: 'web-5d8f-' }).metadata.name), names);
});

test('validation → 422 Invalid with field paths in details.causes', (t) => {
  const h = new Harness();
  const r = h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'default', object: { metadata: { name: 'bad' }, spec: { containers: [{ name: '', image: 'x' }] } } as Pod });
  t.is(r.code, 422);
  t.is(status(r).reason, 'Invalid');
  t.is(status(r).message, 'Pod "bad" is invalid: spec.containers[0].name: Required value');
  t.deepEqual(status(r).details, {
    name: 'bad',
    kind: 'Pod',
    causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers[0].name' }],
  });
  const none = h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'default', object: { metadata: { name: 'bad' }, spec: { containers: [] } } as unknown as Pod });
  t.is(status(none).message, 'Pod "bad" is invalid: spec.containers: Required value');
  const two = h.req({
    type: 'ApiCreate',
    resource: 'pods',
    namespace: 'default',
    object: { metadata: { name: 'Bad_Name' }, spec: { restartPolicy: 'Sometimes', containers: [{ name: 'c' }] } } as unknown as Pod,
  });
  t.is(two.code, 422);
  t.deepEqual(
    status(two).details!.causes!.map((c) => c.field),
    ['metadata.name', 'spec.containers[0].image', 'spec.restartPolicy'],
  );
  t.true(status(two).message!.startsWith('Pod "Bad_Name" is invalid: [metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain'));
  t.true(status(two).message!.includes('spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"]'));
  t.deepEqual(h.writes, []);
});

test('probes and init containers are validated as validateProbe / validateHandler / validateInitContainers (v1.22.8): 422, nothing stored; 0s are defaulted', (t) => {
  // Through serve (kubectl apply) these were stored and run: a negative periodSeconds, no handler, two handlers.
  const h = new Harness();
  const create = (name: string, spec: object) => h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'default', object: { metadata: { name }, spec } as unknown as Pod });
  const msg = (name: string, spec: object) => status(create(name, spec)).message;
  const app = (extra: object) => ({ containers: [{ name: 'app', image: 'nginx:1.21', ...extra }] });
  t.is(msg('a', app({ livenessProbe: { periodSeconds: 5 } })), 'Pod "a" is invalid: spec.containers[0].livenessProbe: Required value: must specify a handler type');
  t.is(
    msg('b', app({ readinessProbe: { httpGet: { port: 80 }, tcpSocket: { port: 80 } } })),
    'Pod "b" is invalid: spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type',
  );
  t.is(msg('c', app({ livenessProbe: { tcpSocket: { port: 80 }, periodSeconds: -1 } })), 'Pod "c" is invalid: spec.containers[0].livenessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0');
  t.is(msg('d', app({ startupProbe: { tcpSocket: { port: 80 }, successThreshold: 2 } })), 'Pod "d" is invalid: spec.containers[0].startupProbe.successThreshold: Invalid value: 2: must be 1');
  t.regex(
    msg('e', { ...app({}), initContainers: [{ name: 'init', image: 'busybox:1.35', readinessProbe: { tcpSocket: { port: 80 } } }] })!,
    /^Pod "e" is invalid: spec\.initContainers\[0\]\.readinessProbe: Invalid value: .*must not be set for init containers$/,
  );
  t.deepEqual(h.writes, []);
  const ok = create('f', app({ livenessProbe: { tcpSocket: { port: 80 }, periodSeconds: 0, failureThreshold: 0, successThreshold: 0, timeoutSeconds: 0 } }));
  t.is(ok.code, 201);
  const probe = (h.writes[0].object as Pod).spec!.containers[0].livenessProbe!;
  t.deepEqual([probe.periodSeconds, probe.failureThreshold, probe.successThreshold, probe.timeoutSeconds], [10, 3, 1, 1]);
});

test('name or generateName is required', (t) => {
  const h = new Harness();
  const r = h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'default', object: { metadata: {}, spec: { containers: [{ name: 'c', image: 'i' }] } } as Pod });
  t.is(status(r).message, 'Pod "" is invalid: metadata.name: Required value: name or generateName is required');
});

test('creating in a missing namespace → 404 namespaces "x" not found; default, kube-node-lease, kube-public and kube-system exist', (t) => {
  const h = new Harness();
  const r = h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'nons', object: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } } as Pod });
  t.is(r.code, 404);
  t.is(status(r).message, 'namespaces "nons" not found');
  t.deepEqual(status(r).details, { name: 'nons', kind: 'namespaces' });
  const list = h.req({ type: 'ApiList', resource: 'namespaces' }).body as KubeList<Namespace>;
  t.deepEqual(list.items.map((n) => [n.metadata.name, n.status?.phase, n.metadata.labels?.['kubernetes.io/metadata.name']]), [
    ['default', 'Active', 'default'],
    ['kube-node-lease', 'Active', 'kube-node-lease'],
    ['kube-public', 'Active', 'kube-public'],
    ['kube-system', 'Active', 'kube-system'],
  ]);
  t.is(h.createPod('p', {}, {}, 'kube-system').metadata.namespace, 'kube-system');
});

test('a namespace mismatch between body and request → 400', (t) => {
  const h = new Harness();
  const r = h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'default', object: { metadata: { name: 'p', namespace: 'kube-system' }, spec: { containers: [{ name: 'c', image: 'i' }] } } as Pod });
  t.is(r.code, 400);
  t.is(status(r).message, 'the namespace of the provided object does not match the namespace sent on the request');
});

test('create of an existing name → 409 AlreadyExists (with the group for apps)', (t) => {
  const h = new Harness();
  h.createPod('p');
  const r = h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'default', object: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } } as Pod });
  t.is(r.code, 409);
  t.is(status(r).message, 'pods "p" already exists');
  h.req({ type: 'ApiCreate', resource: 'deployments', namespace: 'default', object: deployment() });
  const d = h.req({ type: 'ApiCreate', resource: 'deployments', namespace: 'default', object: deployment() });
  t.is(status(d).message, 'deployments.apps "web" already exists');
  t.deepEqual(status(d).details, { name: 'web', group: 'apps', kind: 'deployments' });
});

test('GET of a missing deployment → 404 deployments.apps "x" not found', (t) => {
  const h = new Harness();
  const r = h.req({ type: 'ApiGet', resource: 'deployments', namespace: 'default', name: 'x' });
  t.is(status(r).message, 'deployments.apps "x" not found');
  t.deepEqual(status(r).details, { name: 'x', group: 'apps', kind: 'deployments' });
});

test('PUT with a stale resourceVersion → 409 with the optimistic-lock message; without RV → unconditional', (t) => {
  const h = new Harness();
  const p = h.createPod('web-1');
  h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'web-1', patchType: 'merge', patch: { metadata: { labels: { a: 'b' } } } });
  const stale = h.req({ type: 'ApiUpdate', resource: 'pods', namespace: 'default', name: 'web-1', object: { ...p, metadata: { ...p.metadata, labels: { x: 'y' } } } });
  t.is(stale.code, 409);
  t.is(status(stale).message, 'Operation cannot be fulfilled on pods "web-1": the object has been modified; please apply your changes to the latest version and try again');
  const uncond = h.req({ type: 'ApiUpdate', resource: 'pods', namespace: 'default', name: 'web-1', object: { ...p, metadata: { ...p.metadata, resourceVersion: undefined, labels: { x: 'y' } } } });
  t.is(uncond.code, 200);
  t.deepEqual((uncond.body as Pod).metadata.labels, { x: 'y' });
});

test('PUT with a different body name → 400; with a foreign uid → 409 storage precondition', (t) => {
  const h = new Harness();
  const p = h.createPod('p');
  const r = h.req({ type: 'ApiUpdate', resource: 'pods', namespace: 'default', name: 'p', object: { ...p, metadata: { ...p.metadata, name: 'q' } } });
  t.is(r.code, 400);
  t.is(status(r).message, 'the name of the object (q) does not match the name on the URL (p)');
  const u = h.req({ type: 'ApiUpdate', resource: 'pods', namespace: 'default', name: 'p', object: { ...p, metadata: { ...p.metadata, uid: 'other' } } });
  t.is(u.code, 409);
  t.is(
    status(u).message,
    `Operation cannot be fulfilled on pods "p": StorageError: invalid object, Code: 4, Key: /registry/pods/default/p, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: other, UID in object meta: ${p.metadata.uid}`,
  );
});

test('a main-resource update ignores status; a pods/status update changes only status (and metadata)', (t) => {
  const h = new Harness();
  const p = h.createPod('p', { nodeName: 'node-1' });
  const main = h.req({ type: 'ApiUpdate', resource: 'pods', namespace: 'default', name: 'p', object: { ...p, status: { phase: 'Running' } } as Pod });
  t.is(main.code, 200);
  t.is((main.body as Pod).status?.phase, 'Pending');
  // That update changed nothing else: no write at all (GuaranteedUpdate no-op).
  t.is((main.body as Pod).metadata.resourceVersion, p.metadata.resourceVersion);
  const st = h.req({
    type: 'ApiUpdate',
    resource: 'pods',
    namespace: 'default',
    name: 'p',
    subresource: 'status',
    object: { ...p, spec: { ...p.spec, containers: [{ name: 'c', image: 'other' }] }, status: { phase: 'Running' } } as Pod,
  });
  t.is(st.code, 200);
  t.is((st.body as Pod).status?.phase, 'Running');
  t.is((st.body as Pod).spec.containers[0].image, 'busybox:1.36');
});

test('a status PATCH that changes nothing writes nothing: same RV, no event (minio trace)', (t) => {
  const h = new Harness();
  h.createPod('p', { nodeName: 'node-1' });
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'w', resourceVersion: String(h.api.storage.revision) }, 'watcher');
  const patch = { metadata: { uid: '' }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } };
  const first = h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', subresource: 'status', patchType: 'strategic', patch: { status: patch.status } });
  const mark = h.deliveries.length;
  const rev = h.api.storage.revision;
  const again = h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', subresource: 'status', patchType: 'strategic', patch: { status: patch.status } });
  t.is(again.code, 200);
  t.is((again.body as Pod).metadata.resourceVersion, (first.body as Pod).metadata.resourceVersion);
  t.is(h.api.storage.revision, rev);
  t.deepEqual(h.eventsFor('watcher', mark), []);
});

test('pods/status PATCH with the uid of a recreated pod is rejected (metadata.uid immutable, 422)', (t) => {
  const h = new Harness();
  const p = h.createPod('p', { nodeName: 'node-1' });
  const r = h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', subresource: 'status', patchType: 'strategic', patch: { metadata: { uid: 'old-uid' }, status: { phase: 'Running' } } });
  t.is(r.code, 422);
  t.is(status(r).message, 'Pod "p" is invalid: metadata.uid: Invalid value: "old-uid": field is immutable');
  t.is((h.get('p').body as Pod).metadata.uid, p.metadata.uid);
});

test('pod spec updates other than images are forbidden', (t) => {
  const h = new Harness();
  const p = h.createPod('p');
  const img = h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', patchType: 'strategic', patch: { spec: { containers: [{ name: 'c', image: 'busybox:1.37' }] } } });
  t.is(img.code, 200);
  t.is((img.body as Pod).spec.containers[0].image, 'busybox:1.37');
  const tgps = h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', patchType: 'merge', patch: { spec: { terminationGracePeriodSeconds: 5 } } });
  t.is(tgps.code, 422);
  t.true(status(tgps).message!.includes('spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`'));
  t.is(p.spec.terminationGracePeriodSeconds, 30);
});

test('finalizers cannot be added to an object being deleted', (t) => {
  const h = new Harness();
  h.createPod('p', { nodeName: 'node-1' });
  h.req({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'p', options: {} });
  const r = h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', patchType: 'merge', patch: { metadata: { finalizers: ['example.com/late'] } } });
  t.is(r.code, 422);
  t.true(status(r).message!.includes('metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted'));
});

test('an unqualified non-standard finalizer is invalid', (t) => {
  const h = new Harness();
  const r = h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'default', object: { metadata: { name: 'p', finalizers: ['hold'] }, spec: { containers: [{ name: 'c', image: 'i' }] } } as Pod });
  t.is(r.code, 422);
  t.is(status(r).message, 'Pod "p" is invalid: metadata.finalizers: Invalid value: "hold": name is neither a standard finalizer name nor is it fully qualified');
});

test('pods/binding: sets nodeName and PodScheduled=True, answers 201 Success; 409 when already bound or deleting', (t) => {
  const h = new Harness();
  const p = h.createPod('p');
  const bind = (node: string, uid = p.metadata.uid) =>
    h.at(3).req({ type: 'ApiCreate', resource: 'pods', namespace: 'default', name: 'p', subresource: 'binding', object: { metadata: { name: 'p', uid }, target: { kind: 'Node', name: node } } as never });
  const r = bind('node-1');
  t.is(r.code, 201);
  t.deepEqual(r.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
  const bound = h.get('p').body as Pod;
  t.is(bound.spec.nodeName, 'node-1');
  t.deepEqual(bound.status?.conditions, [{ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: '2025-01-01T00:00:03Z' }]);
  const again = bind('node-2');
  t.is(again.code, 409);
  t.is(status(again).message, 'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "node-1"');
  const wrongUid = bind('node-2', 'nope');
  t.is(wrongUid.code, 409);
  t.true(status(wrongUid).message!.includes('Precondition failed: UID in precondition: nope'));
  const q = h.createPod('q');
  h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'q', patchType: 'merge', patch: { metadata: { finalizers: ['example.com/x'] } } });
  h.req({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'q', options: {} });
  const del = h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'default', name: 'q', subresource: 'binding', object: { metadata: { name: 'q', uid: q.metadata.uid }, target: { name: 'node-1' } } as never });
  t.is(status(del).message, 'Operation cannot be fulfilled on pods/binding "q": pod q is being deleted, cannot be assigned to a host');
  const missing = h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'default', name: 'zz', subresource: 'binding', object: { metadata: { name: 'zz' }, target: { name: 'node-1' } } as never });
  t.is(missing.code, 404);
});

test('deployment create: apps/v1 defaults, generation 1, status {}; spec change bumps generation, status change does not', (t) => {
  const h = new Harness();
  const r = h.req({ type: 'ApiCreate', resource: 'deployments', namespace: 'default', object: deployment() });
  t.is(r.code, 201);
  const d = r.body as Deployment;
  t.is(d.metadata.generation, 1);
  t.deepEqual(d.status, {});
  t.is(d.spec.replicas, 1);
  t.deepEqual(d.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
  t.is(d.spec.revisionHistoryLimit, 10);
  t.is(d.spec.progressDeadlineSeconds, 600);
  t.is(d.spec.template.spec.terminationGracePeriodSeconds, 30);
  t.is(d.spec.template.spec.enableServiceLinks, undefined, 'SetDefaults_Pod does not apply to templates');
  const st = h.req({ type: 'ApiPatch', resource: 'deployments', namespace: 'default', name: 'web', subresource: 'status', patchType: 'merge', patch: { status: { replicas: 1, observedGeneration: 1 } } });
  t.is((st.body as Deployment).metadata.generation, 1);
  const sp = h.req({ type: 'ApiPatch', resource: 'deployments', namespace: 'default', name: 'web', patchType: 'merge', patch: { spec: { replicas: 3 } } });
  t.is((sp.body as Deployment).metadata.generation, 2);
  t.deepEqual((sp.body as Deployment).status, { replicas: 1, observedGeneration: 1 });
  const an = h.req({ type: 'ApiPatch', resource: 'deployments', namespace: 'default', name: 'web', patchType: 'merge', patch: { metadata: { annotations: { a: 'b' } } } });
  t.is((an.body as Deployment).metadata.generation, 3);
});

test('Recreate strategy keeps no rollingUpdate; a selector that does not match the template → 422', (t) => {
  const h = new Harness();
  const r = h.req({ type: 'ApiCreate', resource: 'deployments', namespace: 'default', object: deployment('rec', { strategy: { type: 'Recreate' } }) });
  t.deepEqual((r.body as Deployment).spec.strategy, { type: 'Recreate' });
  const bad = h.req({ type: 'ApiCreate', resource: 'deployments', namespace: 'default', object: deployment('bad', { selector: { matchLabels: { app: 'other' } } }) });
  t.is(bad.code, 422);
  t.is(status(bad).message, 'Deployment.apps "bad" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"webd"}: `selector` does not match template `labels`');
  t.deepEqual(status(bad).details?.group, 'apps');
});

test('deployments/scale: GET returns autoscaling/v1 Scale; merge PATCH sets spec.replicas', (t) => {
  const h = new Harness();
  const d = h.req({ type: 'ApiCreate', resource: 'deployments', namespace: 'default', object: deployment('web', { replicas: 2 }) }).body as Deployment;
  h.req({ type: 'ApiPatch', resource: 'deployments', namespace: 'default', name: 'web', subresource: 'status', patchType: 'merge', patch: { status: { replicas: 2 } } });
  const g = h.req({ type: 'ApiGet', resource: 'deployments', namespace: 'default', name: 'web', subresource: 'scale' });
  t.is(g.code, 200);
  const s = g.body as Scale;
  t.is(s.kind, 'Scale');
  t.is(s.apiVersion, 'autoscaling/v1');
  t.deepEqual(s.spec, { replicas: 2 });
  t.deepEqual(s.status, { replicas: 2, selector: 'app=webd' });
  t.is(s.metadata.uid, d.metadata.uid);
  const p = h.req({ type: 'ApiPatch', resource: 'deployments', namespace: 'default', name: 'web', subresource: 'scale', patchType: 'merge', patch: { spec: { replicas: 3 } } });
  t.is(p.code, 200);
  t.deepEqual((p.body as Scale).spec, { replicas: 3 });
  const after = h.req({ type: 'ApiGet', resource: 'deployments', namespace: 'default', name: 'web' }).body as Deployment;
  t.is(after.spec.replicas, 3);
  t.is(after.metadata.generation, 2);
  t.is((p.body as Scale).metadata.resourceVersion, after.metadata.resourceVersion);
  const neg = h.req({ type: 'ApiPatch', resource: 'deployments', namespace: 'default', name: 'web', subresource: 'scale', patchType: 'merge', patch: { spec: { replicas: -1 } } });
  t.is(neg.code, 422);
  t.is(status(neg).message, 'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0');
  const stale = h.req({ type: 'ApiUpdate', resource: 'deployments', namespace: 'default', name: 'web', subresource: 'scale', object: { ...s, spec: { replicas: 5 } } as Scale });
  t.is(stale.code, 409);
  const missing = h.req({ type: 'ApiGet', resource: 'deployments', namespace: 'default', name: 'nope', subresource: 'scale' });
  t.is(missing.code, 404);
});

test('replicasets: status {replicas: 0} on create, generation, scale subresource', (t) => {
  const h = new Harness();
  const rs: ReplicaSet = {
    metadata: { name: 'web-abc' },
    spec: { selector: { matchLabels: { app: 'w' } }, template: { metadata: { labels: { app: 'w' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  };
  const r = h.req({ type: 'ApiCreate', resource: 'replicasets', namespace: 'default', object: rs });
  t.is(r.code, 201);
  t.deepEqual((r.body as ReplicaSet).status, { replicas: 0 });
  t.is((r.body as ReplicaSet).spec.replicas, 1);
  const sc = h.req({ type: 'ApiPatch', resource: 'replicasets', namespace: 'default', name: 'web-abc', subresource: 'scale', patchType: 'merge', patch: { spec: { replicas: 0 } } });
  t.is(sc.code, 200);
  t.is((h.get('web-abc', 'replicasets').body as ReplicaSet).spec.replicas, 0);
});

test('events: created, listed and filtered by involvedObject field selectors', (t) => {
  const h = new Harness();
  const pod = h.createPod('web-1');
  const ev = (name: string, involved: string, uid: string, reason: string): Event =>
    ({
      metadata: { name },
      involvedObject: { kind: 'Pod', namespace: 'default', name: involved, uid, apiVersion: 'v1' },
      reason,
      message: `${reason} ${involved}`,
      source: { component: 'default-scheduler' },
      firstTimestamp: '2025-01-01T00:00:01Z',
      lastTimestamp: '2025-01-01T00:00:01Z',
      count: 1,
      type: 'Normal',
    }) as Event;
  for (const e of [ev('web-1.1', 'web-1', pod.metadata.uid!, 'Scheduled'), ev('web-1.2', 'web-1', pod.metadata.uid!, 'Pulled'), ev('web-2.1', 'web-2', 'u2', 'Scheduled')]) {
    t.is(h.req({ type: 'ApiCreate', resource: 'events', namespace: 'default', object: e }).code, 201);
  }
  const r = h.req({
    type: 'ApiList',
    resource: 'events',
    namespace: 'default',
    fieldSelector: `involvedObject.name=web-1,involvedObject.namespace=default,involvedObject.uid=${pod.metadata.uid}`,
  });
  t.deepEqual((r.body as KubeList<Event>).items.map((e) => e.reason), ['Scheduled', 'Pulled']);
  const kinds = h.req({ type: 'ApiList', resource: 'events', fieldSelector: 'involvedObject.kind=Pod,reason=Scheduled' });
  t.is((kinds.body as KubeList<Event>).items.length, 2);
  const table = h.at(61).req({ type: 'ApiList', resource: 'events', namespace: 'default', asTable: true }).body as Table;
  t.deepEqual(table.rows[0].cells, ['60s', 'Normal', 'Scheduled', 'pod/web-1', 'Scheduled web-1']);
});

test('lists: kind, string RV, label and field selectors, all namespaces, Table with list RV; bad selectors → 400', (t) => {
  const h = new Harness();
  h.createPod('a', { nodeName: 'node-1' }, { labels: { app: 'web' } });
  h.createPod('b', { nodeName: 'node-2' }, { labels: { app: 'db' } });
  h.createPod('c', { nodeName: 'node-1' }, { labels: { app: 'web' } }, 'kube-system');
  const all = h.req({ type: 'ApiList', resource: 'pods' }).body as KubeList<Pod>;
  t.is(all.kind, 'PodList');
  t.is(all.apiVersion, 'v1');
  t.is(all.metadata.resourceVersion, String(h.api.storage.revision));
  t.deepEqual(all.items.map((p) => p.metadata.name), ['a', 'b', 'c']);
  const web = h.req({ type: 'ApiList', resource: 'pods', namespace: 'default', labelSelector: 'app=web' }).body as KubeList<Pod>;
  t.deepEqual(web.items.map((p) => p.metadata.name), ['a']);
  const node1 = h.req({ type: 'ApiList', resource: 'pods', fieldSelector: 'spec.nodeName=node-1,status.phase!=Succeeded,status.phase!=Failed' }).body as KubeList<Pod>;
  t.deepEqual(node1.items.map((p) => p.metadata.name), ['a', 'c']);
  const tbl = h.req({ type: 'ApiList', resource: 'pods', namespace: 'default', asTable: true }).body as Table;
  t.is(tbl.metadata.resourceVersion, all.metadata.resourceVersion);
  t.deepEqual(tbl.rows.map((r) => r.cells[0]), ['a', 'b']);
  const bad = h.req({ type: 'ApiList', resource: 'pods', fieldSelector: 'spec.hostname=x' });
  t.is(bad.code, 400);
  t.is(status(bad).message, 'field label not supported: spec.hostname');
  t.is(h.req({ type: 'ApiList', resource: 'pods', labelSelector: 'app in web' }).code, 400);
  t.deepEqual((h.req({ type: 'ApiList', resource: 'pods', namespace: 'nons' }).body as KubeList).items, []);
});

test('nodes are cluster-scoped: create ignores a namespace; status subresource keeps spec; Table rows', (t) => {
  const h = new Harness();
  const r = h.req({ type: 'ApiCreate', resource: 'nodes', object: { metadata: { name: 'node-1', labels: { 'node-role.kubernetes.io/worker': '' } }, status: { nodeInfo: { kubeletVersion: 'v1.22.8' } } } as never });
  t.is(r.code, 201);
  t.is((r.body as Pod).metadata.namespace, undefined);
  t.is(h.writes[0].object.metadata.name, 'node-1');
  h.req({ type: 'ApiPatch', resource: 'nodes', name: 'node-1', subresource: 'status', patchType: 'strategic', patch: { spec: { unschedulable: true }, status: { conditions: [{ type: 'Ready', status: 'True' }] } } });
  const tbl = h.at(30).req({ type: 'ApiGet', resource: 'nodes', name: 'node-1', asTable: true }).body as Table;
  t.deepEqual(tbl.rows[0].cells, ['node-1', 'Ready', 'worker', '30s', 'v1.22.8']);
});

test('server-side apply creates a missing object (201) and merges into an existing one (200)', (t) => {
  const h = new Harness();
  const first = h.req({ type: 'ApiPatch', resource: 'deployments', namespace: 'default', name: 'web', patchType: 'apply', fieldManager: 'kubectl', patch: deployment() });
  t.is(first.code, 201);
  const second = h.req({ type: 'ApiPatch', resource: 'deployments', namespace: 'default', name: 'web', patchType: 'apply', fieldManager: 'kubectl', patch: { ...deployment(), spec: { ...deployment().spec, replicas: 4 } } });
  t.is(second.code, 200);
  t.is((second.body as Deployment).spec.replicas, 4);
  // ValidatePatchOptions: an apply needs a fieldManager.
  const anon = h.req({ type: 'ApiPatch', resource: 'deployments', namespace: 'default', name: 'web', patchType: 'apply', patch: deployment() });
  t.is(anon.code, 422);
  t.is((anon.body as Status).message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
});

test('PATCH of a missing object → 404; PATCH renaming the object → 400', (t) => {
  const h = new Harness();
  t.is(h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'nope', patchType: 'merge', patch: {} }).code, 404);
  h.createPod('p');
  const r = h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', patchType: 'merge', patch: { metadata: { name: 'q' } } });
  t.is(r.code, 400);
  t.is((r.body as Status).message, 'the name of the object (q) does not match the name on the URL (p)');
});

test('a PATCH carrying a stale metadata.resourceVersion → 409 (kubectl annotate --resource-version)', (t) => {
  const h = new Harness();
  h.createPod('p');
  const r = h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', patchType: 'merge', patch: { metadata: { resourceVersion: '1', annotations: { a: 'b' } } } });
  t.is(r.code, 409);
});

test('events: a node event (no involvedObject.namespace) lives in "default"; a mismatched namespace → 422', (t) => {
  const h = new Harness();
  const nodeEv = { metadata: { name: 'node-1.1' }, involvedObject: { kind: 'Node', name: 'node-1' }, reason: 'Starting' } as Event;
  t.is(h.req({ type: 'ApiCreate', resource: 'events', namespace: 'default', object: nodeEv }).code, 201);
  const bad = { metadata: { name: 'p.1' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'kube-system' }, reason: 'X' } as Event;
  const r = h.req({ type: 'ApiCreate', resource: 'events', namespace: 'default', object: bad });
  t.is(r.code, 422);
  t.is(status(r).message, 'Event "p.1" is invalid: involvedObject.namespace: Invalid value: "kube-system": does not match event.namespace');
});

test('PATCH of a missing event → 404 even though events allow create-on-update (PUT creates)', (t) => {
  const h = new Harness();
  const p = h.req({ type: 'ApiPatch', resource: 'events', namespace: 'default', name: 'e1', patchType: 'merge', patch: { reason: 'X' } });
  t.is(p.code, 404);
  t.is(status(p).message, 'events "e1" not found');
  const put = h.req({ type: 'ApiUpdate', resource: 'events', namespace: 'default', name: 'e1', object: { metadata: { name: 'e1' }, involvedObject: { kind: 'Node', name: 'n' } } as Event });
  t.is(put.code, 201);
});
