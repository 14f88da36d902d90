/**
 * The Job and TTL-after-finished controllers as pure machines (fake clock, informers fed by hand,
 * a fake API answering at once): the sync decisions of spec WC §4.4–§4.11 — creations and the
 * 10 s × 2ⁿ back-off, backoffLimit (Never and OnFailure), activeDeadlineSeconds, suspend, Indexed
 * pods, finished jobs left alone, the TTL's Foreground DELETE at expiry.
 */
import test from 'ava';
import type { ApiCreate, ApiDelete, ApiRequest, ApiResult, ApiUpdate, Job, Pod } from '@podsim/api';
import { JOB_COMPLETION_INDEX_ANNOTATION } from '@podsim/api';
import { Informer } from '../src/informer.js';
import { JobController, getBackoff, pastBackoffLimitOnFailure, wantActive } from '../src/job/jobController.js';
import { TTLAfterFinishedController, timeLeft } from '../src/ttlafterfinished/ttlAfterFinishedController.js';
import { FakeApi, FakeEnv } from './helpers/fakeEnv.js';

const S = 1_000_000;

function mkJob(spec: Partial<Job['spec']> = {}, status: Job['status'] = {}): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'work', namespace: 'ns', uid: 'job-uid', resourceVersion: '10', generation: 1 },
    spec: {
      parallelism: 1,
      completions: 1,
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      suspend: false,
      selector: { matchLabels: { 'controller-uid': 'job-uid' } },
      template: { metadata: { labels: { 'controller-uid': 'job-uid', 'job-name': 'work' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
      ...spec,
    },
    status,
  };
}

let seq = 0;
function jobPod(name: string, phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed', o: { restarts?: number; index?: number } = {}): Pod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      resourceVersion: String(++seq + 100),
      creationTimestamp: '2025-01-01T00:00:00Z',
      labels: { 'job-name': 'work' },
      ...(o.index !== undefined ? { annotations: { [JOB_COMPLETION_INDEX_ANNOTATION]: String(o.index) } } : {}),
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'work', uid: 'job-uid', controller: true, blockOwnerDeletion: true }],
    },
    spec: { nodeName: 'n1', containers: [{ name: 'c' }] },
    status: { phase, containerStatuses: [{ name: 'c', restartCount: o.restarts ?? 0, ready: phase === 'Running' } as never] },
  };
}

/** A controller over hand-fed informers and an API that answers everything at once (and records it). */
function setup(job: Job, pods: Pod[] = [], o: { jobWatchDelayUs?: number } = {}) {
  const env = new FakeEnv();
  const api = new FakeApi();
  const podInf = new Informer<Pod>('pods');
  const jobInf = new Informer<Job>('jobs');
  let rv = 1000;
  let stored = job;
  api.auto = (req: ApiRequest): ApiResult | undefined => {
    const ok = (code: number, body: unknown): ApiResult => ({ type: 'ApiResult', code, body: body as never });
    if (req.type === 'ApiGet' && req.resource === 'jobs') return ok(200, stored);
    if (req.type === 'ApiUpdate' && req.resource === 'jobs') {
      stored = { ...((req as ApiUpdate).object as Job), metadata: { ...(req as ApiUpdate).object.metadata, resourceVersion: String(++rv) } };
      // The watch event of the write reaches the informer right after the reply.
      const written = stored;
      env.after(o.jobWatchDelayUs ?? 0, () => jobInf.replace([written], String(rv)));
      return ok(200, stored);
    }
    if (req.type === 'ApiCreate' && req.resource === 'pods') {
      const o = (req as ApiCreate).object;
      const pod = { ...o, metadata: { ...o.metadata, name: `${o.metadata.generateName}${++seq}`, uid: `new-${seq}`, namespace: 'ns', resourceVersion: String(++rv) } } as Pod;
      env.after(0, () => podInf.applyEvent({ type: 'ADDED', object: pod }));
      return ok(201, pod);
    }
    if (req.type === 'ApiCreate' && req.resource === 'events') return ok(201, (req as ApiCreate).object);
    if (req.type === 'ApiDelete') return ok(200, {});
    return undefined;
  };
  const c = new JobController(env, podInf, jobInf, api.client(env));
  podInf.replace(pods, '1');
  jobInf.replace([job], '1');
  c.workers.start();
  env.flush();
  const sent = (type: string, resource: string) => api.sent.filter((r) => r.type === type && (r as { resource?: string }).resource === resource);
  return { env, api, c, podInf, jobInf, sent, stored: () => stored };
}

