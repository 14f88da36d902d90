/**
 * A rate-limited API client: client-go's token bucket (`flowcontrol.NewTokenBucketRateLimiter`,
 * reservations as golang.org/x/time/rate). kube-controller-manager gives each controller its own
 * client (`--kube-api-qps` 20, burst 30); kube-scheduler uses qps 50, burst 100. A request not
 * answered within `timeoutUs` resolves as 504, so a sync never waits forever (DESIGN.md §9).
 */
import type { ApiRequest, ApiResult, DurationUs, VirtualTime } from '@podsim/api';
import { CLIENT_THROTTLE_TRACE, US_PER_SECOND } from '@podsim/api';
import type { ControllerEnv } from './env.js';

/** Sends a request to the apiserver (the shell wraps `ctx.request`). */
export type Transport = (req: ApiRequest, onResult: (res: ApiResult) => void, timeoutUs: DurationUs) => void;

/** Token bucket with reservations (golang.org/x/time/rate semantics, which client-go uses). */
export class TokenBucket {
  private tokens: number;
  private last: VirtualTime;

  /** `qps` ≤ 0 disables limiting. */
  constructor(
    readonly qps: number,
    readonly burst: number,
    now: VirtualTime,
  ) {
    this.tokens = burst;
    this.last = now;
  }

  /** Takes one token now and returns how many µs the caller must wait before using it. */
  reserve(now: VirtualTime): DurationUs {
    if (this.qps <= 0) return 0;
    const elapsed = Math.max(0, now - this.last);
    this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.qps) / US_PER_SECOND);
    this.last = Math.max(this.last, now);
    this.tokens -= 1;
    if (this.tokens >= 0) return 0;
    return Math.ceil((-this.tokens * US_PER_SECOND) / this.qps);
  }
}

export interface ApiClientOptions {
  /** Client name (the `user-agent`/controller name; shows in traces). */
  readonly name: string;
  readonly qps: number;
  readonly burst: number;
  /** Virtual µs after which an unanswered request resolves as 504. */
  readonly timeoutUs: DurationUs;
}

export class ApiClient {
  private readonly bucket: TokenBucket;
  /** Requests sent so far (for metrics and tests). */
  sent = 0;

  constructor(
    private readonly env: ControllerEnv,
    private readonly transport: Transport,
    readonly options: ApiClientOptions,
  ) {
    this.bucket = new TokenBucket(options.qps, options.burst, env.now);
  }

  /** Sends `req` once the rate limiter allows; `onResult` is called exactly once. */
  send(req: ApiRequest, onResult: (res: ApiResult) => void): void {
    const wait = this.bucket.reserve(this.env.now);
    const go = () => {
      this.sent++;
      this.transport(req, onResult, this.options.timeoutUs);
    };
    if (wait === 0) go();
    else {
      // Only when the report asks (CLIENT_THROTTLE_TRACE is not digested).
      if (this.env.tracing(CLIENT_THROTTLE_TRACE)) {
        this.env.trace(CLIENT_THROTTLE_TRACE, `${this.options.name} ${req.type} waited ${wait}us`, { client: this.options.name, waitUs: wait, qps: this.options.qps, burst: this.options.burst });
      }
      this.env.after(wait, go);
    }
  }

  /** `send` bound to this client, for {@link runSync}. */
  readonly sender = (req: ApiRequest, onResult: (res: ApiResult) => void): void => this.send(req, onResult);
}
