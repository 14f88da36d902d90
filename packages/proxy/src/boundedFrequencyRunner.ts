/**
 * kube-proxy's `BoundedFrequencyRunner` (kubernetes v1.22 `pkg/util/async/
 * bounded_frequency_runner.go`) as a pure machine over virtual µs: a function run at most once
 * per `minInterval` on average (a token bucket of qps = 1/minInterval, `burstRuns` tokens,
 * starting full), at least once per `maxInterval`, never concurrently. `run()` asks for a run:
 * with a token it runs now; otherwise the timer is re-armed to
 * min(time until the next allowed run, the periodic run), and requests coalesce. `minInterval`
 * 0 means no limiter (every request runs, serialised). The caller owns the timer: every method
 * returns the virtual time at which {@link BoundedFrequencyRunner.onTimer} must be called next.
 * A run occupies the runner from its start until {@link BoundedFrequencyRunner.finished} (the
 * sync's duration); a request meanwhile is remembered and tried once it ends, as the Go loop
 * reads its `run` channel only between runs.
 */
import type { DurationUs, VirtualTime } from '@podsim/api';

export interface BfrDecision {
  /** Start the function now (then call `finished` when it returns). */
  readonly runNow: boolean;
  /** When `onTimer` is due (the single timer of the loop). */
  readonly timerAt: VirtualTime;
}

export class BoundedFrequencyRunner {
  private tokens: number;
  private lastRefill: VirtualTime;
  /** End of the last run (`lastRun`). */
  private lastRun: VirtualTime;
  private timerAt: VirtualTime;
  private running = false;
  private pending = false;
  /** Runs started (for tests and metrics). */
  runs = 0;

  /** `NewBoundedFrequencyRunner(name, fn, minInterval, maxInterval, burstRuns)` at virtual time `now`. */
  constructor(
    readonly minIntervalUs: DurationUs,
    readonly maxIntervalUs: DurationUs,
    readonly burstRuns: number,
    now: VirtualTime,
  ) {
    if (maxIntervalUs < minIntervalUs) throw new Error(`BoundedFrequencyRunner: maxInterval (${maxIntervalUs}) < minInterval (${minIntervalUs})`);
    this.tokens = burstRuns;
    this.lastRefill = now;
    this.lastRun = now;
    this.timerAt = now + maxIntervalUs;
  }

  /** Is a run in progress? */
  get busy(): boolean {
    return this.running;
  }

  private refill(now: VirtualTime): void {
    if (this.minIntervalUs <= 0) return;
    this.tokens = Math.min(this.burstRuns, this.tokens + (now - this.lastRefill) / this.minIntervalUs);
    this.lastRefill = now;
  }

  /** `limiter.TryAccept()`: take a token if one is there (always true without a limiter). */
  private tryAccept(now: VirtualTime): boolean {
    if (this.minIntervalUs <= 0) return true;
    this.refill(now);
    // Tokens are fractional; a tiny epsilon absorbs the rounding of µs arithmetic.
    if (this.tokens >= 1 - 1e-9) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  /** `tryRun`: run now if allowed, else re-arm the timer for the earliest allowed time. */
  private tryRun(now: VirtualTime): BfrDecision {
    if (this.tryAccept(now)) {
      this.running = true;
      this.runs++;
      // The pending early run is this one; the periodic run is re-armed when it returns.
      this.timerAt = now + this.maxIntervalUs;
      return { runNow: true, timerAt: this.timerAt };
    }
    const nextPossible = this.lastRun + this.minIntervalUs;
    // The token bucket may allow a run sooner than minInterval after the last one only with tokens; none here.
    const refillAt = this.lastRefill + Math.ceil((1 - this.tokens) * this.minIntervalUs);
    const next = Math.max(now, Math.min(Math.max(nextPossible, refillAt), this.timerAt));
    if (next < this.timerAt) this.timerAt = next;
    return { runNow: false, timerAt: this.timerAt };
  }

  /** `Run()`: ask for a run (non-blocking; coalesces with a pending one). */
  run(now: VirtualTime): BfrDecision {
    if (this.running) {
      this.pending = true;
      return { runNow: false, timerAt: this.timerAt };
    }
    return this.tryRun(now);
  }

  /** The timer fired at `now`. */
  onTimer(now: VirtualTime): BfrDecision {
    if (now < this.timerAt) return { runNow: false, timerAt: this.timerAt };
    if (this.running) {
      this.pending = true;
      this.timerAt = now + this.maxIntervalUs;
      return { runNow: false, timerAt: this.timerAt };
    }
    return this.tryRun(now);
  }

  /** The run started last returned at `now`: the periodic timer restarts; a request meanwhile is tried. */
  finished(now: VirtualTime): BfrDecision {
    this.running = false;
    this.lastRun = now;
    this.timerAt = now + this.maxIntervalUs;
    if (this.pending) {
      this.pending = false;
      return this.tryRun(now);
    }
    return { runNow: false, timerAt: this.timerAt };
  }

  /** `RetryAfter(interval)`: an earlier run if sooner than the pending timer. */
  retryAfter(now: VirtualTime, intervalUs: DurationUs): BfrDecision {
    const at = now + intervalUs;
    if (at < this.timerAt) this.timerAt = at;
    return { runNow: false, timerAt: this.timerAt };
  }
}
