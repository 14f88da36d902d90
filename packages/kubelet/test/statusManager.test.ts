/**
 * The status manager (status_manager.go, spec §10) against a fake apiserver: PATCH only when the
 * status changed, the final DELETE only once resources are reclaimed (grace 0, UID
 * precondition), 404 / UID mismatch / 409 handling, the 10 s batch retrying a failed write.
 */
import test from 'ava';
import type { ApiDelete, ApiPatch, ApiRequest, ApiResult, Pod, PodStatus } from '@podsim/api';
import { ApiClient } from '../src/apiClient.js';
import { isPodStatusByKubeletEqual, mergePodStatus, preparePatchForPodStatus, StatusManager, unchangedByKubelet } from '../src/status/statusManager.js';
import { FakeEnv, S } from './fakeEnv.js';

/** Applies the kubelet's status patch the way strategic merge does for its shape (lists by key, nulls delete). */
function applyPatch(target: unknown, patch: unknown, key?: string): unknown {
  if (Array.isArray(patch) && Array.isArray(target) && key) {
    const out = [...(target as Record<string, unknown>[])];
    for (const it of patch as Record<string, unknown>[]) {
      const i = out.findIndex((x) => x[key] === it[key]);
      if (it.$patch === 'delete') {
        if (i >= 0) out.splice(i, 1);
      } else if (i >= 0) out[i] = applyPatch(out[i], it) as Record<string, unknown>;
      else out.push(applyPatch(undefined, it) as Record<string, unknown>);
    }
    return out;
  }
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target && typeof target === 'object' ? { ...(target as object) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$setElementOrder/')) continue;
    if (v === null) delete out[k];
    else out[k] = applyPatch(out[k], v, k === 'conditions' ? 'type' : undefined);
  }
  for (const [k, order] of Object.entries(patch)) {
    if (!k.startsWith('$setElementOrder/')) continue;
    const list = k.slice('$setElementOrder/'.length);
    const key = list === 'conditions' ? 'type' : 'name';
    const cur = (out[list] ?? []) as Record<string, unknown>[];
    out[list] = (order as Record<string, unknown>[]).map((o) => cur.find((x) => x[key] === o[key])).filter((x) => x !== undefined);
  }
  return out;
}

/** With `notify`, the fake pod manager tells the status manager of every change of its pod (as the kubelet does). */
function setup(reclaimed: () => boolean, notify = false) {
  let stored: Pod | undefined = {
    metadata: { name: 'p', namespace: 'ns', uid: 'u1', deletionTimestamp: '2025-01-01T00:00:30Z', deletionGracePeriodSeconds: 30 },
    spec: { containers: [{ name: 'app' }] },
    status: { phase: 'Running', conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'example.com/gate', status: 'True' }] },
  };
  const log: string[] = [];
  let writes = 0;
  let patchFails = 0;
  const env = new FakeEnv(undefined, (req: ApiRequest, reply: (r: ApiResult) => void) => {
    const nf = { type: 'ApiResult' as const, code: 404, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 404, reason: 'NotFound' } as never };
    log.push(req.type);
    if (req.type === 'ApiGet') return reply(stored ? { type: 'ApiResult', code: 200, body: stored } : nf);
    if (req.type === 'ApiPatch') {
      if (!stored) return reply(nf);
      if (patchFails > 0) {
        patchFails--;
        return reply({ type: 'ApiResult', code: 500, body: { kind: 'Status' } as never });
      }
      const p = (req as ApiPatch).patch as { status: unknown };
      stored = { ...stored, status: applyPatch(stored.status, p.status) as PodStatus };
      if (notify) sm.podUpdated('u1');
      writes++;
      return reply({ type: 'ApiResult', code: 200, body: stored });
    }
    if (req.type === 'ApiDelete') {
      const d = req as ApiDelete;
      if (!stored) return reply(nf);
      if (d.options?.preconditions?.uid !== stored.metadata.uid) return reply({ type: 'ApiResult', code: 409, body: { kind: 'Status' } as never });
      stored = undefined;
      if (notify) sm.podUpdated('u1');
      return reply({ type: 'ApiResult', code: 200, body: {} as never });
    }
  });
  const sm = new StatusManager({
    env,
    client: new ApiClient(env, 5, 10),
    getPodByUID: () => stored,
    podResourcesAreReclaimed: () => reclaimed(),
    syncPeriodUs: 10 * S,
    notifiesPodUpdates: notify,
  });
  sm.start();
  return {
    env,
    sm,
    log,
    get stored() {
      return stored;
    },
    set stored(p: Pod | undefined) {
      stored = p;
      if (notify) sm.podUpdated('u1');
    },
    writes: () => writes,
    failPatches: (n: number) => (patchFails = n),
  };
}

