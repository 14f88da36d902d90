/**
 * Runs a {@link RunPlan} on the engine: the threaded {@link Simulation} of packages/sim (actors in
 * worker threads per the placement; the default), or {@link LocalSimulation} (every actor in the
 * calling thread; for tests and debugging). Either way the result is the merged trace, the trace
 * digest and the figures the report prints. Engine failures (an actor threw, a host died) come
 * back as a RunFailure with the actor, virtual time, message kind and seed — never as a hang.
 */
import type { ActorFactory, RunFailure, TraceRecord } from '@podsim/api';
import type { Placement } from '@podsim/api/protocol/control';
import { LocalSimulation, Simulation, SimulationError, type TraceFilter } from '@podsim/sim';
import type { RunPlan } from './scenario/compile.js';
import type { SegmentReport } from './report/progress.js';

export type EngineKind = 'threads' | 'local';

/**
 * Trace kinds the harness collects by default: what the checkers, expectations and reports read.
 * `cri.call` (dominated by PLEG relists and probes: ~2 records per node per virtual second) is
 * left out; every record is still folded into the trace digest whether collected or not.
 * `reflector.*` (re-lists and re-watches after a watch timeout or a lost connection) is rare and
 * shows in a replayed pod's timeline.
 * `controller.nodelifecycle.*` / `controller.taintManager.*` (status, taints, evictions) are rare too.
 */
export const HARNESS_TRACE_KINDS: readonly string[] = [
  'api.',
  'cri.start',
  'cri.signal',
  'cri.exit',
  'cri.exec',
  'cri.network',
  'cri.recover',
  'cri.stopCancelled',
  'proxy.',
  'kubelet.',
  'engine.',
  'fault.',
  'driver.',
  'reflector.',
  'controller.sts.create',
  'controller.sts.delete',
  'controller.nodelifecycle.',
  'controller.taintManager.',
];

export interface EngineOptions {
  readonly engine?: EngineKind;
  readonly traceFilter?: TraceFilter;
  /** Wall-clock ms a host may stay silent before the run fails (threads only). */
  readonly hostTimeoutMs?: number;
  /**
   * Stops the run early (Ctrl-C) with `end: 'interrupted'` and every trace record produced so
   * far — the report then covers the run so far. Threads: the hosts stop within a few events
   * (Simulation.interrupt), each where it was. Local: the run goes in segments of virtual time
   * (at most {@link SEGMENT_WALL_MS} of wall time each once measured) and ends at the next pause.
   * Until the signal is aborted the run is that of an uninterrupted run (same trace, digest).
   */
  readonly signal?: AbortSignal;
  /** Called once the actors are up and the run begins (tests time their Ctrl-C from it). */
  readonly onRunning?: () => void;
  /**
   * Called after each run segment (the run then goes in segments, as with `signal`) with the
   * virtual time, the events so far and that segment's trace records: the CLI's progress
   * display. Observing never changes the run.
   */
  readonly onSegment?: (s: SegmentReport) => void;
}

/** Wall-clock ms a segment of an interruptible run should last; virtual segments grow until they do. */
const SEGMENT_WALL_MS = 200;
/** Wall ms between two intakes of the hosts' trace chunks during a threaded run. */
const TRACE_INTAKE_MS = 200;
/** The first segment's virtual length. */
const FIRST_SEGMENT_US = 1_000_000;

/**
 * The next segment length: doubled while segments go by faster than {@link SEGMENT_WALL_MS},
 * scaled down (to at least 1 ms virtual) when one took longer, so that a Ctrl-C waits about
 * that long (a 2 s segment of a 20k-pod storm took 7 s and never shrank).
 */
export function nextSegmentUs(segmentUs: number, wallMs: number): number {
  if (wallMs < SEGMENT_WALL_MS) return Math.min(segmentUs * 2, Number.MAX_SAFE_INTEGER / 4);
  if (wallMs <= 2 * SEGMENT_WALL_MS) return segmentUs;
  return Math.max(1_000, Math.floor((segmentUs * SEGMENT_WALL_MS) / wallMs));
}

export interface EngineResult {
  readonly traces: TraceRecord[];
  /** Empty when the run failed before a digest could be taken. */
  readonly digest: string;
  /** Virtual µs at which the run ended. */
  readonly virtualUs: number;
  readonly wallSeconds: number;
  readonly events: number;
  readonly hostCount: number;
  /**
   * Why the run ended: `stopped` (the driver finished the timeline), `bound` (maxVirtualUs),
   * `quiescent`, `interrupted` ({@link EngineOptions.signal}), `failed`.
   */
  readonly end: 'stopped' | 'bound' | 'quiescent' | 'interrupted' | 'failed';
  readonly stopReason?: string;
  readonly failure?: RunFailure;
}

/** Absolute file URL of an actor module given as a package specifier. */
export function resolveModule(specifier: string): string {
  return import.meta.resolve(specifier);
}

/** Runs the plan to its end (the driver's stopRun) or to `plan.maxVirtualUs`. */
export async function runPlan(plan: RunPlan, opts: EngineOptions = {}): Promise<EngineResult> {
  return (opts.engine ?? 'threads') === 'threads' ? runThreads(plan, opts) : runLocal(plan, opts);
}

