/**
 * Node-lifecycle invariant checkers (spec node-lifecycle.md §8.1 writer part, §8.2, §8.4, §8.5,
 * §8.6, §8.9, §8.10, §8.12), run outside the actors over the merged trace like the others in
 * invariants.ts. They read the apiserver's `api.write` records (node conditions, zone key, writer;
 * pod tolerations and controller owner; ReplicaSet spec.replicas), its `api.request` records, and
 * the controllers' own account where upstream state is private (`controller.nodelifecycle.zone` /
 * `.disruption`: the zone limiter rate and master disruption mode; `controller.taintManager.delete`:
 * which pod DELETEs are the taint manager's). A fact a checker needs and the trace lacks (a pod
 * without traced tolerations, a node write without conditions) is reported as a violation naming
 * it, never passed. Controllers act on informer caches: where a rule depends on what a controller
 * had seen, the window {@link INFORMER_LAG_US} (1 s, as node-unknown-after-grace allows) is given.
 */
import { US_PER_SECOND, parseRfc3339 } from '@podsim/api';
import { DEFAULT_NODE_LIFECYCLE_CONFIG } from '@podsim/controllers/nodelifecycle/nodeHealth';
import type { ApiRequest, ApiWrite, NodeConditionTuple, Toleration, TraceModel, ZoneEvent } from './model.js';
import type { Invariant, Violation } from './invariants.js';

const S = US_PER_SECOND;
/** How stale a controller's informer view may be when it acts (watch latency, 1 s as elsewhere). */
export const INFORMER_LAG_US = S;
const KCM = 'kube-controller-manager';
const UNREACHABLE = 'node.kubernetes.io/unreachable';
const NOT_READY = 'node.kubernetes.io/not-ready';
/** The conditions the NLC may set to Unknown (NetworkUnavailable is left alone, spec §3.3 step 5). */
const NLC_UNKNOWN_TYPES = new Set(['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure']);
const UNKNOWN_TEXT: Readonly<Record<string, string>> = { NodeStatusUnknown: 'Kubelet stopped posting node status.', NodeStatusNeverUpdated: 'Kubelet never posted node status.' };
/** podgc `quarantineTime`. */
const QUARANTINE_US = 40 * S;

const sec = (us: number) => `${(us / S).toFixed(3).replace(/\.?0+$/, '')}s`;

interface Taint {
  readonly key: string;
  readonly value: string;
  readonly effect: string;
}

/** `key[=value]:effect` as the apiserver traces node taints. */
function parseTaint(s: string): Taint {
  const i = s.lastIndexOf(':');
  const kv = s.slice(0, i);
  const eq = kv.indexOf('=');
  return { key: eq < 0 ? kv : kv.slice(0, eq), value: eq < 0 ? '' : kv.slice(eq + 1), effect: s.slice(i + 1) };
}

const noExecute = (w: ApiWrite | undefined): string[] => (w && w.event !== 'DELETED' ? (w.taints ?? []).filter((t) => t.endsWith(':NoExecute')) : []);

/** `v1.Toleration.ToleratesTaint` (k8s.io/api core/v1 toleration.go, v0.22.8). */
function tolerates([key, op, value, effect]: Toleration, t: Taint): boolean {
  if (effect !== '' && effect !== t.effect) return false;
  if (key !== '' && key !== t.key) return false;
  if (op === 'Exists') return true;
  return (op === 'Equal' || op === '') && value === t.value;
}

/**
 * The taint manager's decision for a pod on a node with these NoExecute taints (`processPodOnNode`
 * with `GetMatchingTolerations`, the first matching toleration per taint, and
 * `getMinTolerationTime`): µs until the deletion, 0 = at once (a taint not tolerated, or
 * tolerationSeconds ≤ 0), −1 = never (tolerated forever).
 */
function tolerationDelayUs(taints: readonly string[], tols: readonly Toleration[]): number {
  let min = Infinity;
  for (const s of taints) {
    const taint = parseTaint(s);
    const used = tols.find((x) => tolerates(x, taint));
    if (!used) return 0;
    const secs = used[4];
    if (secs === null) continue;
    if (secs <= 0) return 0;
    min = Math.min(min, secs * S);
  }
  return min === Infinity ? -1 : min;
}

