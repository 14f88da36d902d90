/**
 * The liveness condition of an explored run (the healing phase must converge, as in
 * FoundationDB's and TigerBeetle's simulators): once every fault is over (`healAfter`), each pod
 * that got a deletionTimestamp is gone from the API, and no container of a gone pod still runs,
 * within `livenessBudget` — measured from healAfter, or from the deletion if it came later. Pods
 * whose deadline lies past the end of the run are not judged.
 */
import { US_PER_SECOND } from '@podsim/api';
import type { TraceModel } from '../checkers/model.js';
import type { Violation } from '../checkers/invariants.js';

/** The checker id of the liveness condition (groups failing seeds like the §14 invariants). */
export const LIVENESS = 'liveness';

const sec = (us: number) => `${(us / US_PER_SECOND).toFixed(3).replace(/\.?0+$/, '')}s`;

export function checkLiveness(m: TraceModel, healAfterUs: number, budgetUs: number): Violation[] {
  const out: Violation[] = [];
  for (const [uid, writes] of m.podWrites) {
    const last = writes[writes.length - 1];
    const who = `pod ${last.namespace ?? ''}/${last.name} (uid ${uid})`;
    const marked = writes.find((w) => w.deletionTimestamp !== undefined);
    const gone = writes.find((w) => w.event === 'DELETED');
    if (marked) {
      const deadline = Math.max(marked.t, healAfterUs) + budgetUs;
      if (deadline <= m.endUs && (gone === undefined || gone.t > deadline)) {
        out.push({
          invariant: LIVENESS,
          t: deadline,
          message: `${who} was still Terminating at ${sec(deadline)}: deletionTimestamp set at ${sec(marked.t)}, healing began at ${sec(healAfterUs)}, budget ${sec(budgetUs)}${gone ? ` (gone only at ${sec(gone.t)})` : ''}`,
        });
      }
    }
    if (gone) {
      const deadline = Math.max(gone.t, healAfterUs) + budgetUs;
      if (deadline > m.endUs) continue;
      for (const p of m.runningAt(uid, deadline)) {
        out.push({
          invariant: LIVENESS,
          t: deadline,
          message: `container ${p.container} (${p.containerId}) of ${who} still ran on ${p.runtime} at ${sec(deadline)}, ${sec(deadline - gone.t)} after the pod was gone from the API`,
        });
      }
    }
  }
  return out.sort((a, b) => a.t - b.t);
}
