/**
 * The ReplicaSet controller as a pure machine (fake clock, informers fed by hand, a fake API the
 * test answers): slow-start batches, BurstReplicas, expectations, failures, the deletion signal.
 */
import test from 'ava';
import type { ApiCreate, ApiDelete, ApiUpdate, Pod, ReplicaSet } from '@podsim/api';
import { Informer } from '../src/informer.js';
import { ReplicaSetController } from '../src/replicaset/replicaSet.js';
import { FakeApi, FakeEnv, status } from './helpers/fakeEnv.js';

function mkRS(replicas: number): ReplicaSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'web', namespace: 'ns', uid: 'rs-uid', resourceVersion: '1', generation: 1 },
    spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { terminationGracePeriodSeconds: 30, containers: [{ name: 'c', image: 'nginx' }] } } },
    status: { replicas: 0 },
  };
}

let podSeq = 0;
function ownedPod(name: string, o: { node?: string; ready?: boolean; phase?: 'Pending' | 'Running'; rv?: string } = {}): Pod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      resourceVersion: o.rv ?? String(++podSeq + 100),
      creationTimestamp: '2025-01-01T00:00:00Z',
      labels: { app: 'web' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs-uid', controller: true, blockOwnerDeletion: true }],
    },
    spec: { containers: [{ name: 'c' }], ...(o.node ? { nodeName: o.node } : {}) },
    status: { phase: o.phase ?? 'Running', conditions: o.ready === false ? [] : [{ type: 'Ready', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' }] },
  };
}

function setup(rs: ReplicaSet, pods: Pod[] = [], burstReplicas?: number) {
  const env = new FakeEnv();
  const api = new FakeApi();
  const podInf = new Informer<Pod>('pods');
  const rsInf = new Informer<ReplicaSet>('replicasets');
  const c = new ReplicaSetController(env, podInf, rsInf, api.client(env), { burstReplicas });
  podInf.replace(pods, '1');
  rsInf.replace([rs], '1');
  // Events (SuccessfulCreate, …) are answered at once; the tests answer the pod and RS writes.
  api.auto = (req) => ((req as { resource?: string }).resource === 'events' ? { type: 'ApiResult', code: 201, body: (req as ApiCreate).object } : undefined);
  c.workers.start();
  env.flush();
  return { env, api, c, podInf, rsInf };
}

/** Answers pending creates with 201 + a pod named after the generateName. */
function answerCreates(api: FakeApi, codes?: number[]): Pod[] {
  const out: Pod[] = [];
  api.take().forEach((p, i) => {
    const req = p.req as ApiCreate;
    const code = codes?.[i] ?? 201;
    if (code === 201) {
      const pod = { ...(req.object as Pod), metadata: { ...req.object.metadata, name: `${req.object.metadata.generateName}${podSeq}`, namespace: 'ns', uid: `new-${podSeq++}`, resourceVersion: String(podSeq + 1000) } };
      out.push(pod);
      p.answer(201, pod);
    } else p.answer(code, status(code, 'Forbidden', 'exceeded quota'));
  });
  return out;
}

test('creates in slow-start batches 1, 2, 2 and waits for the informer (expectations) before syncing replicas again', (t) => {
  const { env, api, c, podInf } = setup(mkRS(5));
  const batches: number[] = [];
  const created: Pod[] = [];
  for (;;) {
    const pending = api.pending.filter((p) => p.req.type === 'ApiCreate');
    if (pending.length === 0) break;
    batches.push(pending.length);
    created.push(...answerCreates(api));
  }
  t.deepEqual(batches, [1, 2, 2]);
  const first = created[0];
  t.is(first.metadata.generateName, 'web-');
  t.deepEqual(first.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs-uid', controller: true, blockOwnerDeletion: true }]);
  t.deepEqual(first.metadata.labels, { app: 'web' });
  // Then the status update (from the pods listed at the start of the sync: none).
  const upd = api.take();
  t.is(upd.length, 1);
  t.like(upd[0].req, { type: 'ApiUpdate', resource: 'replicasets', subresource: 'status' });
  t.like((upd[0].req as ApiUpdate).object, { status: { replicas: 0, observedGeneration: 1 } });
  t.deepEqual(c.expectations.get('ns/web'), { add: 5, del: 0 });
  upd[0].answer(200, { ...mkRS(5), metadata: { ...mkRS(5).metadata, resourceVersion: '2' }, status: { replicas: 0, observedGeneration: 1 } });
  // A resync before the informer saw the pods must not create more.
  c.workers.queue.add('ns/web');
  env.flush();
  t.is(api.pending.filter((p) => p.req.type === 'ApiCreate').length, 0);
  for (const p of created) podInf.applyEvent({ type: 'ADDED', object: p });
  t.deepEqual(c.expectations.get('ns/web'), { add: 0, del: 0 });
});

test('BurstReplicas caps one sync; a failed create stops the batches and lowers the expectations', (t) => {
  const { env, api, c } = setup(mkRS(10), [], 3);
  answerCreates(api);
  const second = api.pending.filter((p) => p.req.type === 'ApiCreate');
  t.is(second.length, 2, 'min(2, remaining 2 of the burst of 3)');
  answerCreates(api, [201, 403]);
  const upd = api.take();
  t.is(upd.length, 1, 'no third batch after the failure; straight to the status update');
  const st = (upd[0].req as ApiUpdate).object as ReplicaSet & { status: { conditions?: { type: string; reason: string }[] } };
  t.like(st.status.conditions?.[0], { type: 'ReplicaFailure', reason: 'FailedCreate' });
  // 3 expected, 2 succeeded, 1 failed → the failed one is observed at once.
  t.deepEqual(c.expectations.get('ns/web'), { add: 2, del: 0 });
  upd[0].answer(200, mkRS(10));
  env.flush();
  t.is(c.workers.queue.numRequeues('ns/web'), 1, 'the error requeues the key with backoff');
});

test('a MODIFIED that sets deletionTimestamp is a deletion: the replacement is created at once', (t) => {
  const pods = [ownedPod('a', { node: 'n1' }), ownedPod('b', { node: 'n1' }), ownedPod('c', { node: 'n2' })];
  const rs = { ...mkRS(3), status: { replicas: 3, fullyLabeledReplicas: 3, readyReplicas: 3, availableReplicas: 3, observedGeneration: 1 } };
  const { env, api, podInf } = setup(rs, pods);
  t.is(api.pending.length, 0, 'in sync: nothing to do');
  podInf.applyEvent({ type: 'MODIFIED', object: { ...pods[0], metadata: { ...pods[0].metadata, resourceVersion: '999', deletionTimestamp: '2025-01-01T00:01:00Z', deletionGracePeriodSeconds: 30 } } });
  env.flush();
  const creates = api.pending.filter((p) => p.req.type === 'ApiCreate');
  t.is(creates.length, 1);
  answerCreates(api);
  const upd = api.take();
  t.like((upd[0].req as ApiUpdate).object, { status: { replicas: 2, readyReplicas: 2, availableReplicas: 2 } }, 'the Terminating pod is not counted');
});

test('scale down deletes the lowest-ranked pods (unscheduled, pending, not ready first) with the default grace', (t) => {
  const pods = [ownedPod('running1', { node: 'n1' }), ownedPod('unscheduled', { phase: 'Pending', ready: false }), ownedPod('running2', { node: 'n2' }), ownedPod('notready', { node: 'n2', ready: false })];
  const { api, c } = setup(mkRS(1), pods);
  const dels = api.take();
  t.deepEqual(
    dels.map((p) => (p.req as ApiDelete).name),
    ['unscheduled', 'notready', 'running1'],
  );
  t.true(dels.every((p) => JSON.stringify((p.req as ApiDelete).options) === '{}'), 'DeleteOptions{}: the pod spec grace applies');
  t.deepEqual(c.expectations.get('ns/web'), { add: 0, del: 3 });
  dels[0].answer(200);
  dels[1].answer(404);
  dels[2].answer(200);
  t.deepEqual(c.expectations.get('ns/web'), { add: 0, del: 2 }, 'a NotFound is observed at once');
});
