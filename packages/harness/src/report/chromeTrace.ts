/**
 * A run's merged trace in the Chrome Trace Event format (the JSON object form Perfetto and
 * chrome://tracing open): one process per actor, named by `process_name` metadata, with one
 * thread per pod (and per container for kill spans) named by `thread_name`. Spans (`data.ph`
 * B/E records: pod-worker syncs, killPod, killContainer — the StopContainer wait — preStop, CRI
 * execs, driver steps) become complete events (`ph: X`); SIGTERM / SIGKILL / exits, watch events,
 * final DELETEs, crashes, restarts and faults become instants (`ph: i`). The clock is virtual time
 * in µs, the format's own unit. Spans of one thread that overlap without nesting (parallel
 * container kills, an incarnation that died mid-span) are spread over extra lanes `name #2`, …,
 * so every thread's spans nest as the format requires.
 */
import type { TraceRecord } from '@podsim/api';

/** One Trace Event (the fields podsim uses). */
export interface TraceEvent {
  readonly name: string;
  readonly ph: 'X' | 'i' | 'M';
  readonly pid: number;
  readonly tid: number;
  readonly ts?: number;
  readonly dur?: number;
  readonly s?: 't' | 'p' | 'g';
  readonly cat?: string;
  readonly args?: Record<string, unknown>;
}

export interface ChromeTrace {
  readonly traceEvents: TraceEvent[];
  readonly displayTimeUnit: 'ms';
  readonly otherData: Record<string, unknown>;
}

const SYNC_NAMES: Readonly<Record<string, string>> = { SyncPodWork: 'syncPod', TerminatingPodWork: 'syncTerminatingPod', TerminatedPodWork: 'syncTerminatedPod' };

interface OpenSpan {
  readonly actor: string;
  readonly group: string;
  readonly name: string;
  readonly cat: string;
  readonly begin: number;
  readonly args: Record<string, unknown>;
}

