/**
 * StatefulSet invariants (spec workload-controllers §6 items 1–4), judged from the apiserver's
 * storage writes (`api.write`) against the pod creates and deletes the StatefulSet controller
 * issued (`controller.sts.create` / `.delete`: what it did, not why). The controller acts on its
 * informer cache, which lags storage by the watch delivery, so each check asks only what a
 * lagging cache implies: a pod it acted past must have been healthy in storage at some earlier
 * write of the same object, and a pod still in storage is still in the cache. The set's own
 * spec and deletionTimestamp are taken as stored at the action and {@link CACHE_LAG_US} before it
 * (a watch delayed longer by a fault could make `sts-deleting-inert` or the replica count of
 * `sts-ordered-ready` report what a stale cache did).
 * Not checked here: §6.5 (PVCs never deleted by a controller) — the namespace controller deletes
 * them with the namespace, and the trace does not tell the controllers' requests apart.
 */
import { US_PER_SECOND } from '@podsim/api';
import type { Invariant, Violation } from './invariants.js';
import type { ApiWrite, StatefulSetAction, TraceModel } from './model.js';

/** How stale the controller's cache may be (δ, spec §0: up to 1 s). */
export const CACHE_LAG_US = US_PER_SECOND;

const sec = (us: number) => `${(us / US_PER_SECOND).toFixed(6).replace(/\.?0+$/, '')}s`;

/** Writes per `<namespace>/<name>` of a resource, in trace order. */
function byName(m: TraceModel, resource: string): Map<string, ApiWrite[]> {
  const out = new Map<string, ApiWrite[]>();
  for (const w of m.writes) {
    if (w.resource !== resource) continue;
    const k = `${w.namespace ?? ''}/${w.name}`;
    const l = out.get(k);
    if (l) l.push(w);
    else out.set(k, [w]);
  }
  return out;
}

/** The last write strictly before (t, seq), or at or before t when seq is undefined. */
function stateAt(writes: readonly ApiWrite[] | undefined, t: number, seq?: number): ApiWrite | undefined {
  let last: ApiWrite | undefined;
  for (const w of writes ?? []) {
    if (w.t < t || (w.t === t && (seq === undefined || w.seq < seq))) last = w;
    else break;
  }
  return last;
}

const live = (w: ApiWrite | undefined): w is ApiWrite => w !== undefined && w.event !== 'DELETED';
const healthy = (w: ApiWrite | undefined) => live(w) && w.phase === 'Running' && w.ready === true && !w.deletionTimestamp;

interface Ctx {
  pods: Map<string, ApiWrite[]>;
  sets: Map<string, ApiWrite[]>;
}

function ctxOf(m: TraceModel): Ctx {
  return { pods: byName(m, 'pods'), sets: byName(m, 'statefulsets') };
}

/**
 * Whether the object holding `pod`'s name at the action had been healthy at some write before it:
 * the cache lags storage, so a controller acting on a cache that shows the pod Running and Ready
 * implies storage showed it so earlier — whatever the lag (a stale cache may still show it
 * ready after it turned unready, which is not a violation).
 */
function healthyForCache(c: Ctx, ns: string, pod: string, a: StatefulSetAction): boolean {
  const writes = c.pods.get(`${ns}/${pod}`) ?? [];
  const cur = stateAt(writes, a.t, a.seq);
  if (!live(cur)) return false;
  return writes.some((w) => w.uid === cur.uid && (w.t < a.t || (w.t === a.t && w.seq < a.seq)) && healthy(w));
}

/** The set as stored at the action and a cache lag before it (both, for lag-tolerant checks). */
function setStates(c: Ctx, a: StatefulSetAction): ApiWrite[] {
  const w = c.sets.get(`${a.namespace}/${a.set}`);
  return [stateAt(w, a.t, a.seq), stateAt(w, a.t - CACHE_LAG_US)].filter(live);
}

