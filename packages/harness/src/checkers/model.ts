/**
 * An index over a run's merged trace (records sorted by (t, actor, seq)), built once and shared
 * by every invariant checker and expectation: per-pod API writes (one per watch event, what a
 * watcher of etcd would see), API requests, the runtime's process lifecycle per container, and
 * the kubelet's sync / kill / final-delete spans. Record kinds and fields are those of
 * docs/conventions.md; records missing a field are skipped, never guessed.
 */
import type { TraceRecord } from '@podsim/api';

export interface ApiWrite {
  readonly t: number;
  readonly seq: number;
  readonly event: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly resource: string;
  readonly namespace?: string;
  readonly name: string;
  readonly uid: string;
  readonly rv: number;
  readonly deletionTimestamp?: string;
  readonly deletionGracePeriodSeconds?: number;
  readonly phase?: string;
  readonly nodeName?: string;
  readonly finalizers?: readonly string[];
  /** Jobs: the True finished condition (`Complete` / `Failed`) and its reason, if any. */
  readonly jobCondition?: string;
  readonly jobReason?: string;
  /** ReplicaSets and StatefulSets: `status.replicas` of the written object. */
  readonly statusReplicas?: number;
  /** Pods: every container ready (the READY column's n/n). */
  readonly ready?: true;
  /** Pods: the `Ready` condition's status. */
  readonly podReady?: string;
  /** Pods: `status.reason` (e.g. Evicted; NodeLost only from the legacy eviction path). */
  readonly reason?: string;
  /** Nodes: the `Ready` condition's status, reason and message. */
  readonly nodeReady?: string;
  readonly nodeReadyReason?: string;
  readonly nodeReadyMessage?: string;
  /** Nodes: `spec.taints` as `key[=value]:effect`. */
  readonly taints?: readonly string[];
  /** StatefulSets: `spec.replicas` and `spec.podManagementPolicy` of the written object. */
  readonly specReplicas?: number;
  readonly podManagementPolicy?: string;
  /**
   * Pods: `spec.tolerations` as [key, operator, value, effect, tolerationSeconds | null], and the
   * controller owner `Kind/name` ('' for none), on the ADDED write and on writes that changed
   * them (undefined on the others: {@link TraceModel.podFacts} carries them forward).
   */
  readonly tolerations?: readonly Toleration[];
  readonly owner?: string;
  /** Nodes: the client whose request wrote it, the zone key (`GetZoneKey`), the disruption exclusion label. */
  readonly client?: string;
  readonly zone?: string;
  readonly excludeDisruption?: true;
  /** Nodes: every condition as [type, status, reason, message, lastHeartbeatTime]. */
  readonly conditions?: readonly NodeConditionTuple[];
}

/** A pod toleration as traced: [key, operator, value, effect, tolerationSeconds | null]. */
export type Toleration = readonly [string, string, string, string, number | null];
/** A node condition as traced: [type, status, reason, message, lastHeartbeatTime]. */
export type NodeConditionTuple = readonly [string, string, string, string, string];

/** A zone state change the node lifecycle controller traced (`controller.nodelifecycle.zone` / `.disruption`). */
export interface ZoneEvent {
  readonly t: number;
  /** A zone's new state and its limiter QPS (`zone` records). */
  readonly zone?: string;
  readonly state?: string;
  readonly qps?: number;
  /** Master disruption mode entered or exited; on exit each zone's [state, qps]. */
  readonly mode?: 'enter' | 'exit';
  readonly zones?: Readonly<Record<string, readonly [string, number]>>;
}

/** A pod create or delete the StatefulSet controller issued (`controller.sts.create` / `.delete`), traced once answered. */
export interface StatefulSetAction {
  readonly t: number;
  readonly seq: number;
  readonly op: 'create' | 'delete';
  readonly namespace: string;
  readonly set: string;
  readonly pod: string;
  readonly ordinal: number;
  /** Deletes: `failed`, `condemned` or `update`. */
  readonly why?: string;
  readonly uid?: string;
  readonly code: number;
}

