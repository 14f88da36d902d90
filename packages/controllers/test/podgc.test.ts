/** The pod GC pass as a pure machine (gc_controller.go): quarantine queue, live node check, ordering. */
import test from 'ava';
import type { ApiDelete, ApiGet, Node, Pod, PodPhase } from '@podsim/api';
import { Informer } from '../src/informer.js';
import { GC_CHECK_PERIOD_US, PodGCController, QUARANTINE_TIME_US } from '../src/podgc/gcController.js';
import { FakeApi, FakeEnv } from './helpers/fakeEnv.js';

const S = 1_000_000;

function pod(name: string, nodeName?: string, o: { dts?: boolean; phase?: PodPhase; created?: string } = {}): Pod {
  return {
    metadata: { name, namespace: 'ns', uid: name, creationTimestamp: o.created ?? '2025-01-01T00:00:00Z', ...(o.dts ? { deletionTimestamp: '2025-01-01T00:00:30Z', deletionGracePeriodSeconds: 30 } : {}) },
    spec: { containers: [], ...(nodeName ? { nodeName } : {}) },
    status: { phase: o.phase ?? 'Running' },
  };
}
const node = (name: string): Node => ({ metadata: { name } });

function setup(pods: Pod[], nodes: Node[], threshold?: number) {
  const env = new FakeEnv();
  const api = new FakeApi();
  const podInf = new Informer<Pod>('pods');
  const nodeInf = new Informer<Node>('nodes');
  const gc = new PodGCController(env, podInf, nodeInf, api.client(env), { terminatedPodThreshold: threshold });
  podInf.replace(pods, '1');
  nodeInf.replace(nodes, '1');
  return { env, api, gc, podInf, nodeInf };
}

test('a missing node is quarantined for 40 s, checked with a live GET, then its pods are force-deleted one by one', (t) => {
  const { env, api, gc } = setup([pod('a', 'gone'), pod('b', 'gone'), pod('c', 'n1')], [node('n1')]);
  gc.start();
  t.is(api.pending.length, 0, 'first pass: the node enters quarantine');
  t.is(gc.nodeQueue.get('gone'), QUARANTINE_TIME_US);
  env.advance(GC_CHECK_PERIOD_US);
  t.is(api.pending.length, 0, 'second pass (20 s): still quarantined');
  env.advance(GC_CHECK_PERIOD_US);
  const [get] = api.take();
  t.like(get.req as ApiGet, { type: 'ApiGet', resource: 'nodes', name: 'gone' });
  get.answer(404);
  const [d1] = api.take();
  t.like(d1.req as ApiDelete, { type: 'ApiDelete', name: 'a', options: { gracePeriodSeconds: 0 } });
  d1.answer(200);
  const [d2] = api.take();
  t.like(d2.req as ApiDelete, { name: 'b' });
  d2.answer(200);
  t.is(api.pending.length, 0, 'pods of existing nodes are left alone');
  t.deepEqual(
    env.traces.filter((r) => r.kind === 'controller.podgc.delete').map((r) => [r.data!.pod, r.data!.reason, r.data!.node]),
    [
      ['a', 'orphaned', 'gone'],
      ['b', 'orphaned', 'gone'],
    ],
  );
});

test('a node that reappears (live GET 200) keeps its pods; it is re-quarantined on the next sighting', (t) => {
  const { env, api, gc } = setup([pod('a', 'flaky')], []);
  gc.start();
  env.advance(2 * GC_CHECK_PERIOD_US);
  const [get] = api.take();
  get.answer(200, node('flaky'));
  t.is(api.pending.length, 0);
  env.advance(GC_CHECK_PERIOD_US);
  t.is(gc.nodeQueue.get('flaky'), env.now + QUARANTINE_TIME_US);
});

test('unscheduled terminating pods are force-deleted; terminated pods beyond the threshold go oldest first', (t) => {
  const pods = [
    pod('u', undefined, { dts: true }),
    pod('pending', undefined),
    pod('t3', 'n1', { phase: 'Succeeded', created: '2025-01-01T00:00:03Z' }),
    pod('t1', 'n1', { phase: 'Failed', created: '2025-01-01T00:00:01Z' }),
    pod('t2', 'n1', { phase: 'Succeeded', created: '2025-01-01T00:00:02Z' }),
  ];
  const { api, gc } = setup(pods, [node('n1')], 1);
  gc.start();
  const terminated = api.take();
  t.deepEqual(
    terminated.map((p) => (p.req as ApiDelete).name),
    ['t1', 't2'],
    'parallel deletes of the 2 oldest beyond the threshold of 1',
  );
  for (const p of terminated) p.answer(200);
  const [u] = api.take();
  t.like(u.req as ApiDelete, { name: 'u', options: { gracePeriodSeconds: 0 } });
});

test('the next pass starts gcCheckPeriod after the previous one ended (wait.Until is sliding)', (t) => {
  const { env, api, gc } = setup([pod('u', undefined, { dts: true })], []);
  gc.start();
  const [u] = api.take();
  env.advance(3 * S);
  u.answer(200);
  t.is(gc.passes, 1);
  env.advance(GC_CHECK_PERIOD_US - 1);
  t.is(api.pending.length, 0);
  env.advance(1);
  t.is(api.pending.length, 1, 'second pass at 23 s');
});
