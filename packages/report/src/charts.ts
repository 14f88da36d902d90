/**
 * The data each chart of the report gets, reduced from {@link ReportInput}: pure functions, no
 * DOM, so that tests can pin what a reader will see (C02's preStop span ends before SIGTERM, the
 * SIGKILL 30 s later). Every reduction is bounded — at most a few thousand marks per chart
 * whatever the run's size — and says when it aggregated or sampled (the `note` fields the page
 * prints under the chart). Chart times are virtual seconds (floats); inputs are virtual µs.
 */
import { deriveStream } from '@podsim/api';
import { TRAFFIC_OUTCOMES, type ExploreSection, type KillPath, type PodLife, type ThrottleWait, type TrafficExposure, type TrafficOutcome, type TrafficSourceResults } from './input.js';

const S = 1_000_000;
const sec = (us: number) => us / S;

/** Pod states of the pods-over-time chart, in stacking order (`Completed`: Succeeded / Failed). */
export const POD_STATES = ['Pending', 'ContainerCreating', 'Running', 'Completed', 'Terminating', 'gone'] as const;
export type PodState = (typeof POD_STATES)[number];

/** The state of a pod at virtual µs t (undefined before it was created). */
export function podStateAt(p: PodLife, t: number): PodState | undefined {
  if (p.goneUs !== undefined && p.goneUs <= t) return 'gone';
  if (p.deletedUs !== undefined && p.deletedUs <= t) return 'Terminating';
  if (p.finishedUs !== undefined && p.finishedUs <= t) return 'Completed';
  if (p.runningUs !== undefined && p.runningUs <= t) return 'Running';
  if (p.scheduledUs !== undefined && p.scheduledUs <= t) return 'ContainerCreating';
  if (p.createdUs <= t) return 'Pending';
  return undefined;
}

export interface StatePoint {
  readonly tS: number;
  readonly state: PodState;
  readonly count: number;
}

export interface PodStateChart {
  /** One point per (time, state), every state at every time (a stacked step area). */
  readonly points: readonly StatePoint[];
  /** The states that ever had a pod (the legend). */
  readonly states: readonly PodState[];
  readonly note?: string;
}

/**
 * Pods per state against virtual time. Exact (a point at every change) up to `maxTimes`
 * distinct change times; beyond, the counts at `maxTimes` evenly spaced instants (stated).
 */
export function podStateChart(pods: readonly PodLife[], maxTimes = 1500): PodStateChart {
  // Per state, the instants pods entered and left it (typed arrays, sorted: a 100k-pod bench has
  // ~500k changes). The count of a state at t = entries ≤ t − exits ≤ t.
  const enter = new Map<PodState, number[]>(POD_STATES.map((s) => [s, []]));
  const leave = new Map<PodState, number[]>(POD_STATES.map((s) => [s, []]));
  const all: number[] = [];
  for (const p of pods) {
    const times = [p.createdUs, p.scheduledUs, p.runningUs, p.finishedUs, p.deletedUs, p.goneUs].filter((t): t is number => t !== undefined).sort((a, b) => a - b);
    let prev: PodState | undefined;
    for (const t of times) {
      const s = podStateAt(p, t)!;
      if (s === prev) continue;
      if (prev) leave.get(prev)!.push(t);
      enter.get(s)!.push(t);
      all.push(t);
      prev = s;
    }
  }
  const sorted = (xs: number[]) => Float64Array.from(xs).sort();
  const E = POD_STATES.map((s) => sorted(enter.get(s)!));
  const L = POD_STATES.map((s) => sorted(leave.get(s)!));
  const times = sorted(all);
  let distinct = 0;
  for (let i = 0; i < times.length; i++) if (i === 0 || times[i] !== times[i - 1]) distinct++;
  let at: number[];
  let note: string | undefined;
  if (distinct <= maxTimes) {
    // From virtual time 0 (nothing yet, unless pods were created at 0).
    at = times.length > 0 && times[0] === 0 ? [] : [0];
    for (let i = 0; i < times.length; i++) if (i === 0 || times[i] !== times[i - 1]) at.push(times[i]);
  } else {
    const end = times[times.length - 1];
    at = Array.from({ length: maxTimes + 1 }, (_, k) => Math.round((end * k) / maxTimes));
    note = `${pods.length.toLocaleString('en-US')} pods changed state at ${distinct.toLocaleString('en-US')} distinct instants: counts shown at ${maxTimes + 1} evenly spaced instants (every ${formatSeconds(end / maxTimes / S)}).`;
  }
  const ei = POD_STATES.map(() => 0);
  const li = POD_STATES.map(() => 0);
  const points: StatePoint[] = [];
  for (const t of at) {
    POD_STATES.forEach((state, k) => {
      while (ei[k] < E[k].length && E[k][ei[k]] <= t) ei[k]++;
      while (li[k] < L[k].length && L[k][li[k]] <= t) li[k]++;
      points.push({ tS: sec(t), state, count: ei[k] - li[k] });
    });
  }
  return { points, states: POD_STATES.filter((_, k) => E[k].length > 0), ...(note ? { note } : {}) };
}

