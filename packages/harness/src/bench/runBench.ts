/**
 * Runs a bench plan (`stormPlan.ts`) on the threaded engine and measures it: wall time of the
 * start-up (`Simulation.create`: threads, module loading, actor start), of the creation phase
 * and of the deletion phase (the run is paused at the virtual instant of the mass DELETE, which
 * the driver announces through the `bench.deleteAtS` counter; the deletion phase includes the
 * harness's pauses between 1 s segments and its feeding of the checkers' model, both reported),
 * engine messages and windows, peak RSS and the host threads' heap, the deletion SLI percentiles
 * (hdr-histogram-js over the driver's per-pod latencies), the invariant checkers over the
 * collected trace, and the raw transport rate of this machine measured in the same process
 * afterwards, against which the ceiling ratio is computed. Timings are reported, never asserted.
 */
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { build } from 'hdr-histogram-js';
import { CLIENT_THROTTLE_TRACE, US_PER_SECOND, type TraceRecord } from '@podsim/api';
import type { Placement } from '@podsim/api/protocol/control';
import { Simulation, SimulationError, type SimulationMetrics } from '@podsim/sim';
import { measureRawTransport } from '@podsim/sim/rawTransport';
import { TraceModel } from '../checkers/model.js';
import { ALL_INVARIANTS, checkInvariants, type Violation } from '../checkers/invariants.js';
import { resolveModule } from '../engine.js';
import type { StormResult } from '../driver/stormDriver.js';
import { BENCH_APISERVER_MODEL, type BenchPlan } from './stormPlan.js';

/**
 * What the bench collects: what the invariant checkers read (api writes and requests, the
 * runtime's process lifecycle, the kubelet's spans) and the driver's result; the same as a
 * scenario run minus the driver's printed rows (the bench prints none). Every record is still
 * folded into the trace digest.
 */
export const BENCH_TRACE_KINDS: readonly string[] = ['api.write', 'api.request', 'cri.start', 'cri.signal', 'cri.exit', 'cri.exec', 'kubelet.', 'engine.', 'fault.', 'bench.'];

/** Progress callbacks (the CLI draws a bar on stderr). */
export interface BenchProgress {
  phase(name: 'create' | 'delete' | 'check', total: number): void;
  update(value: number, virtualSeconds: number): void;
  stop(): void;
}

export interface BenchRunOptions {
  readonly progress?: BenchProgress;
  /** Skip the raw transport measurement (tests). */
  readonly skipRaw?: boolean;
  /** Messages per side in the raw transport measurement (default 200,000). */
  readonly rawMessages?: number;
  readonly hostTimeoutMs?: number;
  /** Trace kinds to collect (default {@link BENCH_TRACE_KINDS}; experiments only: the checkers need those). */
  readonly traceFilter?: readonly string[];
  /**
   * Called once the run is judged with the checkers' model, the violations and the
   * `client.throttle` records (collected only when this is given: the HTML `--report`).
   */
  /**
   * Called after every run segment, with the hosts paused at `nowUs` (virtual µs; `deleteAtUs`
   * once the driver has announced the delete instant): memory diagnostics hook in here
   * (`bench/heapAtPeak.ts` writes heap snapshots mid-storm). The model is the main thread's
   * checker state at that point.
   */
  readonly onSegment?: (s: { readonly sim: Simulation; readonly nowUs: number; readonly deleteAtUs?: number; readonly model: TraceModel }) => Promise<void>;
  readonly onJudged?: (judged: { readonly model: TraceModel; readonly violations: readonly Violation[]; readonly throttle: readonly TraceRecord[] }) => void;
}

