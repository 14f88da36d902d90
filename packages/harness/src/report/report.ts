/**
 * What `podsim run` prints: the `kubectl get pods -w` lines exactly as kubectl would lay them
 * out (rows from the apiserver's Table printer, columns by {@link KubectlTabWriter}), and the
 * summary a user reads afterwards — per deleted pod the DELETE → gone latency and the signals
 * its containers got, then virtual and wall time.
 */
import { US_PER_SECOND } from '@podsim/api';
import { formatDuration, formatDurationPrecise } from '../duration.js';
import type { TraceModel } from '../checkers/model.js';
import { watchRows, podsByCreation, type WatchRow } from '../expect/evaluate.js';
import { KubectlTabWriter } from './tabwriter.js';

/** Window in which rows count as kubectl's initial list (one flush): 1 ms of virtual time. */
const INITIAL_LIST_US = 1000;

/**
 * The printed lines of each `kubectl get pods -w` session (header first), concatenated. A new
 * watch starts a new header and new column widths, as a new kubectl process would.
 */
export function formatWatchLines(rows: readonly WatchRow[], watchIds: readonly string[]): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < rows.length) {
    const id = watchIds[i];
    const tw = new KubectlTabWriter();
    const first = rows[i];
    const initial: string[][] = [[...first.columns]];
    while (i < rows.length && watchIds[i] === id && rows[i].event === 'ADDED' && rows[i].t - first.t < INITIAL_LIST_US) initial.push([...rows[i++].cells]);
    if (initial.length === 1) initial.push([...rows[i++].cells]);
    out.push(...tw.flush(initial));
    while (i < rows.length && watchIds[i] === id) out.push(...tw.flush([[...rows[i++].cells]]));
  }
  return out;
}

/** The printed watch lines of a run. */
export function watchLines(m: TraceModel): string[] {
  const rows = watchRows(m);
  const ids = m.watchRows.filter((r) => ((r.data as { cells?: unknown[] })?.cells ?? []).length > 0).map((r) => String((r.data as { watchId?: string }).watchId));
  return formatWatchLines(rows, ids);
}

export interface PodSummary {
  readonly name: string;
  readonly namespace?: string;
  readonly uid: string;
  /** Virtual µs of the first write that set deletionTimestamp. */
  readonly deletedAt?: number;
  /** Virtual µs of the DELETED write. */
  readonly goneAt?: number;
  /** goneAt − deletedAt. */
  readonly deleteToGoneUs?: number;
  readonly sigterm: number;
  readonly sigkill: number;
  readonly exitCodes: readonly number[];
  /** The pod's last write still carried finalizers (only set when it is not gone). */
  readonly finalizers?: true;
  /** A container of the pod was still running at the end (only set when it is not gone). */
  readonly running?: true;
}

/** One summary per pod the run created (in order of creation). */
export function podSummaries(m: TraceModel): PodSummary[] {
  return podsByCreation(m).map((p) => {
    const writes = m.podWrites.get(p.uid) ?? [];
    const deletedAt = writes.find((w) => w.deletionTimestamp !== undefined)?.t;
    const goneAt = writes.find((w) => w.event === 'DELETED')?.t;
    const procs = m.processesOf(p.uid);
    const sigs = procs.flatMap((x) => x.signals);
    const last = writes[writes.length - 1];
    return {
      ...(goneAt === undefined && last?.finalizers?.length ? { finalizers: true as const } : {}),
      ...(goneAt === undefined && procs.some((x) => x.exitedAt === undefined) ? { running: true as const } : {}),
      name: p.name,
      namespace: p.namespace,
      uid: p.uid,
      ...(deletedAt !== undefined ? { deletedAt } : {}),
      ...(goneAt !== undefined ? { goneAt } : {}),
      ...(deletedAt !== undefined && goneAt !== undefined ? { deleteToGoneUs: goneAt - deletedAt } : {}),
      sigterm: sigs.filter((s) => s.signal === 'SIGTERM').length,
      sigkill: sigs.filter((s) => s.signal === 'SIGKILL').length,
      exitCodes: procs.filter((x) => x.exitCode !== undefined).map((x) => x.exitCode!),
    };
  });
}

/** GONE AFTER: as {@link formatDuration} below a minute (`2.97s`), with the same precision beyond (`1m5.25s`, not `1m5s`). */
export function formatGoneAfter(us: number): string {
  return us < 60 * US_PER_SECOND ? formatDuration(us) : formatDurationPrecise(us, 2);
}

/**
 * The summary table of deleted pods (or a note when none was deleted): every deleted pod, or the
 * first `rows` of them (by creation) and a line saying how many more there are.
 */
export function formatPodTable(pods: readonly PodSummary[], rows = Infinity): string[] {
  const all = pods.filter((p) => p.deletedAt !== undefined);
  if (all.length === 0) return ['no pod was deleted'];
  if (rows <= 0) return [];
  const deleted = all.slice(0, rows);
  const more = all.length - deleted.length;
  const tw = new KubectlTabWriter();
  return [
    ...tw.flush([
    ['POD', 'DELETE AT', 'GONE AFTER', 'SIGTERM', 'SIGKILL', 'EXIT CODES'],
    ...deleted.map((p) => [
      p.name,
      formatDuration(p.deletedAt!),
      p.deleteToGoneUs !== undefined ? formatGoneAfter(p.deleteToGoneUs) : 'not gone',
      String(p.sigterm),
      String(p.sigkill),
      p.exitCodes.length ? p.exitCodes.join(',') : '-',
    ]),
    ]),
    ...(more > 0 ? [`… and ${more} more deleted pod${more === 1 ? '' : 's'} (--rows N prints more rows; --json has every pod)`] : []),
  ];
}
