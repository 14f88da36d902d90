/**
 * Every row of the pod DELETE decision table (spec/deletion-protocol.md §2.6), asserting the
 * storage writes, the watch events a pods watcher receives, and the HTTP code and body — plus
 * invariants 3, 10, 11, 14, 15 and 21 of §14.
 */
import test from 'ava';
import type { ApiResult, ApiWatchEvent, DeleteOptions, Pod, Status } from '@podsim/api';
import { Harness, status } from './helpers.js';

const T0 = '2025-01-01T00:00:00Z';

/** A harness with a scheduled pod `p` (created at t=0) and a `watcher` watching pods. */
function setup(spec: Partial<Pod['spec']> = { nodeName: 'node-1' }, meta: Partial<Pod['metadata']> = {}) {
  const h = new Harness();
  const pod = h.createPod('p', spec, meta);
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'w', resourceVersion: pod.metadata.resourceVersion }, 'watcher');
  const mark = { writes: h.writes.length, deliveries: h.deliveries.length };
  const del = (options?: DeleteOptions, at = 10): ApiResult => h.at(at).req({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'p', options });
  const writes = () => h.writes.slice(mark.writes).map((w) => w.type);
  const events = (): ApiWatchEvent['event'][] => h.eventsFor('watcher', mark.deliveries).map((b) => b.event);
  const reset = () => {
    mark.writes = h.writes.length;
    mark.deliveries = h.deliveries.length;
  };
  return { h, pod, del, writes, events, reset };
}

const podOf = (r: ApiResult) => r.body as Pod;

test('row 1: first DELETE of a scheduled running pod, default grace 30 → one MODIFIED, 200 + pod with deletionTimestamp', (t) => {
  const { h, pod, del, writes, events } = setup();
  const r = del({ propagationPolicy: 'Background' });
  t.is(r.code, 200);
  t.is(podOf(r).kind, 'Pod');
  t.is(podOf(r).metadata.deletionTimestamp, '2025-01-01T00:00:40Z'); // now (10 s) + 30 s
  t.is(podOf(r).metadata.deletionGracePeriodSeconds, 30);
  t.deepEqual(writes(), ['MODIFIED']);
  const ev = events();
  t.deepEqual(ev.map((e) => e.type), ['MODIFIED']);
  t.is((ev[0].object as Pod).metadata.deletionGracePeriodSeconds, 30);
  t.true(Number(podOf(r).metadata.resourceVersion) > Number(pod.metadata.resourceVersion));
  t.is(podOf(h.get('p')).metadata.deletionTimestamp, '2025-01-01T00:00:40Z');
});

test('row 1: a given grace (5) is used; generation is bumped when it was > 0', (t) => {
  const { del, writes } = setup({ nodeName: 'node-1' }, { generation: 1 });
  const r = del({ gracePeriodSeconds: 5 });
  t.is(r.code, 200);
  t.is(podOf(r).metadata.deletionTimestamp, '2025-01-01T00:00:15Z');
  t.is(podOf(r).metadata.deletionGracePeriodSeconds, 5);
  t.is(podOf(r).metadata.generation, 2);
  t.deepEqual(writes(), ['MODIFIED']);
});

test('row 1: a DELETE without options uses the handler defaults (empty DeleteOptions), not grace 0', (t) => {
  const { del, writes } = setup();
  const r = del(undefined);
  t.is(podOf(r).metadata.deletionGracePeriodSeconds, 30);
  t.deepEqual(writes(), ['MODIFIED']);
});

test('row 2: first DELETE with grace 0 (force) → MODIFIED (dts=now, dgps=0) then DELETED; 200 + last stored pod', (t) => {
  const { h, del, writes, events } = setup();
  const r = del({ gracePeriodSeconds: 0, propagationPolicy: 'Background' });
  t.is(r.code, 200);
  t.deepEqual(writes(), ['MODIFIED', 'DELETED']);
  const ev = events();
  t.deepEqual(ev.map((e) => e.type), ['MODIFIED', 'DELETED']);
  const mod = ev[0].object as Pod;
  const gone = ev[1].object as Pod;
  t.is(mod.metadata.deletionTimestamp, '2025-01-01T00:00:10Z');
  t.is(mod.metadata.deletionGracePeriodSeconds, 0);
  // The response is the last stored state: the MODIFIED object, with its RV.
  t.is(podOf(r).metadata.resourceVersion, mod.metadata.resourceVersion);
  t.is(podOf(r).metadata.deletionGracePeriodSeconds, 0);
  // DELETED carries the previous object stamped with the delete's (greater) revision (invariant 11).
  t.is(Number(gone.metadata.resourceVersion), Number(mod.metadata.resourceVersion) + 1);
  t.is(gone.metadata.deletionGracePeriodSeconds, 0);
  t.is(h.get('p').code, 404);
});

