import test from 'ava';
import type { Pod } from '@podsim/api';
import { PodStorage, type PodUpdate } from '../src/config/podStorage.js';

const mk = (uid: string, extra: Partial<Pod['metadata']> = {}, status: Pod['status'] = { phase: 'Pending' }): Pod => ({
  metadata: { name: `p-${uid}`, namespace: 'ns', uid, resourceVersion: '1', ...extra },
  spec: { containers: [{ name: 'app', image: 'nginx' }], nodeName: 'n1', terminationGracePeriodSeconds: 30 },
  status,
});
const ops = (us: PodUpdate[]) => us.map((u) => `${u.op}:${u.pods.map((p) => p.metadata.uid).join(',')}`);

test('first SET marks the source seen; an empty first SET still sends an empty ADD (sourcesReady)', (t) => {
  const s = new PodStorage();
  t.deepEqual(ops(s.merge('api', [])), ['ADD:']);
  t.true(s.seen('api'));
  t.deepEqual(ops(s.merge('api', [])), []);
});

// Spec §4.1 op table: new → ADD, gone → REMOVE (cached copy), semantic change with dts → DELETE,
// without → UPDATE, status only → RECONCILE, identical (even with a new RV) → nothing.
test('merge op table and emission order REMOVE, ADD, UPDATE, DELETE, RECONCILE', (t) => {
  const s = new PodStorage();
  s.merge('api', [mk('a'), mk('b'), mk('c'), mk('d'), mk('e')]);
  const next = [
    mk('b', { labels: { x: 'y' } }), // UPDATE
    mk('c', { deletionTimestamp: '2025-01-01T00:00:30Z', deletionGracePeriodSeconds: 30 }), // DELETE
    mk('d', { resourceVersion: '7' }, { phase: 'Running' }), // RECONCILE
    mk('e', { resourceVersion: '9' }), // identical apart from RV: nothing
    mk('f'), // ADD
  ];
  t.deepEqual(ops(s.merge('api', next)), ['REMOVE:a', 'ADD:f', 'UPDATE:b', 'DELETE:c', 'RECONCILE:d']);
});

test('REMOVE carries the kubelet\'s cached copy, not the last object from the apiserver', (t) => {
  const s = new PodStorage();
  s.merge('api', [mk('a', {}, { phase: 'Running' })]);
  const out = s.mergeOne('api', 'a', undefined);
  t.deepEqual(ops(out), ['REMOVE:a']);
  t.is(out[0].pods[0].status?.phase, 'Running');
});

test('each dgps shrink is another DELETE; the kubelet\'s own status write comes back as RECONCILE', (t) => {
  const s = new PodStorage();
  s.merge('api', [mk('a')]);
  t.deepEqual(ops(s.mergeOne('api', 'a', mk('a', { deletionTimestamp: 'T30', deletionGracePeriodSeconds: 30 }))), ['DELETE:a']);
  t.deepEqual(ops(s.mergeOne('api', 'a', mk('a', { deletionTimestamp: 'T10', deletionGracePeriodSeconds: 10 }))), ['DELETE:a']);
  t.deepEqual(ops(s.mergeOne('api', 'a', mk('a', { deletionTimestamp: 'T10', deletionGracePeriodSeconds: 10 }, { phase: 'Running' }))), ['RECONCILE:a']);
  t.deepEqual(ops(s.mergeOne('api', 'a', mk('a', { deletionTimestamp: 'T0', deletionGracePeriodSeconds: 0 }, { phase: 'Running' }))), ['DELETE:a']);
  t.deepEqual(ops(s.mergeOne('api', 'a', undefined)), ['REMOVE:a']);
});

test('mergeOne gives the same ops as a full SET with that one pod changed', (t) => {
  const variants: Array<[string, Pod | undefined]> = [
    ['a', mk('a', { labels: { l: '1' } })],
    ['a', mk('a', { deletionTimestamp: 'T', deletionGracePeriodSeconds: 1 })],
    ['a', mk('a', {}, { phase: 'Running' })],
    ['a', undefined],
    ['z', mk('z')],
  ];
  for (const [uid, pod] of variants) {
    const full = new PodStorage();
    const one = new PodStorage();
    const base = [mk('a'), mk('b')];
    full.merge('api', base);
    one.merge('api', base);
    const set = base.filter((p) => p.metadata.uid !== uid);
    if (pod) set.push(pod);
    t.deepEqual(ops(one.mergeOne('api', uid, pod)), ops(full.merge('api', set)), `variant ${uid}`);
    t.deepEqual([...one.podsOf('api').keys()].sort(), [...full.podsOf('api').keys()].sort());
  }
});

test('the cached pod is replaced, never mutated', (t) => {
  const s = new PodStorage();
  const a = mk('a');
  s.merge('api', [a]);
  s.mergeOne('api', 'a', mk('a', { deletionTimestamp: 'T', deletionGracePeriodSeconds: 30 }));
  t.is(a.metadata.deletionTimestamp, undefined);
  t.is(s.podsOf('api').get('a')?.metadata.deletionGracePeriodSeconds, 30);
});
