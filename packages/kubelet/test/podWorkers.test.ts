/**
 * The pod worker state machine (pod_workers.go, spec §5) with a fake syncer and the real pod
 * cache, refreshed by a fake 1 s "relist". Invariants 4, 8, 9, 20 of spec §14.
 */
import test from 'ava';
import type { Pod } from '@podsim/api';
import { PodCache } from '../src/pleg/podCache.js';
import { PodWorkers, type PodSyncer, type SyncError, type WorkerContext } from '../src/podWorkers.js';
import { emptyPodStatus, type RuntimePod } from '../src/container.js';
import { FakeEnv, S } from './fakeEnv.js';

interface Call {
  kind: 'sync' | 'terminating' | 'terminated';
  t: number;
  grace?: number;
  ctx: WorkerContext;
  end?: number;
  runtimePod?: boolean;
}

function setup(opts: { syncUs?: number; terminatingUs?: number; errors?: SyncError[] } = {}) {
  const env = new FakeEnv();
  const cache = new PodCache();
  const calls: Call[] = [];
  let running = 0;
  let maxRunning = 0;
  const errors = [...(opts.errors ?? [])];
  const finish = (c: Call, us: number, done: (e: SyncError) => void) => {
    running++;
    maxRunning = Math.max(maxRunning, running);
    env.setTimer(us, () => {
      running--;
      c.end = env.t;
      done(c.kind === 'terminating' ? errors.shift() : undefined);
    });
  };
  const syncer: PodSyncer = {
    syncPod(ctx, _u, _pod, _m, _s, done) {
      const c: Call = { kind: 'sync', t: env.t, ctx };
      calls.push(c);
      finish(c, opts.syncUs ?? 100_000, done);
    },
    syncTerminatingPod(ctx, _pod, _s, runningPod, grace, _fn, done) {
      const c: Call = { kind: 'terminating', t: env.t, grace, ctx, runtimePod: runningPod !== undefined };
      calls.push(c);
      finish(c, opts.terminatingUs ?? 100_000, done);
    },
    syncTerminatedPod(ctx, _pod, _s, done) {
      const c: Call = { kind: 'terminated', t: env.t, ctx };
      calls.push(c);
      finish(c, 10_000, done);
    },
  };
  const w = new PodWorkers(env, syncer, cache, { resyncIntervalUs: 60 * S, backOffPeriodUs: 10 * S });
  // A relist every second, as the PLEG would.
  const relist = () => {
    cache.updateTime(env.t);
    env.setTimer(S, relist);
  };
  env.setTimer(S / 2, relist);
  return { env, w, calls, maxRunning: () => maxRunning };
}

const pod = (extra: Partial<Pod['metadata']> = {}, phase?: 'Failed' | 'Succeeded'): Pod => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'u1', ...extra },
  spec: { containers: [{ name: 'app' }], terminationGracePeriodSeconds: 30 },
  ...(phase ? { status: { phase } } : {}),
});
const deleted = (g: number) => pod({ deletionTimestamp: '2025-01-01T00:00:30Z', deletionGracePeriodSeconds: g });

test('a pod deleted before it started never runs syncPod: terminating, then terminated, then finished (C25)', (t) => {
  const { env, w, calls } = setup();
  w.updatePod({ pod: deleted(30), updateType: 'SyncPodCreate' });
  env.runUntil(5 * S);
  t.deepEqual(calls.map((c) => c.kind), ['terminating', 'terminated']);
  t.is(calls[0].grace, 30);
  const s = w.podSyncStatuses.get('u1')!;
  t.true(s.finished && s.deleted && s.terminatedAt !== undefined);
  t.false(w.couldHaveRunningContainers('u1'));
  t.true(w.shouldPodContentBeRemoved('u1'));
});

