/**
 * The mass-deletion summary (src/report/summary.ts) on hand-made pod summaries: nearest-rank
 * percentiles, attribution of each deletion to the last deleting step begun by then, pods not
 * gone counted (never folded into the percentiles), and the printed lines.
 */
import test from 'ava';
import { deletionSummaries, formatDeletionSummary } from '../src/report/summary.js';
import type { PodSummary } from '../src/report/report.js';
import type { StepResult } from '../src/run.js';

const S = 1_000_000;

function pod(i: number, deletedAt: number | undefined, goneAt: number | undefined, extra: Partial<PodSummary> = {}): PodSummary {
  return {
    name: `p${i}`,
    uid: `u${i}`,
    sigterm: 1,
    sigkill: 0,
    exitCodes: [0],
    ...(deletedAt !== undefined ? { deletedAt } : {}),
    ...(goneAt !== undefined ? { goneAt } : {}),
    ...(deletedAt !== undefined && goneAt !== undefined ? { deleteToGoneUs: goneAt - deletedAt } : {}),
    ...extra,
  };
}

const step = (index: number, kind: string, startUs: number, id?: string): StepResult => ({ index, line: 10 + index, kind, summary: `${kind} #${index}`, startUs, endUs: startUs, ok: true, ...(id ? { id } : {}) });

test('percentiles are nearest-rank over the pods that are gone, measured from the step that deleted them', (t) => {
  // Ten pods deleted by the step at 100 s, gone 1 s … 10 s after it; one more never gone.
  const pods = [...Array.from({ length: 10 }, (_, i) => pod(i, 100 * S + i, 100 * S + (i + 1) * S)), pod(10, 100 * S + 20, undefined, { running: true })];
  const [s] = deletionSummaries(pods, [step(0, 'apply', 0), step(1, 'wait', 50 * S), step(2, 'delete', 100 * S, 'del')]);
  t.is(s.step?.id, 'del');
  t.is(s.deleted, 11);
  t.is(s.gone, 10);
  t.is(s.stillTerminating, 1);
  t.deepEqual(s.goneAfterUs, { first: 1 * S, p50: 5 * S, p90: 9 * S, p99: 10 * S, last: 10 * S });
  t.deepEqual(s.byReason, { 'exited after SIGTERM': 10, 'still terminating: container running': 1 });
  t.deepEqual(formatDeletionSummary([s]), [
    'deleted by step at line 12 (del): delete #2',
    '  11 pods deleted, 10 gone, 1 still terminating',
    '  gone after the step began: first 1s, p50 5s, p90 9s, p99 10s, last 10s',
    "  each pod's delete → gone: p50 5s, p99 10s, max 10s",
    '  by reason: 10 exited after SIGTERM, 1 still terminating: container running',
  ]);
});

test('each deletion goes to the last deleting step begun by then; deletions before any go first, from the run start', (t) => {
  const pods = [pod(0, 5 * S, 6 * S), pod(1, 20 * S, 21 * S, { sigkill: 1 }), pod(2, 31 * S, 95 * S + 500_000), pod(3, undefined, undefined)];
  const out = deletionSummaries(pods, [step(0, 'drain', 10 * S), step(1, 'sleep', 25 * S), step(2, 'scale', 30 * S)]);
  t.deepEqual(
    out.map((s) => [s.step?.kind, s.deleted, s.goneAfterUs?.last]),
    [
      [undefined, 1, 6 * S],
      ['drain', 1, 11 * S],
      ['scale', 1, 65.5 * S],
    ],
  );
  t.deepEqual(out[1].byReason, { 'SIGKILL at the grace deadline': 1 });
  // Past a minute the summary keeps the fraction.
  t.regex(formatDeletionSummary([out[2]])[2], /last 1m5\.5s$/);
  t.is(formatDeletionSummary([out[0]])[0], 'deleted before any step that deletes (times since the run began):');
});
