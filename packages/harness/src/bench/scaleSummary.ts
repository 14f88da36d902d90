/**
 * `podsim bench scale`: the order of its runs and the summary of their figures. Sizes are run
 * interleaved (round 1 ascending, round 2 descending, …), so that a change of the machine's load
 * during the bench falls on every size instead of on the last ones; each size's per-pod cost is
 * the median of its repeats, reported with its spread and the load average the runs saw. Memory
 * per added pod is the slope between consecutive sizes (fixed costs — semi-spaces, threads,
 * modules — cancel out), for the whole process's peak RSS and for the host threads' heap alone.
 */

/** The figures of one storm run that the summary reads (a subset of `BenchFigures`). */
export interface ScaleRun {
  readonly pods: number;
  readonly deleteWallSeconds: number;
  readonly wallSeconds: number;
  readonly peakRssBytes: number;
  readonly hostHeapAtDeleteBytes: number;
  /** 1-minute load average when the run started. */
  readonly loadAvgAtStart: number;
}

export interface ScaleSize {
  readonly pods: number;
  readonly repeats: number;
  /** Median over the repeats of deletion-phase wall µs per pod. */
  readonly deleteWallUsPerPod: number;
  readonly deleteWallUsPerPodMin: number;
  readonly deleteWallUsPerPodMax: number;
  /** (max − min) ÷ median of the repeats; 0 for a single run. */
  readonly spread: number;
  /** This size's median ÷ the first size's. */
  readonly vsFirst: number;
  /** Median of whole-run wall µs per pod. */
  readonly wallUsPerPod: number;
  /** Lowest and highest 1-minute load average at the start of this size's runs. */
  readonly loadAvg: readonly [number, number];
  readonly peakRssBytes: number;
  readonly hostHeapAtDeleteBytes: number;
  /** (peak RSS − the previous size's) ÷ (pods − the previous size's), medians; absent for the first size. */
  readonly rssSlopeBytesPerPod?: number;
  /** The same slope for the host threads' heap at the delete instant. */
  readonly hostHeapSlopeBytesPerPod?: number;
}

/** Run order: `repeat` rounds over `sizes`, ascending in even rounds and descending in odd ones. */
export function scaleOrder(sizes: readonly number[], repeat: number): number[] {
  const order: number[] = [];
  for (let r = 0; r < repeat; r++) order.push(...(r % 2 === 0 ? sizes : [...sizes].reverse()));
  return order;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const r1 = (x: number) => Math.round(x * 10) / 10;
const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** One row per size, in the order of `sizes`; every size must have at least one run. */
export function summarizeScale(sizes: readonly number[], runs: readonly ScaleRun[]): ScaleSize[] {
  const rows: ScaleSize[] = [];
  for (const pods of sizes) {
    const mine = runs.filter((r) => r.pods === pods);
    if (mine.length === 0) throw new Error(`bench scale: no run of ${pods} pods`);
    const us = mine.map((r) => (r.deleteWallSeconds / pods) * 1e6);
    const med = median(us);
    const loads = mine.map((r) => r.loadAvgAtStart);
    const prev = rows[rows.length - 1];
    const peakRssBytes = median(mine.map((r) => r.peakRssBytes));
    const hostHeapAtDeleteBytes = median(mine.map((r) => r.hostHeapAtDeleteBytes));
    const dPods = prev ? pods - prev.pods : 0;
    rows.push({
      pods,
      repeats: mine.length,
      deleteWallUsPerPod: r1(med),
      deleteWallUsPerPodMin: r1(Math.min(...us)),
      deleteWallUsPerPodMax: r1(Math.max(...us)),
      spread: med > 0 ? r3((Math.max(...us) - Math.min(...us)) / med) : 0,
      vsFirst: rows.length > 0 && rows[0].deleteWallUsPerPod > 0 ? r3(med / rows[0].deleteWallUsPerPod) : 1,
      wallUsPerPod: r1(median(mine.map((r) => (r.wallSeconds / pods) * 1e6))),
      loadAvg: [Math.min(...loads), Math.max(...loads)],
      peakRssBytes,
      hostHeapAtDeleteBytes,
      ...(prev && dPods !== 0
        ? {
            rssSlopeBytesPerPod: Math.round((peakRssBytes - prev.peakRssBytes) / dPods),
            hostHeapSlopeBytesPerPod: Math.round((hostHeapAtDeleteBytes - prev.hostHeapAtDeleteBytes) / dPods),
          }
        : {}),
    });
  }
  return rows;
}