test('row 3: first DELETE of an unscheduled pod → grace forced to 0: MODIFIED then DELETED, 200', (t) => {
  const { del, writes, events } = setup({});
  const r = del({ gracePeriodSeconds: 60 });
  t.is(r.code, 200);
  t.is(podOf(r).metadata.deletionGracePeriodSeconds, 0);
  t.deepEqual(writes(), ['MODIFIED', 'DELETED']);
  t.deepEqual(events().map((e) => e.type), ['MODIFIED', 'DELETED']);
});

for (const phase of ['Succeeded', 'Failed'] as const) {
  test(`row 4: first DELETE of a ${phase} pod → grace 0: MODIFIED then DELETED, 200`, (t) => {
    const { h, del, writes, events, reset } = setup();
    t.is(h.setPhase('p', phase).code, 200);
    reset();
    const r = del();
    t.is(r.code, 200);
    t.is(podOf(r).metadata.deletionGracePeriodSeconds, 0);
    t.is(podOf(r).status?.phase, phase);
    t.deepEqual(writes(), ['MODIFIED', 'DELETED']);
    t.deepEqual(events().map((e) => e.type), ['MODIFIED', 'DELETED']);
  });
}

test('row 5 / invariant 21: second DELETE without grace → no write, no event, same RV; 200 + current pod', (t) => {
  const { h, del, writes, events, reset } = setup();
  const first = podOf(del({}, 10));
  reset();
  const rev = h.api.storage.revision;
  const r = del({ propagationPolicy: 'Background' }, 12);
  t.is(r.code, 200);
  t.deepEqual(podOf(r), first);
  t.deepEqual(writes(), []);
  t.deepEqual(events(), []);
  t.is(h.api.storage.revision, rev);
});

test('row 5 / invariant 3: second DELETE with an equal or longer grace changes nothing', (t) => {
  const { del, writes, events, reset } = setup();
  del({ gracePeriodSeconds: 20 }, 10);
  reset();
  for (const g of [20, 45]) {
    const r = del({ gracePeriodSeconds: g }, 11);
    t.is(r.code, 200);
    t.is(podOf(r).metadata.deletionGracePeriodSeconds, 20);
    t.is(podOf(r).metadata.deletionTimestamp, '2025-01-01T00:00:30Z');
  }
  t.deepEqual(writes(), []);
  t.deepEqual(events(), []);
});

test('row 6 / invariant 3: second DELETE with a shorter grace → dts = original request + new grace, one MODIFIED', (t) => {
  const { del, writes, events, reset } = setup();
  del({}, 10); // dts 00:00:40, dgps 30
  reset();
  const r = del({ gracePeriodSeconds: 5 }, 20);
  t.is(r.code, 200);
  t.is(podOf(r).metadata.deletionGracePeriodSeconds, 5);
  // dts_old − 30 + 5 = 00:00:15 (the first request time plus the new grace), not now + 5.
  t.is(podOf(r).metadata.deletionTimestamp, '2025-01-01T00:00:15Z');
  t.deepEqual(writes(), ['MODIFIED']);
  t.deepEqual(events().map((e) => e.type), ['MODIFIED']);
});

test('row 7 / invariant 10: second DELETE with grace 0 (the kubelet final delete) → MODIFIED (dgps 0, dts = request time) then DELETED', (t) => {
  const { pod, del, writes, events, reset } = setup();
  del({}, 10);
  reset();
  const r = del({ gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } }, 14);
  t.is(r.code, 200);
  t.deepEqual(writes(), ['MODIFIED', 'DELETED']);
  const ev = events();
  t.deepEqual(ev.map((e) => e.type), ['MODIFIED', 'DELETED']);
  const mod = ev[0].object as Pod;
  t.is(mod.metadata.deletionGracePeriodSeconds, 0);
  t.is(mod.metadata.deletionTimestamp, '2025-01-01T00:00:10Z');
  t.true(Number(ev[1].object.metadata.resourceVersion) > Number(mod.metadata.resourceVersion));
  t.is(podOf(r).metadata.deletionGracePeriodSeconds, 0);
});

