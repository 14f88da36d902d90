/**
 * The summary of a mass deletion: instead of (or before) one row per pod, per timeline step that
 * deleted pods — `kubectl delete pod -l …`, a drain, a scale-down — how many pods it deleted, how
 * long after the step began the first, median, 90th / 99th percentile and last of them were gone
 * from the API (the DELETED watch event), how many are still Terminating at the end, and how each
 * ended (the signals its containers got). The same figures go into `--json` as `summary`, so a
 * CI job can read them without writing an expectation. Percentiles are nearest-rank over the
 * pods that are gone; the pods that are not are counted, never silently left out.
 */
import { formatDurationPrecise } from '../duration.js';
import type { RunReport, StepResult } from '../run.js';
import { formatPodTable, type PodSummary } from './report.js';

/** How a deleted pod ended, or why it has not (`still terminating …`). */
export type EndReason =
  | 'exited after SIGTERM'
  | 'SIGKILL at the grace deadline'
  | 'no running container'
  | 'still terminating: finalizers'
  | 'still terminating: container running'
  | 'still terminating';

/** The deletions attributed to one step (or to none: `step` absent, times since the run's start). */
export interface DeletionSummary {
  /** The step in which the pods got their deletionTimestamp (the last step begun by then). */
  readonly step?: { readonly index: number; readonly line?: number; readonly id?: string; readonly kind: string; readonly summary: string; readonly startUs: number };
  readonly deleted: number;
  readonly gone: number;
  readonly stillTerminating: number;
  /** Virtual µs from the step's start to the DELETED event; over the pods that are gone. */
  readonly goneAfterUs?: { readonly first: number; readonly p50: number; readonly p90: number; readonly p99: number; readonly last: number };
  /** Virtual µs from each pod's own deletionTimestamp to its DELETED event (the table's GONE AFTER). */
  readonly deleteToGoneUs?: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly byReason: Readonly<Partial<Record<EndReason, number>>>;
}

/** Deleted-pod count above which `run` prints the summary before at most `rows` table rows. */
export const DEFAULT_ROWS = 30;

/** Nearest-rank percentile of sorted values (p in 0..100). */
function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function reasonOf(p: PodSummary): EndReason {
  if (p.goneAt === undefined) {
    if (p.finalizers) return 'still terminating: finalizers';
    if (p.running) return 'still terminating: container running';
    return 'still terminating';
  }
  if (p.sigkill > 0) return 'SIGKILL at the grace deadline';
  if (p.sigterm > 0) return 'exited after SIGTERM';
  return 'no running container';
}

/** Steps that can delete pods (a `fault: nodeDeleted` too: pod GC then does; a NoExecute `taint`: the taint manager does). */
const DELETING = new Set(['delete', 'drain', 'evict', 'scale', 'apply', 'setImage', 'patch', 'fault', 'taint']);

/** One summary per step that deleted pods, in timeline order (pods deleted before any such step: a first entry without `step`). */
export function deletionSummaries(pods: readonly PodSummary[], steps: readonly StepResult[]): DeletionSummary[] {
  const deleting = steps.filter((s) => DELETING.has(s.kind)).sort((a, b) => a.startUs - b.startUs || a.index - b.index);
  const groups = new Map<number, PodSummary[]>();
  for (const p of pods) {
    if (p.deletedAt === undefined) continue;
    // The last deleting step begun at or before the deletion (binary search: steps are few, pods many).
    let lo = 0;
    let hi = deleting.length - 1;
    let at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (deleting[mid].startUs <= p.deletedAt) {
        at = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    const list = groups.get(at);
    if (list) list.push(p);
    else groups.set(at, [p]);
  }
  return [...groups.keys()]
    .sort((a, b) => a - b)
    .map((k) => {
      const s = k >= 0 ? deleting[k] : undefined;
      const list = groups.get(k)!;
      const since = s?.startUs ?? 0;
      const gone = list.filter((p) => p.goneAt !== undefined);
      const after = gone.map((p) => p.goneAt! - since).sort((a, b) => a - b);
      const lat = gone.map((p) => p.deleteToGoneUs!).sort((a, b) => a - b);
      const byReason: Partial<Record<EndReason, number>> = {};
      for (const p of list) byReason[reasonOf(p)] = (byReason[reasonOf(p)] ?? 0) + 1;
      return {
        ...(s ? { step: { index: s.index, ...(s.line !== undefined ? { line: s.line } : {}), ...(s.id ? { id: s.id } : {}), kind: s.kind, summary: s.summary, startUs: s.startUs } } : {}),
        deleted: list.length,
        gone: gone.length,
        stillTerminating: list.length - gone.length,
        ...(after.length
          ? {
              goneAfterUs: { first: after[0], p50: percentile(after, 50), p90: percentile(after, 90), p99: percentile(after, 99), last: after[after.length - 1] },
              deleteToGoneUs: { p50: percentile(lat, 50), p99: percentile(lat, 99), max: lat[lat.length - 1] },
            }
          : {}),
        byReason,
      };
    });
}

/** Durations in the summary: sub-second precision at every length (`1h6m40.213s`). */
const d = (us: number) => formatDurationPrecise(us, 3);

/**
 * The printed summary, one block per step:
 *   deleted by step at line 33 (delete): kubectl delete pod -l app=web --wait=true
 *     20000 pods deleted, 20000 gone, 0 still terminating
 *     gone after the step began: first 15.102s, p50 33m21.5s, p90 …, p99 …, last 1h6m55.1s
 *     each pod's delete → gone: p50 15.104s, p99 15.31s, max 15.9s
 *     by reason: 20000 exited after SIGTERM
 */
export function formatDeletionSummary(summaries: readonly DeletionSummary[]): string[] {
  const out: string[] = [];
  for (const s of summaries) {
    const st = s.step;
    out.push(st ? `deleted by step ${st.line !== undefined ? `at line ${st.line}` : `#${st.index}`}${st.id ? ` (${st.id})` : ''}: ${st.summary}` : 'deleted before any step that deletes (times since the run began):');
    out.push(`  ${s.deleted} pod${s.deleted === 1 ? '' : 's'} deleted, ${s.gone} gone, ${s.stillTerminating} still terminating`);
    const g = s.goneAfterUs;
    if (g) out.push(`  gone after the step began: first ${d(g.first)}, p50 ${d(g.p50)}, p90 ${d(g.p90)}, p99 ${d(g.p99)}, last ${d(g.last)}`);
    const l = s.deleteToGoneUs;
    if (l) out.push(`  each pod's delete → gone: p50 ${d(l.p50)}, p99 ${d(l.p99)}, max ${d(l.max)}`);
    const reasons = Object.entries(s.byReason).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    out.push(`  by reason: ${reasons.map(([r, n]) => `${n} ${r}`).join(', ')}`);
  }
  return out;
}

/**
 * What `run` prints about deleted pods: up to `rows` pods, the table alone (one row each, as
 * always); more, the summary and then the first `rows` rows (none with `--quiet`). The summary
 * shows with `--quiet` too: it is a few lines whatever the size.
 */
export function deletedPodLines(r: Pick<RunReport, 'pods' | 'summary'>, rows: number, quiet: boolean): string[] {
  const deleted = r.pods.filter((p) => p.deletedAt !== undefined).length;
  if (deleted <= rows) return quiet ? [] : formatPodTable(r.pods);
  const table = quiet ? [] : formatPodTable(r.pods, rows);
  return [...formatDeletionSummary(r.summary), ...(table.length ? ['', ...table] : [])];
}