export interface ApiRequest {
  readonly t: number;
  readonly verb: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly code: number;
  readonly client: string;
  readonly gracePeriodSeconds?: number;
  /** A DELETE's `preconditions.uid`: the UID the client meant. */
  readonly preconditionUid?: string;
  /** `eviction` for a POST of pods/{name}/eviction, … */
  readonly subresource?: string;
}

/** One container process as the runtime saw it. */
export interface ProcessLife {
  readonly containerId: string;
  readonly podUid: string;
  readonly pod: string;
  readonly namespace?: string;
  readonly container: string;
  readonly runtime: string;
  readonly startedAt: number;
  /** Virtual µs of exit, or of the runtime's crash (the process vanished with it); undefined while running at the end. */
  exitedAt?: number;
  exitCode?: number;
  reason?: string;
  /** Signals delivered; `timeout` is the StopContainer timeout (s) that sent it, when the runtime traced one. */
  readonly signals: Array<{ t: number; signal: string; timeout?: number }>;
}

export interface Span {
  readonly actor: string;
  readonly kind: string;
  readonly podUid: string;
  readonly begin: number;
  end?: number;
  readonly data: Record<string, unknown>;
  endData?: Record<string, unknown>;
  /** Incarnation of the actor that wrote it (1 + number of restarts before it). */
  readonly incarnation: number;
}

export interface CriCall {
  readonly t: number;
  readonly runtime: string;
  readonly call: string;
  readonly containerId?: string;
  readonly podSandboxId?: string;
  readonly timeout?: number;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : typeof v === 'string' && v !== '' && !isNaN(Number(v)) ? Number(v) : undefined);

/**
 * One copy of each distinct string the model keeps. Records arrive from the host threads by
 * structured clone, which copies every string of every record: a pod's UID, name, node and
 * timestamps would otherwise be stored once per write, request and span that names them
 * (a 10k-pod storm's model held ~20 KB per pod on the main thread).
 */
class Strings {
  private readonly m = new Map<string, string>();
  of(v: unknown): string | undefined {
    if (typeof v !== 'string') return undefined;
    const s = this.m.get(v);
    if (s !== undefined) return s;
    this.m.set(v, v);
    return v;
  }
  /** A copy of a record's data with its string values interned. */
  data(d: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const k in d) {
      const v = d[k];
      out[k] = typeof v === 'string' ? this.of(v) : v;
    }
    return out;
  }
}

export class TraceModel {
  /** Every API write, in trace order. */
  readonly writes: ApiWrite[] = [];
  /** Pod writes per UID, in order. */
  readonly podWrites = new Map<string, ApiWrite[]>();
  readonly requests: ApiRequest[] = [];
  /** The StatefulSet controller's pod creates and deletes, in trace order. */
  readonly stsActions: StatefulSetAction[] = [];
  readonly processes: ProcessLife[] = [];
  readonly processById = new Map<string, ProcessLife>();
  readonly criCalls: CriCall[] = [];
  /** Spans by kind (`kubelet.sync`, `kubelet.killPod`, `kubelet.killContainer`, `kubelet.preStop`). */
  readonly spans = new Map<string, Span[]>();
  readonly finalDeletes: Array<{ t: number; actor: string; podUid: string; pod?: string; namespace?: string; code?: number }> = [];
  /** The node lifecycle controller's zone states, limiter rates and master disruption mode, in order. */
  readonly zoneEvents: ZoneEvent[] = [];
  /** The taint manager's pod DELETEs (`controller.taintManager.delete`, traced when answered). */
  readonly taintManagerDeletes: Array<{ t: number; namespace: string; pod: string; code: number; attempt: number }> = [];
  /** The node lifecycle controller's Ready transitions (`controller.nodelifecycle.status`): its own probe time and grace, µs. */
  readonly nodeHealthUpdates: Array<{ t: number; node: string; to?: string; probeUs: number; graceUs: number; code?: number }> = [];
  readonly watchRows: TraceRecord[] = [];
  readonly driverSteps: TraceRecord[] = [];
  /** Crash and restart times per actor id. */
  readonly crashes = new Map<string, number[]>();
  readonly restarts = new Map<string, number[]>();
  /** Virtual µs of the last record. */
  endUs = 0;
  /** The records the model was built from (empty when built with `keepRecords: false`). */
  readonly records: readonly TraceRecord[];
  private readonly incarnation = new Map<string, number>();
  private readonly open = new Map<string, Span>();
  /** Kubelet final-DELETE request records still waiting for their result record, by actor|podUid. */
  private readonly pendingFinal = new Map<string, TraceModel['finalDeletes'][number][]>();
  private indexes: ModelIndexes | undefined;
  private readonly strings = new Strings();