test('row 7: an RV precondition on the final delete is moved to the RV of the graceful update', (t) => {
  const { del, writes } = setup();
  const first = podOf(del({}, 10));
  const r = del({ gracePeriodSeconds: 0, preconditions: { resourceVersion: first.metadata.resourceVersion } }, 12);
  t.is(r.code, 200);
  t.deepEqual(writes(), ['MODIFIED', 'MODIFIED', 'DELETED']);
});

test('row 8 / invariant 14: first DELETE with grace 0 on a pod with finalizers → update only (dgps 0), the pod stays', (t) => {
  const { h, del, writes, events } = setup({ nodeName: 'node-1' }, { finalizers: ['example.com/hold'] });
  const r = del({ gracePeriodSeconds: 0 });
  t.is(r.code, 200);
  t.is(podOf(r).metadata.deletionGracePeriodSeconds, 0);
  t.deepEqual(podOf(r).metadata.finalizers, ['example.com/hold']);
  t.deepEqual(writes(), ['MODIFIED']);
  t.deepEqual(events().map((e) => e.type), ['MODIFIED']);
  t.is(h.get('p').code, 200);
});

test('row 8 / invariant 14: the kubelet final DELETE (grace 0) on a terminating pod with finalizers only sets dgps 0', (t) => {
  const { h, pod, del, writes, events, reset } = setup({ nodeName: 'node-1' }, { finalizers: ['example.com/hold'] });
  del({}, 10);
  reset();
  const r = del({ gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } }, 13);
  t.is(r.code, 200);
  t.deepEqual(writes(), ['MODIFIED']);
  t.deepEqual(events().map((e) => e.type), ['MODIFIED']);
  t.is(podOf(h.get('p')).metadata.deletionGracePeriodSeconds, 0);
  t.is(podOf(h.get('p')).metadata.deletionTimestamp, '2025-01-01T00:00:10Z');
  // A third DELETE: dgps is already 0 → "not graceful" → markAsDeleting again, which changes
  // nothing: no write, the pod still exists.
  reset();
  const r3 = del({ gracePeriodSeconds: 0 }, 20);
  t.is(r3.code, 200);
  t.deepEqual(writes(), []);
  t.is(h.get('p').code, 200);
});

test('row 8: an unscheduled pod with a finalizer is marked deleting, not removed', (t) => {
  const { h, del, writes } = setup({}, { finalizers: ['example.com/hold'] });
  const r = del({});
  t.is(r.code, 200);
  t.is(podOf(r).metadata.deletionGracePeriodSeconds, 0);
  t.deepEqual(writes(), ['MODIFIED']);
  t.is(h.get('p').code, 200);
});

test('row 9: removing the last finalizer of a pod with dgps 0 deletes it on that update: only DELETED, update answers 200', (t) => {
  const { h, del, writes, events, reset } = setup({ nodeName: 'node-1' }, { finalizers: ['example.com/hold'] });
  del({ gracePeriodSeconds: 0 }, 10);
  reset();
  const r = h.at(100).req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', patchType: 'merge', patch: { metadata: { finalizers: null } } });
  t.is(r.code, 200);
  t.is(podOf(r).metadata.finalizers, undefined);
  t.deepEqual(writes(), ['DELETED']);
  const ev = events();
  t.deepEqual(ev.map((e) => e.type), ['DELETED']);
  // The DELETED object is the previous stored state (still with the finalizer), new RV.
  t.deepEqual((ev[0].object as Pod).metadata.finalizers, ['example.com/hold']);
  t.is(h.get('p').code, 404);
});

