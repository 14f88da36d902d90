/**
 * Watch semantics (spec §2.7, kubectl-rest §4.3): initial ADDED without RV, replay from an RV,
 * 410 Expired beyond the history, field-selector transitions like the watch cache, Table
 * watches, one multicast body per event, watchId collisions, unwatch.
 */
import test from 'ava';
import type { ApiWatchEvent, Pod, Status, Table } from '@podsim/api';
import { Harness } from './helpers.js';

const types = (evs: ApiWatchEvent[]) => evs.map((e) => `${e.event.type} ${(e.event.object as Pod).metadata.name}`);

test('a watch without resourceVersion starts with ADDED for every current matching object, then live events', (t) => {
  const h = new Harness();
  h.createPod('a', {}, { labels: { app: 'web' } });
  h.createPod('b', {}, { labels: { app: 'db' } });
  h.createPod('c', {}, { labels: { app: 'web' } }, 'kube-system');
  const r = h.req({ type: 'ApiWatch', resource: 'pods', namespace: 'default', labelSelector: 'app=web', watchId: 'w' }, 'k');
  t.is(r.code, 200);
  t.deepEqual(r.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 });
  const mark = h.deliveries.length;
  t.deepEqual(types(h.eventsFor('k')), ['ADDED a']);
  h.createPod('d', {}, { labels: { app: 'web' } });
  h.createPod('e', {}, { labels: { app: 'db' } });
  t.deepEqual(types(h.eventsFor('k', mark)), ['ADDED d']);
});

test('resourceVersion "0" also starts with the synthetic ADDED events', (t) => {
  const h = new Harness();
  h.createPod('a');
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'w', resourceVersion: '0', fieldSelector: 'metadata.name=a' }, 'k');
  t.deepEqual(types(h.eventsFor('k')), ['ADDED a']);
});

test('a watch from an RV replays only the history after it (no duplicate ADDED)', (t) => {
  const h = new Harness();
  const a = h.createPod('a', { nodeName: 'node-1' });
  const listRv = String(h.api.storage.revision);
  h.createPod('b');
  h.req({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'a', options: {} });
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'w', resourceVersion: listRv }, 'k');
  t.deepEqual(types(h.eventsFor('k')), ['ADDED b', 'MODIFIED a']);
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'w2', resourceVersion: a.metadata.resourceVersion }, 'k2');
  t.deepEqual(types(h.eventsFor('k2')), ['ADDED b', 'MODIFIED a']);
});

test('a watch from an RV older than the history → 200, then one ERROR 410 Expired event; no further events', (t) => {
  const h = new Harness({ historySize: 3 });
  const first = h.createPod('a');
  for (const n of ['b', 'c', 'd', 'e']) h.createPod(n);
  const r = h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'w', resourceVersion: first.metadata.resourceVersion }, 'k');
  t.is(r.code, 200);
  const evs = h.eventsFor('k');
  t.is(evs.length, 1);
  t.is(evs[0].event.type, 'ERROR');
  const st = evs[0].event.object as Status;
  t.is(st.code, 410);
  t.is(st.reason, 'Expired');
  t.regex(st.message!, /^too old resource version: \d+ \(\d+\)$/);
  const mark = h.deliveries.length;
  h.createPod('f');
  t.deepEqual(h.eventsFor('k', mark), []);
  t.is(h.api.watchCount, 0);
});

test('a watch from a future RV → 504 Too large resource version; a malformed RV → 400', (t) => {
  const h = new Harness();
  const r = h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'w', resourceVersion: '999' }, 'k');
  t.is(r.code, 504);
  t.is((r.body as Status).message, `Timeout: Too large resource version: 999, current: ${h.api.storage.revision}`);
  t.is(h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'w', resourceVersion: 'abc' }, 'k').code, 400);
  t.is(h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'w', fieldSelector: 'spec.foo=x' }, 'k').code, 400);
  t.is(h.api.watchCount, 0);
});

test('spec.nodeName field-selector watch (the kubelet): binding arrives as ADDED, deletion as MODIFIED then DELETED', (t) => {
  const h = new Harness();
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'pods', fieldSelector: 'spec.nodeName=node-1' }, 'kubelet/node-1');
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'pods', fieldSelector: 'spec.nodeName=node-2' }, 'kubelet/node-2');
  const p = h.createPod('p');
  t.deepEqual(h.eventsFor('kubelet/node-1'), [], 'an unbound pod is not on node-1');
  h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'default', name: 'p', subresource: 'binding', object: { metadata: { name: 'p', uid: p.metadata.uid }, target: { name: 'node-1' } } as never });
  h.req({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'p', options: {} });
  h.req({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'p', options: { gracePeriodSeconds: 0, preconditions: { uid: p.metadata.uid } } });
  const evs = h.eventsFor('kubelet/node-1');
  t.deepEqual(types(evs), ['ADDED p', 'MODIFIED p', 'MODIFIED p', 'DELETED p']);
  t.is((evs[0].event.object as Pod).spec.nodeName, 'node-1');
  t.deepEqual(h.eventsFor('kubelet/node-2'), []);
});

test('an object that stops matching arrives as DELETED: the previous state stamped with the write RV', (t) => {
  const h = new Harness();
  h.createPod('p', { nodeName: 'node-1' });
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'w', fieldSelector: 'spec.nodeName=node-1,status.phase!=Succeeded,status.phase!=Failed' }, 'k');
  const mark = h.deliveries.length;
  const r = h.setPhase('p', 'Succeeded');
  const evs = h.eventsFor('k', mark);
  t.deepEqual(types(evs), ['DELETED p']);
  const obj = evs[0].event.object as Pod;
  t.is(obj.status?.phase, 'Pending');
  t.is(obj.metadata.resourceVersion, (r.body as Pod).metadata.resourceVersion);
});

