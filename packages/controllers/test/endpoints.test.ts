/**
 * The Endpoints and EndpointSlice reconcilers as pure functions (issue #18): what a running, a
 * not-ready and a terminating pod become in `Endpoints` (desiredSubsets) and in the slice
 * (reconcileSlices, EndpointSliceTerminatingCondition on as 1.22.8 ships it), the 100-endpoint
 * slice bound, the placeholder, the pod-update triggers.
 */
import test from 'ava';
import type { EndpointSlice, Pod, Service } from '@podsim/api';
import { desiredSubsets, truncateSubsets } from '../src/endpoint/endpointsController.js';
import { servicesToUpdateOnPodChange } from '../src/endpoint/endpointUtil.js';
import { reconcileSlices } from '../src/endpointslice/reconciler.js';
import { EndpointSliceTracker } from '../src/endpointslice/endpointSliceController.js';

const svc = (spec: Partial<Service['spec']> = {}): Service => ({
  metadata: { name: 'web', namespace: 'default', uid: 'svc-uid' },
  spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }], clusterIP: '10.96.0.10', ...spec },
});

let rv = 1;
function pod(name: string, ip: string | undefined, opts: { ready?: boolean; deleting?: boolean; phase?: Pod['status'] extends infer S ? (S extends { phase?: infer P } ? P : never) : never } = {}): Pod {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}`, labels: { app: 'web' }, resourceVersion: String(rv++), ...(opts.deleting ? { deletionTimestamp: '2025-01-01T00:00:10Z' } : {}) },
    spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'nginx' }] },
    status: {
      phase: opts.phase ?? 'Running',
      ...(ip ? { podIP: ip, podIPs: [{ ip }] } : {}),
      conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }],
    },
  };
}

test('Endpoints: ready pods in addresses, not-ready in notReadyAddresses; terminating, IP-less and terminal pods left out', (t) => {
  const pods = [pod('a', '10.244.0.2'), pod('b', '10.244.0.3', { ready: false }), pod('c', '10.244.0.4', { deleting: true }), pod('d', undefined), pod('e', '10.244.0.6', { phase: 'Succeeded' })];
  const { subsets } = desiredSubsets(svc(), pods);
  t.is(subsets.length, 1);
  t.deepEqual(subsets[0].addresses?.map((a) => a.ip), ['10.244.0.2']);
  t.deepEqual(subsets[0].notReadyAddresses?.map((a) => a.ip), ['10.244.0.3']);
  t.deepEqual(subsets[0].ports, [{ port: 8080, protocol: 'TCP' }]);
  t.is(subsets[0].addresses?.[0].targetRef?.name, 'a');
});

test('Endpoints: publishNotReadyAddresses keeps a terminating, unready pod in addresses', (t) => {
  const { subsets } = desiredSubsets(svc({ publishNotReadyAddresses: true }), [pod('c', '10.244.0.4', { deleting: true, ready: false })]);
  t.deepEqual(subsets[0].addresses?.map((a) => a.ip), ['10.244.0.4']);
});

test('Endpoints: truncation at 1000 keeps ready addresses first', (t) => {
  const pods = Array.from({ length: 1100 }, (_, i) => pod(`p${i}`, `10.244.${Math.floor(i / 250)}.${(i % 250) + 1}`, { ready: i < 990 }));
  const d = desiredSubsets(svc(), pods);
  const r = truncateSubsets(d.subsets, d.ready, d.notReady);
  t.true(r.truncated);
  t.is(r.subsets[0].addresses?.length, 990);
  t.is(r.subsets[0].notReadyAddresses?.length, 10);
});

test('EndpointSlice: running ready=serving=true; not ready all false; terminating ready=false, serving=PodReady, terminating=true (gate on)', (t) => {
  const r = reconcileSlices(svc(), [pod('a', '10.244.0.2'), pod('b', '10.244.0.3', { ready: false }), pod('c', '10.244.0.4', { deleting: true })], []);
  t.is(r.create.length, 1);
  const s = r.create[0];
  t.is(s.metadata.generateName, 'web-');
  t.deepEqual(s.metadata.labels, { 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' });
  t.deepEqual(s.ports, [{ name: '', port: 8080, protocol: 'TCP' }]);
  const cond = Object.fromEntries(s.endpoints.map((e) => [e.targetRef?.name, e.conditions]));
  t.deepEqual(cond, {
    a: { ready: true, serving: true, terminating: false },
    b: { ready: false, serving: false, terminating: false },
    c: { ready: false, serving: true, terminating: true },
  });
  t.is(s.endpoints[0].nodeName, 'node-1');
});

test('EndpointSlice: with the gate off a terminating pod leaves the slice (the 1.21 behaviour)', (t) => {
  const r = reconcileSlices(svc(), [pod('a', '10.244.0.2'), pod('c', '10.244.0.4', { deleting: true })], [], 100, { endpointSliceTerminatingCondition: false });
  t.deepEqual(r.create[0].endpoints.map((e) => e.targetRef?.name), ['a']);
  t.deepEqual(r.create[0].endpoints[0].conditions, { ready: true });
});

test('EndpointSlice: an existing slice is updated in place when its pod starts terminating, and the endpoint dropped when the pod is gone', (t) => {
  const a = pod('a', '10.244.0.2');
  const b = pod('b', '10.244.0.3');
  const first = reconcileSlices(svc(), [a, b], []).create[0];
  const existing: EndpointSlice = { ...first, metadata: { ...first.metadata, name: 'web-abcde', uid: 's1', generation: 1, ownerReferences: first.metadata.ownerReferences } };
  const term = reconcileSlices(svc(), [{ ...a, metadata: { ...a.metadata, deletionTimestamp: '2025-01-01T00:00:10Z' } }, b], [existing]);
  t.deepEqual([term.create.length, term.update.length, term.delete.length], [0, 1, 0]);
  t.deepEqual(term.update[0].endpoints.find((e) => e.targetRef?.name === 'a')?.conditions, { ready: false, serving: true, terminating: true });
  const gone = reconcileSlices(svc(), [b], [existing]);
  t.deepEqual(gone.update[0].endpoints.map((e) => e.targetRef?.name), ['b']);
  // A pure resourceVersion change of the pod is no slice change.
  t.deepEqual(reconcileSlices(svc(), [{ ...a, metadata: { ...a.metadata, resourceVersion: '999' } }, b], [existing]), { create: [], update: [], delete: [] });
});

test('EndpointSlice: at most 100 endpoints per slice (250 pods → 3 slices); no pods → one placeholder', (t) => {
  const pods = Array.from({ length: 250 }, (_, i) => pod(`p${String(i).padStart(3, '0')}`, `10.244.${Math.floor(i / 200)}.${(i % 200) + 1}`));
  const r = reconcileSlices(svc(), pods, []);
  t.deepEqual(r.create.map((s) => s.endpoints.length), [100, 100, 50]);
  const empty = reconcileSlices(svc(), [], []);
  t.is(empty.create.length, 1);
  t.deepEqual([empty.create[0].endpoints, empty.create[0].ports], [[], []]);
  // The placeholder is kept, not recreated.
  const ph: EndpointSlice = { ...empty.create[0], metadata: { ...empty.create[0].metadata, name: 'web-ph', uid: 'ph' } };
  t.deepEqual(reconcileSlices(svc(), [], [ph]), { create: [], update: [], delete: [] });
  // The first pod turns the placeholder into its slice (a create coinciding with a delete is an update).
  const one = reconcileSlices(svc(), [pod('a', '10.244.0.2')], [ph]);
  t.deepEqual([one.create.length, one.update.length, one.delete.length], [0, 1, 0]);
  t.is(one.update[0].metadata.name, 'web-ph');
});

test('pod update triggers: deletionTimestamp, readiness and IP changes enqueue the Service; a resync or an unrelated change does not', (t) => {
  const services = [svc()];
  const a = pod('a', '10.244.0.2');
  const bump = (p: Pod, f: (p: Pod) => Pod) => f({ ...p, metadata: { ...p.metadata, resourceVersion: String(rv++) } });
  t.deepEqual([...servicesToUpdateOnPodChange(services, a, bump(a, (p) => ({ ...p, metadata: { ...p.metadata, deletionTimestamp: 'x' } })))], ['default/web']);
  t.deepEqual([...servicesToUpdateOnPodChange(services, a, bump(a, (p) => ({ ...p, status: { ...p.status, conditions: [{ type: 'Ready', status: 'False' }] } })))], ['default/web']);
  t.deepEqual([...servicesToUpdateOnPodChange(services, a, bump(a, (p) => ({ ...p, status: { ...p.status, podIP: '10.244.0.9', podIPs: [{ ip: '10.244.0.9' }] } })))], ['default/web']);
  t.deepEqual([...servicesToUpdateOnPodChange(services, a, a)], []);
  t.deepEqual([...servicesToUpdateOnPodChange(services, a, bump(a, (p) => ({ ...p, metadata: { ...p.metadata, annotations: { x: 'y' } } })))], []);
});

test('EndpointSliceTracker: own writes are not resynced; an informer behind the last write is stale', (t) => {
  const tr = new EndpointSliceTracker();
  const s = (generation: number): EndpointSlice => ({ metadata: { name: 'web-1', uid: 'u1', generation }, addressType: 'IPv4', endpoints: [] });
  tr.update('default/web', s(2));
  t.false(tr.shouldSync('default/web', s(2)));
  t.true(tr.shouldSync('default/web', s(3)));
  t.true(tr.staleSlices('default/web', [s(1)]));
  t.true(tr.staleSlices('default/web', []));
  t.false(tr.staleSlices('default/web', [s(2)]));
  tr.expectDeletion('default/web', s(2));
  t.true(tr.staleSlices('default/web', [s(2)]));
  t.false(tr.handleDeletion('default/web', s(2)));
});
