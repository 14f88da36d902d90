/**
 * All actors of a run in the calling thread, no workers: the engine's reference semantics, and
 * what pure-logic pair tests use (kubelet + runtime + apiserver wired in memory). The threaded
 * engine must produce the same trace digest as this for the same configuration and seed.
 */
import type { ActorFactory, ActorId, Fault, Message, TraceRecord, VirtualTime } from '@podsim/api';
import { DEFAULT_EPOCH_UNIX_SECONDS, NEVER } from '@podsim/api';
import { HostCore, type LatencyConfig, type TraceFilter } from './hostCore.js';
import { combineDigests } from './digest.js';

export interface LocalActorDef {
  readonly id: ActorId;
  readonly factory: ActorFactory;
  readonly config?: unknown;
}

export interface LocalSimulationOptions {
  readonly seed: number;
  readonly actors: readonly LocalActorDef[];
  /** Default: 100 µs minimum, 50 µs jitter on every link. */
  readonly latency?: LatencyConfig;
  readonly faults?: readonly Fault[];
  readonly traceFilter?: TraceFilter;
  readonly epochUnixSeconds?: number;
}

export const DEFAULT_LATENCY: LatencyConfig = { default: { minUs: 100, jitterUs: 50 } };

/** A whole run in one thread. */
export class LocalSimulation {
  readonly core: HostCore;
  private injectSeq = 0;

  constructor(readonly options: LocalSimulationOptions) {
    this.core = new HostCore({
      seed: options.seed,
      epochUnixSeconds: options.epochUnixSeconds ?? DEFAULT_EPOCH_UNIX_SECONDS,
      allActorIds: options.actors.map((a) => a.id),
      local: options.actors,
      latency: options.latency ?? DEFAULT_LATENCY,
      faults: options.faults,
      traceFilter: options.traceFilter,
    });
  }

  /** Virtual time of the last processed event. */
  get now(): VirtualTime {
    return this.core.now;
  }

  /**
   * Runs every event with time < `untilUs` (or until an actor's stopRun horizon, or until no
   * events are left). Returns the number of events processed.
   */
  runUntil(untilUs: VirtualTime = NEVER): number {
    const n = this.core.runUntil(untilUs);
    if (untilUs !== NEVER && this.core.stopAt === NEVER && this.core.now < untilUs) this.core.now = untilUs;
    return n;
  }

  /** Runs for `durationUs` more virtual µs. */
  runFor(durationUs: number): number {
    return this.runUntil(this.core.now + durationUs);
  }

  /** True once an actor called stopRun and every event before the stop horizon ran. */
  get stopped(): boolean {
    return this.core.stopAt !== NEVER && this.core.nextEventTime() >= this.core.stopAt;
  }

  /**
   * Sends `body` to `to` at the current time as if from actor `from` (which must be one of
   * the run's actors; a test usually adds a passive "test" actor for this).
   */
  inject(from: ActorId, to: ActorId, body: Message): void {
    this.core.injectFrom(from, to, body, 1_000_000_000 + this.injectSeq++, this.core.now);
  }

  /** Collected trace records sorted by (t, actor, seq). */
  traces(): TraceRecord[] {
    return sortTraces(this.core.traces);
  }

  /** The run's trace digest (same function the threaded engine uses). */
  digest(): string {
    return combineDigests(this.core.digests());
  }
}

/** Sorts trace records into the global order (t, actor id, per-actor seq). */
export function sortTraces(records: readonly TraceRecord[]): TraceRecord[] {
  return [...records].sort((a, b) => a.t - b.t || (a.actor < b.actor ? -1 : a.actor > b.actor ? 1 : 0) || a.seq - b.seq);
}
