/**
 * The client-go / controller_utils machinery the controllers share: workqueue semantics,
 * expectations, the token-bucket client, informer indexes, label selectors, quantities and
 * IntOrString scaling.
 */
import test from 'ava';
import type { Pod } from '@podsim/api';
import { TokenBucket } from '../src/client.js';
import { call, runSync, type Sync } from '../src/coroutine.js';
import { EXPECTATIONS_TIMEOUT_US, UIDTrackingControllerExpectations } from '../src/expectations.js';
import { CONTROLLER_UID_INDEX, controllerUidIndexFunc, Informer } from '../src/informer.js';
import { getScaledValueFromIntOrPercent } from '../src/intstr.js';
import { RATE_LIMIT_BASE_US, WorkQueue, Workers } from '../src/workqueue.js';
import { FakeApi, FakeEnv } from './helpers/fakeEnv.js';

const S = 1_000_000;

test('workqueue: de-duplicates, never hands out a key twice at once, requeues a key added while processing', (t) => {
  const env = new FakeEnv();
  const q = new WorkQueue(env, () => {});
  q.add('a');
  q.add('b');
  q.add('a');
  t.is(q.length, 2);
  t.is(q.get(), 'a');
  q.add('a'); // while processing: dirty, not queued
  t.is(q.length, 1);
  t.is(q.get(), 'b');
  t.is(q.get(), undefined);
  q.done('a');
  t.is(q.get(), 'a');
});

test('workqueue: addAfter keeps the earliest time; addRateLimited backs off 5 ms × 2^n', (t) => {
  const env = new FakeEnv();
  const q = new WorkQueue(env, () => {});
  q.addAfter('k', 10 * S);
  q.addAfter('k', 3 * S);
  q.addAfter('k', 8 * S);
  env.advance(3 * S - 1);
  t.is(q.length, 0);
  env.advance(1);
  t.is(q.get(), 'k');
  q.done('k');
  q.addRateLimited('r');
  q.addRateLimited('r2');
  env.advance(RATE_LIMIT_BASE_US);
  t.is(q.length, 2);
  q.get();
  q.get();
  q.done('r');
  q.done('r2');
  q.addRateLimited('r');
  env.advance(2 * RATE_LIMIT_BASE_US - 1);
  t.is(q.length, 0);
  env.advance(1);
  t.is(q.length, 1);
  t.is(q.numRequeues('r'), 2);
  q.forget('r');
  t.is(q.numRequeues('r'), 0);
});

test('workers run at most N syncs at once and requeue a failed key with backoff', (t) => {
  const env = new FakeEnv();
  const api = new FakeApi();
  const seen: string[] = [];
  function* sync(key: string): Sync<{ reason: string; message: string } | undefined> {
    seen.push(key);
    const r = yield* call({ type: 'ApiGet', resource: 'pods', namespace: 'default', name: key });
    return r.code === 200 ? undefined : { reason: 'NotFound', message: key };
  }
  const w = new Workers(env, 2, sync, (req, cb) => api.transport(req, cb));
  for (const k of ['a', 'b', 'c']) w.queue.add(k);
  env.flush();
  t.deepEqual(seen, [], 'not before start (WaitForCacheSync)');
  w.start();
  env.flush();
  t.deepEqual(seen, ['a', 'b']);
  const [a, b] = api.take();
  a.answer(404);
  env.flush();
  t.deepEqual(seen, ['a', 'b', 'c']);
  b.answer(200);
  api.take()[0].answer(200);
  env.advance(RATE_LIMIT_BASE_US);
  t.deepEqual(seen, ['a', 'b', 'c', 'a'], 'the failed key comes back after 5 ms');
});

test('runSync resumes a coroutine with results in request order', (t) => {
  const api = new FakeApi();
  api.auto = (req) => ({ type: 'ApiResult', code: req.type === 'ApiGet' ? 200 : 201, body: { metadata: {} } });
  function* s(): Sync<number[]> {
    const a = yield [
      { type: 'ApiGet', resource: 'pods', name: 'x' },
      { type: 'ApiCreate', resource: 'pods', object: { metadata: {} } },
    ];
    return a.map((r) => r.code);
  }
  let out: number[] = [];
  runSync(s(), api.transport, (r) => (out = r));
  t.deepEqual(out, [200, 201]);
});

