/**
 * The node lifecycle controller's per-zone tainting queue: `RateLimitedTimedQueue`
 * (`pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go`, v1.23.13 read, 1.22 semantics;
 * node-lifecycle spec §3.5). A queue ordered by `processAt` (then insertion) plus a set of names;
 * `add` refuses names in the set; `try` walks the head while the limiter grants a token and the
 * head is due; a processed name leaves the queue but stays in the set ("handled") until
 * `remove`. The limiter is client-go's token bucket (`flowcontrol.NewTokenBucketRateLimiter`,
 * `TryAccept` = x/time/rate `Allow`) with burst `EvictionRateLimiterBurst` 1, starting full;
 * `swapLimiter(q ≤ 0)` installs a never-accepting one, and a swap drains the new bucket when the
 * old one had no token. Times are virtual µs.
 */
import type { VirtualTime } from '@podsim/api';
import { US_PER_SECOND } from '@podsim/api';

/** `EvictionRateLimiterBurst`. */
export const EVICTION_RATE_LIMITER_BURST = 1;

/** A token bucket answering `tryAccept` (qps ≤ 0: never accepts, `NewFakeNeverRateLimiter`). */
export class TryAcceptLimiter {
  private tokens: number;
  private last: VirtualTime;

  constructor(
    readonly qps: number,
    readonly burst: number,
    now: VirtualTime,
  ) {
    this.tokens = qps > 0 ? burst : 0;
    this.last = now;
  }

  /** Takes a token if one is available at `now`. */
  tryAccept(now: VirtualTime): boolean {
    if (this.qps <= 0) return false;
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / US_PER_SECOND);
      this.last = now;
    }
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }
}

/** `TimedValue`: a node name with when it may be processed. */
export interface TimedValue {
  readonly value: string;
  readonly uid: string;
  addedAt: VirtualTime;
  processAt: VirtualTime;
  /** Insertion order (ties in processAt keep FIFO order, as the heap's pushes do in practice). */
  seq: number;
}

/** `ActionFunc`: true = done (drop from the queue), or false and a retry delay in µs. */
export type ActionFunc = (v: TimedValue) => readonly [boolean, number];

export class RateLimitedTimedQueue {
  private readonly items: TimedValue[] = [];
  /** `UniqueQueue.set`: every name added and not yet removed (processed ones stay). */
  private readonly names = new Set<string>();
  private seq = 0;
  limiter: TryAcceptLimiter;

  constructor(qps: number, now: VirtualTime) {
    this.limiter = new TryAcceptLimiter(qps, EVICTION_RATE_LIMITER_BURST, now);
  }

  /** Names waiting to be processed. */
  get length(): number {
    return this.items.length;
  }

  /** `Add`: false when the name is already queued or handled. */
  add(value: string, uid: string, now: VirtualTime): boolean {
    if (this.names.has(value)) return false;
    this.names.add(value);
    this.items.push({ value, uid, addedAt: now, processAt: now, seq: this.seq++ });
    this.sort();
    return true;
  }

  /** `Remove`: forgets the name (queued or handled); true if it was known. */
  remove(value: string): boolean {
    const i = this.items.findIndex((v) => v.value === value);
    if (i >= 0) this.items.splice(i, 1);
    return this.names.delete(value);
  }

  /** Whether the name is queued or handled. */
  has(value: string): boolean {
    return this.names.has(value);
  }

  /** `Clear`. */
  clear(): void {
    this.items.length = 0;
    this.names.clear();
  }

  /**
   * `Try`: while there is a head, take a token (stop without one), stop if the head is not yet
   * due, else run `fn`; a failure re-queues it at now + wait + 1 ns (1 µs here).
   */
  try(now: VirtualTime, fn: ActionFunc): void {
    while (this.items.length > 0) {
      if (!this.limiter.tryAccept(now)) return;
      const head = this.items[0];
      if (now < head.processAt) return;
      const [ok, waitUs] = fn(head);
      if (ok) this.done(head);
      else this.retry(head, now, waitUs);
    }
  }

  /** The head (earliest processAt), for a caller that runs `Try`'s loop itself (API calls between steps). */
  head(): TimedValue | undefined {
    return this.items[0];
  }

  /** `Try`'s success step for `v` (the head): out of the queue, still in the set. */
  done(v: TimedValue): void {
    const i = this.items.indexOf(v);
    if (i >= 0) this.items.splice(i, 1);
  }

  /** `Try`'s failure step for `v`: processAt = now + wait + 1 ns (1 µs here), re-queued. */
  retry(v: TimedValue, now: VirtualTime, waitUs: number): void {
    v.processAt = now + waitUs + 1;
    this.sort();
  }

  /** Earliest processAt of a queued name (undefined when empty). */
  nextDue(): VirtualTime | undefined {
    return this.items[0]?.processAt;
  }

  /** `SwapLimiter`: same QPS is a no-op; otherwise a new bucket, drained if the old one was empty. */
  swapLimiter(qps: number, now: VirtualTime): void {
    if (this.limiter.qps === qps) return;
    const next = new TryAcceptLimiter(qps, EVICTION_RATE_LIMITER_BURST, now);
    if (qps > 0 && !this.limiter.tryAccept(now)) next.tryAccept(now);
    this.limiter = next;
  }

  private sort(): void {
    if (this.items.length > 1) this.items.sort((a, b) => a.processAt - b.processAt || a.seq - b.seq);
  }
}
