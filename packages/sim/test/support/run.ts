/**
 * Helpers for the engine tests: build ActorSpecs for the test actors (loaded by URL in the
 * host threads) and run the same configuration threaded or in one LocalSimulation.
 */
import type { ActorFactory, ActorSpec, Fault, TraceRecord } from '@podsim/api';
import type { LatencyConfig, Placement, TraceFilter } from '@podsim/api/protocol/control';
import { LocalSimulation, Simulation, type RunResult } from '../../src/index.js';
import * as testActors from './testActors.js';

/** File URL of the compiled test actors module. */
export const TEST_ACTORS = new URL('./testActors.js', import.meta.url).href;

export function spec(id: string, exportName: keyof typeof testActors, config?: unknown): ActorSpec {
  return { id, module: TEST_ACTORS, exportName, config };
}

export interface RunConfig {
  readonly seed: number;
  readonly actors: readonly ActorSpec[];
  readonly latency?: LatencyConfig;
  readonly faults?: readonly Fault[];
  readonly traceFilter?: TraceFilter;
}

export interface RunOutcome {
  readonly traces: TraceRecord[];
  readonly digest: string;
  readonly result: RunResult;
}

/** Runs `cfg` on threads with `placement` until `untilUs` (default: stop or quiescence). */
export async function runThreaded(cfg: RunConfig, placement: Placement, untilUs?: number): Promise<RunOutcome> {
  const sim = await Simulation.create({ ...cfg, placement, hostTimeoutMs: 10_000, reuseThreads: true });
  try {
    const result = untilUs === undefined ? await sim.run() : await sim.runUntil(untilUs);
    return { traces: await sim.traces(), digest: await sim.digest(), result };
  } finally {
    await sim.close();
  }
}

/** Runs `cfg` in one LocalSimulation (factories taken from the test actors module directly). */
export function runLocal(cfg: RunConfig, untilUs?: number): { traces: TraceRecord[]; digest: string; sim: LocalSimulation } {
  const sim = new LocalSimulation({
    seed: cfg.seed,
    latency: cfg.latency,
    faults: cfg.faults,
    traceFilter: cfg.traceFilter,
    actors: cfg.actors.map((a) => ({
      id: a.id,
      factory: (testActors as unknown as Record<string, ActorFactory>)[a.exportName ?? 'createActor'],
      config: a.config,
    })),
  });
  sim.runUntil(untilUs);
  return { traces: sim.traces(), digest: sim.digest(), sim };
}

/** Runs `fn` over `items` with at most `limit` in flight (worker start-up dominates; 2 cores). */
export async function inBatches<T, R>(items: readonly T[], limit: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}