test('each transition waits for a PLEG relist newer than the previous sync (GetNewerThan)', (t) => {
  const { env, w, calls } = setup();
  w.updatePod({ pod: pod(), updateType: 'SyncPodCreate' });
  env.runUntil(2 * S);
  w.updatePod({ pod: deleted(30), updateType: 'SyncPodUpdate' });
  env.runUntil(6 * S);
  t.deepEqual(calls.map((c) => c.kind), ['sync', 'terminating', 'terminated']);
  // syncPod starts at the first relist (0.5 s).
  t.is(calls[0].t, S / 2);
  // The delete at 2 s finds the 1.5 s relist newer than the sync's end (0.6 s): no wait.
  t.is(calls[1].t, 2 * S);
  // syncTerminatedPod waits for the relist after syncTerminatingPod ended (2.1 s).
  t.is(calls[2].t, 2.5 * S);
});

test('updates during a sync are coalesced, latest wins; once terminating every update is a kill and grace only shrinks', (t) => {
  // The first syncTerminatingPod fails (a kill error), so the pending update runs next.
  const { env, w, calls } = setup({ syncUs: 3 * S, terminatingUs: 5 * S, errors: ['kill failed'] });
  w.updatePod({ pod: pod(), updateType: 'SyncPodCreate' });
  env.runUntil(S);
  w.updatePod({ pod: pod({ labels: { a: '1' } }), updateType: 'SyncPodUpdate' });
  w.updatePod({ pod: deleted(30), updateType: 'SyncPodUpdate' });
  t.true(calls[0].ctx.cancelled, 'becoming terminating cancels the in-flight syncPod');
  w.updatePod({ pod: pod({ labels: { a: '2' } }), updateType: 'SyncPodSync' });
  env.runUntil(6 * S);
  t.deepEqual(calls.map((c) => c.kind), ['sync', 'terminating']);
  t.is(calls[1].grace, 30);
  // A second DELETE with a shorter grace cancels the in-flight terminating sync; the next run uses 10.
  w.updatePod({ pod: deleted(10), updateType: 'SyncPodUpdate' });
  t.true(calls[1].ctx.cancelled);
  env.runUntil(20 * S);
  const graces = calls.filter((c) => c.kind === 'terminating').map((c) => c.grace);
  t.deepEqual(graces, [30, 10]);
  t.is(w.podSyncStatuses.get('u1')!.gracePeriod, 10);
  t.is(calls.at(-1)!.kind, 'terminated');
});

test('invariant 8: one sync at a time per UID, never backwards', (t) => {
  const { env, w, calls, maxRunning } = setup({ syncUs: 700_000, terminatingUs: 900_000 });
  for (let i = 0; i < 20; i++) {
    env.setTimer(i * 300_000, () => w.updatePod({ pod: i < 10 ? pod({ labels: { i: String(i) } }) : deleted(30 - i), updateType: 'SyncPodUpdate' }));
  }
  env.runUntil(30 * S);
  t.is(maxRunning(), 1);
  const order = { sync: 0, terminating: 1, terminated: 2 };
  for (let i = 1; i < calls.length; i++) {
    t.true(order[calls[i].kind] >= order[calls[i - 1].kind]);
    t.true(calls[i].t >= calls[i - 1].end!);
  }
  t.is(calls.filter((c) => c.kind === 'terminated').length, 1);
});

test('a failed syncTerminatingPod is requeued after the 10–15 s backoff; success requeues after 60–90 s', (t) => {
  const { env, w, calls } = setup({ errors: ['kill failed'] });
  w.updatePod({ pod: deleted(30), updateType: 'SyncPodCreate' });
  env.runUntil(2 * S);
  t.deepEqual(calls.map((c) => c.kind), ['terminating']);
  const failedAt = calls[0].end!;
  // Nothing retries by itself; the 1 s syncCh asks the work queue.
  let due: number | undefined;
  for (let s = 1; s <= 20 && due === undefined; s++) {
    env.runUntil(failedAt + s * S);
    if (w.getWork(env.t).includes('u1')) due = s;
  }
  t.true(due !== undefined && due >= 10 && due <= 16, `due after ${due}s`);
  w.updatePod({ pod: deleted(30), updateType: 'SyncPodSync' });
  env.runUntil(env.t + 5 * S);
  t.deepEqual(calls.map((c) => c.kind), ['terminating', 'terminating', 'terminated']);
});