  /**
   * Builds the model from records in (t, actor, seq) order. More records (later ones, in order)
   * may be added with {@link add}; `keepRecords: false` keeps only the model (large benches).
   */
  constructor(records: readonly TraceRecord[] = [], opts: { readonly keepRecords?: boolean } = {}) {
    this.records = opts.keepRecords === false ? [] : records;
    this.add(records);
  }

  /** Adds records that follow every record added so far. */
  add(records: readonly TraceRecord[]): void {
    this.indexes = undefined;
    const incarnation = this.incarnation;
    const open = this.open;
    const S = this.strings;
    const str = (v: unknown): string | undefined => S.of(v);
    for (const r of records) {
      const d = (r.data ?? {}) as Record<string, unknown>;
      switch (r.kind) {
        case 'api.write': {
          const uid = str(d.uid);
          const name = str(d.name);
          const rv = num(d.rv);
          const event = str(d.event) as ApiWrite['event'] | undefined;
          if (!uid || !name || rv === undefined || !event) break;
          const w: ApiWrite = {
            t: r.t,
            seq: r.seq,
            event,
            resource: str(d.resource) ?? '',
            namespace: str(d.namespace),
            name,
            uid,
            rv,
            deletionTimestamp: str(d.deletionTimestamp),
            deletionGracePeriodSeconds: num(d.deletionGracePeriodSeconds),
            phase: str(d.phase),
            nodeName: str(d.nodeName),
            finalizers: Array.isArray(d.finalizers) ? (d.finalizers as unknown[]).map((f) => S.of(f) ?? (f as string)) : undefined,
            statusReplicas: num(d.statusReplicas),
            ...(d.jobCondition !== undefined ? { jobCondition: str(d.jobCondition), jobReason: str(d.jobReason) } : {}),
            ...(d.ready === true ? { ready: true as const } : {}),
            ...(d.specReplicas !== undefined ? { specReplicas: num(d.specReplicas) } : {}),
            ...(d.podManagementPolicy !== undefined ? { podManagementPolicy: str(d.podManagementPolicy) } : {}),
            ...(d.podReady !== undefined ? { podReady: str(d.podReady) } : {}),
            ...(d.reason !== undefined ? { reason: str(d.reason) } : {}),
            ...(d.nodeReady !== undefined ? { nodeReady: str(d.nodeReady), nodeReadyReason: str(d.nodeReadyReason), nodeReadyMessage: str(d.nodeReadyMessage) } : {}),
            ...(Array.isArray(d.taints) ? { taints: (d.taints as unknown[]).map((x) => String(x)) } : {}),
            ...(Array.isArray(d.tolerations) ? { tolerations: (d.tolerations as unknown[][]).map((x) => [S.of(x[0]) ?? '', S.of(x[1]) ?? '', S.of(x[2]) ?? '', S.of(x[3]) ?? '', num(x[4]) ?? null] as Toleration) } : {}),
            ...(d.owner !== undefined ? { owner: str(d.owner) ?? '' } : {}),
            ...(d.client !== undefined ? { client: str(d.client) } : {}),
            ...(d.zone !== undefined ? { zone: str(d.zone) } : {}),
            ...(d.excludeDisruption === true ? { excludeDisruption: true as const } : {}),
            ...(Array.isArray(d.conditions) ? { conditions: (d.conditions as unknown[][]).map((c) => c.map((x) => S.of(x) ?? '') as unknown as NodeConditionTuple) } : {}),
          };
          this.writes.push(w);
          if (w.resource === 'pods') {
            const list = this.podWrites.get(uid) ?? [];
            list.push(w);
            this.podWrites.set(uid, list);
          }
          break;
        }
        case 'api.request': {
          const code = num(d.code);
          if (code === undefined) break;
          this.requests.push({
            t: r.t,
            verb: S.of((str(d.verb) ?? '').toLowerCase()) ?? '',
            resource: str(d.resource) ?? '',
            namespace: str(d.namespace),
            name: str(d.name),
            code,
            client: str(d.client) ?? '',
            gracePeriodSeconds: num(d.gracePeriodSeconds),
            ...(d.preconditionUid !== undefined ? { preconditionUid: str(d.preconditionUid) } : {}),
            ...(d.subresource !== undefined ? { subresource: str(d.subresource) } : {}),
          });
          break;
        }
        case 'controller.sts.create':
        case 'controller.sts.delete': {
          const code = num(d.code);
          if (code === undefined) break;
          this.stsActions.push({
            t: r.t,
            seq: r.seq,
            op: r.kind === 'controller.sts.create' ? 'create' : 'delete',
            namespace: str(d.namespace) ?? '',
            set: str(d.statefulset) ?? '',
            pod: str(d.pod) ?? '',
            ordinal: num(d.ordinal) ?? -1,
            why: str(d.why),
            uid: str(d.uid),
            code,
          });
          break;
        }
        case 'cri.call':
          this.criCalls.push({
            t: r.t,
            runtime: S.of(r.actor) ?? r.actor,
            call: str(d.call) ?? '',
            containerId: str(d.containerId),
            podSandboxId: str(d.podSandboxId),
            timeout: num(d.timeout),
          });
          break;
        case 'cri.start': {
          const containerId = str(d.containerId);
          const podUid = str(d.podUid);
          if (!containerId || !podUid) break;
          const p: ProcessLife = {
            containerId,
            podUid,
            pod: str(d.pod) ?? '',
            namespace: str(d.namespace),
            container: str(d.container) ?? '',
            runtime: S.of(r.actor) ?? r.actor,
            startedAt: r.t,
            signals: [],
          };
          this.processes.push(p);
          this.processById.set(containerId, p);
          break;
        }
        case 'cri.signal': {
          const p = this.processById.get(str(d.containerId) ?? '');
          if (p && p.exitedAt === undefined) {
            const timeout = num(d.timeout);
            const signal = S.of(normalizeSignal(str(d.signal))) ?? '';
            p.signals.push(timeout === undefined ? { t: r.t, signal } : { t: r.t, signal, timeout });
          }
          break;
        }
        case 'cri.exit': {
          const p = this.processById.get(str(d.containerId) ?? '');
          if (p && p.exitedAt === undefined) {
            p.exitedAt = r.t;
            p.exitCode = num(d.exitCode);
            p.reason = str(d.reason);
          }
          break;
        }
        case 'controller.nodelifecycle.status': {
          const probeUs = num(d.probeUs);
          const graceUs = num(d.graceUs);
          const node = str(d.node);
          if (probeUs === undefined || graceUs === undefined || !node) break;
          this.nodeHealthUpdates.push({ t: r.t, node, to: str(d.to), probeUs, graceUs, code: num(d.code) });
          break;
        }
        case 'controller.nodelifecycle.zone': {
          const zone = str(d.zone);
          if (zone === undefined) break;
          this.zoneEvents.push({ t: r.t, zone, state: str(d.state), qps: num(d.qps) });
          break;
        }
        case 'controller.nodelifecycle.disruption': {
          const mode = str(d.mode);
          if (mode !== 'enter' && mode !== 'exit') break;
          const zones = d.zones && typeof d.zones === 'object' ? (d.zones as Record<string, [string, number]>) : undefined;
          this.zoneEvents.push({ t: r.t, mode, ...(zones ? { zones } : {}) });
          break;
        }
        case 'controller.taintManager.delete': {
          const code = num(d.code);
          const pod = str(d.pod);
          if (code === undefined || !pod) break;
          this.taintManagerDeletes.push({ t: r.t, namespace: str(d.namespace) ?? '', pod, code, attempt: num(d.attempt) ?? 0 });
          break;
        }
        case 'kubelet.finalDelete': {
          const podUid = str(d.podUid);
          if (!podUid) break;
          // A result record (with `code`) completes the request record before it, if there is one.
          const code = num(d.code);
          const key = `${r.actor}|${podUid}`;
          const stack = this.pendingFinal.get(key);
          const pending = code === undefined ? undefined : stack?.pop();
          if (stack?.length === 0) this.pendingFinal.delete(key);
          if (pending) pending.code = code;
          else {
            const f = { t: r.t, actor: S.of(r.actor) ?? r.actor, podUid, pod: str(d.pod), namespace: str(d.namespace), code };
            this.finalDeletes.push(f);
            if (code === undefined) push(this.pendingFinal, key, f);
          }
          break;
        }
        case 'engine.crash': {
          const list = this.crashes.get(r.actor) ?? [];
          list.push(r.t);
          this.crashes.set(r.actor, list);
          // A crashed runtime takes its processes with it (fresh state on restart).
          if (r.actor.startsWith('runtime/')) {
            for (const p of this.processes) if (p.runtime === r.actor && p.exitedAt === undefined) p.exitedAt = r.t;
          }
          break;
        }
        case 'engine.restart': {
          incarnation.set(r.actor, (incarnation.get(r.actor) ?? 1) + 1);
          const list = this.restarts.get(r.actor) ?? [];
          list.push(r.t);
          this.restarts.set(r.actor, list);
          break;
        }
        case 'driver.watch':
          this.watchRows.push(r);
          break;
        case 'driver.step':
          this.driverSteps.push(r);
          break;
        default:
          if (r.kind === 'kubelet.sync' || r.kind === 'kubelet.killPod' || r.kind === 'kubelet.killContainer' || r.kind === 'kubelet.preStop') {
            const podUid = str(d.podUid);
            const spanId = d.span;
            if (!podUid || spanId === undefined) break;
            const key = `${r.actor}|${r.kind}|${String(spanId)}`;
            if (d.ph === 'B') {
              const s: Span = { actor: S.of(r.actor) ?? r.actor, kind: S.of(r.kind) ?? r.kind, podUid, begin: r.t, data: S.data(d), incarnation: incarnation.get(r.actor) ?? 1 };
              open.set(key, s);
              const list = this.spans.get(r.kind) ?? [];
              list.push(s);
              this.spans.set(r.kind, list);
            } else if (d.ph === 'E') {
              const s = open.get(key);
              if (s) {
                s.end = r.t;
                s.endData = S.data(d);
                open.delete(key);
              }
            }
          }
      }
    }
    if (records.length > 0) this.endUs = records[records.length - 1].t;
  }