/** The figures of one bench run (also the `--json` line). Times: wall seconds unless named virtual. */
export interface BenchFigures {
  readonly scenario: string;
  readonly seed: number;
  readonly placement: string;
  readonly nodes: number;
  readonly pods: number;
  readonly created: number;
  readonly deleted: number;
  /** Pods that never reached DELETED, plus pods with a container still running at the end. */
  readonly lost: number;
  /** Failed pod creates (churn retries them) and failed DELETEs. */
  readonly createErrors: number;
  readonly deleteErrors: number;
  readonly ok: boolean;
  readonly end: string;
  /** `Simulation.create`: host threads started, actor modules loaded, actors started. Not in `wallSeconds`. */
  readonly startupWallSeconds: number;
  /** Creation + deletion phase (start-up, the checks and the raw measurement not included). */
  readonly wallSeconds: number;
  /** From the end of start-up to the delete instant. */
  readonly createWallSeconds: number;
  /**
   * First DELETE to last DELETED. Includes the harness's share: {@link deletePausedWallSeconds}
   * with the hosts paused, and {@link deleteModelWallSeconds} on the main thread in parallel.
   */
  readonly deleteWallSeconds: number;
  /** Deletion phase: wall time with the hosts paused between 1 s segments (metrics, trace collection, progress). */
  readonly deletePausedWallSeconds: number;
  /** Deletion phase: main-thread wall time feeding each segment's trace to the checkers' model while the hosts run the next. */
  readonly deleteModelWallSeconds: number;
  readonly virtualSeconds: number;
  readonly deleteVirtualSeconds: number;
  /** Deleted pods per wall second of the deletion phase (first DELETE to last DELETED). */
  readonly deletionsPerWallSecond: number;
  /** Deleted pods per virtual second of the deletion phase (what the simulated cluster achieves). */
  readonly deletionsPerVirtualSecond: number;
  /** Virtual seconds per wall second, whole run. */
  readonly timeCompression: number;
  readonly deleteLatencyP50: number;
  readonly deleteLatencyP90: number;
  readonly deleteLatencyP99: number;
  readonly deleteLatencyMax: number;
  readonly events: number;
  readonly messages: number;
  readonly messagesPerWallSecond: number;
  readonly remoteMessages: number;
  /** Engine messages sent in the deletion phase ÷ pods deleted. */
  readonly deleteMessagesPerPod: number;
  readonly windows: number;
  /**
   * Batches posted between host threads in the whole run (0 on `single`): the hand-offs. With
   * `remoteBatchesPerWindow` (÷ windows) and `hostWaitSeconds` (wall seconds the host threads
   * spent waiting at the window barrier, summed over hosts) they say whether a multi-thread
   * placement is bound by its windows (many windows, little work each) or by its work.
   */
  readonly remoteBatches: number;
  readonly remoteBatchesPerWindow: number;
  readonly hostWaitSeconds: number;
  readonly hostThreads: number;
  /** `process.resourceUsage().maxRSS` of the whole process: host threads, main thread (checkers' model), fixed semi-spaces. */
  readonly peakRssBytes: number;
  /** peakRssBytes ÷ pods (fixed costs included: see the slope in `bench scale`). */
  readonly rssBytesPerPod: number;
  /** Σ host threads' V8 used heap at the delete instant (every pod Running; garbage not yet collected included). */
  readonly hostHeapAtDeleteBytes: number;
  /** Largest Σ host threads' V8 used heap seen at a segment end (every virtual second). */
  readonly hostHeapPeakBytes: number;
  /** hostHeapAtDeleteBytes ÷ pods. */
  readonly hostHeapBytesPerPod: number;
  readonly traceRecords: number;
  readonly invariantsChecked: number;
  readonly violations: number;
  readonly violationSamples: readonly string[];
  readonly checkWallSeconds: number;
  readonly rawTransportMsgsPerSec: number;
  /** rawTransportMsgsPerSec ÷ deleteMessagesPerPod: deletions per wall second the raw transport alone could carry. */
  readonly ceilingDeletionsPerWallSecond: number;
  /** The same figure under the name issue #19 uses (ceilingDeletionsPerWallSecond is kept for older readers). */
  readonly transportCeilingDeletionsPerSec: number;
  /** deletionsPerWallSecond ÷ ceilingDeletionsPerWallSecond (0 when the raw rate was not measured). */
  readonly ceilingRatio: number;
  /**
   * Multi-thread placements only: cross-thread messages per wall second of the deletion phase ÷
   * the raw rate (on `single` no message crosses a thread, and the field is absent).
   */
  readonly crossThreadRatio?: number;
  readonly traceDigest: string;
  /** What the deletion SLI assumes of the apiserver ({@link BENCH_APISERVER_MODEL}). */
  readonly apiserverModel: string;
  readonly failure?: string;
  readonly machine: { readonly cpus: number; readonly memGiB: number; readonly node: string; readonly loadAvg: readonly number[] };
}

const round = (x: number, d = 0) => Number(x.toFixed(d));

/** Virtual µs per run segment while the run is paused regularly for progress. */
const SEGMENT_US = US_PER_SECOND;

