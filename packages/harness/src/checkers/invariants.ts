/**
 * Invariant checkers (spec `deletion-protocol.md` §14), run outside the actors over the merged
 * trace, TigerBeetle-VOPR style: the code under test never sees them. Each checker covers what
 * the trace makes observable (the apiserver's `api.write` / `api.request`, the runtime's `cri.*`
 * process records, the kubelet's spans and `kubelet.finalDelete`, the driver's printed rows);
 * the README lists which §14 items are checked and which parts are not observable.
 */
import { US_PER_SECOND, parseRfc3339 } from '@podsim/api';
import { humanDuration } from '../duration.js';
import type { ApiWrite, ProcessLife, Span, TraceModel } from './model.js';
import { NODE_LIFECYCLE_INVARIANTS } from './nodeLifecycleInvariants.js';
import { STATEFULSET_INVARIANTS } from './statefulSetInvariants.js';
import { TRAFFIC_INVARIANTS } from './trafficInvariants.js';

/** computePodActions' kill message for a container whose liveness or startup probe failed (kuberuntime_manager.go). */
const PROBE_KILL = /^Container .+ failed (liveness|startup) probe/;

export interface Violation {
  /** Checker id, e.g. `no-removal-while-running`. */
  readonly invariant: string;
  /** Virtual µs where it was observed. */
  readonly t: number;
  readonly message: string;
}

export interface CheckContext {
  readonly epochUnixSeconds: number;
}

export interface Invariant {
  readonly id: string;
  /** The §14 item(s) it checks. */
  readonly spec: string;
  readonly title: string;
  check(m: TraceModel, ctx: CheckContext): Violation[];
}

const sec = (us: number) => `${(us / US_PER_SECOND).toFixed(6).replace(/\.?0+$/, '')}s`;

/** The writes of a pod strictly before the DELETED write `d` (by trace order). */
function before(list: readonly ApiWrite[], d: ApiWrite): ApiWrite[] {
  return list.filter((w) => w.t < d.t || (w.t === d.t && w.seq < d.seq));
}

/** The DELETE request (if traced) that produced a DELETED write: same instant, same pod name. */
function causeOf(m: TraceModel, d: ApiWrite) {
  return m.index.requestsAt
    .get(d.t)
    ?.find((r) => r.verb === 'delete' && r.resource === 'pods' && r.name === d.name && (r.namespace ?? d.namespace) === d.namespace && r.code < 300);
}

const workRank = (w: unknown): number => {
  const s = String(w ?? '').toLowerCase();
  return s.includes('terminated') ? 2 : s.includes('terminating') ? 1 : 0;
};

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const i of items) {
    const k = key(i);
    const l = m.get(k) ?? [];
    l.push(i);
    m.set(k, l);
  }
  return m;
}

/**
 * The UID a kubelet's final DELETE without a UID precondition was meant for (the planted
 * `skipUidPrecondition` bug): its `kubelet.finalDelete` record, written when the reply arrived
 * (any code: a 504 still names it), the first of that pod name after the removal by the same
 * kubelet incarnation — a kubelet that crashed before the reply never writes one, and a later
 * incarnation's record is for a later request. Undefined when no such record exists.
 */
function meantWithoutPrecondition(m: TraceModel, client: string, d: ApiWrite): string | undefined {
  const inc = m.incarnationAt(client, d.t);
  return (m.index.finalDeletesByActor.get(client) ?? []).find((f) => f.t >= d.t && f.pod === `${d.namespace}/${d.name}` && m.incarnationAt(client, f.t) === inc)?.podUid;
}

