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
  /** ReplicaSets: `status.replicas` of the written object. */
  readonly statusReplicas?: number;
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
  readonly signals: Array<{ t: number; signal: string }>;
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
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export class TraceModel {
  /** Every API write, in trace order. */
  readonly writes: ApiWrite[] = [];
  /** Pod writes per UID, in order. */
  readonly podWrites = new Map<string, ApiWrite[]>();
  readonly requests: ApiRequest[] = [];
  readonly processes: ProcessLife[] = [];
  readonly processById = new Map<string, ProcessLife>();
  readonly criCalls: CriCall[] = [];
  /** Spans by kind (`kubelet.sync`, `kubelet.killPod`, `kubelet.killContainer`, `kubelet.preStop`). */
  readonly spans = new Map<string, Span[]>();
  readonly finalDeletes: Array<{ t: number; actor: string; podUid: string; pod?: string; namespace?: string; code?: number }> = [];
  readonly watchRows: TraceRecord[] = [];
  readonly driverSteps: TraceRecord[] = [];
  /** Crash and restart times per actor id. */
  readonly crashes = new Map<string, number[]>();
  readonly restarts = new Map<string, number[]>();
  readonly endUs: number;

  constructor(readonly records: readonly TraceRecord[]) {
    const incarnation = new Map<string, number>();
    const open = new Map<string, Span>();
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
            finalizers: Array.isArray(d.finalizers) ? (d.finalizers as string[]) : undefined,
            statusReplicas: num(d.statusReplicas),
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
            verb: (str(d.verb) ?? '').toLowerCase(),
            resource: str(d.resource) ?? '',
            namespace: str(d.namespace),
            name: str(d.name),
            code,
            client: str(d.client) ?? '',
            gracePeriodSeconds: num(d.gracePeriodSeconds),
          });
          break;
        }
        case 'cri.call':
          this.criCalls.push({
            t: r.t,
            runtime: r.actor,
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
            runtime: r.actor,
            startedAt: r.t,
            signals: [],
          };
          this.processes.push(p);
          this.processById.set(containerId, p);
          break;
        }
        case 'cri.signal': {
          const p = this.processById.get(str(d.containerId) ?? '');
          if (p && p.exitedAt === undefined) p.signals.push({ t: r.t, signal: normalizeSignal(str(d.signal)) });
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
        case 'kubelet.finalDelete': {
          const podUid = str(d.podUid);
          if (!podUid) break;
          // A result record (with `code`) completes the request record before it, if there is one.
          const code = num(d.code);
          const pending = code === undefined ? undefined : this.finalDeletes.findLast((f) => f.podUid === podUid && f.actor === r.actor && f.code === undefined);
          if (pending) pending.code = code;
          else this.finalDeletes.push({ t: r.t, actor: r.actor, podUid, pod: str(d.pod), namespace: str(d.namespace), code });
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
              const s: Span = { actor: r.actor, kind: r.kind, podUid, begin: r.t, data: d, incarnation: incarnation.get(r.actor) ?? 1 };
              open.set(key, s);
              const list = this.spans.get(r.kind) ?? [];
              list.push(s);
              this.spans.set(r.kind, list);
            } else if (d.ph === 'E') {
              const s = open.get(key);
              if (s) {
                s.end = r.t;
                s.endData = d;
                open.delete(key);
              }
            }
          }
      }
    }
    this.endUs = records.length > 0 ? records[records.length - 1].t : 0;
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
    return this.processes.filter((p) => p.podUid === podUid && p.startedAt <= t && (p.exitedAt === undefined || p.exitedAt > t));
  }
}

function normalizeSignal(s: string | undefined): string {
  const u = (s ?? '').toUpperCase();
  if (u === 'TERM' || u === '15') return 'SIGTERM';
  if (u === 'KILL' || u === '9') return 'SIGKILL';
  return u;
}