const running: PodStatus = {
  phase: 'Running',
  conditions: [{ type: 'Ready', status: 'True' }, { type: 'PodScheduled', status: 'True' }],
  containerStatuses: [{ name: 'app', ready: true, restartCount: 0, image: 'nginx', imageID: '', containerID: 'containerd://c1', state: { running: { startedAt: '2025-01-01T00:00:01Z' } }, lastState: {} }],
};
const terminated: PodStatus = {
  phase: 'Running',
  conditions: [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady' }, { type: 'PodScheduled', status: 'True' }],
  containerStatuses: [{ name: 'app', ready: false, restartCount: 0, image: 'nginx', imageID: '', containerID: 'containerd://c1', state: { terminated: { exitCode: 0, reason: 'Completed' } }, lastState: {} }],
};

test('unchanged status: GET but no PATCH (no write, no watch event)', (t) => {
  const f = setup(() => false);
  const pod = f.stored!;
  f.sm.setPodStatus(pod, running);
  f.env.runUntil(S);
  t.is(f.writes(), 1);
  // A deleting pod forces a new version even if nothing changed; the PATCH is skipped.
  f.sm.setPodStatus(f.stored!, running);
  f.env.runUntil(2 * S);
  t.deepEqual(f.log, ['ApiGet', 'ApiPatch', 'ApiGet'], JSON.stringify(f.env.apiCalls.filter((c) => c.req.type === 'ApiPatch').map((c) => (c.req as ApiPatch).patch)));
  t.is(f.writes(), 1);
});

test('the patch turns running into terminated exactly (explicit null for the old state) and keeps foreign conditions', (t) => {
  const f = setup(() => false);
  f.sm.setPodStatus(f.stored!, running);
  f.env.runUntil(S);
  f.sm.setPodStatus(f.stored!, terminated);
  f.env.runUntil(2 * S);
  const cs = f.stored!.status!.containerStatuses![0];
  t.deepEqual(Object.keys(cs.state), ['terminated']);
  t.truthy(f.stored!.status!.conditions!.find((c) => c.type === 'example.com/gate'), 'non-kubelet condition preserved (mergePodStatus)');
  t.is(f.stored!.status!.conditions!.find((c) => c.type === 'Ready')!.status, 'False');
});

test('invariant 2/18: no DELETE until resources are reclaimed, then DELETE grace 0 with the UID precondition', (t) => {
  let reclaimed = false;
  const f = setup(() => reclaimed);
  f.sm.setPodStatus(f.stored!, terminated);
  f.env.runUntil(25 * S); // two batches pass: still no delete
  t.false(f.log.includes('ApiDelete'));
  reclaimed = true;
  f.sm.terminatePod(f.stored!);
  f.env.runUntil(26 * S);
  const del = f.env.apiCalls.find((c) => c.req.type === 'ApiDelete')!.req as ApiDelete;
  t.deepEqual(del.options, { gracePeriodSeconds: 0, preconditions: { uid: 'u1' } });
  t.is(f.stored, undefined);
  t.false(f.sm.podStatuses.has('u1'));
  const fd = f.env.traces.find((r) => r.kind === 'kubelet.finalDelete');
  t.is(fd?.data?.code, 200);
});

test('a pod without a deletionTimestamp is never deleted, even when reclaimed', (t) => {
  const f = setup(() => true);
  f.stored = { ...f.stored!, metadata: { name: 'p', namespace: 'ns', uid: 'u1' } };
  f.sm.setPodStatus(f.stored!, terminated);
  f.env.runUntil(25 * S);
  t.false(f.log.includes('ApiDelete'));
});

test('GET 404 (force-deleted elsewhere) ends the sync without writes; a recreated pod (new UID) is never patched or deleted', (t) => {
  const f = setup(() => true);
  const old = f.stored!;
  f.stored = undefined;
  f.sm.setPodStatus(old, terminated);
  f.env.runUntil(S);
  t.deepEqual(f.log, ['ApiGet']);
  f.stored = { ...old, metadata: { ...old.metadata, uid: 'u2' } };
  f.sm.setPodStatus(old, running);
  f.env.runUntil(2 * S);
  t.deepEqual(f.log, ['ApiGet', 'ApiGet']);
  t.false(f.sm.podStatuses.has('u1'), 'the cache entry of the old UID is dropped');
  t.is(f.stored?.metadata.uid, 'u2');
});

test('a failed PATCH is retried by the 10 s batch', (t) => {
  const f = setup(() => false);
  f.failPatches(1);
  f.sm.setPodStatus(f.stored!, terminated);
  f.env.runUntil(S);
  t.is(f.writes(), 0);
  f.env.runUntil(11 * S);
  t.is(f.writes(), 1);
});

test('preparePatchForPodStatus: undefined when unchanged; mergePodStatus keeps only foreign API conditions', (t) => {
  t.is(preparePatchForPodStatus('u', running, running), undefined);
  const m = mergePodStatus({ conditions: [{ type: 'x', status: 'True' }, { type: 'Ready', status: 'True' }] }, { conditions: [{ type: 'Ready', status: 'False' }] });
  t.deepEqual(m.conditions, [{ type: 'x', status: 'True' }, { type: 'Ready', status: 'False' }]);
});

test('unchangedByKubelet(old, status, startTime) answers isPodStatusByKubeletEqual(old, <the status updateStatusInternal builds>), over seeded random statuses', (t) => {
  let seed = 12345;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return (seed >>> 16) % n;
  };
  const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)];
  const condition = () => ({
    type: pick(['Ready', 'ContainersReady', 'Initialized', 'PodScheduled', 'example.com/gate']),
    status: pick(['True', 'False']),
    ...(rnd(2) ? { reason: pick(['A', 'B']) } : {}),
    ...(rnd(3) === 0 ? { message: 'm' } : {}),
    ...(rnd(2) ? { lastTransitionTime: pick(['t1', 't2']) } : {}),
  });
  const status = (): PodStatus => {
    const s: Record<string, unknown> = {};
    if (rnd(4)) s.phase = pick(['Pending', 'Running']);
    if (rnd(2)) s.startTime = pick(['s1', 's2']);
    if (rnd(3) === 0) s.startTime = undefined;
    if (rnd(2)) s.hostIP = pick(['10.0.0.1', '10.0.0.2']);
    if (rnd(3) === 0) s.reason = undefined;
    if (rnd(2)) s.containerStatuses = [{ name: 'app', ready: rnd(2) === 0, restartCount: 0, image: 'i', imageID: '', state: rnd(2) ? { running: {} } : { waiting: {} }, lastState: {} }];
    if (rnd(5)) s.conditions = Array.from({ length: rnd(4) }, condition);
    return s as PodStatus;
  };
  let equal = 0;
  for (let i = 0; i < 5000; i++) {
    const old = status();
    const s = rnd(3) === 0 ? { ...old, conditions: old.conditions?.map((c) => ({ ...c, lastTransitionTime: 'other' })) } : status();
    const startTime = old.startTime || s.startTime || 'now';
    const next: PodStatus = { ...s, ...(s.conditions ? { conditions: s.conditions.map((c) => ({ ...c, lastTransitionTime: 'x' })) } : {}), startTime };
    const want = isPodStatusByKubeletEqual(old, next);
    if (want) equal++;
    if (unchangedByKubelet(old, s, startTime) !== want) t.fail(`differs for old ${JSON.stringify(old)} status ${JSON.stringify(s)}`);
  }
  t.true(equal > 100, `both answers occur (${equal} equal of 5000)`);
});