/**
 * Heap settings for the host threads created after this call (V8 reads the flags when a worker's
 * isolate is created). One thread holds every actor of a `single` run, ~17 KB of live heap per
 * pod, so 150k pods need more than V8's default 4 GiB: the limit becomes 3/4 of the machine's
 * memory (unless the process was started with a larger `--max-old-space-size`). A 64 MB
 * semi-space lets the many short-lived request/timer objects die young instead of being
 * promoted (~10% less CPU in the deletion phase, +~50 MB RSS). The old generation may grow to
 * 2.5× what the last full collection kept (`--heap-growing-percent=150`) instead of V8's dynamic
 * factor of up to 4×: the storm's old generation is mostly live (pods, caches), and V8 let it
 * reach ~5× its live size before collecting (10k-pod storm in one thread: peak RSS 904/908 →
 * 646/697 MB, CPU unchanged within noise).
 */
export function tuneWorkerHeap(): void {
  const want = Math.floor((totalmem() * 0.75) / 2 ** 20);
  if (getHeapStatistics().heap_size_limit / 2 ** 20 < want) setFlagsFromString(`--max-old-space-size=${want}`);
  if (!process.execArgv.some((a) => a.startsWith('--max-semi-space-size'))) setFlagsFromString('--max-semi-space-size=64');
  if (!process.execArgv.some((a) => a.startsWith('--heap-growing-percent'))) setFlagsFromString('--heap-growing-percent=150');
}

