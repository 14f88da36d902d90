/**
 * In-memory MVCC storage: one global revision, preconditions, GuaranteedUpdate's no-op rule,
 * DELETED stamped with the delete's revision, bounded history and 410.
 */
import test from 'ava';
import type { KubeObject } from '@podsim/api';
import { MemoryStorage } from '../src/storage/memoryStorage.js';
import { type StorageEvent, isStepError, storageErrorMessage, type StorageError } from '../src/storage/interfaces.js';

const obj = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({ metadata: { name, namespace: 'ns', uid: `uid-${name}` }, ...extra }) as KubeObject;

function store(history = 100) {
  const s = new MemoryStorage(history);
  const events: StorageEvent[] = [];
  s.onEvent((e) => events.push(e));
  return { s, events };
}

test('every write takes the next global revision; RVs are decimal strings', (t) => {
  const { s, events } = store();
  const a = s.create('/registry/pods/ns/a', obj('a')) as KubeObject;
  const b = s.create('/registry/minions/b', obj('b')) as KubeObject;
  t.is(a.metadata.resourceVersion, '2');
  t.is(b.metadata.resourceVersion, '3');
  const a2 = s.guaranteedUpdate('/registry/pods/ns/a', false, undefined, (cur) => ({ ...cur!, spec: { x: 1 } }) as KubeObject) as KubeObject;
  t.is(a2.metadata.resourceVersion, '4');
  t.is(s.revision, 4);
  t.deepEqual(events.map((e) => [e.type, e.prefix, e.rv]), [
    ['ADDED', 'pods', 2],
    ['ADDED', 'minions', 3],
    ['MODIFIED', 'pods', 4],
  ]);
});

test('GuaranteedUpdate that changes nothing writes nothing: same RV, no event', (t) => {
  const { s, events } = store();
  const a = s.create('/registry/pods/ns/a', obj('a', { status: { phase: 'Running', conditions: [] } })) as KubeObject;
  const n = events.length;
  // Same content, different key order, an explicit undefined and an empty list: all "equal".
  const same = s.guaranteedUpdate('/registry/pods/ns/a', false, undefined, (cur) => ({ status: { conditions: undefined, phase: 'Running' }, metadata: { ...cur!.metadata, labels: undefined } }) as KubeObject);
  t.is(same, a);
  t.is(events.length, n);
  t.is(s.revision, 2);
});

test('create of an existing key → KeyExists; an RV on create → internal error', (t) => {
  const { s } = store();
  s.create('/registry/pods/ns/a', obj('a'));
  const e = s.create('/registry/pods/ns/a', obj('a')) as StorageError;
  t.is(e.code, 2);
  t.is(storageErrorMessage(e), 'StorageError: key exists, Code: 2, Key: /registry/pods/ns/a, ResourceVersion: 0, AdditionalErrorMsg: ');
  const withRv = s.create('/registry/pods/ns/b', { metadata: { name: 'b', resourceVersion: '5' } });
  t.true(isStepError(withRv));
});

test('delete returns the stored object (its own RV); DELETED carries it with the delete revision', (t) => {
  const { s, events } = store();
  const a = s.create('/registry/pods/ns/a', obj('a')) as KubeObject;
  const d = s.delete('/registry/pods/ns/a', undefined, undefined) as KubeObject;
  t.is(d.metadata.resourceVersion, a.metadata.resourceVersion);
  const ev = events[events.length - 1];
  t.is(ev.type, 'DELETED');
  t.is(ev.object.metadata.resourceVersion, '3');
  t.is(ev.prevObject, a);
  t.is(s.get('/registry/pods/ns/a'), undefined);
  t.is((s.delete('/registry/pods/ns/a', undefined, undefined) as StorageError).code, 1);
});

test('preconditions: UID / RV mismatch → InvalidObj with upstream text; nothing written', (t) => {
  const { s, events } = store();
  s.create('/registry/pods/ns/a', obj('a'));
  const n = events.length;
  const e1 = s.delete('/registry/pods/ns/a', { uid: 'other' }, undefined) as StorageError;
  t.is(e1.code, 4);
  t.is(e1.additionalErrorMsg, 'Precondition failed: UID in precondition: other, UID in object meta: uid-a');
  const e2 = s.guaranteedUpdate('/registry/pods/ns/a', false, { resourceVersion: '1' }, (c) => c!) as StorageError;
  t.is(e2.additionalErrorMsg, 'Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: 2');
  t.is(events.length, n);
});