test('notifiesPodUpdates: the batch still finds a deleting pod whose resources were reclaimed with nothing else changing, and a pod whose API status someone else changed', (t) => {
  // Reclaimed flips in the rest of the kubelet (no status, version or pod change): the batch
  // must look at the deleting pod again (canBeDeleted reads the kubelet) and DELETE it.
  let reclaimed = false;
  const f = setup(() => reclaimed, true);
  f.sm.setPodStatus(f.stored!, terminated);
  f.env.runUntil(25 * S);
  t.false(f.log.includes('ApiDelete'));
  reclaimed = true;
  f.env.runUntil(36 * S);
  t.true(f.log.includes('ApiDelete'), f.log.join(' '));
  t.is(f.stored, undefined);

  // A pod without a deletionTimestamp, synced; then another writer changes its API status: the
  // batch reconciles it (needsReconcile) and patches the kubelet's status back.
  const g = setup(() => false, true);
  g.stored = { ...g.stored!, metadata: { ...g.stored!.metadata, deletionTimestamp: undefined, deletionGracePeriodSeconds: undefined } };
  g.sm.setPodStatus(g.stored!, running);
  g.env.runUntil(5 * S);
  const writes = g.writes();
  g.env.runUntil(25 * S); // quiet batches: nothing to write
  t.is(g.writes(), writes);
  g.stored = { ...g.stored!, status: { ...g.stored!.status, phase: 'Pending' } };
  g.env.runUntil(36 * S);
  t.is(g.writes(), writes + 1);
  t.is(g.stored!.status!.phase, 'Running');
});