test('a label change moves an object in and out of a label-selector watch', (t) => {
  const h = new Harness();
  h.createPod('p');
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'w', labelSelector: 'app=web' }, 'k');
  const lab = (labels: Record<string, string> | null) => h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', patchType: 'merge', patch: { metadata: { labels } } });
  lab({ app: 'web' });
  lab({ app: 'web', x: 'y' });
  lab(null);
  t.deepEqual(types(h.eventsFor('k')), ['ADDED p', 'MODIFIED p', 'DELETED p']);
});

test('one body per event for all JSON watchers that match, with watchIds listing them', (t) => {
  const h = new Harness();
  for (const c of ['rs-controller', 'scheduler', 'driver']) h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'pods', resourceVersion: String(h.api.storage.revision) }, c);
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'mine', namespace: 'default', resourceVersion: String(h.api.storage.revision) }, 'driver');
  const mark = h.deliveries.length;
  h.createPod('p');
  const ds = h.deliveries.slice(mark);
  t.is(ds.length, 1);
  t.deepEqual([...ds[0].to].sort(), ['driver', 'rs-controller', 'scheduler']);
  t.deepEqual([...ds[0].body.watchIds].sort(), ['mine', 'pods']);
  t.is(ds[0].body.event.type, 'ADDED');
});

test('a recipient whose own unmatched watch id appears in the shared list gets a private body', (t) => {
  const h = new Harness();
  h.createPod('seed', {}, {}, 'kube-system');
  const rv = String(h.api.storage.revision);
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'x', namespace: 'default', resourceVersion: rv }, 'A');
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'y', namespace: 'kube-system', resourceVersion: rv }, 'A');
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'x', resourceVersion: rv }, 'B');
  const mark = h.deliveries.length;
  h.createPod('q', {}, {}, 'kube-system');
  const ds = h.deliveries.slice(mark);
  const forA = ds.filter((d) => d.to.includes('A'));
  const forB = ds.filter((d) => d.to.includes('B'));
  t.is(forA.length, 1);
  t.deepEqual(forA[0].body.watchIds, ['y'], 'A must not see "x": its own x watch did not match');
  t.is(forB.length, 1);
  t.true(forB[0].body.watchIds.includes('x'));
});

test('Table watches get a one-row Table printed at send time; DELETED prints the Terminating row', (t) => {
  const h = new Harness();
  const p = h.createPod('web-1', { nodeName: 'node-1' });
  h.at(5).req({ type: 'ApiWatch', resource: 'pods', watchId: 'w', namespace: 'default', asTable: true }, 'kubectl');
  h.at(9).req({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'web-1', options: {} });
  h.at(12).req({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'web-1', options: { gracePeriodSeconds: 0, preconditions: { uid: p.metadata.uid } } });
  const evs = h.eventsFor('kubectl');
  t.deepEqual(evs.map((e) => e.event.type), ['ADDED', 'MODIFIED', 'MODIFIED', 'DELETED']);
  const rows = evs.map((e) => (e.event.object as Table).rows[0].cells);
  t.deepEqual(rows, [
    ['web-1', '0/1', 'Pending', '0', '5s'],
    ['web-1', '0/1', 'Terminating', '0', '9s'],
    ['web-1', '0/1', 'Terminating', '0', '12s'],
    ['web-1', '0/1', 'Terminating', '0', '12s'],
  ]);
  const last = evs[3].event.object as Table;
  t.is(last.kind, 'Table');
  t.is(last.metadata.resourceVersion, String(h.api.storage.revision));
  t.deepEqual((last.rows[0].object as { kind: string }).kind, 'PartialObjectMetadata');
  t.is(last.columnDefinitions.length, 5);
});

test('wide Table watchers and JSON watchers of the same event get separate bodies', (t) => {
  const h = new Harness();
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'j', resourceVersion: String(h.api.storage.revision) }, 'a');
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 't', asTable: true, wide: true, resourceVersion: String(h.api.storage.revision) }, 'b');
  const mark = h.deliveries.length;
  h.createPod('p', { nodeName: 'node-1' });
  const ds = h.deliveries.slice(mark);
  t.is(ds.length, 2);
  const tbl = ds.find((d) => d.to.includes('b'))!.body.event.object as Table;
  t.deepEqual(tbl.rows[0].cells.slice(5), ['<none>', 'node-1', '<none>', '<none>']);
  t.is((ds.find((d) => d.to.includes('a'))!.body.event.object as Pod).kind, 'Pod');
});

test('ApiUnwatch stops delivery; re-watching with the same id replaces the old watch', (t) => {
  const h = new Harness();
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'w' }, 'k');
  h.req({ type: 'ApiWatch', resource: 'pods', watchId: 'w' }, 'k');
  t.is(h.api.watchCount, 1);
  h.createPod('a');
  t.is(h.eventsFor('k').length, 1);
  t.is(h.req({ type: 'ApiUnwatch', watchId: 'w' }, 'k').code, 200);
  t.is(h.api.watchCount, 0);
  h.createPod('b');
  t.is(h.eventsFor('k').length, 1);
});

test('nodes and deployments watches work the same way (cluster-scoped prefix "minions")', (t) => {
  const h = new Harness();
  h.req({ type: 'ApiWatch', resource: 'nodes', watchId: 'n' }, 'k');
  h.req({ type: 'ApiCreate', resource: 'nodes', object: { metadata: { name: 'node-1' } } });
  h.req({ type: 'ApiDelete', resource: 'nodes', name: 'node-1' });
  t.deepEqual(types(h.eventsFor('k')), ['ADDED node-1', 'DELETED node-1']);
});