test('expectations: satisfied when observed, or after 5 minutes', (t) => {
  const e = new UIDTrackingControllerExpectations();
  t.true(e.satisfiedExpectations('rs', 0));
  e.expectCreations('rs', 2, 0);
  t.false(e.satisfiedExpectations('rs', 0));
  e.creationObserved('rs');
  e.creationObserved('rs');
  t.true(e.satisfiedExpectations('rs', 0));
  e.expectDeletions('rs', ['ns/a', 'ns/b'], 10);
  e.deletionObserved('rs', 'ns/a');
  e.deletionObserved('rs', 'ns/a');
  e.deletionObserved('rs', 'ns/other');
  t.deepEqual(e.get('rs'), { add: 0, del: 1 });
  t.false(e.satisfiedExpectations('rs', 10 + EXPECTATIONS_TIMEOUT_US));
  t.true(e.satisfiedExpectations('rs', 11 + EXPECTATIONS_TIMEOUT_US));
});

test('token bucket: a burst at once, then one request per 1/qps', (t) => {
  const b = new TokenBucket(20, 3, 0);
  t.deepEqual([b.reserve(0), b.reserve(0), b.reserve(0)], [0, 0, 0]);
  t.is(b.reserve(0), 50_000);
  t.is(b.reserve(0), 100_000);
  // Refilled after idling: at most `burst` tokens.
  const c = new TokenBucket(20, 3, 0);
  for (let i = 0; i < 3; i++) c.reserve(0);
  t.is(c.reserve(10 * S), 0);
  t.is(c.reserve(10 * S), 0);
  t.is(c.reserve(10 * S), 0);
  t.is(c.reserve(10 * S), 50_000);
  t.is(new TokenBucket(0, 0, 0).reserve(0), 0, 'qps 0: unlimited');
});

function pod(name: string, owner?: string, labels?: Record<string, string>): Pod {
  return {
    metadata: { name, namespace: 'ns', uid: name, resourceVersion: '1', labels, ownerReferences: owner ? [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: owner, controller: true }] : undefined },
    spec: { containers: [] },
  };
}

test('informer: indexes follow updates, replace deletes what the list lacks, handlers see old and new', (t) => {
  const inf = new Informer<Pod>('pods');
  inf.addIndexer(CONTROLLER_UID_INDEX, controllerUidIndexFunc);
  const log: string[] = [];
  inf.addEventHandler({ onAdd: (p) => log.push(`add ${p.metadata.name}`), onUpdate: (o, p) => log.push(`update ${o.metadata.resourceVersion}→${p.metadata.resourceVersion}`), onDelete: (p) => log.push(`delete ${p.metadata.name}`) });
  inf.replace([pod('a', 'rs1'), pod('b', 'rs1'), pod('c')], '10');
  t.true(inf.hasSynced);
  t.deepEqual([...inf.indexKeys(CONTROLLER_UID_INDEX, 'rs1')], ['ns/a', 'ns/b']);
  inf.applyEvent({ type: 'MODIFIED', object: { ...pod('b', 'rs2'), metadata: { ...pod('b', 'rs2').metadata, resourceVersion: '11' } } });
  t.deepEqual([...inf.indexKeys(CONTROLLER_UID_INDEX, 'rs1')], ['ns/a']);
  t.deepEqual([...inf.indexKeys(CONTROLLER_UID_INDEX, 'rs2')], ['ns/b']);
  inf.replace([pod('a', 'rs1')], '20');
  t.deepEqual(log, ['add a', 'add b', 'add c', 'update 1→11', 'update 1→1', 'delete b', 'delete c']);
  t.is(inf.size, 1);
  t.is(inf.resourceVersion, '20');
  t.false(inf.applyEvent({ type: 'ERROR', object: { metadata: {} } }), 'ERROR asks for a relist');
});

test('IntOrString: percentages round up (surge) or down (unavailable)', (t) => {
  t.is(getScaledValueFromIntOrPercent('25%', 3, true), 1);
  t.is(getScaledValueFromIntOrPercent('25%', 3, false), 0);
  t.is(getScaledValueFromIntOrPercent('25%', 10, true), 3);
  t.is(getScaledValueFromIntOrPercent('25%', 10, false), 2);
  t.is(getScaledValueFromIntOrPercent(2, 10, false), 2);
  t.is(typeof getScaledValueFromIntOrPercent('abc', 10, false), 'string');
});