test('a finished worker ignores updates until SyncKnownPods forgets it, which needs the pod gone from config (invariant 20)', (t) => {
  const { env, w, calls } = setup();
  w.updatePod({ pod: deleted(30), updateType: 'SyncPodCreate' });
  env.runUntil(5 * S);
  const n = calls.length;
  w.updatePod({ pod: deleted(30), updateType: 'SyncPodKill' });
  w.updatePod({ pod: pod(), updateType: 'SyncPodCreate' });
  env.runUntil(8 * S);
  t.is(calls.length, n);
  w.syncKnownPods(new Set(['u1']));
  t.true(w.podSyncStatuses.has('u1'), 'still in config: kept');
  w.syncKnownPods(new Set());
  t.false(w.podSyncStatuses.has('u1'));
  t.true(w.podsSynced);
  w.updatePod({ pod: pod(), updateType: 'SyncPodCreate' });
  env.runUntil(10 * S);
  t.is(calls.at(-1)!.kind, 'sync');
});

test('a pod in a terminal phase terminates without being "deleted"; REMOVE (SyncPodKill) terminates with TGPS', (t) => {
  const a = setup();
  a.w.updatePod({ pod: pod({}, 'Succeeded'), updateType: 'SyncPodSync' });
  a.env.runUntil(5 * S);
  t.deepEqual(a.calls.map((c) => c.kind), ['terminating', 'terminated']);
  t.false(a.w.podSyncStatuses.get('u1')!.deleted);
  const b = setup();
  b.w.updatePod({ pod: pod(), updateType: 'SyncPodKill' });
  b.env.runUntil(5 * S);
  t.is(b.calls[0].grace, 30);
});

test('orphaned runtime pods: only kills are accepted; killed with the override, no cache wait, finished at once', (t) => {
  const { env, w, calls } = setup();
  const rp: RuntimePod = { uid: 'orphan', name: 'o', namespace: 'ns', containers: [{ id: 'c1', name: 'app', state: 'running' }], sandboxes: [] };
  w.updatePod({ runningPod: rp, updateType: 'SyncPodSync' });
  t.false(w.podSyncStatuses.has('orphan'));
  w.updatePod({ runningPod: rp, updateType: 'SyncPodKill', killPodOptions: { podTerminationGracePeriodSecondsOverride: 1 } });
  env.runUntil(0.3 * S);
  t.is(calls.length, 1);
  t.is(calls[0].t, 0, 'no GetNewerThan wait for runtime pods (the first relist is at 0.5 s)');
  t.true(calls[0].runtimePod);
  t.is(calls[0].grace, 1);
  t.true(w.podSyncStatuses.get('orphan')!.finished);
  t.deepEqual(emptyPodStatus('x').containerStatuses, []);
});

test('predicates before and after podsSynced for unknown pods (spec §5.1 table)', (t) => {
  const { w } = setup();
  t.true(w.couldHaveRunningContainers('nope'));
  t.false(w.shouldPodRuntimeBeRemoved('nope'));
  t.false(w.isPodTerminationRequested('nope'));
  w.syncKnownPods(new Set());
  t.false(w.couldHaveRunningContainers('nope'));
  t.true(w.shouldPodRuntimeBeRemoved('nope'));
  t.true(w.shouldPodContainersBeTerminating('nope'));
  t.true(w.shouldPodContentBeRemoved('nope'));
});

test('a successful syncTerminatingPod wins over a pending shorter-grace update: the next work is TerminatedPodWork', (t) => {
  const { env, w, calls } = setup({ terminatingUs: 5 * S });
  w.updatePod({ pod: deleted(30), updateType: 'SyncPodCreate' });
  env.runUntil(2 * S);
  w.updatePod({ pod: deleted(5), updateType: 'SyncPodUpdate' });
  env.runUntil(20 * S);
  t.deepEqual(calls.map((c) => `${c.kind}${c.grace ?? ''}`), ['terminating30', 'terminated']);
});