test('row 9 (C10 variant B): removing the finalizer while dgps > 0 does not delete; the kubelet DELETE does', (t) => {
  const { h, pod, del, writes, events, reset } = setup({ nodeName: 'node-1' }, { finalizers: ['example.com/hold'] });
  del({}, 0.5); // dgps 30
  reset();
  const r = h.at(1).req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', patchType: 'merge', patch: { metadata: { finalizers: null } } });
  t.is(r.code, 200);
  t.deepEqual(writes(), ['MODIFIED']);
  t.is(h.get('p').code, 200);
  reset();
  del({ gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } }, 3);
  t.deepEqual(writes(), ['MODIFIED', 'DELETED']);
  t.deepEqual(events().map((e) => e.type), ['MODIFIED', 'DELETED']);
});

test('row 10: DELETE of a missing pod → 404 NotFound Status', (t) => {
  const h = new Harness();
  const r = h.req({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'nope', options: {} });
  t.is(r.code, 404);
  t.deepEqual(status(r), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'pods "nope" not found',
    reason: 'NotFound',
    details: { name: 'nope', kind: 'pods' },
    code: 404,
  });
  t.deepEqual(h.writes, []);
});

test('row 11 / invariant 15: a UID precondition never deletes a different pod with the same name (409)', (t) => {
  const { h, pod, del, writes, events, reset } = setup();
  // Force-delete and recreate "p": same name, new UID.
  del({ gracePeriodSeconds: 0 }, 1);
  const p2 = h.at(2).createPod('p', { nodeName: 'node-1' });
  t.not(p2.metadata.uid, pod.metadata.uid);
  reset();
  const r = del({ gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } }, 3);
  t.is(r.code, 409);
  const st = status(r);
  t.is(st.reason, 'Conflict');
  // rest.BeforeDelete names the *kind* (GroupResource{Resource: gvk.Kind}) in v0.22.8.
  t.is(
    st.message,
    `Operation cannot be fulfilled on Pod "p": the UID in the precondition (${pod.metadata.uid}) does not match the UID in record (${p2.metadata.uid}). The object might have been deleted and then recreated`,
  );
  t.deepEqual(st.details, { name: 'p', kind: 'Pod' });
  t.deepEqual(writes(), []);
  t.deepEqual(events(), []);
  t.is(podOf(h.get('p')).metadata.uid, p2.metadata.uid);
});

test('row 11: a stale resourceVersion precondition → 409 Conflict, nothing written', (t) => {
  const { pod, del, writes } = setup();
  del({}, 1);
  const r = del({ gracePeriodSeconds: 0, preconditions: { resourceVersion: pod.metadata.resourceVersion } }, 2);
  t.is(r.code, 409);
  t.is(
    status(r).message,
    `Operation cannot be fulfilled on Pod "p": the ResourceVersion in the precondition (${pod.metadata.resourceVersion}) does not match the ResourceVersion in record (${Number(pod.metadata.resourceVersion) + 1}). The object might have been modified`,
  );
  t.deepEqual(writes(), ['MODIFIED']);
});

test('invariant 11: RVs of successive events for one pod strictly increase through a full kubelet-driven deletion', (t) => {
  const { h, pod, del, events } = setup();
  h.at(1).setPhase('p', 'Running');
  del({}, 2);
  h.at(4).req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', subresource: 'status', patchType: 'merge', patch: { status: { conditions: [{ type: 'Ready', status: 'False' }] } } });
  del({ gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } }, 5);
  const ev = events();
  t.deepEqual(ev.map((e) => e.type), ['MODIFIED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED']);
  const rvs = ev.map((e) => Number(e.object.metadata.resourceVersion));
  for (let i = 1; i < rvs.length; i++) t.true(rvs[i] > rvs[i - 1]);
  // Invariant 10: exactly one MODIFIED with a deletionTimestamp set before the end, and the last
  // MODIFIED has dgps 0 before DELETED.
  const pods = ev.map((e) => e.object as Pod);
  const withDts = pods.filter((p, i) => ev[i].type === 'MODIFIED' && p.metadata.deletionTimestamp);
  t.is(withDts[0].metadata.deletionGracePeriodSeconds, 30);
  t.is(pods[3].metadata.deletionGracePeriodSeconds, 0);
});

test('negative grace on the delete path becomes 1', (t) => {
  const { del } = setup();
  const r = del({ gracePeriodSeconds: -5 });
  t.is(podOf(r).metadata.deletionGracePeriodSeconds, 1);
  t.is(podOf(r).metadata.deletionTimestamp, '2025-01-01T00:00:11Z');
});