test('getBackoff: 0 before any failure, then 10 s × 2^(n−1), capped at 360 s', (t) => {
  t.deepEqual([0, 1, 2, 3, 4, 5, 6, 7].map((n) => getBackoff(n) / S), [0, 10, 20, 40, 80, 160, 320, 360]);
});

test('wantActive: min(parallelism, completions − succeeded) ≥ 0; without completions parallelism until a success', (t) => {
  t.is(wantActive(mkJob({ parallelism: 3, completions: 5 }), 0, 3), 2);
  t.is(wantActive(mkJob({ parallelism: 3, completions: 5 }), 0, 0), 3);
  t.is(wantActive(mkJob({ parallelism: 3, completions: 5 }), 0, 7), 0);
  t.is(wantActive(mkJob({ parallelism: 2, completions: undefined }), 2, 0), 2);
  t.is(wantActive(mkJob({ parallelism: 2, completions: undefined }), 1, 1), 1);
});

test('pastBackoffLimitOnFailure: OnFailure only; restarts of Running/Pending pods reach backoffLimit (> 0 when it is 0)', (t) => {
  const onf = (limit: number) => mkJob({ backoffLimit: limit, template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c' }] } } });
  t.false(pastBackoffLimitOnFailure(onf(2), [jobPod('a', 'Running', { restarts: 1 })]));
  t.true(pastBackoffLimitOnFailure(onf(2), [jobPod('a', 'Running', { restarts: 2 })]));
  t.true(pastBackoffLimitOnFailure(onf(2), [jobPod('a', 'Running', { restarts: 1 }), jobPod('b', 'Pending', { restarts: 1 })]));
  t.false(pastBackoffLimitOnFailure(onf(2), [jobPod('a', 'Failed', { restarts: 5 })]));
  t.true(pastBackoffLimitOnFailure(onf(0), [jobPod('a', 'Running', { restarts: 1 })]));
  t.false(pastBackoffLimitOnFailure(mkJob({ backoffLimit: 0 }), [jobPod('a', 'Running', { restarts: 3 })]));
});

test('a new Job: one pod created from the template with the controller reference, startTime and active 1 written', (t) => {
  const { sent, stored } = setup(mkJob());
  const creates = sent('ApiCreate', 'pods') as ApiCreate[];
  t.is(creates.length, 1);
  t.is(creates[0].object.metadata.generateName, 'work-');
  t.is(creates[0].object.metadata.ownerReferences?.[0].kind, 'Job');
  t.is(stored().status?.active, 1);
  t.truthy(stored().status?.startTime);
});

test('a new Failed pod: the replacement is created at once and the key comes back after 10 s; the next failure waits the back-off (spec §4.6)', (t) => {
  const { env, c, podInf, sent } = setup(mkJob({ backoffLimit: 6 }, { active: 1, startTime: '2025-01-01T00:00:00Z' }), [jobPod('p1', 'Running')]);
  t.is(sent('ApiCreate', 'pods').length, 0);
  podInf.replace([jobPod('p1', 'Failed')], '2');
  env.flush();
  t.is(sent('ApiCreate', 'pods').length, 1, 'replacement created at once');
  // The informer observes the replacement (creation expectation met, active 1).
  const p2 = jobPod('p2', 'Running');
  podInf.replace([jobPod('p1', 'Failed'), p2], '3');
  env.flush();
  const syncs = c.workers.syncs;
  env.advance(9.9 * S);
  t.is(c.workers.syncs, syncs, 'no sync before the 10 s back-off');
  env.advance(0.2 * S);
  t.is(c.workers.syncs, syncs + 1, 'the rate-limited requeue at 10 s');
  t.is(c.workers.queue.numRequeues('ns/work'), 1, 'nothing changed: the failure count is kept (forget = false)');
  t.is(sent('ApiCreate', 'pods').length, 1);
  // p2 fails too: the Failed update waits getBackoff = 10 s; that sync creates p3 and requeues after 20 s.
  podInf.replace([jobPod('p1', 'Failed'), { ...p2, metadata: { ...p2.metadata, resourceVersion: '9999' }, status: { phase: 'Failed' } }], '4');
  env.flush();
  t.is(sent('ApiCreate', 'pods').length, 1, 'the Failed update is delayed by the back-off');
  env.advance(10.1 * S);
  t.is(sent('ApiCreate', 'pods').length, 2);
  t.is(c.workers.queue.numRequeues('ns/work'), 2);
});

test('a sync that reads the Job from a stale cache counts one Failed pod twice: two status writes, two requeues, so the next failure waits 20 s, not 10 s (v1.22 legacy syncJob; why examples/job-backoff.yaml is later on some seeds)', (t) => {
  // The Job's own status write comes back on the watch 1 ms later; the replacement pod's ADDED
  // event arrives during the first sync, so a second sync runs at once against failed: 0.
  const { env, c, podInf, sent } = setup(mkJob({ backoffLimit: 6 }, { active: 1, startTime: '2025-01-01T00:00:00Z' }), [jobPod('p1', 'Running')], { jobWatchDelayUs: 1000 });
  podInf.replace([jobPod('p1', 'Failed')], '2');
  env.flush();
  const writes = sent('ApiUpdate', 'jobs').map((r) => ((r as ApiUpdate).object as Job).status?.failed);
  t.deepEqual(writes, [1, 1], 'the stale sync writes failed=1 again');
  t.is(sent('ApiCreate', 'pods').length, 1, 'but creates no second replacement (the creation expectation)');
  t.is(c.workers.queue.numRequeues('ns/work'), 2, 'one failure, counted twice');
  env.advance(0.1 * S); // the two status writes come back on the watch (each an immediate sync)
  t.is(c.workers.queue.numRequeues('ns/work'), 2);
  // The first requeue (10 s) still wins in the delaying queue; the doubled count shows at the
  // next failure: p2's Failed update waits getBackoff(2) = 20 s instead of 10 s.
  env.advance(10 * S);
  const p2 = [...podInf.values()].find((p) => p.metadata.name !== 'p1')!;
  podInf.replace([jobPod('p1', 'Failed'), { ...p2, metadata: { ...p2.metadata, resourceVersion: '9999' }, status: { phase: 'Failed' } }], '4');
  env.flush();
  env.advance(10.1 * S);
  t.is(sent('ApiCreate', 'pods').length, 1, 'no replacement for p2 after 10 s');
  env.advance(10 * S);
  t.is(sent('ApiCreate', 'pods').length, 2, 'p2 replaced after 20 s');
});

test('failed > backoffLimit: the Job fails BackoffLimitExceeded and its active pods are deleted; nothing after that', (t) => {
  const pods = [jobPod('f1', 'Failed'), jobPod('f2', 'Failed'), jobPod('f3', 'Failed'), jobPod('r', 'Pending')];
  const { env, api, sent, stored } = setup(mkJob({ backoffLimit: 2, parallelism: 2, completions: 2 }, { failed: 2, active: 1, startTime: '2025-01-01T00:00:00Z' }), pods);
  const failed = stored().status?.conditions?.find((c) => c.type === 'Failed');
  t.is(failed?.reason, 'BackoffLimitExceeded');
  t.deepEqual(
    (sent('ApiDelete', 'pods') as ApiDelete[]).map((d) => d.name),
    ['r'],
  );
  t.deepEqual((sent('ApiDelete', 'pods') as ApiDelete[])[0].options, {}, 'empty DeleteOptions: the pod’s own grace');
  t.is(stored().status?.failed, 4, 'legacy path: the deleted active pods count as failed');
  t.true(sent('ApiCreate', 'events').some((e) => ((e as ApiCreate).object as { reason?: string }).reason === 'BackoffLimitExceeded'));
  const before = api.sent.length;
  env.advance(400 * S);
  t.is(api.sent.filter((r) => (r as { resource?: string }).resource === 'pods').length, sent('ApiDelete', 'pods').length, 'no pod calls after the Job finished');
  t.true(api.sent.length >= before);
});

test('activeDeadlineSeconds: the sync queued at start + ADS fails the Job DeadlineExceeded and deletes the running pod', (t) => {
  const { env, sent, stored, podInf } = setup(mkJob({ activeDeadlineSeconds: 30 }));
  const created = sent('ApiCreate', 'pods') as ApiCreate[];
  t.is(created.length, 1);
  podInf.replace([{ ...jobPod('p', 'Running'), metadata: { ...jobPod('p', 'Running').metadata, name: 'p' } }], '2');
  env.advance(29 * S);
  t.falsy(stored().status?.conditions?.some((c) => c.type === 'Failed'));
  env.advance(1.5 * S);
  t.is(stored().status?.conditions?.find((c) => c.type === 'Failed')?.reason, 'DeadlineExceeded');
  t.deepEqual(
    (sent('ApiDelete', 'pods') as ApiDelete[]).map((d) => d.name),
    ['p'],
  );
});

test('suspend: all active pods deleted, Suspended=True (JobSuspended) and a Suspended event; no creations', (t) => {
  const { sent, stored } = setup(mkJob({ suspend: true, parallelism: 2, completions: 4 }, { active: 2, startTime: '2025-01-01T00:00:00Z' }), [jobPod('a', 'Running'), jobPod('b', 'Running')]);
  t.is(sent('ApiDelete', 'pods').length, 2);
  t.is(sent('ApiCreate', 'pods').length, 0);
  const c = stored().status?.conditions?.find((x) => x.type === 'Suspended');
  t.is(c?.status, 'True');
  t.is(c?.reason, 'JobSuspended');
  t.true(sent('ApiCreate', 'events').some((e) => ((e as ApiCreate).object as { reason?: string }).reason === 'Suspended'));
});

test('Indexed: the lowest pending indexes get pods named <job>-<i>-, with the index annotation, hostname and JOB_COMPLETION_INDEX env', (t) => {
  const { sent, stored } = setup(mkJob({ completionMode: 'Indexed', completions: 4, parallelism: 3 }), [jobPod('done0', 'Succeeded', { index: 0 }), jobPod('run2', 'Running', { index: 2 })]);
  const creates = (sent('ApiCreate', 'pods') as ApiCreate[]).map((c) => c.object as Pod);
  t.deepEqual(
    creates.map((p) => p.metadata.generateName),
    ['work-1-', 'work-3-'],
  );
  t.deepEqual(
    creates.map((p) => p.metadata.annotations?.[JOB_COMPLETION_INDEX_ANNOTATION]),
    ['1', '3'],
  );
  t.deepEqual(
    creates.map((p) => p.spec.hostname),
    ['work-1', 'work-3'],
  );
  t.deepEqual(creates[0].spec.containers[0].env, [{ name: 'JOB_COMPLETION_INDEX', valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${JOB_COMPLETION_INDEX_ANNOTATION}']` } } }]);
  t.is(stored().status?.completedIndexes, '0');
  t.is(stored().status?.succeeded, 1);
});

test('completions reached: Complete with completionTime and a Completed event; a finished Job is never synced again', (t) => {
  const { env, api, sent, stored, jobInf } = setup(mkJob({ completions: 1 }, { active: 1, startTime: '2025-01-01T00:00:00Z' }), [jobPod('p', 'Succeeded')]);
  const c = stored().status?.conditions?.find((x) => x.type === 'Complete');
  t.is(c?.status, 'True');
  t.truthy(stored().status?.completionTime);
  t.true(sent('ApiCreate', 'events').some((e) => ((e as ApiCreate).object as { reason?: string }).reason === 'Completed'));
  jobInf.replace([stored()], '3');
  env.flush();
  const n = api.sent.length;
  jobInf.replace([{ ...stored(), metadata: { ...stored().metadata, resourceVersion: '5000' } }], '4');
  env.flush();
  t.is(api.sent.length, n);
});

test('TTL after finished: requeued until lastTransitionTime + TTL, then a Foreground DELETE with the UID precondition', (t) => {
  const env = new FakeEnv();
  const api = new FakeApi();
  const jobs = new Informer<Job>('jobs');
  const finished = mkJob({ ttlSecondsAfterFinished: 60 }, { conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: env.clock.format(0) }] });
  api.auto = (req) => (req.type === 'ApiGet' ? { type: 'ApiResult', code: 200, body: finished } : req.type === 'ApiDelete' ? { type: 'ApiResult', code: 200, body: {} as never } : undefined);
  const c = new TTLAfterFinishedController(env, jobs, api.client(env));
  jobs.replace([finished], '1');
  c.workers.start();
  env.flush();
  t.is(timeLeft(finished, 0, (s) => env.clock.parse(s)), 60 * S);
  env.advance(59 * S);
  t.is(api.sent.filter((r) => r.type === 'ApiDelete').length, 0);
  env.advance(1.5 * S);
  const del = api.sent.filter((r) => r.type === 'ApiDelete') as ApiDelete[];
  t.is(del.length, 1);
  t.deepEqual(del[0].options, { propagationPolicy: 'Foreground', preconditions: { uid: 'job-uid' } });
});

test('legacy counting (no finalizer tracking): a Succeeded pod that is deleted no longer counts, so another pod is created', (t) => {
  // completions 2, one pod Succeeded and counted before; it is gone now (deleted by hand or by pod GC).
  const { sent, stored } = setup(mkJob({ completions: 2, parallelism: 1 }, { succeeded: 1, active: 0, startTime: '2025-01-01T00:00:00Z' }), []);
  t.is(stored().status?.succeeded, 0);
  t.is(sent('ApiCreate', 'pods').length, 1);
});
