/**
 * Transport- and actor-level faults the engine injects (DESIGN.md §9). Each fault has a virtual
 * time window; random choices (drop / duplicate) are drawn from a stream per fault and link,
 * named by the fault's `id` (else its index in the run's list), so with ids adding or removing
 * one fault leaves every other draw unchanged (shrinking depends on this).
 *
 * Actor patterns: an exact actor id, `*` for any, or a prefix glob such as `kubelet/*`.
 */
import type { DurationUs, VirtualTime } from './time.js';

export type ActorPattern = string;

interface Window {
  /**
   * Stable name of this fault's random streams (`fault:id=<id>:<from>-><to>`). Without it the
   * stream is named by the fault's index in the run's fault list, which shifts when an earlier
   * fault is removed; give ids to fault lists that are edited between runs (shrinking).
   */
  readonly id?: string;
  /** Inclusive start, virtual µs. */
  readonly startUs: VirtualTime;
  /** Exclusive end, virtual µs (omit for "until the end of the run"). */
  readonly endUs?: VirtualTime;
}

/** Adds `delayUs` to every message from → to sent inside the window. */
export interface DelayFault extends Window {
  readonly kind: 'delay';
  readonly from: ActorPattern;
  readonly to: ActorPattern;
  readonly delayUs: DurationUs;
}

/** Drops each message from → to sent inside the window with `probability` (1 = all). */
export interface DropFault extends Window {
  readonly kind: 'drop';
  readonly from: ActorPattern;
  readonly to: ActorPattern;
  readonly probability: number;
}

/** Delivers each message from → to twice with `probability`; the copy arrives `delayUs` later. */
export interface DuplicateFault extends Window {
  readonly kind: 'duplicate';
  readonly from: ActorPattern;
  readonly to: ActorPattern;
  readonly probability: number;
  readonly delayUs?: DurationUs;
  /**
   * Whether requests are duplicated too (default true). `false` repeats only messages within a
   * stream — one-way messages such as watch events, and replies — never a request (scenario
   * `duplicate` faults: a repeated watch request would open a second stream, a repeated write
   * would write twice, neither of which a TCP connection does).
   */
  readonly requests?: boolean;
}

/** Drops every message between `a` and `b` (both directions) sent inside the window. */
export interface PartitionFault extends Window {
  readonly kind: 'partition';
  readonly a: ActorPattern;
  readonly b: ActorPattern;
}

/**
 * Crashes `actor` at `atUs` (its state, timers and pending requests are lost; messages to it
 * are dropped, requests sent with `failFast` refused) and, unless `restartAfterUs` is
 * omitted, restarts it with fresh state and a new incarnation. Messages sent before the restart
 * never reach the new incarnation. Crashes overlap: the actor is down while any crash fault holds
 * it (from its `atUs` to its restart, or for good without one) and comes back when the last ends.
 */
export interface CrashFault {
  readonly kind: 'crash';
  /** A name for reports (a crash draws nothing random). */
  readonly id?: string;
  readonly actor: string;
  readonly atUs: VirtualTime;
  readonly restartAfterUs?: DurationUs;
}

export type Fault = DelayFault | DropFault | DuplicateFault | PartitionFault | CrashFault;

/** Does `id` match `pattern` (exact, `*`, or `prefix*`)? */
export function matchesActor(pattern: ActorPattern, id: string): boolean {
  if (pattern === '*' || pattern === id) return true;
  return pattern.endsWith('*') && id.startsWith(pattern.slice(0, -1));
}
