/**
 * What controller logic may use from its host, as an interface so that the pure controllers run
 * unchanged inside the actor shell (`src/actor/`) and in table-driven tests (a fake clock). It is
 * the ActorContext reduced to time, timers, seeded randomness and trace; API calls go through
 * {@link ApiClient} (src/client.ts).
 */
import type { Clock, DurationUs, Prng, VirtualTime } from '@podsim/api';

export type TimerHandle = number;

export interface ControllerEnv {
  /** Current virtual time, µs. */
  readonly now: VirtualTime;
  /** Maps virtual µs to RFC 3339 (`metav1.Time`) and back. */
  readonly clock: Clock;
  /** Runs `fn` after `delayUs` virtual µs (≥ 0). */
  after(delayUs: DurationUs, fn: () => void): TimerHandle;
  cancel(handle: TimerHandle): void;
  /** A named deterministic random stream (`ctx.stream`). */
  stream(name: string): Prng;
  trace(kind: string, msg: string, data?: Record<string, unknown>): void;
  /** Whether a trace kind is collected (skip building costly records otherwise). */
  tracing(kind: string): boolean;
  /** Adds to a run metric counter. */
  count(name: string, delta?: number): void;
}

/** `metav1.Now()` as the apiserver would serialise it (second precision). */
export function nowTimestamp(env: ControllerEnv): string {
  return env.clock.format(env.now);
}

/** Parses an object timestamp to virtual µs; undefined when absent or malformed. */
export function parseTimestamp(env: ControllerEnv, ts: string | undefined | null): VirtualTime | undefined {
  if (!ts) return undefined;
  return env.clock.parse(ts);
}