/** Per pod UID, what the trace says so far (tolerations and owner are carried forward). */
interface PodFacts {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  node?: string;
  tolerations?: readonly Toleration[];
  owner?: string;
  active: boolean;
  gone: boolean;
}

/**
 * Walks every API write in trace order, keeping per pod UID its node, tolerations, owner and
 * whether it is active (`IsPodActive`: not terminal, no deletionTimestamp); `on` sees each pod
 * write with the pod's state just before it.
 */
function walk(m: TraceModel, on: (w: ApiWrite, pods: Map<string, PodFacts>, before: PodFacts | undefined) => void): void {
  const pods = new Map<string, PodFacts>();
  for (const w of m.writes) {
    if (w.resource === 'pods') {
      const prev = pods.get(w.uid);
      const before = prev ? { ...prev } : undefined;
      const p: PodFacts = prev ?? { uid: w.uid, namespace: w.namespace ?? '', name: w.name, active: true, gone: false };
      if (w.nodeName) p.node = w.nodeName;
      if (w.tolerations) p.tolerations = w.tolerations;
      if (w.owner !== undefined) p.owner = w.owner;
      p.gone = w.event === 'DELETED';
      p.active = !p.gone && w.deletionTimestamp === undefined && w.phase !== 'Succeeded' && w.phase !== 'Failed';
      pods.set(w.uid, p);
      on(w, pods, before);
    }
  }
}

/** Node writes by name, in order. */
function nodeWrites(m: TraceModel): Map<string, ApiWrite[]> {
  const out = new Map<string, ApiWrite[]>();
  for (const w of m.writes) {
    if (w.resource !== 'nodes') continue;
    const l = out.get(w.name);
    if (l) l.push(w);
    else out.set(w.name, [w]);
  }
  return out;
}

/** The versions of a node an informer may have shown in [from, to]: the one current at `from`, then each write up to `to`. */
function versionsIn(list: readonly ApiWrite[] | undefined, from: number, to: number): (ApiWrite | undefined)[] {
  const l = list ?? [];
  const out: (ApiWrite | undefined)[] = [l.filter((w) => w.t <= from).at(-1)];
  for (const w of l) if (w.t > from && w.t <= to) out.push(w);
  return out;
}

/** The kube-controller-manager pod DELETE request that a taint-manager delete record answered. */
function taintManagerRequests(m: TraceModel): Array<{ req: ApiRequest | undefined; t: number; namespace: string; pod: string; attempt: number }> {
  return m.taintManagerDeletes.map((d) => {
    const req = (m.index.podDeletesByClientName.get(`${KCM}|${d.pod}`) ?? []).findLast((r) => r.t <= d.t && (r.namespace ?? '') === d.namespace && r.gracePeriodSeconds === undefined);
    return { req, t: req?.t ?? d.t, namespace: d.namespace, pod: d.pod, attempt: d.attempt };
  });
}

/** Zone limiter rate and master disruption mode over time, from the controller's own records. */
class ZoneLimiters {
  private readonly events: readonly ZoneEvent[];
  constructor(m: TraceModel) {
    this.events = m.zoneEvents;
  }
  /** In master disruption mode at t (entered at or before t, not exited since). */
  masterAt(t: number): number | undefined {
    let since: number | undefined;
    for (const e of this.events) {
      if (e.t > t) break;
      if (e.mode === 'enter') since = e.t;
      else if (e.mode === 'exit') since = undefined;
    }
    return since;
  }
  /**
   * The zone limiter's QPS at t: 0 in master mode, else the last rate the controller set, else the
   * initial `--node-eviction-rate` (podsim scenarios cannot change it: the default 0.1).
   */
  qpsAt(zone: string, t: number): number {
    let qps = DEFAULT_NODE_LIFECYCLE_CONFIG.evictionLimiterQPS;
    for (const e of this.events) {
      if (e.t > t) break;
      if (e.mode === 'enter') qps = 0;
      else if (e.mode === 'exit') qps = e.zones?.[zone]?.[1] ?? qps;
      else if (e.zone === zone && e.qps !== undefined) qps = e.qps;
    }
    return qps;
  }
  /** Virtual µs of the last limiter change for `zone` (or master mode change) in (a, b]. */
  changedIn(zone: string, a: number, b: number): boolean {
    return this.events.some((e) => e.t > a && e.t <= b && (e.mode !== undefined || e.zone === zone));
  }
}