/** Nearest-rank percentile of sorted values (p in 0..100), as report/summary.ts prints them. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export interface LatencyChart {
  /** Pods whose DELETE was accepted and that were gone. */
  readonly count: number;
  /** Deleted, never gone (not in the histogram). */
  readonly notGone: number;
  /** Seconds; undefined without a gone pod. */
  readonly marks?: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number };
  readonly bins: ReadonlyArray<{ readonly x0: number; readonly x1: number; readonly count: number }>;
  /** (latency s, fraction of pods gone within it), ascending. */
  readonly cdf: ReadonlyArray<{ readonly latS: number; readonly fraction: number }>;
  readonly note?: string;
}

/** A "nice" bin width (1, 2 or 5 × 10^k) for `span` over about `bins` bins. */
function niceStep(span: number, bins: number): number {
  const raw = span / bins;
  if (!(raw > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

/**
 * Deletion latency: DELETE accepted (deletionTimestamp first set) → DELETED, per pod; a
 * histogram of nice-width bins and a CDF (every pod up to `maxCdf`, else `maxCdf` quantiles).
 */
export function latencyChart(pods: readonly PodLife[], maxCdf = 2000): LatencyChart {
  const lat: number[] = [];
  let notGone = 0;
  for (const p of pods) {
    if (p.deletedUs === undefined) continue;
    if (p.goneUs === undefined) notGone++;
    else lat.push(p.goneUs - p.deletedUs);
  }
  lat.sort((a, b) => a - b);
  if (lat.length === 0) return { count: 0, notGone, bins: [], cdf: [] };
  const secs = lat.map(sec);
  const lo = secs[0];
  const hi = secs[secs.length - 1];
  const step = niceStep(hi - lo, Math.min(60, Math.max(10, Math.ceil(Math.sqrt(secs.length)))));
  const start = Math.floor(lo / step) * step;
  const nBins = Math.max(1, Math.floor((hi - start) / step) + 1);
  const counts = new Array<number>(nBins).fill(0);
  for (const v of secs) counts[Math.min(nBins - 1, Math.floor((v - start) / step))]++;
  const bins = counts.map((count, i) => ({ x0: round(start + i * step), x1: round(start + (i + 1) * step), count }));
  const n = secs.length;
  let cdf: Array<{ latS: number; fraction: number }>;
  let note: string | undefined;
  if (n <= maxCdf) cdf = secs.map((latS, i) => ({ latS, fraction: (i + 1) / n }));
  else {
    cdf = [];
    for (let k = 1; k <= maxCdf; k++) cdf.push({ latS: secs[Math.ceil((k / maxCdf) * n) - 1], fraction: k / maxCdf });
    note = `CDF drawn through ${maxCdf} quantiles of ${n.toLocaleString('en-US')} pods; the percentiles are exact.`;
  }
  return {
    count: n,
    notGone,
    marks: { p50: sec(percentile(lat, 50)), p90: sec(percentile(lat, 90)), p99: sec(percentile(lat, 99)), max: sec(lat[n - 1]) },
    bins,
    cdf,
    ...(note ? { note } : {}),
  };
}

const round = (v: number) => Math.round(v * 1e9) / 1e9;

/** Pods of the kill-path chart: every deleted pod up to the bound, else a seeded sample (in creation order). */
export interface KillPathChoice {
  readonly pods: readonly string[];
  readonly note: string;
  /** Names asked for with `chosen` that no deleted pod has. */
  readonly unknown: readonly string[];
}

/** Default number of pods drawn in the kill-path chart. */
export const KILL_PATH_BOUND = 40;

/**
 * Chooses the pods whose kill paths the report draws: `chosen` (user-named) if given, else all
 * `deleted` pods (names, in creation order) up to `bound`, else `bound` of them drawn with the
 * run's seed (stream `report:killPaths`), kept in creation order.
 */
export function chooseKillPathPods(deleted: readonly string[], seed: number, bound = KILL_PATH_BOUND, chosen?: readonly string[]): KillPathChoice {
  if (chosen && chosen.length > 0) {
    const have = new Set(deleted);
    const pods = chosen.filter((n) => have.has(n));
    return { pods, unknown: chosen.filter((n) => !have.has(n)), note: `the ${pods.length} pod${pods.length === 1 ? '' : 's'} named by --report-pods, of ${deleted.length} deleted` };
  }
  if (deleted.length <= bound) return { pods: [...deleted], unknown: [], note: `every deleted pod (${deleted.length})` };
  const rng = deriveStream(seed, 'report:killPaths');
  const idx = deleted.map((_, i) => i);
  for (let i = 0; i < bound; i++) {
    const j = i + rng.int(idx.length - i);
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  const pick = idx.slice(0, bound).sort((a, b) => a - b);
  return {
    pods: pick.map((i) => deleted[i]),
    unknown: [],
    note: `${bound} of ${deleted.length.toLocaleString('en-US')} deleted pods, a sample drawn with seed ${seed} (name pods with --report-pods a,b,c)`,
  };
}

export interface GanttChart {
  /** Pods top to bottom (by DELETE time). */
  readonly rows: readonly string[];
  readonly spans: ReadonlyArray<{ readonly pod: string; readonly step: string; readonly lane: string; readonly beginS: number; readonly endS: number; readonly unfinished: boolean; readonly detail: string }>;
  readonly marks: ReadonlyArray<{ readonly pod: string; readonly step: string; readonly lane: string; readonly tS: number; readonly detail: string }>;
}

/**
 * The per-pod kill-path Gantt: one row per pod, spans as bars, instants as ticks; `lane` is the
 * step plus its container (`preStop app`). Spans still open at `endUs` end there, unfinished.
 */
export function ganttChart(paths: readonly KillPath[], endUs: number): GanttChart {
  const sorted = [...paths].sort((a, b) => a.deleteUs - b.deleteUs);
  const lane = (step: string, container?: string) => (container ? `${step} ${container}` : step);
  return {
    rows: sorted.map((p) => p.pod),
    spans: sorted.flatMap((p) =>
      p.spans.map((s) => ({
        pod: p.pod,
        step: s.step,
        lane: lane(s.step, s.container),
        beginS: sec(s.beginUs),
        endS: sec(s.endUs ?? Math.max(endUs, s.beginUs)),
        unfinished: s.endUs === undefined,
        detail: s.detail ?? '',
      })),
    ),
    marks: sorted.flatMap((p) => p.marks.map((m) => ({ pod: p.pod, step: m.step, lane: lane(m.step, m.container), tS: sec(m.t), detail: m.detail ?? '' }))),
  };
}

export interface ThrottleChart {
  readonly points: ReadonlyArray<{ readonly series: string; readonly tS: number; readonly waiting: number }>;
  /** Per series, in legend order: requests that waited, the longest wait (s), the bucket. */
  readonly series: ReadonlyArray<{ readonly name: string; readonly waits: number; readonly maxWaitS: number; readonly totalWaitS: number; readonly qps?: number; readonly burst?: number }>;
  readonly note?: string;
}

/**
 * Requests waiting on a client-side token bucket over time, one series per client (`actor
 * client`): +1 when a request starts waiting, −1 when it goes. The `maxSeries − 1` clients that
 * waited longest in total are drawn alone, the rest summed as one series (stated); a series with
 * more than `maxPoints` changes is drawn at `maxPoints` instants, each the peak of its interval.
 */
export function throttleChart(waits: readonly ThrottleWait[], filter: (w: ThrottleWait) => boolean, maxSeries = 8, maxPoints = 800): ThrottleChart {
  // Grouped by actor, then client (no key string built per wait: 400k of them at 100k pods).
  const byActor = new Map<string, Map<string, ThrottleWait[]>>();
  for (const w of waits) {
    if (!filter(w)) continue;
    let a = byActor.get(w.actor);
    if (!a) byActor.set(w.actor, (a = new Map()));
    const g = a.get(w.client);
    if (g) g.push(w);
    else a.set(w.client, [w]);
  }
  const groups = new Map<string, ThrottleWait[]>();
  for (const [actor, clients] of byActor) for (const [client, ws] of clients) groups.set(client === actor || actor === '' ? client : `${actor} ${client}`, ws);
  const total = (ws: readonly ThrottleWait[]) => ws.reduce((a, w) => a + w.waitUs, 0);
  const totals = new Map([...groups].map(([k, ws]) => [k, total(ws)]));
  let keys = [...groups.keys()].sort((a, b) => totals.get(b)! - totals.get(a)! || (a < b ? -1 : 1));
  let note: string | undefined;
  if (keys.length > maxSeries) {
    const rest = keys.slice(maxSeries - 1);
    const merged = rest.flatMap((k) => groups.get(k)!);
    const name = `${rest.length} other clients (summed)`;
    groups.set(name, merged);
    keys = [...keys.slice(0, maxSeries - 1), name];
    note = `${rest.length + maxSeries - 1} clients waited: the ${maxSeries - 1} that waited longest in total are drawn alone, the other ${rest.length} summed.`;
  }
  const points: Array<{ series: string; tS: number; waiting: number }> = [];
  let downsampled = false;
  for (const k of keys) {
    // Arrivals (+1) and departures (−1) as sorted typed arrays, merged; departures first at equal
    // instants: a token freed at t serves a request of t. (400k waits: one comparator sort of
    // tuples took most of a 100k-pod report's render time.)
    const ws = groups.get(k)!;
    const arr = Float64Array.from(ws, (w) => w.t).sort();
    const dep = Float64Array.from(ws, (w) => w.t + w.waitUs).sort();
    const stepT: number[] = [0];
    const stepV: number[] = [0];
    let n = 0;
    for (let i = 0, j = 0; i < arr.length || j < dep.length; ) {
      const t = Math.min(i < arr.length ? arr[i] : Infinity, j < dep.length ? dep[j] : Infinity);
      for (; j < dep.length && dep[j] === t; j++) n--;
      for (; i < arr.length && arr[i] === t; i++) n++;
      stepT.push(t);
      stepV.push(n);
    }
    if (stepT.length <= maxPoints) for (let i = 0; i < stepT.length; i++) points.push({ series: k, tS: sec(stepT[i]), waiting: stepV[i] });
    else {
      downsampled = true;
      const end = stepT[stepT.length - 1];
      let i = 0;
      for (let b = 0; b < maxPoints; b++) {
        const hi = (end * (b + 1)) / maxPoints;
        let peak = i > 0 ? stepV[i - 1] : 0;
        while (i < stepT.length && stepT[i] <= hi) peak = Math.max(peak, stepV[i++]);
        points.push({ series: k, tS: sec((end * b) / maxPoints), waiting: peak });
      }
      points.push({ series: k, tS: sec(end), waiting: stepV[stepV.length - 1] });
    }
  }
  if (downsampled) note = `${note ? `${note} ` : ''}Busy series are drawn at ${maxPoints} intervals, each at its peak.`;
  return {
    points,
    series: keys.map((k) => {
      const ws = groups.get(k)!;
      return {
        name: k,
        waits: ws.length,
        maxWaitS: sec(ws.reduce((a, w) => Math.max(a, w.waitUs), 0)),
        totalWaitS: sec(total(ws)),
        ...(ws[0].qps !== undefined ? { qps: ws[0].qps } : {}),
        ...(ws[0].burst !== undefined ? { burst: ws[0].burst } : {}),
      };
    }),
    ...(note ? { note } : {}),
  };
}

export interface NodeDrainChart {
  /** One bar per node (longest drain first) up to `maxBars` nodes. */
  readonly nodes: ReadonlyArray<{ readonly node: string; readonly pods: number; readonly drainS: number; readonly notGone: number }>;
  /** Drain-time histogram across all nodes (always). */
  readonly bins: ReadonlyArray<{ readonly x0: number; readonly x1: number; readonly count: number }>;
  readonly total: number;
  readonly note?: string;
}

/**
 * Per-node drain time of a bench: from the first DELETE accepted among a node's pods to its last
 * pod gone. Bars for the `maxBars` slowest nodes (all when fewer), and a histogram over all.
 */
export function nodeDrainChart(pods: readonly PodLife[], maxBars = 60): NodeDrainChart {
  const by = new Map<string, { first: number; last: number; pods: number; notGone: number }>();
  for (const p of pods) {
    if (p.deletedUs === undefined || p.node === undefined) continue;
    const d = by.get(p.node) ?? { first: Infinity, last: -Infinity, pods: 0, notGone: 0 };
    d.first = Math.min(d.first, p.deletedUs);
    if (p.goneUs === undefined) d.notGone++;
    else d.last = Math.max(d.last, p.goneUs);
    d.pods++;
    by.set(p.node, d);
  }
  const all = [...by.entries()]
    .map(([node, d]) => ({ node, pods: d.pods, drainS: d.last >= d.first ? sec(d.last - d.first) : 0, notGone: d.notGone }))
    .sort((a, b) => b.drainS - a.drainS || (a.node < b.node ? -1 : 1));
  const secs = all.map((n) => n.drainS).sort((a, b) => a - b);
  let bins: Array<{ x0: number; x1: number; count: number }> = [];
  if (secs.length > 0) {
    const step = niceStep(secs[secs.length - 1] - secs[0], Math.min(40, Math.max(5, Math.ceil(Math.sqrt(secs.length)))));
    const start = Math.floor(secs[0] / step) * step;
    const nb = Math.max(1, Math.floor((secs[secs.length - 1] - start) / step) + 1);
    const c = new Array<number>(nb).fill(0);
    for (const v of secs) c[Math.min(nb - 1, Math.floor((v - start) / step))]++;
    bins = c.map((count, i) => ({ x0: round(start + i * step), x1: round(start + (i + 1) * step), count }));
  }
  return {
    nodes: all.slice(0, maxBars),
    bins,
    total: all.length,
    ...(all.length > maxBars ? { note: `${all.length.toLocaleString('en-US')} nodes: bars for the ${maxBars} slowest; the histogram covers all.` } : {}),
  };
}

export interface TrafficOverTimeChart {
  /** Stacked bars: requests of `source` sent in [x0S, x1S) that ended as `outcome` (no bar for 0). */
  readonly bars: ReadonlyArray<{ readonly source: string; readonly outcome: TrafficOutcome; readonly x0S: number; readonly x1S: number; readonly count: number }>;
  /** Sources top to bottom (one facet each). */
  readonly sources: readonly string[];
  /** The outcomes that occurred (the legend), in stacking order. */
  readonly outcomes: readonly TrafficOutcome[];
  /** How the requests were bucketed, for the page (always set: the bucket is part of what the chart means). */
  readonly note: string;
}

/**
 * Requests over virtual time by outcome, one facet per source. A source's buckets (as the
 * harness counted them) are merged k at a time so that it draws at most `maxBuckets` bars per
 * outcome: 100 req/s for 10 minutes (60k requests) is ≤ 4 × `maxBuckets` rects, not 60k marks.
 */
export function trafficOverTimeChart(sources: readonly TrafficSourceResults[], maxBuckets = 300): TrafficOverTimeChart {
  const bars: Array<TrafficOverTimeChart['bars'][number]> = [];
  const widths: string[] = [];
  const seen = new Set<TrafficOutcome>();
  for (const src of sources) {
    const { startUs, bucketUs, counts } = src.overTime;
    const n = Math.max(...TRAFFIC_OUTCOMES.map((o) => counts[o].length));
    const k = Math.max(1, Math.ceil(n / maxBuckets));
    const widthUs = k * bucketUs;
    widths.push(`${src.id}: ${formatSeconds(sec(widthUs))} (${Math.ceil(n / k)} buckets)`);
    for (let b = 0; b * k < n; b++) {
      const x0S = sec(startUs + b * widthUs);
      const x1S = sec(startUs + Math.min((b + 1) * k, n) * bucketUs);
      for (const outcome of TRAFFIC_OUTCOMES) {
        let count = 0;
        for (let i = b * k; i < Math.min(n, (b + 1) * k); i++) count += counts[outcome][i] ?? 0;
        if (count === 0) continue;
        seen.add(outcome);
        bars.push({ source: src.id, outcome, x0S, x1S, count });
      }
    }
  }
  const requests = sources.reduce((a, s) => a + s.requests, 0);
  const same = new Set(widths.map((w) => w.replace(/^[^:]*: /, ''))).size === 1;
  const note = `Each bar counts the requests sent in one bucket of virtual time, by when they were sent (${requests.toLocaleString('en-US')} requests): ${same && widths.length > 0 ? `buckets of ${widths[0].replace(/^[^:]*: /, '')}` : widths.join('; ')}.`;
  return { bars, sources: sources.map((s) => s.id), outcomes: TRAFFIC_OUTCOMES.filter((o) => seen.has(o)), note };
}

/** Label of the failed requests no pod was chosen for (REJECT, no rules yet). */
export const NO_POD = '(no pod: REJECT / no rules)';

export interface TrafficFailuresChart {
  /** Bars per (row, source); rows top to bottom in `rows`. */
  readonly bars: ReadonlyArray<{ readonly row: string; readonly source: string; readonly failed: number }>;
  readonly rows: readonly string[];
  readonly sources: readonly string[];
  readonly total: number;
  readonly note?: string;
}

/**
 * Failed requests by pod (`by: 'byPod'`) or by client node (`'byNode'`), one bar per source
 * stacked per row, most failures first; beyond `maxRows` rows the rest are summed into one row (stated).
 */
export function trafficFailuresChart(sources: readonly TrafficSourceResults[], by: 'byPod' | 'byNode', maxRows = 40): TrafficFailuresChart {
  const perRow = new Map<string, Map<string, number>>();
  for (const src of sources) {
    for (const [key, n] of Object.entries(src[by])) {
      if (!n) continue;
      const row = key === '' ? NO_POD : key;
      const m = perRow.get(row) ?? new Map<string, number>();
      m.set(src.id, (m.get(src.id) ?? 0) + n);
      perRow.set(row, m);
    }
  }
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  let rows = [...perRow.keys()].sort((a, b) => sum(perRow.get(b)!) - sum(perRow.get(a)!) || (a < b ? -1 : 1));
  let note: string | undefined;
  if (rows.length > maxRows) {
    const rest = rows.slice(maxRows - 1);
    const merged = new Map<string, number>();
    for (const r of rest) for (const [s, n] of perRow.get(r)!) merged.set(s, (merged.get(s) ?? 0) + n);
    const name = `${rest.length} other ${by === 'byPod' ? 'pods' : 'nodes'} (summed)`;
    perRow.set(name, merged);
    rows = [...rows.slice(0, maxRows - 1), name];
    note = `${rest.length + maxRows - 1} ${by === 'byPod' ? 'pods' : 'nodes'} had failed requests: the ${maxRows - 1} with the most are drawn alone, the other ${rest.length} summed.`;
  }
  const bars = rows.flatMap((row) => [...perRow.get(row)!].map(([source, failed]) => ({ row, source, failed })));
  // The legend lists the sources that failed at all (a clean source has no bar to name).
  const failing = new Set(bars.map((b) => b.source));
  return { bars, rows, sources: sources.map((s) => s.id).filter((s) => failing.has(s)), total: bars.reduce((a, b) => a + b.failed, 0), ...(note ? { note } : {}) };
}

export interface ExposureChart {
  /** Pods top to bottom (by listener close, else first rule removal). */
  readonly rows: readonly string[];
  /** Exposure windows: listener closed → last node's rule removed, where that is later (s). */
  readonly windows: ReadonlyArray<{ readonly pod: string; readonly beginS: number; readonly endS: number; readonly failed: number }>;
  /** The instant each pod's listener closed. */
  readonly closes: ReadonlyArray<{ readonly pod: string; readonly tS: number }>;
  /** Each client node's rule removal per pod (a tick each). */
  readonly removals: ReadonlyArray<{ readonly pod: string; readonly node: string; readonly tS: number }>;
  /** Earliest and latest instant drawn (s), to share the axis with the kill-path chart. */
  readonly extent?: readonly [number, number];
  readonly note: string;
}

/**
 * The per-pod exposure-window Gantt (spec §11.3): a bar from the listener closing to the last
 * client node's rules dropping the pod, a tick at each node's rule removal and one at the close.
 * A pod whose listener closed after every node had dropped it has no bar (no window). At most
 * `maxRows` pods: beyond, those with the most failed requests, then the widest windows (stated).
 */
export function exposureChart(exposure: readonly TrafficExposure[], maxRows = KILL_PATH_BOUND): ExposureChart {
  const last = (e: TrafficExposure) => Math.max(...Object.values(e.ruleRemovedUs));
  const first = (e: TrafficExposure) => Math.min(...Object.values(e.ruleRemovedUs));
  const windowUs = (e: TrafficExposure) => (e.listenerClosedUs === undefined ? 0 : Math.max(0, last(e) - e.listenerClosedUs));
  let shown = exposure.filter((e) => Object.keys(e.ruleRemovedUs).length > 0);
  const exposed = shown.filter((e) => windowUs(e) > 0).length;
  let note = `${shown.length} pod${shown.length === 1 ? '' : 's'} left the rules, ${exposed} with an exposure window`;
  if (shown.length > maxRows) {
    shown = [...shown].sort((a, b) => b.failedRequests - a.failedRequests || windowUs(b) - windowUs(a) || (a.pod < b.pod ? -1 : 1)).slice(0, maxRows);
    note += `: the ${maxRows} with the most failed requests, then the widest windows, are drawn`;
  }
  const key = (e: TrafficExposure) => e.listenerClosedUs ?? first(e);
  shown = [...shown].sort((a, b) => key(a) - key(b) || (a.pod < b.pod ? -1 : 1));
  const windows = shown.filter((e) => windowUs(e) > 0).map((e) => ({ pod: e.pod, beginS: sec(e.listenerClosedUs!), endS: sec(last(e)), failed: e.failedRequests }));
  const closes = shown.filter((e) => e.listenerClosedUs !== undefined).map((e) => ({ pod: e.pod, tS: sec(e.listenerClosedUs!) }));
  const removals = shown.flatMap((e) => Object.entries(e.ruleRemovedUs).map(([node, t]) => ({ pod: e.pod, node, tS: sec(t) })));
  const times = [...closes.map((c) => c.tS), ...removals.map((r) => r.tS)];
  return {
    rows: shown.map((e) => e.pod),
    windows,
    closes,
    removals,
    ...(times.length ? { extent: [Math.min(...times), Math.max(...times)] as const } : {}),
    note: `${note}.`,
  };
}

/** Earliest and latest instant of the kill-path chart (s), to share its axis with the exposure chart. */
export function ganttExtent(g: GanttChart): readonly [number, number] | undefined {
  const times = [...g.spans.flatMap((s) => [s.beginS, s.endS]), ...g.marks.map((m) => m.tS)];
  return times.length ? [Math.min(...times), Math.max(...times)] : undefined;
}

export interface ExploreChart {
  readonly outcomes: ReadonlyArray<{ readonly outcome: string; readonly seeds: number }>;
  /** Failing seeds by their first violated invariant (or failed check), most first. */
  readonly byViolation: ReadonlyArray<{ readonly violation: string; readonly seeds: number; readonly example: number }>;
  readonly failing: ExploreSection['seeds'];
}

/** The exploration's charts: seeds per outcome, failures by first violation, and the failing seeds. */
export function exploreChart(x: ExploreSection): ExploreChart {
  const outcomes = new Map<string, number>();
  const viol = new Map<string, { seeds: number; example: number }>();
  for (const s of x.seeds) {
    outcomes.set(s.outcome, (outcomes.get(s.outcome) ?? 0) + 1);
    if (s.outcome === 'pass') continue;
    const v = s.firstViolation ?? s.outcome;
    const e = viol.get(v) ?? { seeds: 0, example: s.seed };
    e.seeds++;
    viol.set(v, e);
  }
  return {
    outcomes: [...outcomes.entries()].map(([outcome, seeds]) => ({ outcome, seeds })),
    byViolation: [...viol.entries()].map(([violation, e]) => ({ violation, ...e })).sort((a, b) => b.seeds - a.seeds || (a.violation < b.violation ? -1 : 1)),
    failing: x.seeds.filter((s) => s.outcome !== 'pass'),
  };
}

/** `1.5s`, `2m30s`, `250ms` for notes. */
export function formatSeconds(s: number): string {
  if (s < 1) return `${Math.round(s * 1000)}ms`;
  if (s < 60) return `${Math.round(s * 100) / 100}s`;
  const m = Math.floor(s / 60);
  return `${m}m${Math.round(s - m * 60)}s`;
}
