/**
 * client-go `util/workqueue` as controllers use it: a de-duplicating FIFO of keys with
 * `processing`/`dirty` sets (a key is never synced by two workers at once; an add during its sync
 * requeues it once afterwards), `AddAfter` (delaying queue: the earliest pending time wins) and
 * `AddRateLimited`/`Forget` (ItemExponentialFailureRateLimiter 5 ms × 2^failures, capped at
 * 1000 s; the overall 10 qps bucket of DefaultControllerRateLimiter is not modelled).
 * {@link Workers} is `processNextWorkItem` with N workers running sync coroutines.
 */
import type { DurationUs } from '@podsim/api';
import { millis, seconds } from '@podsim/api';
import type { ControllerEnv, TimerHandle } from './env.js';
import { runSync, type Send, type Sync, type SyncError } from './coroutine.js';

/** ItemExponentialFailureRateLimiter base and cap (`workqueue.DefaultControllerRateLimiter`). */
export const RATE_LIMIT_BASE_US = millis(5);
export const RATE_LIMIT_MAX_US = seconds(1000);

export class WorkQueue {
  private items: string[] = [];
  private head = 0;
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly waiting = new Map<string, { at: number; timer: TimerHandle }>();

  /**
   * `onAdded` is called whenever a key becomes ready (the worker pool wakes up); `maxDelayUs`
   * caps the failure backoff (default 1000 s; the namespace controller's limiter uses 60 s).
   */
  constructor(
    private readonly env: ControllerEnv,
    private readonly onAdded: () => void,
    private readonly maxDelayUs: DurationUs = RATE_LIMIT_MAX_US,
    /** Base of the per-item exponential failure backoff (default 5 ms; the Job controller's queue uses 10 s, the EndpointSlice controllers' `defaultSyncBackOff` is 1 s). */
    private readonly baseDelayUs: DurationUs = RATE_LIMIT_BASE_US,
  ) {}

  /** Keys ready to be processed. */
  get length(): number {
    return this.items.length - this.head;
  }

  /** True if the key is queued, processing or waiting. */
  has(key: string): boolean {
    return this.dirty.has(key) || this.processing.has(key) || this.waiting.has(key);
  }

  add(key: string): void {
    if (this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.items.push(key);
    this.onAdded();
  }

  /** Adds after `delayUs`; if the key is already waiting, the earlier time wins. */
  addAfter(key: string, delayUs: DurationUs): void {
    if (delayUs <= 0) {
      this.add(key);
      return;
    }
    const at = this.env.now + delayUs;
    const w = this.waiting.get(key);
    if (w) {
      if (w.at <= at) return;
      this.env.cancel(w.timer);
    }
    const timer = this.env.after(delayUs, () => {
      this.waiting.delete(key);
      this.add(key);
    });
    this.waiting.set(key, { at, timer });
  }

  /** Requeues after the key's exponential failure backoff. */
  addRateLimited(key: string): void {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    this.addAfter(key, Math.min(this.baseDelayUs * 2 ** n, this.maxDelayUs));
  }

  /** Clears the key's failure count. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** Number of failures recorded for the key. */
  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Takes the next key (marks it processing), or undefined. */
  get(): string | undefined {
    if (this.head >= this.items.length) return undefined;
    const key = this.items[this.head++];
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    this.processing.add(key);
    this.dirty.delete(key);
    return key;
  }

  /** Ends processing of a key; requeues it if it was added meanwhile. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      this.items.push(key);
      this.onAdded();
    }
  }
}

/**
 * A sync's "try again in this long" that is not a failure (the namespace controller's
 * `ResourcesRemainingError`: `queue.AddAfter` without `Forget`, the failure count kept).
 */
export interface RequeueAfter {
  readonly requeueAfterUs: DurationUs;
}

/**
 * A successful sync that must not `Forget` the key (the Job controller's `forget == false`: the
 * failure count, which is its pod-failure back-off, is kept for the next failure).
 */
export interface KeepFailures {
  readonly keepFailures: true;
}

/** What a sync coroutine run by {@link Workers} returns: done, failed (rate-limited), requeue later, or done without forgetting. */
export type SyncResult = SyncError | RequeueAfter | KeepFailures | undefined;

function isRequeueAfter(r: SyncResult): r is RequeueAfter {
  return r !== undefined && 'requeueAfterUs' in r;
}

/**
 * N workers (`for i := 0; i < workers; i++ { go wait.Until(worker) }`) taking keys from a
 * {@link WorkQueue} and running the controller's sync coroutine for each. A sync that returns a
 * {@link SyncError} is requeued rate-limited; success forgets the key's failures. Workers are
 * woken by a zero-delay timer, so several events at one instant coalesce into one sync.
 */
export class Workers {
  readonly queue: WorkQueue;
  private busy = 0;
  private wakeScheduled = false;
  private running = false;
  /** Syncs completed (for tests and metrics). */
  syncs = 0;

  constructor(
    private readonly env: ControllerEnv,
    private readonly workers: number,
    private readonly sync: (key: string) => Sync<SyncResult>,
    private readonly send: Send,
    private readonly onError?: (key: string, err: SyncError) => void,
    maxDelayUs?: DurationUs,
    baseDelayUs?: DurationUs,
  ) {
    this.queue = new WorkQueue(env, () => this.wake(), maxDelayUs, baseDelayUs);
  }

  /** Starts the workers (controllers start after their informers synced: `WaitForCacheSync`). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.wake();
  }

  private wake(): void {
    if (!this.running || this.wakeScheduled || this.busy >= this.workers || this.queue.length === 0) return;
    this.wakeScheduled = true;
    this.env.after(0, () => {
      this.wakeScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.busy < this.workers) {
      const key = this.queue.get();
      if (key === undefined) return;
      this.busy++;
      runSync(this.sync(key), this.send, (err) => {
        this.busy--;
        this.syncs++;
        if (isRequeueAfter(err)) {
          this.queue.addAfter(key, err.requeueAfterUs);
        } else if (err !== undefined && 'keepFailures' in err) {
          // Success without Forget: nothing to do.
        } else if (err) {
          this.onError?.(key, err);
          this.queue.addRateLimited(key);
        } else {
          this.queue.forget(key);
        }
        this.queue.done(key);
        if (this.queue.length > 0) this.wake();
      });
    }
  }
}