/** The NoExecute condition taints (unreachable / not-ready) a node write added over the previous one, and whether it was a swap. */
function conditionTaintAdditions(m: TraceModel): Array<{ w: ApiWrite; added: string[]; swap: boolean }> {
  const out: Array<{ w: ApiWrite; added: string[]; swap: boolean }> = [];
  for (const list of nodeWrites(m).values()) {
    let prev: ApiWrite | undefined;
    for (const w of list) {
      const keys = (x: ApiWrite | undefined) => new Set(noExecute(x).map((s) => parseTaint(s).key).filter((k) => k === UNREACHABLE || k === NOT_READY));
      const before = keys(prev);
      const now = keys(w);
      const added = [...now].filter((k) => !before.has(k));
      // Only the node lifecycle controller's writes (a write with no traced writer is judged as its).
      if (w.event === 'MODIFIED' && added.length > 0 && (w.client === undefined || w.client === KCM)) {
        out.push({ w, added, swap: added.every((k) => before.has(k === UNREACHABLE ? NOT_READY : UNREACHABLE)) });
      }
      prev = w.event === 'DELETED' ? undefined : w;
    }
  }
  return out.sort((a, b) => a.w.t - b.w.t || a.w.seq - b.w.seq);
}

export const NODE_LIFECYCLE_INVARIANTS: readonly Invariant[] = [
  {
    id: 'nlc-status-writes',
    spec: 'NL §8.1, §8.2, §3.3',
    title:
      'node conditions turn Unknown only by the node lifecycle controller; NodeStatusUnknown / NodeStatusNeverUpdated come with upstream\'s message; the controller never changes NetworkUnavailable, never advances a lastHeartbeatTime and sets conditions only to Unknown',
    check(m) {
      const out: Violation[] = [];
      for (const [name, list] of nodeWrites(m)) {
        let prev: ApiWrite | undefined;
        let unknownReported = false;
        for (const w of list) {
          if (w.event === 'DELETED') {
            prev = undefined;
            continue;
          }
          if (!w.conditions) {
            if (!unknownReported) out.push({ invariant: this.id, t: w.t, message: `node ${name}: write rv ${w.rv} carries no conditions in the trace, so its status writes cannot be checked` });
            unknownReported = true;
            prev = w;
            continue;
          }
          const old = new Map<string, NodeConditionTuple>((prev?.conditions ?? []).map((c) => [c[0], c]));
          const byNlc = w.client === KCM;
          for (const c of w.conditions) {
            const [type, status, reason, message, heartbeat] = c;
            const want = UNKNOWN_TEXT[reason];
            if (want !== undefined && message !== want) out.push({ invariant: this.id, t: w.t, message: `node ${name}: condition ${type} reason ${reason} with message ${JSON.stringify(message)}, not ${JSON.stringify(want)}` });
            const o = old.get(type);
            if (status === 'Unknown' && o?.[1] !== 'Unknown' && w.event === 'MODIFIED' && !byNlc) {
              out.push({ invariant: this.id, t: w.t, message: `node ${name}: condition ${type} set Unknown by ${w.client ?? 'an untraced writer'}; only the node lifecycle controller (kube-controller-manager) sets Unknown` });
            }
            if (!byNlc || !prev) continue;
            if (o && (o[1] !== status || o[2] !== reason || o[3] !== message || o[4] !== heartbeat) && type === 'NetworkUnavailable') {
              out.push({ invariant: this.id, t: w.t, message: `node ${name}: the node lifecycle controller changed NetworkUnavailable (${o[1]} → ${status})` });
            } else if (o && o[1] !== status && (status !== 'Unknown' || !NLC_UNKNOWN_TYPES.has(type))) {
              out.push({ invariant: this.id, t: w.t, message: `node ${name}: the node lifecycle controller set ${type} ${o[1]} → ${status} (it only sets Ready, MemoryPressure, DiskPressure, PIDPressure to Unknown)` });
            }
            const ho = o?.[4] ? parseRfc3339(o[4]) : undefined;
            const hn = heartbeat ? parseRfc3339(heartbeat) : undefined;
            if (ho !== undefined && hn !== undefined && hn > ho) {
              out.push({ invariant: this.id, t: w.t, message: `node ${name}: the node lifecycle controller advanced ${type}'s lastHeartbeatTime from ${o![4]} to ${heartbeat} (it keeps the kubelet's)` });
            }
          }
          prev = w;
        }
      }
      return out;
    },
  },
  {
    id: 'noexecute-taint-limiter-zero',
    spec: 'NL §8.4, §3.7, §3.8',
    title:
      "no unreachable/not-ready NoExecute taint is added while its zone's eviction limiter is 0 (PartialDisruption in a small zone) or in master disruption mode (swaps excepted outside that mode), and entering master disruption mode removes every one",
    check(m) {
      const out: Violation[] = [];
      const zones = new ZoneLimiters(m);
      for (const { w, added, swap } of conditionTaintAdditions(m)) {
        const zone = w.zone ?? '';
        const master = zones.masterAt(w.t);
        if (master !== undefined) {
          out.push({ invariant: this.id, t: w.t, message: `node ${w.name} got ${added.join(', ')}:NoExecute at ${sec(w.t)} in master disruption mode (entered at ${sec(master)})` });
        } else if (!swap && zones.qpsAt(zone, w.t) === 0) {
          out.push({ invariant: this.id, t: w.t, message: `node ${w.name} got ${added.join(', ')}:NoExecute at ${sec(w.t)} while zone ${JSON.stringify(zone)}'s eviction limiter was 0` });
        }
      }
      // Entering master disruption mode: every node's NoExecute condition taints go (markNodeAsReachable).
      const byNode = nodeWrites(m);
      for (const e of m.zoneEvents) {
        if (e.mode !== 'enter') continue;
        const exit = m.zoneEvents.find((x) => x.t > e.t && x.mode === 'exit')?.t ?? Infinity;
        const tainted = [...byNode].filter(([, l]) => condKeys(l.filter((w) => w.t <= e.t).at(-1)).length > 0);
        // The removals are one GET and one PATCH per tainted node at the node-controller client's 20 QPS.
        const by = Math.min(exit, e.t + 5 * S + tainted.length * S / 10, m.endUs);
        if (by - e.t < S) continue;
        for (const [name, l] of tainted) {
          const still = condKeys(l.filter((w) => w.t <= by).at(-1));
          if (still.length > 0) out.push({ invariant: this.id, t: by, message: `node ${name} still carries ${still.join(', ')}:NoExecute ${sec(by - e.t)} after master disruption mode was entered at ${sec(e.t)}` });
        }
      }
      return out;
    },
  },
  {
    id: 'noexecute-taint-zone-rate',
    spec: 'NL §8.5, §3.5',
    title: 'in one zone two unreachable/not-ready NoExecute taint additions are at least 1/rate apart (10 s at 0.1/s), except the instant swaps',
    check(m) {
      const out: Violation[] = [];
      const zones = new ZoneLimiters(m);
      const last = new Map<string, ApiWrite>();
      for (const { w, swap } of conditionTaintAdditions(m)) {
        if (swap) continue;
        const zone = w.zone ?? '';
        const prev = last.get(zone);
        last.set(zone, w);
        if (!prev) continue;
        const qps = zones.qpsAt(zone, w.t);
        // A limiter swap in between may hand out a token at once (the new bucket starts full).
        if (qps <= 0 || zones.changedIn(zone, prev.t, w.t)) continue;
        // 2 s for the GET + PATCH after the token, which the client's own 20 QPS may delay.
        const need = S / qps - 2 * S;
        if (w.t - prev.t < need) {
          out.push({ invariant: this.id, t: w.t, message: `zone ${JSON.stringify(zone)}: node ${w.name} got its NoExecute taint ${sec(w.t - prev.t)} after node ${prev.name}'s (limiter ${qps}/s: one every ${sec(S / qps)})` });
        }
      }
      return out;
    },
  },
  {
    id: 'taint-manager-spares-tolerating-pods',
    spec: 'NL §8.6, §5.2',
    title: 'the taint manager never deletes a pod that tolerates every NoExecute taint on its node forever (a DaemonSet pod, an `operator: Exists` toleration)',
    check(m) {
      const out: Violation[] = [];
      const byNode = nodeWrites(m);
      for (const d of taintManagerRequests(m)) {
        const w = (m.index.podWritesByName.get(`${d.namespace}/${d.pod}`) ?? []).findLast((x) => x.t <= d.t);
        if (!w || !w.nodeName) continue;
        const facts = podFactsAt(m, w.uid, d.t - INFORMER_LAG_US) ?? podFactsAt(m, w.uid, d.t);
        if (!facts?.tolerations) {
          out.push({ invariant: this.id, t: d.t, message: `taint manager deleted ${d.namespace}/${d.pod}, whose tolerations the trace does not carry: cannot be checked` });
          continue;
        }
        const tols = facts.tolerations;
        const versions = versionsIn(byNode.get(w.nodeName), d.t - INFORMER_LAG_US, d.t);
        // A reason: the node gone (timers are not cancelled then) or a taint not tolerated forever.
        const reason = versions.some((v) => !v || v.event === 'DELETED' || (noExecute(v).length > 0 && tolerationDelayUs(noExecute(v), tols) >= 0));
        const tainted = versions.some((v) => noExecute(v).length > 0);
        if (!reason && tainted) {
          out.push({
            invariant: this.id,
            t: d.t,
            message: `taint manager deleted ${d.namespace}/${d.pod} at ${sec(d.t)} although it tolerates every NoExecute taint of node ${w.nodeName} (${noExecute(versions.at(-1)).join(', ')}) forever`,
          });
        }
      }
      return out;
    },
  },
  {
    id: 'taint-manager-deadline-kept',
    spec: 'NL §8.9, §5.2, §5.3',
    title:
      "a pod's taint-manager deletion comes at its first scheduling + min tolerationSeconds (at once for an untolerated taint), never earlier and never restarted; it is cancelled only when the node loses every NoExecute taint or the pod tolerates them forever",
    check(m) {
      return taintDeadlines(m, this.id);
    },
  },
  {
    id: 'podgc-force-delete-justified',
    spec: 'NL §8.10, §6.3, §6.4',
    title:
      "the controller manager force-deletes (grace 0) only terminal pods, unscheduled terminating pods, or pods whose node has been gone ≥ 40 s (podgc's quarantine) and was confirmed gone by a live GET answered 404",
    check(m) {
      const out: Violation[] = [];
      const byNode = nodeWrites(m);
      const firstRef = new Map<string, number[]>();
      for (const w of m.writes) if (w.resource === 'pods' && w.nodeName && !firstRef.has(w.nodeName)) push(firstRef, w.nodeName, w.t);
      for (const r of m.requests) {
        if (r.verb !== 'delete' || r.resource !== 'pods' || r.client !== KCM || r.gracePeriodSeconds !== 0 || r.code >= 300) continue;
        const last = (m.index.podWritesByName.get(`${r.namespace ?? ''}/${r.name}`) ?? []).findLast((w) => w.t < r.t || (w.t === r.t && w.deletionGracePeriodSeconds !== 0 && w.event !== 'DELETED'));
        if (!last) continue;
        const who = `${r.namespace}/${r.name}`;
        if (last.phase === 'Succeeded' || last.phase === 'Failed') continue;
        if (!last.nodeName) {
          if (last.deletionTimestamp === undefined) out.push({ invariant: this.id, t: r.t, message: `kube-controller-manager force-deleted unscheduled ${who}, which had no deletionTimestamp` });
          continue;
        }
        const node = last.nodeName;
        const nl = (byNode.get(node) ?? []).filter((w) => w.t <= r.t);
        if (nl.length > 0 && nl.at(-1)!.event !== 'DELETED') {
          out.push({ invariant: this.id, t: r.t, message: `kube-controller-manager force-deleted ${who} (${last.phase ?? 'no phase'}) while its node ${node} exists` });
          continue;
        }
        // Missing since its DELETED write (or, never registered, since a pod first named it): podgc's quarantine starts no earlier.
        const since = nl.at(-1)?.t ?? firstRef.get(node)?.[0] ?? 0;
        const get = m.requests.find((g) => g.verb === 'get' && g.resource === 'nodes' && g.name === node && g.client === KCM && g.code === 404 && g.t >= since + QUARANTINE_US && g.t <= r.t);
        if (!get) {
          out.push({
            invariant: this.id,
            t: r.t,
            message: `kube-controller-manager force-deleted ${who} at ${sec(r.t)}, ${sec(r.t - since)} after its node ${node} went missing, without a live GET of the node answered 404 after the 40s quarantine`,
          });
        }
      }
      return out;
    },
  },
  {
    id: 'rs-replacement-after-deletion',
    spec: 'NL §8.12, §6.5',
    title: 'a ReplicaSet creates a pod only while fewer active pods (no deletionTimestamp, not terminal) than spec.replicas exist: an evicted pod is replaced after its deletionTimestamp, never at T_U',
    check(m) {
      const out: Violation[] = [];
      const spec = new Map<string, Array<{ t: number; replicas: number | undefined }>>();
      for (const w of m.writes) if (w.resource === 'replicasets' && w.event !== 'DELETED') push(spec, `${w.namespace ?? ''}/${w.name}`, { t: w.t, replicas: w.specReplicas });
      if (spec.size === 0) return out;
      const active = new Map<string, Set<string>>();
      walk(m, (w, pods, before) => {
        const p = pods.get(w.uid)!;
        const key = (o: string | undefined) => (o?.startsWith('ReplicaSet/') ? `${p.namespace}/${o.slice('ReplicaSet/'.length)}` : undefined);
        const was = before?.active ? key(before.owner) : undefined;
        if (was) active.get(was)?.delete(w.uid);
        if (w.event === 'ADDED') {
          if (p.owner === undefined) {
            out.push({ invariant: this.id, t: w.t, message: `pod ${p.namespace}/${p.name} was created with no owner in the trace: whether a ReplicaSet made it cannot be checked` });
            return;
          }
          const rs = key(p.owner);
          if (rs) {
            const versions = (spec.get(rs) ?? []).filter((x) => x.t <= w.t);
            const window = [versions.filter((x) => x.t <= w.t - INFORMER_LAG_US).at(-1), ...versions.filter((x) => x.t > w.t - INFORMER_LAG_US)].filter((x) => x !== undefined);
            if (window.some((x) => x.replicas === undefined)) {
              out.push({ invariant: this.id, t: w.t, message: `ReplicaSet ${rs} has no spec.replicas in the trace: its pod creations cannot be checked` });
            } else if (window.length > 0) {
              const want = Math.max(...window.map((x) => x.replicas!));
              const have = [...(active.get(rs) ?? [])];
              if (have.length >= want) {
                const names = have.map((u) => {
                  const o = pods.get(u)!;
                  const ready = (m.podWrites.get(u) ?? []).filter((x) => x.t <= w.t && x.podReady !== undefined).at(-1)?.podReady;
                  return `${o.name}${ready === 'False' ? ' (Ready=False, no deletionTimestamp)' : ''}`;
                });
                out.push({ invariant: this.id, t: w.t, message: `ReplicaSet ${rs} created ${p.name} at ${sec(w.t)} while ${have.length} active pod(s) already met spec.replicas ${want}: ${names.join(', ')}` });
              }
            }
          }
        }
        const now = p.active ? key(p.owner) : undefined;
        if (now) {
          let s = active.get(now);
          if (!s) active.set(now, (s = new Set()));
          s.add(w.uid);
        }
      });
      return out;
    },
  },
];

