/**
 * Client-side token bucket: client-go `flowcontrol.NewTokenBucketRateLimiter(qps, burst)` as the
 * kubelet's REST client uses it (`kubeAPIQPS` 5 / `kubeAPIBurst` 10, spec §10.7). Requests wait
 * FIFO for a token, like goroutines blocked in `Wait`. Pure: the caller passes virtual time.
 */

/** A token bucket over virtual µs. Starts full (burst tokens). */
export class TokenBucket {
  private tokens: number;
  private last: number;
  /** µs per token. */
  private readonly perTokenUs: number;

  constructor(qps: number, readonly burst: number, now: number) {
    this.perTokenUs = 1_000_000 / qps;
    this.tokens = burst;
    this.last = now;
  }

  private refill(now: number): void {
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + (now - this.last) / this.perTokenUs);
      this.last = now;
    }
  }

  /**
   * Reserves one token and returns the delay in µs (0 = now) after which the caller may go:
   * client-go's `Reserve().Delay()`, which is what a blocking `Wait` amounts to.
   */
  reserve(now: number): number {
    this.refill(now);
    this.tokens -= 1;
    if (this.tokens >= 0) return 0;
    return Math.ceil(-this.tokens * this.perTokenUs);
  }
}