test('a negative spec.terminationGracePeriodSeconds is treated as 1 by CheckGracefulDelete', (t) => {
  const { del } = setup({ nodeName: 'node-1', terminationGracePeriodSeconds: -1 });
  const r = del({});
  t.is(podOf(r).metadata.deletionGracePeriodSeconds, 1);
});

test('spec grace 0 = instant API removal (C06): MODIFIED then DELETED on the first DELETE', (t) => {
  const { del, writes } = setup({ nodeName: 'node-1', terminationGracePeriodSeconds: 0 });
  t.is(del({}).code, 200);
  t.deepEqual(writes(), ['MODIFIED', 'DELETED']);
});

test('ValidateDeleteOptions: orphanDependents together with propagationPolicy → 422 DeleteOptions invalid', (t) => {
  const { del, writes } = setup();
  const r = del({ orphanDependents: true, propagationPolicy: 'Background' });
  t.is(r.code, 422);
  t.is(
    status(r).message,
    'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set',
  );
  t.deepEqual(status(r).details?.causes, [
    { reason: 'FieldValueInvalid', message: 'Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set', field: 'propagationPolicy' },
  ]);
  t.deepEqual(writes(), []);
});

test('ValidateDeleteOptions: an unknown propagationPolicy → 422 NotSupported', (t) => {
  const { del } = setup();
  const r = del({ propagationPolicy: 'Sideways' as DeleteOptions['propagationPolicy'] });
  t.is(r.code, 422);
  t.is(
    status(r).message,
    'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"',
  );
});

test('propagationPolicy Foreground adds the foregroundDeletion finalizer, so the pod is never removed by the DELETE', (t) => {
  const { h, del, writes } = setup();
  const r = del({ gracePeriodSeconds: 0, propagationPolicy: 'Foreground' });
  t.is(r.code, 200);
  t.deepEqual(podOf(r).metadata.finalizers, ['foregroundDeletion']);
  t.deepEqual(writes(), ['MODIFIED']);
  t.is(h.get('p').code, 200);
});

test('propagationPolicy Orphan adds the orphan finalizer; Background on a later first delete would remove it', (t) => {
  const { del } = setup();
  const r = del({ propagationPolicy: 'Orphan' });
  t.deepEqual(podOf(r).metadata.finalizers, ['orphan']);
  t.is(podOf(r).metadata.deletionGracePeriodSeconds, 30);
  // Once deletion is pending, options can no longer change finalizers.
  const r2 = del({ propagationPolicy: 'Background' }, 11);
  t.deepEqual(podOf(r2).metadata.finalizers, ['orphan']);
});

test('202 only when not deleted immediately and orphanDependents=false was sent explicitly', (t) => {
  const { del } = setup();
  t.is(del({ orphanDependents: false }).code, 202);
  const s2 = setup();
  t.is(s2.del({ orphanDependents: false, gracePeriodSeconds: 0 }).code, 200);
});

test('the response of a completed grace-0 delete is the pod, never a Status (ReturnDeletedObject)', (t) => {
  const { del } = setup();
  const r = del({ gracePeriodSeconds: 0 });
  t.is((r.body as Status).kind as string, 'Pod');
});

test('DELETE of a Deployment answers a success Status naming the resource and uid', (t) => {
  const h = new Harness();
  const d = h.req({
    type: 'ApiCreate',
    resource: 'deployments',
    namespace: 'default',
    object: {
      metadata: { name: 'web' },
      spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    } as never,
  });
  t.is(d.code, 201);
  const r = h.req({ type: 'ApiDelete', resource: 'deployments', namespace: 'default', name: 'web', options: { propagationPolicy: 'Background' } });
  t.is(r.code, 200);
  t.deepEqual(r.body, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    code: 200,
    details: { name: 'web', group: 'apps', kind: 'deployments', uid: (d.body as Pod).metadata.uid },
  });
  t.deepEqual(
    h.writes.slice(-1).map((w) => w.type),
    ['DELETED'],
  );
});

test(`timestamps are RFC 3339 at second precision from the virtual clock (epoch ${T0})`, (t) => {
  const { del } = setup();
  const r = del({}, 10.75);
  t.is(podOf(r).metadata.deletionTimestamp, '2025-01-01T00:00:40Z');
});