async function runThreads(plan: RunPlan, opts: EngineOptions): Promise<EngineResult> {
  const started = performance.now();
  let sim: Simulation | undefined;
  // With onSegment the trace is taken segment by segment (consecutive ordered slices) and
  // joined at the end: the same records in the same order as one sim.traces().
  const slices: TraceRecord[][] = [];
  try {
    sim = await Simulation.create({
      seed: plan.seed,
      actors: plan.actors.map((a) => ({ id: a.id, module: resolveModule(a.module), config: a.config })),
      placement: plan.placement as Placement,
      latency: plan.latency,
      faults: plan.faults,
      traceFilter: opts.traceFilter ?? HARNESS_TRACE_KINDS,
      epochUnixSeconds: plan.epochUnixSeconds,
      ...(opts.hostTimeoutMs !== undefined ? { hostTimeoutMs: opts.hostTimeoutMs } : {}),
    });
    // Ctrl-C interrupts the hosts mid-window (Simulation.interrupt: within a few events); the
    // run pauses where each host was.
    const running = sim;
    const onAbort = () => running.interrupt();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) onAbort();
    let r: Awaited<ReturnType<Simulation['run']>> | undefined;
    try {
      opts.onRunning?.();
      if (!opts.onSegment) {
        // One run to the end, taking in the hosts' trace chunks as they come, not all at the end.
        const intake = setInterval(() => running.collectTraces(), TRACE_INTAKE_MS);
        try {
          r = await sim.run({ maxUs: plan.maxVirtualUs });
        } finally {
          clearInterval(intake);
        }
      } else {
        // The progress display: segments of virtual time, the trace taken after each.
        for (let segmentUs = FIRST_SEGMENT_US; r === undefined; ) {
          const t0 = performance.now();
          const target = Math.min(plan.maxVirtualUs, sim.now + segmentUs);
          const seg = await sim.runUntil(target);
          const records = sim.takeTraces();
          slices.push(records);
          opts.onSegment({ virtualUs: seg.now, events: (await sim.metrics()).events, records });
          if (seg.reason !== 'target' || target >= plan.maxVirtualUs || opts.signal?.aborted) r = seg;
          segmentUs = nextSegmentUs(segmentUs, performance.now() - t0);
        }
      }
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
    }
    const interrupted = r.reason === 'interrupted' || (opts.signal?.aborted === true && r.reason !== 'stopped');
    slices.push(await sim.traces());
    const traces = slices.length === 1 ? slices[0] : slices.flat();
    const digest = await sim.digest();
    const metrics = await sim.metrics();
    const wallSeconds = (performance.now() - started) / 1000;
    return {
      traces,
      digest,
      virtualUs: r.now,
      wallSeconds,
      events: metrics.events,
      hostCount: metrics.hostCount,
      end: interrupted ? 'interrupted' : r.reason === 'stopped' ? 'stopped' : r.reason === 'quiescent' ? 'quiescent' : 'bound',
      ...(r.stopReason !== undefined ? { stopReason: r.stopReason } : {}),
    };
  } catch (err) {
    if (!(err instanceof SimulationError)) throw err;
    const traces = [...slices.flat(), ...(sim ? await sim.traces().catch(() => []) : [])];
    return {
      traces,
      digest: '',
      virtualUs: err.failure.t ?? traces[traces.length - 1]?.t ?? 0,
      wallSeconds: (performance.now() - started) / 1000,
      events: 0,
      hostCount: sim?.hostCount ?? 0,
      end: 'failed',
      failure: err.failure,
    };
  } finally {
    await sim?.close();
  }
}

async function runLocal(plan: RunPlan, opts: EngineOptions): Promise<EngineResult> {
  const started = performance.now();
  const actors = await Promise.all(
    plan.actors.map(async (a) => {
      const mod = (await import(resolveModule(a.module))) as { createActor: ActorFactory };
      return { id: a.id, factory: mod.createActor, config: structuredClone(a.config) };
    }),
  );
  const sim = new LocalSimulation({
    seed: plan.seed,
    actors,
    latency: plan.latency,
    faults: plan.faults,
    traceFilter: opts.traceFilter ?? HARNESS_TRACE_KINDS,
    epochUnixSeconds: plan.epochUnixSeconds,
  });
  let interrupted = false;
  let seen = 0;
  try {
    opts.onRunning?.();
    if (!opts.signal && !opts.onSegment) sim.runUntil(plan.maxVirtualUs);
    else {
      // Segments, yielding to the event loop in between so that a SIGINT handler can run.
      for (let segmentUs = FIRST_SEGMENT_US; ; ) {
        const t0 = performance.now();
        sim.runUntil(Math.min(plan.maxVirtualUs, sim.now + segmentUs));
        if (opts.onSegment) {
          // The records collected since the last segment (in collection order; the tally needs no more).
          const all = sim.core.traces;
          opts.onSegment({ virtualUs: sim.now, events: sim.core.processed, records: all.slice(seen) });
          seen = all.length;
        }
        if (sim.stopped || sim.now >= plan.maxVirtualUs || sim.core.nextEventTime() === Number.MAX_SAFE_INTEGER) break;
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (opts.signal?.aborted) {
          interrupted = true;
          break;
        }
        segmentUs = nextSegmentUs(segmentUs, performance.now() - t0);
      }
    }
  } catch (err) {
    if (!(err instanceof SimulationError)) throw err;
    return {
      traces: sim.traces(),
      digest: '',
      virtualUs: err.failure.t ?? sim.now,
      wallSeconds: (performance.now() - started) / 1000,
      events: sim.core.processed,
      hostCount: 1,
      end: 'failed',
      failure: err.failure,
    };
  }
  return {
    traces: sim.traces(),
    digest: sim.digest(),
    virtualUs: sim.now,
    wallSeconds: (performance.now() - started) / 1000,
    events: sim.core.processed,
    hostCount: 1,
    end: interrupted ? 'interrupted' : sim.stopped ? 'stopped' : sim.core.nextEventTime() === Number.MAX_SAFE_INTEGER ? 'quiescent' : 'bound',
    ...(sim.core.stopReason !== undefined ? { stopReason: sim.core.stopReason } : {}),
  };
}