function condKeys(w: ApiWrite | undefined): string[] {
  return noExecute(w)
    .map((s) => parseTaint(s).key)
    .filter((k) => k === UNREACHABLE || k === NOT_READY);
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

/** A pod's tolerations as of virtual time t (the last traced ones at or before t). */
function podFactsAt(m: TraceModel, uid: string, t: number): { tolerations?: readonly Toleration[] } | undefined {
  const list = (m.podWrites.get(uid) ?? []).filter((w) => w.t <= t);
  if (list.length === 0) return undefined;
  return { tolerations: list.findLast((w) => w.tolerations !== undefined)?.tolerations };
}

/** One scheduled taint-manager deletion of a pod, as the checker's reference model of `processPodOnNode` has it. */
interface Deadline {
  readonly uid: string;
  readonly key: string;
  readonly node: string;
  readonly createdAt: number;
  readonly fireAt: number;
  /** When it was cancelled (before firing), or ended by a controller-manager crash. */
  endAt: number;
  crashed: boolean;
  /** Scheduled at a controller-manager restart (the new leader re-reads every node first). */
  readonly atRestart: boolean;
}

/**
 * §8.9: a reference model of the taint manager (`handleNodeUpdate`, `handlePodUpdate`,
 * `processPodOnNode`, `TimedWorkerQueue`: a pending deletion keeps its first schedule, a fired
 * one stays until cancelled) driven by the API writes, then every taint-manager DELETE must match
 * a due deadline (not earlier than it, not after a cancellation the manager had seen) and every
 * deadline not cancelled must be met by a DELETE within the client's pacing.
 */
function taintDeadlines(m: TraceModel, id: string): Violation[] {
  const out: Violation[] = [];
  const deadlines: Deadline[] = [];
  const pending = new Map<string, Deadline>();
  const fired = new Set<string>();
  const pods = new Map<string, { key: string; node?: string; tolerations?: readonly Toleration[] }>();
  const taints = new Map<string, string[]>();
  const unknown = new Set<string>();
  const crashes = (m.crashes.get(KCM) ?? []).map((t) => ({ t, up: false }));
  const restarts = (m.restarts.get(KCM) ?? []).map((t) => ({ t, up: true }));
  const lifecycle = [...crashes, ...restarts].sort((a, b) => a.t - b.t);
  let li = 0;
  let down = false;

  const fireDue = (t: number) => {
    for (const [uid, d] of [...pending]) {
      if (d.fireAt <= t) {
        pending.delete(uid);
        fired.add(uid);
      }
    }
  };
  const cancel = (uid: string, t: number) => {
    const d = pending.get(uid);
    if (d) d.endAt = t;
    pending.delete(uid);
    fired.delete(uid);
  };
  const schedule = (uid: string, node: string, t: number, fireAt: number, atRestart: boolean) => {
    const d: Deadline = { uid, key: pods.get(uid)!.key, node, createdAt: t, fireAt, endAt: Infinity, crashed: false, atRestart };
    deadlines.push(d);
    pending.set(uid, d);
  };
  const process = (uid: string, t: number, atRestart = false) => {
    const p = pods.get(uid)!;
    const tl = p.node ? taints.get(p.node) : undefined;
    if (!p.node || !tl || tl.length === 0) return cancel(uid, t);
    if (!p.tolerations) {
      unknown.add(uid);
      return;
    }
    const delay = tolerationDelayUs(tl, p.tolerations);
    if (delay === 0) {
      // Not tolerated (or tolerationSeconds ≤ 0): cancel whatever is scheduled, delete at once.
      cancel(uid, t);
      return schedule(uid, p.node, t, t, atRestart);
    }
    if (delay < 0) return cancel(uid, t);
    if (pending.has(uid) || fired.has(uid)) return;
    schedule(uid, p.node, t, t + delay, atRestart);
  };
  const onNode = (node: string) => [...pods].filter(([, p]) => p.node === node).map(([uid]) => uid);

  for (const w of m.writes) {
    while (li < lifecycle.length && lifecycle[li].t <= w.t) {
      const e = lifecycle[li++];
      fireDue(e.t);
      if (!e.up) {
        // The taint manager's timers live in memory: a crash ends them all.
        for (const d of pending.values()) {
          d.endAt = e.t;
          d.crashed = true;
        }
        pending.clear();
        fired.clear();
        down = true;
      } else {
        down = false;
        for (const [node, tl] of taints) if (tl.length > 0) for (const uid of onNode(node)) process(uid, e.t, true);
      }
    }
    fireDue(w.t);
    if (down) continue;
    if (w.resource === 'nodes') {
      const next = w.event === 'DELETED' ? undefined : noExecute(w).sort();
      const prev = taints.get(w.name);
      if (JSON.stringify(next) === JSON.stringify(prev)) continue;
      if (next === undefined) {
        // A deleted node: its pods' timers are not cancelled.
        taints.delete(w.name);
        continue;
      }
      taints.set(w.name, next);
      for (const uid of onNode(w.name)) {
        if (next.length === 0) cancel(uid, w.t);
        else process(uid, w.t);
      }
    } else if (w.resource === 'pods') {
      if (w.event === 'DELETED') {
        cancel(w.uid, w.t);
        pods.delete(w.uid);
        continue;
      }
      const p = pods.get(w.uid) ?? { key: `${w.namespace ?? ''}/${w.name}` };
      const moved = w.nodeName !== undefined && w.nodeName !== p.node;
      const tolsChanged = w.tolerations !== undefined && JSON.stringify(w.tolerations) !== JSON.stringify(p.tolerations);
      pods.set(w.uid, { ...p, ...(w.nodeName ? { node: w.nodeName } : {}), ...(w.tolerations ? { tolerations: w.tolerations } : {}) });
      if (moved || tolsChanged) process(w.uid, w.t);
    }
  }

  for (const uid of unknown) {
    const key = pods.get(uid)?.key ?? (m.podWrites.get(uid)?.[0] ? `${m.podWrites.get(uid)![0].namespace}/${m.podWrites.get(uid)![0].name}` : uid);
    out.push({ invariant: id, t: m.podWrites.get(uid)?.[0]?.t ?? 0, message: `pod ${key} sat on a NoExecute-tainted node but the trace carries no tolerations for it: its taint-manager deadline cannot be checked` });
  }

  // Every taint-manager DELETE (first attempt; retries belong to it) meets a deadline that was due.
  const byKey = new Map<string, Deadline[]>();
  for (const d of deadlines) push(byKey, d.key, d);
  const deletesByKey = new Map<string, number[]>();
  for (const d of taintManagerRequests(m)) {
    if (d.attempt > 0) continue;
    const key = `${d.namespace}/${d.pod}`;
    push(deletesByKey, key, d.t);
    const ok = (byKey.get(key) ?? []).some((x) => x.fireAt <= d.t && x.endAt > x.fireAt - INFORMER_LAG_US);
    if (!ok) {
      const next = (byKey.get(key) ?? []).find((x) => x.fireAt > d.t && x.endAt > d.t);
      const lastCancel = (byKey.get(key) ?? []).findLast((x) => x.endAt <= d.t && x.endAt < x.fireAt);
      out.push({
        invariant: id,
        t: d.t,
        message: `taint manager deleted ${key} at ${sec(d.t)}, ${
          next ? `before its deadline ${sec(next.fireAt)} (scheduled at ${sec(next.createdAt)})` : lastCancel ? `after its deletion (due ${sec(lastCancel.fireAt)}) had been cancelled at ${sec(lastCancel.endAt)}` : 'with no deletion scheduled (its node had no NoExecute taint it does not tolerate forever)'
        }`,
      });
    }
  }

  // Every deadline that was not cancelled is met: the DELETE goes out within the client's pacing.
  const end = m.endUs;
  const nodes = nodeWrites(m);
  for (const d of deadlines) {
    const due = deadlines.filter((x) => x.fireAt <= d.fireAt && x.fireAt > d.fireAt - 10 * S).length;
    const slack = 5 * S + due * (S / 20) + (d.atRestart ? 10 * S : 0);
    if (d.crashed || d.endAt <= d.fireAt + slack || d.fireAt + slack > end) continue;
    const gone = (m.podWrites.get(d.uid) ?? []).some((w) => w.event === 'DELETED' && w.t <= d.fireAt + slack);
    const nodeGone = (nodes.get(d.node) ?? []).filter((w) => w.t <= d.fireAt + slack).at(-1)?.event === 'DELETED';
    if (gone || nodeGone) continue;
    const met = (deletesByKey.get(d.key) ?? []).some((t) => t >= d.fireAt && t <= d.fireAt + slack);
    if (!met) {
      out.push({ invariant: id, t: d.fireAt + slack, message: `taint manager did not delete ${d.key} on node ${d.node} by ${sec(d.fireAt + slack)}: its deletion was due at ${sec(d.fireAt)} (scheduled at ${sec(d.createdAt)}) and never cancelled` });
    }
  }
  return out;
}