export async function runBenchPlan(plan: BenchPlan, opts: BenchRunOptions = {}): Promise<BenchFigures> {
  const progress = opts.progress;
  tuneWorkerHeap();
  const tStartup = performance.now();
  const sim = await Simulation.create({
    seed: plan.seed,
    actors: plan.actors.map((a) => ({ id: a.id, module: resolveModule(a.module), config: a.config })),
    placement: plan.placement as Placement,
    latency: plan.latency,
    traceFilter: [...(opts.traceFilter ?? BENCH_TRACE_KINDS), ...(opts.onJudged ? [CLIENT_THROTTLE_TRACE] : [])],
    hostTimeoutMs: opts.hostTimeoutMs ?? 120_000,
  });
  const t0 = performance.now();
  let failure: string | undefined;
  let end = 'bound';
  let deleteAtUs: number | undefined;
  let tDelete: number | undefined;
  let now = 0;
  let metrics: SimulationMetrics | undefined;
  let atDelete: SimulationMetrics | undefined;
  // The harness's share of the deletion phase (wall ms): hosts paused between segments, and the
  // main thread feeding the checkers' model while the hosts run.
  let deletePausedMs = 0;
  let deleteModelMs = 0;
  let tSegmentDone: number | undefined;
  let hostHeapPeakBytes = 0;
  let hostHeapAtDeleteBytes = 0;
  // The trace is consumed segment by segment: the checkers' model keeps what it needs, the raw
  // records go (a 100k-pod storm collects ~4M records).
  const model = new TraceModel([], { keepRecords: false });
  let traceRecords = 0;
  let result: StormResult | undefined;
  const throttle: TraceRecord[] = [];
  const consume = (records: TraceRecord[]) => {
    // The report's throttle records are not what the checkers read: kept apart, not counted.
    let n = records.length;
    if (opts.onJudged) {
      for (const r of records) {
        if (r.kind !== CLIENT_THROTTLE_TRACE) continue;
        throttle.push(r);
        n--;
      }
    }
    traceRecords += n;
    for (let i = records.length - 1; i >= 0 && result === undefined; i--) if (records[i].kind === 'bench.result') result = records[i].data as unknown as StormResult;
    model.add(records);
  };
  let digest = '';
  let tEnd = t0;
  // Each segment's trace is fed to the model while the host threads run the next segment.
  let pending: TraceRecord[] = [];
  try {
    progress?.phase('create', plan.pods);
    for (;;) {
      const target = Math.min(deleteAtUs !== undefined && now < deleteAtUs ? deleteAtUs : now + SEGMENT_US, plan.maxVirtualUs);
      const segment = sim.runUntil(target);
      const tResumed = performance.now();
      if (tDelete !== undefined && tSegmentDone !== undefined) deletePausedMs += tResumed - Math.max(tSegmentDone, tDelete);
      consume(pending);
      if (tDelete !== undefined) deleteModelMs += performance.now() - tResumed;
      const r = await segment;
      tSegmentDone = performance.now();
      if (r.reason !== 'target' || r.now >= plan.maxVirtualUs) tEnd = tSegmentDone;
      now = r.now;
      pending = sim.takeTraces();
      metrics = await sim.metrics();
      const heapBytes = (await sim.heapStatistics()).reduce((sum, h) => sum + h.usedHeapBytes, 0);
      if (heapBytes > hostHeapPeakBytes) hostHeapPeakBytes = heapBytes;
      const c = metrics.counters;
      if (deleteAtUs === undefined && c['bench.deleteAtS'] !== undefined) deleteAtUs = c['bench.deleteAtS'] * US_PER_SECOND;
      if (deleteAtUs !== undefined && tDelete === undefined && now >= deleteAtUs) {
        progress?.phase('delete', plan.pods);
        atDelete = metrics;
        hostHeapAtDeleteBytes = heapBytes;
        tDelete = performance.now();
      }
      if (opts.onSegment) await opts.onSegment({ sim, nowUs: now, model, ...(deleteAtUs !== undefined ? { deleteAtUs } : {}) });
      progress?.update(tDelete === undefined ? (c['bench.ready'] ?? 0) : (c['bench.deleted'] ?? 0), now / US_PER_SECOND);
      if (r.reason !== 'target') {
        end = r.reason;
        break;
      }
      if (now >= plan.maxVirtualUs) break;
    }
    digest = await sim.digest();
    consume(pending);
    consume(sim.takeTraces());
  } catch (err) {
    if (!(err instanceof SimulationError)) throw err;
    tEnd = performance.now();
    failure = `${err.failure.kind}: ${err.failure.message}`;
    end = 'failed';
    consume(pending);
    consume(sim.takeTraces());
  } finally {
    await sim.close();
  }
  progress?.stop();

  // ---- judge ---------------------------------------------------------------------------------
  const tCheck = performance.now();
  const violations = checkInvariants(model, { epochUnixSeconds: 0 });
  let stillRunning = 0;
  const runningPods = new Set<string>();
  for (const p of model.processes) if (p.exitedAt === undefined) runningPods.add(p.podUid);
  stillRunning = runningPods.size;
  const checkWallSeconds = (performance.now() - tCheck) / 1000;
  opts.onJudged?.({ model, violations, throttle });

  const hist = build({ bitBucketSize: 64, numberOfSignificantValueDigits: 3, lowestDiscernibleValue: 1, highestTrackableValue: 24 * 3600 * US_PER_SECOND });
  for (const l of result?.latenciesUs ?? []) hist.recordValue(Math.max(1, l));
  // getValueAtPercentile answers the highest value of the percentile's bucket (up to 0.1 % above
  // what was recorded) while maxValue is the exact maximum: clamp, or a single 5.731 s deletion
  // reads p50 5.734 s, max 5.731 s.
  const pct = (p: number) => (hist.totalCount > 0 ? round(Math.min(hist.getValueAtPercentile(p), hist.maxValue) / US_PER_SECOND, 3) : 0);
  const latMax = hist.totalCount > 0 ? round(hist.maxValue / US_PER_SECOND, 3) : 0;
  hist.destroy();

  const peakRssBytes = process.resourceUsage().maxRSS * 1024;
  const m = metrics;
  const wallSeconds = (tEnd - t0) / 1000;
  const createWallSeconds = ((tDelete ?? tEnd) - t0) / 1000;
  const deleteWallSeconds = tDelete !== undefined ? (tEnd - tDelete) / 1000 : 0;
  const deleted = result?.deleted ?? 0;
  const deleteVirtualUs = result?.lastDeletedUs !== undefined && result.deleteAtUs !== undefined ? result.lastDeletedUs - result.deleteAtUs : 0;
  const messages = m?.messages ?? 0;
  const remoteBatches = m?.hosts.reduce((sum, h) => sum + h.batchesSent, 0) ?? 0;
  const meanBatch = m && m.remoteMessages > 0 ? m.remoteMessages / Math.max(1, remoteBatches) : 64;
  const raw = opts.skipRaw ? 0 : await measureRawTransport(meanBatch, opts.rawMessages);
  const messagesPerWallSecond = wallSeconds > 0 ? messages / wallSeconds : 0;
  const deletionsPerWallSecond = deleteWallSeconds > 0 ? deleted / deleteWallSeconds : 0;
  // The ceiling of the performance issue: the raw rate ÷ the messages one deletion costs.
  const deleteMessagesPerPod = deleted > 0 && atDelete ? (messages - atDelete.messages) / deleted : 0;
  const ceiling = raw > 0 && deleteMessagesPerPod > 0 ? raw / deleteMessagesPerPod : 0;
  const hostThreads = m?.hostCount ?? 0;
  const deleteRemoteMessages = m && atDelete ? m.remoteMessages - atDelete.remoteMessages : 0;
  const crossThreadRatio = raw > 0 && deleteWallSeconds > 0 ? deleteRemoteMessages / deleteWallSeconds / raw : 0;
  // Pods that existed and never reached DELETED, plus pods with a container still running.
  const lost = (result ? result.created - deleted : plan.pods) + stillRunning;
  return {
    scenario: plan.name,
    seed: plan.seed,
    placement: plan.placement,
    nodes: plan.nodes,
    pods: plan.pods,
    created: result?.created ?? 0,
    deleted,
    lost,
    createErrors: result?.createErrors ?? 0,
    deleteErrors: result?.deleteErrors ?? 0,
    ok:
      failure === undefined &&
      end === 'stopped' &&
      result !== undefined &&
      !result.timedOut &&
      result.created === plan.pods &&
      lost === 0 &&
      violations.length === 0 &&
      result.deleteErrors === 0,
    end,
    startupWallSeconds: round((t0 - tStartup) / 1000, 3),
    wallSeconds: round(wallSeconds, 3),
    createWallSeconds: round(createWallSeconds, 3),
    deleteWallSeconds: round(deleteWallSeconds, 3),
    deletePausedWallSeconds: round(deletePausedMs / 1000, 3),
    deleteModelWallSeconds: round(deleteModelMs / 1000, 3),
    virtualSeconds: round(now / US_PER_SECOND, 3),
    deleteVirtualSeconds: round(deleteVirtualUs / US_PER_SECOND, 3),
    deletionsPerWallSecond: round(deletionsPerWallSecond),
    deletionsPerVirtualSecond: deleteVirtualUs > 0 ? round(deleted / (deleteVirtualUs / US_PER_SECOND), 1) : 0,
    timeCompression: wallSeconds > 0 ? round(now / US_PER_SECOND / wallSeconds, 2) : 0,
    deleteLatencyP50: pct(50),
    deleteLatencyP90: pct(90),
    deleteLatencyP99: pct(99),
    deleteLatencyMax: latMax,
    events: m?.events ?? 0,
    messages,
    messagesPerWallSecond: round(messagesPerWallSecond),
    remoteMessages: m?.remoteMessages ?? 0,
    deleteMessagesPerPod: round(deleteMessagesPerPod, 1),
    windows: m?.windows ?? 0,
    remoteBatches,
    remoteBatchesPerWindow: m && m.windows > 0 ? round(remoteBatches / m.windows, 2) : 0,
    hostWaitSeconds: round((m?.hosts.reduce((sum, h) => sum + h.waitMs, 0) ?? 0) / 1000, 3),
    hostThreads,
    peakRssBytes,
    rssBytesPerPod: round(peakRssBytes / Math.max(1, plan.pods)),
    hostHeapAtDeleteBytes,
    hostHeapPeakBytes,
    hostHeapBytesPerPod: round(hostHeapAtDeleteBytes / Math.max(1, plan.pods)),
    traceRecords,
    invariantsChecked: ALL_INVARIANTS.length,
    violations: violations.length,
    violationSamples: violations.slice(0, 5).map((v) => `${v.invariant} at ${v.t / US_PER_SECOND}s: ${v.message}`),
    checkWallSeconds: round(checkWallSeconds, 3),
    rawTransportMsgsPerSec: round(raw),
    ceilingDeletionsPerWallSecond: round(ceiling),
    transportCeilingDeletionsPerSec: round(ceiling),
    ceilingRatio: ceiling > 0 ? round(deletionsPerWallSecond / ceiling, 4) : 0,
    ...(hostThreads > 1 ? { crossThreadRatio: round(crossThreadRatio, 4) } : {}),
    traceDigest: digest,
    apiserverModel: BENCH_APISERVER_MODEL,
    ...(failure !== undefined ? { failure } : {}),
    machine: { cpus: availableParallelism() || cpus().length, memGiB: round(totalmem() / 2 ** 30, 1), node: process.version, loadAvg: loadavg().map((x) => round(x, 2)) },
  };
}