export const STATEFULSET_INVARIANTS: readonly Invariant[] = [
  {
    id: 'sts-one-object-per-name',
    spec: 'WC §6.1',
    title: 'two API objects with the same StatefulSet pod name never coexist; the StatefulSet controller POSTs a pod only once the old object of that name is gone',
    check(m) {
      const out: Violation[] = [];
      const c = ctxOf(m);
      const names = new Set(m.stsActions.filter((a) => a.op === 'create').map((a) => `${a.namespace}/${a.pod}`));
      for (const name of names) {
        let cur: string | undefined;
        for (const w of c.pods.get(name) ?? []) {
          if (w.event === 'ADDED' && cur !== undefined && cur !== w.uid) {
            out.push({ invariant: this.id, t: w.t, message: `pod ${name} uid ${w.uid} was stored while uid ${cur} of that name still existed` });
          }
          cur = w.event === 'DELETED' ? undefined : w.uid;
        }
      }
      for (const a of m.stsActions) {
        if (a.op !== 'create') continue;
        const prev = stateAt(
          (c.pods.get(`${a.namespace}/${a.pod}`) ?? []).filter((w) => w.uid !== a.uid),
          a.t,
          a.seq,
        );
        if (live(prev)) {
          out.push({
            invariant: this.id,
            t: a.t,
            message: `StatefulSet ${a.namespace}/${a.set} POSTed ${a.pod} at ${sec(a.t)} while the old object (uid ${prev.uid}${prev.deletionTimestamp ? ', terminating' : ''}) still held the name (answer ${a.code})`,
          });
        }
      }
      return out;
    },
  },
  {
    id: 'sts-ordered-ready',
    spec: 'WC §6.2',
    title: 'OrderedReady: ordinal k is created only when every lower ordinal is Running and Ready; a condemned pod is deleted only when no higher one exists and every remaining replica is Running and Ready',
    check(m) {
      const out: Violation[] = [];
      const c = ctxOf(m);
      for (const a of m.stsActions) {
        const states = setStates(c, a);
        if (states.length === 0 || states.some((s) => s.podManagementPolicy === 'Parallel')) continue;
        if (a.op === 'create') {
          for (let j = 0; j < a.ordinal; j++) {
            const p = `${a.set}-${j}`;
            if (!healthyForCache(c, a.namespace, p, a)) out.push({ invariant: this.id, t: a.t, message: `${a.namespace}/${a.pod} was created at ${sec(a.t)} while ${p} was not Running and Ready` });
          }
        } else if (a.why === 'condemned' && a.code < 300) {
          const replicas = Math.min(...states.map((s) => s.specReplicas ?? 1));
          const unhealthy: string[] = [];
          for (let j = 0; j < replicas; j++) if (!healthyForCache(c, a.namespace, `${a.set}-${j}`, a)) unhealthy.push(`${a.set}-${j}`);
          // The lowest unhealthy pod of all (condemned ones too) may itself be deleted.
          if (unhealthy.length > 0) out.push({ invariant: this.id, t: a.t, message: `${a.namespace}/${a.pod} was deleted at ${sec(a.t)} while ${unhealthy.join(', ')} were not Running and Ready` });
          for (const [name, writes] of c.pods) {
            const [ns, pod] = [name.slice(0, name.indexOf('/')), name.slice(name.indexOf('/') + 1)];
            const mm = /^(.*)-(\d+)$/.exec(pod);
            if (ns !== a.namespace || !mm || mm[1] !== a.set || Number(mm[2]) <= a.ordinal) continue;
            if (live(stateAt(writes, a.t - CACHE_LAG_US)) && live(stateAt(writes, a.t, a.seq))) {
              out.push({ invariant: this.id, t: a.t, message: `${a.namespace}/${a.pod} was deleted at ${sec(a.t)} while the higher ${pod} still existed` });
            }
          }
        }
      }
      return out;
    },
  },
  {
    id: 'sts-one-terminating',
    spec: 'WC §6.3',
    title: 'OrderedReady scale-down and every rolling update: at most one pod per StatefulSet terminating because of the controller',
    check(m) {
      const out: Violation[] = [];
      const c = ctxOf(m);
      const pending = new Map<string, StatefulSetAction[]>();
      for (const a of m.stsActions) {
        if (a.op !== 'delete' || a.code >= 300 || a.why === 'failed') continue;
        const parallel = setStates(c, a).some((s) => s.podManagementPolicy === 'Parallel');
        if (parallel && a.why !== 'update') continue;
        const key = `${a.namespace}/${a.set}`;
        const earlier = (pending.get(key) ?? []).filter((e) => live(stateAt(c.pods.get(`${e.namespace}/${e.pod}`)?.filter((w) => e.uid === undefined || w.uid === e.uid), a.t, a.seq)));
        for (const e of earlier) {
          out.push({ invariant: this.id, t: a.t, message: `${key} deleted ${a.pod} at ${sec(a.t)} while ${e.pod}, deleted at ${sec(e.t)} (${e.why}), was still terminating` });
        }
        pending.set(key, [...earlier, a]);
      }
      return out;
    },
  },
  {
    id: 'sts-deleting-inert',
    spec: 'WC §6.4',
    title: 'a StatefulSet with a deletionTimestamp creates and deletes no pod',
    check(m) {
      const out: Violation[] = [];
      const c = ctxOf(m);
      for (const a of m.stsActions) {
        const states = setStates(c, a);
        if (states.length === 2 && states.every((s) => s.deletionTimestamp)) {
          out.push({ invariant: this.id, t: a.t, message: `StatefulSet ${a.namespace}/${a.set} (being deleted since ${states[1].deletionTimestamp}) ${a.op}d ${a.pod} at ${sec(a.t)}` });
        }
      }
      return out;
    },
  },
];