test('stored objects are not mutated by later writes', (t) => {
  const { s } = store();
  const a = s.create('/registry/pods/ns/a', obj('a', { spec: { v: 1 } })) as KubeObject;
  const snapshot = JSON.stringify(a);
  s.guaranteedUpdate('/registry/pods/ns/a', false, undefined, (c) => ({ ...c!, spec: { v: 2 } }) as KubeObject);
  s.delete('/registry/pods/ns/a', undefined, undefined);
  t.is(JSON.stringify(a), snapshot);
});

test('list returns key order within the prefix', (t) => {
  const { s } = store();
  for (const [ns, n] of [['b', 'z'], ['a', 'y'], ['a', 'x'], ['ab', 'w']]) s.create(`/registry/pods/${ns}/${n}`, { metadata: { name: n, namespace: ns } });
  t.deepEqual(s.list('/registry/pods/').map((o) => `${o.metadata.namespace}/${o.metadata.name}`), ['a/x', 'a/y', 'ab/w', 'b/z']);
  t.deepEqual(s.list('/registry/pods/a/').map((o) => o.metadata.name), ['x', 'y']);
});

test('eventsSince replays events after an RV for one prefix; too old → 410 info; future → current', (t) => {
  const { s } = store(3);
  s.create('/registry/pods/ns/a', obj('a')); // 2
  s.create('/registry/minions/n', obj('n')); // 3
  s.create('/registry/pods/ns/b', obj('b')); // 4
  const r = s.eventsSince('pods', 2);
  t.true(r.ok);
  if (r.ok) t.deepEqual(r.events.map((e) => e.rv), [4]);
  s.create('/registry/pods/ns/c', obj('c')); // 5, evicts rv 2
  s.create('/registry/pods/ns/d', obj('d')); // 6, evicts rv 3
  t.deepEqual(s.eventsSince('pods', 2), { ok: false, tooOld: true, oldest: 3 });
  const ok = s.eventsSince('pods', 3);
  t.true(ok.ok);
  if (ok.ok) t.deepEqual(ok.events.map((e) => e.rv), [4, 5, 6]);
  t.deepEqual(s.eventsSince('pods', 99), { ok: false, tooOld: false, current: 6 });
});

test('eventsSince per-prefix index equals a scan of the whole history, across evictions and compaction of the index', (t) => {
  // 5,000 writes over three prefixes into a 1,500-event history: the per-prefix index must drop
  // exactly what the ring evicts (it compacts its dead front past 1,024 entries).
  const history = 1500;
  const { s, events } = store(history);
  const prefixes = ['pods', 'minions', 'leases'];
  let x = 7;
  for (let i = 0; i < 5000; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const p = prefixes[x % 3 === 0 ? 0 : x % 7 === 0 ? 1 : 2]!;
    const key = `/registry/${p}/ns/o${i % 50}`;
    if (s.get(key)) s.guaranteedUpdate(key, false, undefined, (cur) => ({ ...cur!, spec: { i } }) as KubeObject);
    else s.create(key, obj(`o${i % 50}`));
    if (i % 97 === 0) {
      const oldest = events.length >= history ? events[events.length - history]!.rv : events[0]!.rv;
      for (const rv of [oldest - 1, oldest, oldest + 200, s.revision - 3, s.revision]) {
        for (const prefix of prefixes) {
          const got = s.eventsSince(prefix, rv);
          if (!got.ok) {
            t.true(got.tooOld ? rv < oldest - 1 : rv > s.revision, `rv ${rv} oldest ${oldest}`);
            continue;
          }
          const want = events.slice(-history).filter((e) => e.prefix === prefix && e.rv > rv);
          t.deepEqual(got.events.map((e) => e.rv), want.map((e) => e.rv), `prefix ${prefix} since ${rv} at write ${i}`);
        }
      }
    }
  }
});