interface ClosedSpan extends OpenSpan {
  readonly end: number;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The pod a record concerns, for thread naming: `ns/name`, else the UID, else undefined. */
function podOf(d: Record<string, unknown>): string | undefined {
  const pod = str(d.pod);
  const ns = str(d.namespace);
  if (pod) return pod.includes('/') || !ns ? pod : `${ns}/${pod}`;
  return str(d.podUid);
}

/** Span name and thread group of a B record. */
function spanOf(r: TraceRecord, d: Record<string, unknown>, podByUid: ReadonlyMap<string, string>): { name: string; group: string } {
  const pod = podOf(d) ?? podByUid.get(str(d.podUid) ?? '') ?? 'pods';
  const byUid = podByUid.get(str(d.podUid) ?? '') ?? pod;
  switch (r.kind) {
    case 'kubelet.sync':
      return { name: SYNC_NAMES[String(d.work)] ?? String(d.work), group: pod };
    case 'kubelet.killPod':
      return { name: `killPod grace=${String(d.gracePeriod ?? 'nil')}`, group: pod };
    case 'kubelet.killContainer':
      return { name: `killContainer ${String(d.container)} (StopContainer)`, group: `${pod}/${String(d.container)}` };
    case 'kubelet.preStop':
      return { name: `preStop ${String(d.container)}`, group: `${byUid}/${String(d.container)}` };
    case 'cri.exec':
      return { name: `exec ${JSON.stringify(d.cmd ?? '')}`, group: `${byUid}/${String(d.container ?? d.containerId)}` };
    case 'driver.step':
      return { name: `#${String(d.index)} ${String(d.step)}`, group: 'timeline' };
    default:
      return { name: r.kind, group: pod };
  }
}

/** Instant name and thread of a non-span record (undefined: not exported). */
function instantOf(r: TraceRecord, d: Record<string, unknown>, podByUid: ReadonlyMap<string, string>): { name: string; group: string } | undefined {
  const pod = podOf(d) ?? podByUid.get(str(d.podUid) ?? '');
  switch (r.kind) {
    case 'cri.signal':
      return { name: String(d.signal), group: `${pod}/${String(d.container)}` };
    case 'cri.exit':
      return { name: `exit ${String(d.exitCode)}`, group: `${pod}/${String(d.container)}` };
    case 'cri.start':
      return { name: 'start', group: `${pod}/${String(d.container)}` };
    case 'api.write':
      return d.resource === 'pods' ? { name: `${String(d.event)} rv ${String(d.rv)}`, group: pod ?? 'pods' } : undefined;
    case 'kubelet.finalDelete':
      return { name: `final DELETE → ${String(d.code ?? '?')}`, group: pod ?? 'pods' };
    case 'driver.watch':
      return { name: r.msg, group: 'kubectl get pods -w' };
    default:
      if (r.kind.startsWith('engine.') || r.kind.startsWith('fault.') || r.kind.startsWith('reflector.')) return { name: `${r.kind}: ${r.msg}`, group: r.kind.split('.')[0] };
      return undefined;
  }
}

/** Converts merged trace records (sorted by t) to a Chrome trace. */
export function toChromeTrace(records: readonly TraceRecord[], otherData: Record<string, unknown> = {}): ChromeTrace {
  const podByUid = new Map<string, string>();
  for (const r of records) {
    const d = (r.data ?? {}) as Record<string, unknown>;
    const uid = str(d.podUid) ?? (r.kind === 'api.write' && d.resource === 'pods' ? str(d.uid) : undefined);
    const pod = podOf(d) ?? (r.kind === 'api.write' ? `${str(d.namespace) ?? ''}/${str(d.name) ?? ''}` : undefined);
    if (uid && pod && pod !== uid && !podByUid.has(uid)) podByUid.set(uid, pod);
  }

  const open = new Map<string, OpenSpan>();
  const spans: ClosedSpan[] = [];
  const instants: Array<{ actor: string; group: string; name: string; cat: string; t: number; args: Record<string, unknown> }> = [];
  const endUs = records.length ? records[records.length - 1].t : 0;
  const closeActor = (actor: string, t: number) => {
    for (const [k, s] of open) {
      if (s.actor !== actor) continue;
      spans.push({ ...s, end: t, args: { ...s.args, unfinished: true } });
      open.delete(k);
    }
  };
  for (const r of records) {
    const d = (r.data ?? {}) as Record<string, unknown>;
    if ((d.ph === 'B' || d.ph === 'E') && d.span !== undefined) {
      const key = `${r.actor}|${r.kind}|${String(d.span)}`;
      if (d.ph === 'B') {
        const { name, group } = spanOf(r, d, podByUid);
        open.set(key, { actor: r.actor, group, name, cat: r.kind, begin: r.t, args: { ...d, msg: r.msg } });
      } else {
        const s = open.get(key);
        if (s) {
          open.delete(key);
          spans.push({ ...s, end: r.t, args: { ...s.args, end: { ...d, msg: r.msg } } });
        }
      }
      continue;
    }
    // A crashed incarnation's spans never end: close them at the crash.
    if (r.kind === 'engine.crash') closeActor(r.actor, r.t);
    const inst = instantOf(r, d, podByUid);
    if (inst) instants.push({ actor: r.actor, ...inst, cat: r.kind, t: r.t, args: { ...d, msg: r.msg } });
  }
  for (const s of open.values()) spans.push({ ...s, end: endUs, args: { ...s.args, unfinished: true } });

  // Processes (actors, sorted) and threads (groups, in order of first use; lanes for overlaps).
  const actors = [...new Set([...spans.map((s) => s.actor), ...instants.map((i) => i.actor)])].sort();
  const pidOf = new Map(actors.map((a, i) => [a, i + 1]));
  const threads = new Map<string, number>();
  const threadNames: Array<{ pid: number; tid: number; name: string }> = [];
  const tidOf = (actor: string, group: string): number => {
    const key = `${actor}|${group}`;
    let tid = threads.get(key);
    if (tid === undefined) {
      tid = threadNames.filter((t) => t.pid === pidOf.get(actor)).length + 1;
      threads.set(key, tid);
      threadNames.push({ pid: pidOf.get(actor)!, tid, name: group });
    }
    return tid;
  };

  const events: TraceEvent[] = [];
  spans.sort((a, b) => a.begin - b.begin || b.end - a.end);
  // Per (actor, group): lanes, each a stack of open intervals; a span goes to the first lane
  // where it nests inside the innermost span still open at its begin (or the lane is idle).
  const lanes = new Map<string, ClosedSpan[][]>();
  for (const s of spans) {
    const key = `${s.actor}|${s.group}`;
    const ls = lanes.get(key) ?? [];
    lanes.set(key, ls);
    let lane = ls.findIndex((stack) => {
      while (stack.length && stack[stack.length - 1].end <= s.begin) stack.pop();
      return stack.length === 0 || stack[stack.length - 1].end >= s.end;
    });
    if (lane < 0) {
      lane = ls.length;
      ls.push([]);
    }
    ls[lane].push(s);
    const group = lane === 0 ? s.group : `${s.group} #${lane + 1}`;
    events.push({ name: s.name, cat: s.cat, ph: 'X', pid: pidOf.get(s.actor)!, tid: tidOf(s.actor, group), ts: s.begin, dur: s.end - s.begin, args: s.args });
  }
  for (const i of instants) events.push({ name: i.name, cat: i.cat, ph: 'i', s: 't', pid: pidOf.get(i.actor)!, tid: tidOf(i.actor, i.group), ts: i.t, args: i.args });
  events.sort((a, b) => (a.ts ?? 0) - (b.ts ?? 0));

  const meta: TraceEvent[] = [
    ...actors.map((a) => ({ name: 'process_name', ph: 'M' as const, pid: pidOf.get(a)!, tid: 0, args: { name: a } })),
    ...actors.map((a) => ({ name: 'process_sort_index', ph: 'M' as const, pid: pidOf.get(a)!, tid: 0, args: { sort_index: pidOf.get(a)! } })),
    ...threadNames.map((t) => ({ name: 'thread_name', ph: 'M' as const, pid: t.pid, tid: t.tid, args: { name: t.name } })),
  ];
  return { traceEvents: [...meta, ...events], displayTimeUnit: 'ms', otherData };
}