  /** Lookup tables over the model, built on first use after the last {@link add}. */
  get index(): ModelIndexes {
    return (this.indexes ??= buildIndexes(this));
  }

  /** The incarnation of `actor` at virtual time t (1 + restarts at or before t). */
  incarnationAt(actor: string, t: number): number {
    return 1 + (this.restarts.get(actor) ?? []).filter((r) => r <= t).length;
  }

  spansOf(kind: string): readonly Span[] {
    return this.spans.get(kind) ?? [];
  }

  /** Processes of a pod UID that were running at virtual time t (started ≤ t, not exited by t). */
  runningAt(podUid: string, t: number): ProcessLife[] {
    return this.processesOf(podUid).filter((p) => p.startedAt <= t && (p.exitedAt === undefined || p.exitedAt > t));
  }

  /** Every process of a pod UID, in start order. */
  processesOf(podUid: string): readonly ProcessLife[] {
    return this.index.processesByPod.get(podUid) ?? [];
  }
}

/**
 * Lookup tables so that checkers stay O(records) on 100k-pod benches: every list keeps trace
 * order, so a search over a table finds what the same search over the full list would.
 */
export interface ModelIndexes {
  readonly processesByPod: ReadonlyMap<string, readonly ProcessLife[]>;
  /** Requests by virtual time. */
  readonly requestsAt: ReadonlyMap<number, readonly ApiRequest[]>;
  /** DELETE requests of pods by `client|name` (any namespace). */
  readonly podDeletesByClientName: ReadonlyMap<string, readonly ApiRequest[]>;
  /** Pod writes by `namespace/name` (every UID that had the name). */
  readonly podWritesByName: ReadonlyMap<string, readonly ApiWrite[]>;
  /** Spans by `kind|podUid`. */
  readonly spansByPod: ReadonlyMap<string, readonly Span[]>;
  /** `kubelet.killContainer` spans by container id. */
  readonly killContainerSpans: ReadonlyMap<string, readonly Span[]>;
  /** CRI calls by container id, and by `runtime|t`. */
  readonly criCallsByContainer: ReadonlyMap<string, readonly CriCall[]>;
  readonly criCallsAt: ReadonlyMap<string, readonly CriCall[]>;
  /** Final deletes by actor, and by pod UID. */
  readonly finalDeletesByActor: ReadonlyMap<string, readonly TraceModel['finalDeletes'][number][]>;
  readonly finalDeletesByPod: ReadonlyMap<string, readonly TraceModel['finalDeletes'][number][]>;
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

function buildIndexes(m: TraceModel): ModelIndexes {
  const processesByPod = new Map<string, ProcessLife[]>();
  for (const p of m.processes) push(processesByPod, p.podUid, p);
  const requestsAt = new Map<number, ApiRequest[]>();
  const podDeletesByClientName = new Map<string, ApiRequest[]>();
  for (const r of m.requests) {
    push(requestsAt, r.t, r);
    if (r.verb === 'delete' && r.resource === 'pods') push(podDeletesByClientName, `${r.client}|${r.name}`, r);
  }
  const podWritesByName = new Map<string, ApiWrite[]>();
  for (const w of m.writes) if (w.resource === 'pods') push(podWritesByName, `${w.namespace ?? ''}/${w.name}`, w);
  const spansByPod = new Map<string, Span[]>();
  const killContainerSpans = new Map<string, Span[]>();
  for (const [kind, list] of m.spans) {
    for (const s of list) {
      push(spansByPod, `${kind}|${s.podUid}`, s);
      if (kind === 'kubelet.killContainer' && typeof s.data.containerId === 'string') push(killContainerSpans, s.data.containerId, s);
    }
  }
  const criCallsByContainer = new Map<string, CriCall[]>();
  const criCallsAt = new Map<string, CriCall[]>();
  for (const c of m.criCalls) {
    if (c.containerId !== undefined) push(criCallsByContainer, c.containerId, c);
    push(criCallsAt, `${c.runtime}|${c.t}`, c);
  }
  const finalDeletesByActor = new Map<string, TraceModel['finalDeletes'][number][]>();
  const finalDeletesByPod = new Map<string, TraceModel['finalDeletes'][number][]>();
  for (const f of m.finalDeletes) {
    push(finalDeletesByActor, f.actor, f);
    push(finalDeletesByPod, f.podUid, f);
  }
  return {
    processesByPod,
    requestsAt,
    podDeletesByClientName,
    podWritesByName,
    spansByPod,
    killContainerSpans,
    criCallsByContainer,
    criCallsAt,
    finalDeletesByActor,
    finalDeletesByPod,
  };
}

function normalizeSignal(s: string | undefined): string {
  const u = (s ?? '').toUpperCase();
  if (u === 'TERM' || u === '15') return 'SIGTERM';
  if (u === 'KILL' || u === '9') return 'SIGKILL';
  return u;
}