export const INVARIANTS: readonly Invariant[] = [
  {
    id: 'no-removal-while-running',
    spec: '§14.1',
    title: 'a pod is not removed from storage while a container of that UID runs (except force delete, unscheduled or terminal pods)',
    check(m) {
      const out: Violation[] = [];
      for (const [uid, writes] of m.podWrites) {
        for (const d of writes.filter((w) => w.event === 'DELETED')) {
          const running = m.runningAt(uid, d.t);
          if (running.length === 0) continue;
          const prev = before(writes, d);
          const last = prev[prev.length - 1];
          const unscheduled = !last?.nodeName;
          const terminal = last?.phase === 'Succeeded' || last?.phase === 'Failed';
          const cause = causeOf(m, d);
          const byKubelet = cause ? cause.client.startsWith('kubelet/') : (m.index.finalDeletesByPod.get(uid) ?? []).some((f) => f.t <= d.t);
          // A force delete is any non-kubelet DELETE whose effective grace was 0: asked for by the
          // client, or chosen by the apiserver (CheckGracefulDelete takes spec
          // terminationGracePeriodSeconds 0 when the client sent none, C06) — the graceful-delete
          // update written just before DELETED then carries deletionGracePeriodSeconds 0.
          const forced = !byKubelet && (cause?.gracePeriodSeconds === 0 || last?.deletionGracePeriodSeconds === 0);
          if (unscheduled || terminal || forced) continue;
          out.push({
            invariant: this.id,
            t: d.t,
            message: `pod ${d.namespace}/${d.name} (uid ${uid}) was removed while ${running.map((p) => `container ${p.container} (${p.containerId})`).join(', ')} still ran on ${running[0].runtime}`,
          });
        }
      }
      return out;
    },
  },
  {
    id: 'final-delete-gated',
    spec: '§14.2',
    title: "the kubelet's final DELETE is sent only for pods with a deletionTimestamp, with no container running, with grace 0",
    check(m) {
      const out: Violation[] = [];
      for (const f of m.finalDeletes) {
        const writes = m.podWrites.get(f.podUid) ?? [];
        if (writes.length > 0 && !writes.some((w) => w.t <= f.t && w.deletionTimestamp !== undefined)) {
          out.push({ invariant: this.id, t: f.t, message: `${f.actor} sent the final DELETE for ${f.pod ?? f.podUid} which has no deletionTimestamp` });
        }
        const running = m.runningAt(f.podUid, f.t);
        if (running.length > 0) {
          out.push({
            invariant: this.id,
            t: f.t,
            message: `${f.actor} sent the final DELETE for ${f.pod ?? f.podUid} while container ${running[0].container} (${running[0].containerId}) still ran`,
          });
        }
        // The record is written when the reply arrives; the request is the kubelet's last DELETE of that pod before it.
        const name = f.pod?.includes('/') ? f.pod.slice(f.pod.indexOf('/') + 1) : f.pod;
        const req = (m.index.podDeletesByClientName.get(`${f.actor}|${name}`) ?? []).findLast((r) => r.t <= f.t);
        if (req && req.gracePeriodSeconds !== 0) {
          out.push({ invariant: this.id, t: req.t, message: `${f.actor}'s final DELETE for ${f.pod} carried gracePeriodSeconds=${req.gracePeriodSeconds ?? 'unset'}, not 0` });
        }
      }
      return out;
    },
  },
  {
    id: 'grace-only-shrinks-apiserver',
    spec: '§14.3',
    title: 'deletionGracePeriodSeconds never grows; a shorter grace moves deletionTimestamp to dts − old + new',
    check(m) {
      const out: Violation[] = [];
      for (const writes of m.podWrites.values()) {
        let g: number | undefined;
        let dts: number | undefined;
        for (const w of writes) {
          if (g !== undefined && w.deletionGracePeriodSeconds === undefined) {
            out.push({ invariant: this.id, t: w.t, message: `${w.event} of ${w.namespace}/${w.name} (rv ${w.rv}) cleared deletionGracePeriodSeconds (was ${g})` });
            continue;
          }
          if (w.deletionGracePeriodSeconds === undefined) continue;
          const nd = w.deletionTimestamp !== undefined ? parseRfc3339(w.deletionTimestamp) : undefined;
          if (g !== undefined && w.deletionGracePeriodSeconds > g) {
            out.push({ invariant: this.id, t: w.t, message: `${w.namespace}/${w.name} rv ${w.rv}: deletionGracePeriodSeconds grew from ${g} to ${w.deletionGracePeriodSeconds}` });
          } else if (g !== undefined && w.deletionGracePeriodSeconds < g && dts !== undefined && nd !== undefined) {
            const want = dts - g + w.deletionGracePeriodSeconds;
            if (Math.abs(nd - want) >= 1) {
              out.push({
                invariant: this.id,
                t: w.t,
                message: `${w.namespace}/${w.name} rv ${w.rv}: grace ${g}→${w.deletionGracePeriodSeconds} moved deletionTimestamp to ${w.deletionTimestamp}, expected old − ${g}s + ${w.deletionGracePeriodSeconds}s`,
              });
            }
          }
          g = w.deletionGracePeriodSeconds;
          if (nd !== undefined) dts = nd;
        }
      }
      return out;
    },
  },
  {
    id: 'second-delete-idempotent',
    spec: '§14.3, §14.21',
    title: 'a DELETE of a Terminating pod with no grace or a grace ≥ the current one writes nothing and returns 200',
    check(m) {
      const out: Violation[] = [];
      for (const r of m.requests) {
        if (r.verb !== 'delete' || r.resource !== 'pods' || !r.name) continue;
        const last = (m.index.podWritesByName.get(`${r.namespace ?? ''}/${r.name}`) ?? []).findLast((w) => w.namespace === r.namespace && w.t < r.t);
        if (!last || last.event === 'DELETED' || last.deletionTimestamp === undefined || !(last.deletionGracePeriodSeconds! > 0)) continue;
        if (r.gracePeriodSeconds !== undefined && r.gracePeriodSeconds < last.deletionGracePeriodSeconds!) continue;
        const wrote = (m.podWrites.get(last.uid) ?? []).some((w) => w.t === r.t);
        if (wrote || r.code !== 200) {
          out.push({
            invariant: this.id,
            t: r.t,
            message: `DELETE of Terminating ${r.namespace}/${r.name} by ${r.client} (grace ${r.gracePeriodSeconds ?? 'unset'} ≥ ${last.deletionGracePeriodSeconds}) ${wrote ? 'wrote the object' : `returned ${r.code}`}`,
          });
        }
      }
      return out;
    },
  },
  {
    id: 'grace-only-shrinks-kubelet',
    spec: '§14.4',
    title: 'per pod worker the kill grace never grows (except back to max(TGPS, 1) after a force delete) and the grace passed to the runtime is ≥ 1',
    check(m) {
      const out: Violation[] = [];
      const groups = groupBy(m.spansOf('kubelet.killPod'), (s) => `${s.actor}|${s.incarnation}|${s.podUid}`);
      for (const spans of groups.values()) {
        let g: number | undefined;
        for (const s of spans) {
          const gp = s.data.gracePeriod;
          if (typeof gp !== 'number') continue;
          if (gp < 1) out.push({ invariant: this.id, t: s.begin, message: `${s.actor} killPod(${String(s.data.pod)}) with grace ${gp} < 1` });
          // calculateEffectiveGracePeriod (pod_workers.go, v1.22.8) takes deletionGracePeriodSeconds
          // 0 (a force delete) as the smallest value, then treats 0 as unset and falls back to spec
          // terminationGracePeriodSeconds (floor 1): after `--grace-period=10` and then `--force`
          // the grace grows back to TGPS (spec §5.2, §14.19) — to exactly max(TGPS, 1), which the
          // killPod B record carries (no TGPS: the kubelet's fallback is the floor, 1).
          const writes = m.podWrites.get(s.podUid) ?? [];
          const lastDgps = writes.filter((w) => w.t <= s.begin && w.deletionGracePeriodSeconds !== undefined).at(-1)?.deletionGracePeriodSeconds;
          const tgps = typeof s.data.terminationGracePeriodSeconds === 'number' ? s.data.terminationGracePeriodSeconds : 0;
          const backToSpec = lastDgps === 0 && gp === Math.max(tgps, 1);
          if (g !== undefined && gp > g && !backToSpec) {
            out.push({
              invariant: this.id,
              t: s.begin,
              message: `${s.actor} killPod(${String(s.data.pod)}) grace grew from ${g} to ${gp}${lastDgps === 0 ? ` (after a force delete it may grow back to terminationGracePeriodSeconds ${Math.max(tgps, 1)} only)` : ''}`,
            });
          }
          g = gp;
        }
      }
      for (const s of m.spansOf('kubelet.killContainer')) {
        const timeout = s.endData?.gracePeriod;
        if (typeof timeout === 'number' && timeout < 1) {
          out.push({ invariant: this.id, t: s.begin, message: `${s.actor} called StopContainer(${String(s.data.container)}) of ${String(s.data.pod)} with timeout ${timeout} < 1` });
        }
      }
      // What the runtime received, also when the kubelet crashed before StopContainer returned.
      for (const p of m.processes) {
        for (const sig of p.signals) {
          if (sig.timeout !== undefined && sig.timeout < 1) {
            out.push({ invariant: this.id, t: sig.t, message: `${p.runtime} received StopContainer(${p.containerId}) of ${p.pod}/${p.container} with timeout ${sig.timeout} < 1` });
          }
        }
      }
      for (const c of m.criCalls) {
        if (c.call === 'StopContainer' && c.timeout !== undefined && c.timeout < 1) {
          out.push({ invariant: this.id, t: c.t, message: `${c.runtime} received StopContainer(${c.containerId}, timeout ${c.timeout}) < 1` });
        }
      }
      return out;
    },
  },
  {
    id: 'prestop-before-sigterm',
    spec: '§14.5',
    title: 'no SIGTERM reaches a container while its preStop hook is being waited for',
    check(m) {
      const out: Violation[] = [];
      for (const s of m.spansOf('kubelet.preStop')) {
        const container = s.data.container;
        // A kubelet that crashed while waiting for the hook waits no longer: its restarted
        // incarnation runs the hook again and then stops the container (spec §15).
        const end = s.end ?? (m.crashes.get(s.actor) ?? []).find((c) => c >= s.begin);
        for (const p of m.processesOf(s.podUid)) {
          if (p.container !== container || p.startedAt > s.begin) continue;
          for (const sig of p.signals) {
            if (sig.signal === 'SIGTERM' && sig.t >= s.begin && (end === undefined || sig.t < end)) {
              out.push({ invariant: this.id, t: sig.t, message: `SIGTERM to ${p.pod}/${p.container} at ${sec(sig.t)} while its preStop (from ${sec(s.begin)}) was still running` });
            }
          }
        }
      }
      return out;
    },
  },
  {
    id: 'no-early-sigkill',
    spec: '§14.6',
    title: 'the runtime never SIGKILLs before the StopContainer timeout has passed since SIGTERM (unless the timeout is 0)',
    check(m) {
      const out: Violation[] = [];
      for (const p of m.processes) {
        for (const sig of p.signals) {
          if (sig.signal !== 'SIGKILL') continue;
          const term = p.signals.find((x) => x.signal === 'SIGTERM' && x.t <= sig.t)?.t;
          // The runtime traces the StopContainer timeout it received on the signal it sent
          // (containerd stopContainer: SIGTERM, then SIGKILL once that timeout has passed; SIGKILL
          // at once for a timeout ≤ 0). Each StopContainer sets its own deadline from its own SIGTERM.
          const received = p.signals.filter((x) => x.signal === 'SIGTERM' && x.t <= sig.t && x.timeout !== undefined);
          let timeouts: number[];
          if (sig.timeout !== undefined && sig.timeout <= 0) continue;
          if (received.length > 0) {
            if (received.some((x) => sig.t >= x.t + Math.round(x.timeout! * US_PER_SECOND))) continue;
            timeouts = received.map((x) => x.timeout!);
          } else {
            // Traces without runtime timeouts: what the kubelet says it passed — the E record of a
            // killContainer span (a span whose kubelet crashed before StopContainer returned has
            // none; its B record's grace is the spec's, not what was sent) — and the runtime's
            // cri.call records when they are collected, measured from the first SIGTERM.
            const spans = (m.index.killContainerSpans.get(p.containerId) ?? []).filter((s) => s.begin <= sig.t);
            timeouts = [
              ...spans.map((s) => s.endData?.gracePeriod),
              ...(m.index.criCallsByContainer.get(p.containerId) ?? []).filter((c) => c.call === 'StopContainer' && c.t <= sig.t).map((c) => c.timeout),
            ].filter((x): x is number => typeof x === 'number');
            if (timeouts.includes(0)) continue;
            if (term !== undefined && timeouts.length > 0 && sig.t >= term + Math.min(...timeouts) * US_PER_SECOND) continue;
          }
          // StopPodSandbox / RemovePodSandbox SIGKILL what still runs: inside killPod, after every container kill returned.
          const node = p.runtime.replace(/^runtime\//, 'kubelet/');
          // Only the kubelet incarnation running at the SIGKILL counts: a crashed one's spans never end.
          const inc = m.incarnationAt(node, sig.t);
          const podKills = m.index.spansByPod.get(`kubelet.killContainer|${p.podUid}`) ?? [];
          const sandboxPhase = (m.index.spansByPod.get(`kubelet.killPod|${p.podUid}`) ?? []).some(
            (k) =>
              k.actor === node &&
              k.incarnation === inc &&
              k.begin <= sig.t &&
              (k.end === undefined || sig.t <= k.end) &&
              !podKills.some((c) => c.actor === node && c.incarnation === inc && c.begin <= sig.t && (c.end === undefined || c.end > sig.t)),
          );
          const sandboxCall = (m.index.criCallsAt.get(`${p.runtime}|${sig.t}`) ?? []).some((c) => c.call === 'StopPodSandbox' || c.call === 'RemovePodSandbox' || c.call === 'RemoveContainer');
          if (sandboxPhase || sandboxCall) continue;
          out.push({
            invariant: this.id,
            t: sig.t,
            message:
              term === undefined
                ? `SIGKILL to ${p.pod}/${p.container} at ${sec(sig.t)} without a SIGTERM or a StopContainer timeout of 0`
                : `SIGKILL to ${p.pod}/${p.container} at ${sec(sig.t)}, ${sec(sig.t - term)} after SIGTERM, but the StopContainer timeout was ${timeouts.length ? `${Math.min(...timeouts)}s` : 'unknown'}`,
          });
        }
      }
      return out;
    },
  },
  {
    id: 'one-sync-at-a-time',
    spec: '§14.8',
    title: 'per pod UID syncs never overlap and go syncPod → syncTerminatingPod → syncTerminatedPod, never backwards',
    check(m) {
      const out: Violation[] = [];
      const groups = groupBy(m.spansOf('kubelet.sync'), (s) => `${s.actor}|${s.incarnation}|${s.podUid}`);
      for (const spans of groups.values()) {
        let prev: Span | undefined;
        for (const s of spans) {
          if (prev) {
            if (prev.end === undefined || s.begin < prev.end) {
              out.push({ invariant: this.id, t: s.begin, message: `${s.actor}: ${String(s.data.work)} of ${String(s.data.pod)} began while ${String(prev.data.work)} (from ${sec(prev.begin)}) had not ended` });
            }
            if (workRank(s.data.work) < workRank(prev.data.work)) {
              out.push({ invariant: this.id, t: s.begin, message: `${s.actor}: ${String(s.data.pod)} went back from ${String(prev.data.work)} to ${String(s.data.work)}` });
            }
          }
          prev = s;
        }
      }
      return out;
    },
  },
  {
    id: 'no-starts-once-terminating',
    spec: '§14.9',
    title: 'no container of a pod is started after its pod worker began terminating it',
    check(m) {
      const out: Violation[] = [];
      const firstTerminating = new Map<string, Span>();
      for (const s of m.spansOf('kubelet.sync')) {
        if (workRank(s.data.work) >= 1 && !firstTerminating.has(`${s.actor}|${s.incarnation}|${s.podUid}`)) firstTerminating.set(`${s.actor}|${s.incarnation}|${s.podUid}`, s);
      }
      for (const p of m.processes) {
        const kubelet = p.runtime.replace(/^runtime\//, 'kubelet/');
        const s = firstTerminating.get(`${kubelet}|${m.incarnationAt(kubelet, p.startedAt)}|${p.podUid}`);
        if (s && p.startedAt > s.begin) out.push({ invariant: this.id, t: p.startedAt, message: `container ${p.pod}/${p.container} started at ${sec(p.startedAt)}, after termination began at ${sec(s.begin)}` });
      }
      return out;
    },
  },
  {
    id: 'deletion-via-modified',
    spec: '§14.10',
    title: 'a deleted pod got exactly one MODIFIED that set deletionTimestamp before DELETED; a kubelet-driven deletion ends MODIFIED(dgps=0), DELETED',
    check(m) {
      const out: Violation[] = [];
      for (const [uid, writes] of m.podWrites) {
        const d = writes.find((w) => w.event === 'DELETED');
        if (!d) continue;
        const prev = before(writes, d);
        const sets = prev.filter((w, i) => w.deletionTimestamp !== undefined && (i === 0 || prev[i - 1].deletionTimestamp === undefined));
        if (sets.length !== 1 || sets[0].event !== 'MODIFIED') {
          out.push({ invariant: this.id, t: d.t, message: `pod ${d.namespace}/${d.name} (uid ${uid}) was DELETED after ${sets.length} writes setting deletionTimestamp (want exactly one MODIFIED)` });
          continue;
        }
        const cause = causeOf(m, d);
        if (cause?.client.startsWith('kubelet/')) {
          const last = prev[prev.length - 1];
          if (last.event !== 'MODIFIED' || last.deletionGracePeriodSeconds !== 0) {
            out.push({ invariant: this.id, t: d.t, message: `kubelet-driven deletion of ${d.namespace}/${d.name}: the write before DELETED was ${last.event} with dgps=${last.deletionGracePeriodSeconds}, want MODIFIED dgps=0` });
          }
        }
      }
      return out;
    },
  },
  {
    id: 'monotonic-resource-versions',
    spec: '§14.11',
    title: 'resourceVersions of successive writes strictly increase (so DELETED > the last MODIFIED)',
    check(m) {
      const out: Violation[] = [];
      let prev: ApiWrite | undefined;
      for (const w of m.writes) {
        if (prev && w.rv <= prev.rv) {
          out.push({ invariant: this.id, t: w.t, message: `${w.event} ${w.resource} ${w.namespace ?? ''}/${w.name} has rv ${w.rv} after rv ${prev.rv} (${prev.event} ${prev.name})` });
        }
        prev = w;
      }
      return out;
    },
  },
  {
    id: 'printing-terminating',
    spec: '§14.12',
    title: 'kubectl get shows Terminating iff deletionTimestamp is set, and AGE counts from creationTimestamp',
    check(m, ctx) {
      const out: Violation[] = [];
      const columns = new Map<string, string[]>();
      for (const r of m.watchRows) {
        const d = (r.data ?? {}) as Record<string, unknown>;
        const id = String(d.watchId);
        if (Array.isArray(d.columns)) columns.set(id, d.columns as string[]);
        const cols = columns.get(id);
        const cells = d.cells as string[] | undefined;
        if (!cols || !cells || !('deletionTimestamp' in d)) continue;
        const status = cells[cols.indexOf('STATUS')];
        const deleting = d.deletionTimestamp !== undefined && d.deletionTimestamp !== null;
        // A pod being deleted prints Terminating (Unknown with reason NodeLost); one that is not
        // never prints Terminating — but may print Unknown: a container's terminated reason after
        // a reboot (containerd's `unknownExitReason`, spec node-lifecycle §3.10, §9.2).
        if (status !== undefined && (deleting ? status !== 'Terminating' && status !== 'Unknown' : status === 'Terminating')) {
          out.push({ invariant: this.id, t: r.t, message: `row "${cells.join(' ')}" shows ${status} but deletionTimestamp is ${deleting ? 'set' : 'unset'}` });
        }
        const age = cells[cols.indexOf('AGE')];
        const created = typeof d.creationTimestamp === 'string' ? parseRfc3339(d.creationTimestamp) : undefined;
        if (age !== undefined && created !== undefined) {
          // The row was printed at the apiserver one link latency before it arrived here.
          const ageUs = r.t - (created - ctx.epochUnixSeconds) * US_PER_SECOND;
          const ok = [0, 1, 2].some((back) => humanDuration(ageUs - back * US_PER_SECOND) === age);
          if (!ok) out.push({ invariant: this.id, t: r.t, message: `row "${cells.join(' ')}": AGE ${age} does not match creationTimestamp ${d.creationTimestamp} (≈${humanDuration(ageUs)})` });
        }
      }
      return out;
    },
  },
  {
    id: 'finalizers-block-removal',
    spec: '§14.14',
    title: 'a DELETE never removes a pod that still has finalizers',
    check(m) {
      const out: Violation[] = [];
      for (const writes of m.podWrites.values()) {
        for (const d of writes.filter((w) => w.event === 'DELETED')) {
          const prev = before(writes, d);
          const last = prev[prev.length - 1];
          if (last?.finalizers?.length && causeOf(m, d)) {
            out.push({ invariant: this.id, t: d.t, message: `DELETE removed ${d.namespace}/${d.name} although it had finalizers ${last.finalizers.join(', ')}` });
          }
        }
      }
      return out;
    },
  },
  {
    id: 'exit-codes-follow-signal',
    spec: '§14.16',
    title: 'a container killed by SIGKILL exits 137; exit 143 only after SIGTERM; 137 only after SIGKILL',
    check(m) {
      const out: Violation[] = [];
      for (const p of m.processes) {
        if (p.exitCode === undefined) continue;
        const killed = p.signals.some((s) => s.signal === 'SIGKILL');
        const termed = p.signals.some((s) => s.signal === 'SIGTERM');
        const who = `${p.pod}/${p.container} (${p.containerId})`;
        if (killed && p.exitCode !== 137) out.push({ invariant: this.id, t: p.exitedAt!, message: `${who} got SIGKILL but exited ${p.exitCode}` });
        if (!killed && p.exitCode === 137 && p.reason !== 'OOMKilled') out.push({ invariant: this.id, t: p.exitedAt!, message: `${who} exited 137 without a SIGKILL` });
        if (!termed && p.exitCode === 143) out.push({ invariant: this.id, t: p.exitedAt!, message: `${who} exited 143 without a SIGTERM` });
      }
      return out;
    },
  },
  {
    id: 'kubelet-restart-keeps-running-pods',
    spec: '§15',
    title: 'a kubelet restart alone never stops a container of a pod that is not being deleted and whose sandbox and containers are running',
    check(m) {
      const out: Violation[] = [];
      for (const [kubelet, restarts] of m.restarts) {
        if (!kubelet.startsWith('kubelet/')) continue;
        const runtime = kubelet.replace(/^kubelet\//, 'runtime/');
        const crashes = m.crashes.get(kubelet) ?? [];
        for (const up of restarts) {
          // The incarnation that came up at `up`: down since the crash before it, alive until the next crash.
          const down = crashes.filter((c) => c <= up).at(-1) ?? up;
          const until = crashes.find((c) => c > up) ?? Infinity;
          const pods = new Set(m.processes.filter((p) => p.runtime === runtime && p.startedAt <= down && (p.exitedAt === undefined || p.exitedAt > up)).map((p) => p.podUid));
          for (const uid of pods) {
            // Every container of the pod still runs at the restart: its newest process of each
            // name survived the downtime (runtime crashes end them, so the sandbox stood too).
            const newest = new Map<string, ProcessLife>();
            for (const p of m.processesOf(uid)) if (p.startedAt <= up) newest.set(p.container, p);
            if ([...newest.values()].some((p) => p.exitedAt !== undefined && p.exitedAt <= up)) continue;
            const writes = m.podWrites.get(uid) ?? [];
            for (const p of newest.values()) {
              const sig = p.signals.find((s) => s.t >= up && s.t < until && (s.signal === 'SIGTERM' || s.signal === 'SIGKILL'));
              if (!sig) continue;
              // A liveness or startup probe that failed after the restart is a reason of its own
              // (computePodActions kills the container, the killContainer span carries the message).
              const probeKill = (m.index.killContainerSpans.get(p.containerId) ?? []).some(
                (s) => s.begin >= up && s.begin <= sig.t && typeof s.data.message === 'string' && PROBE_KILL.test(s.data.message),
              );
              if (probeKill) continue;
              // Being deleted (deletionTimestamp or gone) or terminal (admission rejected it) by
              // the time of the signal: the kubelet had its reason. No writes traced: not judged.
              const last = writes.filter((w) => w.t <= sig.t).at(-1);
              if (!last || last.event === 'DELETED' || last.deletionTimestamp !== undefined || last.phase === 'Succeeded' || last.phase === 'Failed') continue;
              out.push({
                invariant: this.id,
                t: sig.t,
                message: `${kubelet} restarted at ${sec(up)} (down since ${sec(down)}) and ${sig.signal} reached ${p.namespace ?? 'default'}/${p.pod}/${p.container} at ${sec(sig.t)}: the pod is not being deleted and its containers were running`,
              });
              break;
            }
          }
        }
      }
      return out;
    },
  },
  {
    id: 'final-delete-after-terminated',
    spec: '§14.18',
    title: "the status manager deletes a pod only after its worker finished syncTerminatingPod (terminatedAt)",
    check(m) {
      const out: Violation[] = [];
      for (const f of m.finalDeletes) {
        const inc = m.incarnationAt(f.actor, f.t);
        const done = (m.index.spansByPod.get(`kubelet.sync|${f.podUid}`) ?? []).some(
          (s) => s.actor === f.actor && s.incarnation === inc && workRank(s.data.work) === 1 && s.end !== undefined && s.end <= f.t && !s.endData?.error,
        );
        if (!done) out.push({ invariant: this.id, t: f.t, message: `${f.actor} sent the final DELETE for ${f.pod ?? f.podUid} before its pod worker finished terminating it` });
      }
      return out;
    },
  },
  {
    id: 'final-delete-own-uid',
    spec: '§14.15',
    title: "the kubelet's final DELETE removes only the pod UID it was sent for: a pod recreated under the same name survives (UID precondition)",
    check(m) {
      const out: Violation[] = [];
      for (const writes of m.podWrites.values()) {
        for (const d of writes.filter((w) => w.event === 'DELETED')) {
          const cause = causeOf(m, d);
          if (!cause || !cause.client.startsWith('kubelet/') || cause.gracePeriodSeconds !== 0) continue;
          // The apiserver traces the UID precondition the DELETE carried: the pod the kubelet
          // meant, whether or not the reply ever reached it (a crashed kubelet, a 504).
          const meant = cause.preconditionUid ?? meantWithoutPrecondition(m, cause.client, d);
          if (meant !== undefined && meant !== d.uid) {
            out.push({
              invariant: this.id,
              t: d.t,
              message: `${cause.client}'s final DELETE for ${d.namespace}/${d.name} (uid ${meant}${cause.preconditionUid !== undefined ? ', its UID precondition' : ''}) removed the pod recreated under that name (uid ${d.uid})`,
            });
          }
        }
      }
      return out;
    },
  },
  // ---- node lifecycle (spec node-lifecycle.md §8) -------------------------------------------------
  {
    id: 'node-unknown-after-grace',
    spec: 'NL §8.1, §8.2',
    title:
      "a Node's Ready condition turns Unknown only when the node lifecycle controller, by its own clock, has seen no heartbeat for its grace (≥ 40 s nodeMonitorGracePeriod; 60 s startup), never < 40 s after a heartbeat it had seen, and with reason NodeStatusUnknown / NodeStatusNeverUpdated and upstream's message",
    check(m) {
      const out: Violation[] = [];
      // The controller's own account: the probe time it judged by. A heartbeat written but still
      // on its way to the controller's informer (or lost with a broken watch) is not "seen": the
      // controller is right to go by what it has (upstream reads its informer cache too).
      for (const u of m.nodeHealthUpdates) {
        if (u.to !== 'Unknown') continue;
        if (u.graceUs < 40 * US_PER_SECOND) out.push({ invariant: this.id, t: u.t, message: `node ${u.node}: grace ${sec(u.graceUs)} below nodeMonitorGracePeriod 40s` });
        if (!(u.t - u.probeUs > u.graceUs - US_PER_SECOND / 100)) {
          out.push({ invariant: this.id, t: u.t, message: `node ${u.node} set Unknown ${sec(u.t - u.probeUs)} after the controller's last probe (grace ${sec(u.graceUs)})` });
        }
      }
      // From the outside: the heartbeats before the controller's probe time were seen by it, so
      // Unknown never comes < 40 s after the last heartbeat written before that probe.
      const probeOf = new Map<number, number>();
      for (const u of m.nodeHealthUpdates) if (u.to === 'Unknown') probeOf.set(u.t, u.probeUs);
      const lastAlive = new Map<string, number[]>();
      const lastReady = new Map<string, string | undefined>();
      for (const w of m.writes) {
        if (w.resource === 'leases' && w.event !== 'DELETED') {
          push(lastAlive, w.name, w.t);
          continue;
        }
        if (w.resource !== 'nodes') continue;
        const prev = lastReady.get(w.name);
        lastReady.set(w.name, w.nodeReady);
        if (w.event === 'ADDED' || (w.nodeReady === 'True' && prev !== 'True')) push(lastAlive, w.name, w.t);
        if (w.nodeReady !== 'Unknown' || prev === 'Unknown' || w.event !== 'MODIFIED') continue;
        const okText =
          (w.nodeReadyReason === 'NodeStatusUnknown' && w.nodeReadyMessage === 'Kubelet stopped posting node status.') ||
          (w.nodeReadyReason === 'NodeStatusNeverUpdated' && w.nodeReadyMessage === 'Kubelet never posted node status.');
        if (!okText) out.push({ invariant: this.id, t: w.t, message: `node ${w.name} Ready=Unknown with reason ${JSON.stringify(w.nodeReadyReason)} / message ${JSON.stringify(w.nodeReadyMessage)}` });
        // The controller's probe for this write (its PUT is answered at the write's instant), else
        // the write time itself minus the 1 s a watch event may still be travelling.
        const probe = nearestProbe(probeOf, w.t) ?? w.t - US_PER_SECOND;
        const seen = (lastAlive.get(w.name) ?? []).filter((t) => t <= probe).at(-1) ?? 0;
        if (w.t - seen < 40 * US_PER_SECOND) {
          out.push({ invariant: this.id, t: w.t, message: `node ${w.name} Ready=Unknown ${sec(w.t - seen)} after a heartbeat the controller had seen (nodeMonitorGracePeriod is 40s)` });
        }
      }
      return out;
    },
  },
  {
    id: 'noexecute-condition-taints-exclusive',
    spec: 'NL §8.3',
    title: 'a Node does not keep both unreachable:NoExecute and not-ready:NoExecute (a swap adds one and removes the other within its tainting step)',
    check(m) {
      const out: Violation[] = [];
      const both = (w: ApiWrite) => (w.taints ?? []).includes('node.kubernetes.io/unreachable:NoExecute') && (w.taints ?? []).includes('node.kubernetes.io/not-ready:NoExecute');
      const since = new Map<string, number>();
      const check = (name: string, t: number) => {
        const s0 = since.get(name);
        if (s0 !== undefined && t - s0 > US_PER_SECOND) out.push({ invariant: this.id, t, message: `node ${name} carried both unreachable:NoExecute and not-ready:NoExecute for ${sec(t - s0)}` });
      };
      for (const w of m.writes) {
        if (w.resource !== 'nodes') continue;
        if (both(w)) {
          if (!since.has(w.name)) since.set(w.name, w.t);
        } else {
          check(w.name, w.t);
          since.delete(w.name);
        }
      }
      const end = m.writes.at(-1)?.t ?? 0;
      for (const name of since.keys()) check(name, end);
      return out;
    },
  },
  {
    id: 'controller-delete-no-grace-override',
    spec: 'NL §8.7',
    title: "the controller manager's pod DELETEs carry no grace period but 0 (taint-manager evictions use the pod's own terminationGracePeriodSeconds; pod GC forces 0)",
    check(m) {
      const out: Violation[] = [];
      for (const r of m.requests) {
        if (r.verb !== 'delete' || r.resource !== 'pods' || r.client !== 'kube-controller-manager') continue;
        if (r.gracePeriodSeconds !== undefined && r.gracePeriodSeconds !== 0) {
          out.push({ invariant: this.id, t: r.t, message: `kube-controller-manager deleted ${r.namespace}/${r.name} with gracePeriodSeconds ${r.gracePeriodSeconds}` });
        }
      }
      return out;
    },
  },
  {
    id: 'no-node-lost-reason',
    spec: 'NL §8.8, §3.10',
    title: 'taint-based eviction never sets status.reason NodeLost (kubectl prints Terminating, not Unknown)',
    check(m) {
      const out: Violation[] = [];
      for (const w of m.writes) {
        if (w.resource === 'pods' && w.reason === 'NodeLost') out.push({ invariant: this.id, t: w.t, message: `pod ${w.namespace}/${w.name} has status.reason NodeLost` });
      }
      return out;
    },
  },
  {
    id: 'kubelet-node-create-once',
    spec: 'NL §8.13, §6.3',
    title: 'a kubelet creates its Node object at most once per process: a second successful CREATE needs a kubelet restart in between',
    check(m) {
      const out: Violation[] = [];
      const last = new Map<string, number>();
      for (const r of m.requests) {
        if (r.verb !== 'create' || r.resource !== 'nodes' || r.code !== 201 || !r.client.startsWith('kubelet/')) continue;
        const prev = last.get(r.client);
        last.set(r.client, r.t);
        if (prev === undefined) continue;
        // registrationCompleted stays true until the process restarts (registerWithAPIServer).
        const restarted = (m.restarts.get(r.client) ?? []).some((t) => t > prev && t <= r.t);
        if (!restarted) {
          out.push({ invariant: this.id, t: r.t, message: `${r.client} created Node ${r.name ?? ''} again at ${sec(r.t)} (first at ${sec(prev)}) without a restart in between` });
        }
      }
      return out;
    },
  },
  // The rest of node-lifecycle §8 (issue #15 item 7): checkers/nodeLifecycleInvariants.ts.
  ...NODE_LIFECYCLE_INVARIANTS,
  // Services, EndpointSlices and kube-proxy (issue #18; spec endpoints-traffic §12).
  ...TRAFFIC_INVARIANTS,
];

/** Every checker: the deletion-protocol ones above, then the workload controllers' (WC §6). */
export const ALL_INVARIANTS: readonly Invariant[] = [...INVARIANTS, ...STATEFULSET_INVARIANTS];

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

/** The probe time of the controller's Unknown update traced within 5 ms after the write at `t` (its PUT's reply). */
function nearestProbe(probeOf: ReadonlyMap<number, number>, t: number): number | undefined {
  let best: number | undefined;
  let bestDt = Infinity;
  for (const [ut, p] of probeOf) {
    const dt = ut - t;
    if (dt >= 0 && dt <= 5000 && dt < bestDt) {
      best = p;
      bestDt = dt;
    }
  }
  return best;
}

/** Ids of every checker, for `expect.invariants.allow` validation. */
export const INVARIANT_IDS: readonly string[] = ALL_INVARIANTS.map((i) => i.id);

/** Runs every checker; violations sorted by virtual time. */
export function checkInvariants(m: TraceModel, ctx: CheckContext): Violation[] {
  return ALL_INVARIANTS.flatMap((inv) => inv.check(m, ctx)).sort((a, b) => a.t - b.t);
}
