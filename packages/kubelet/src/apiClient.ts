/**
 * The kubelet's API clients (`pkg/kubelet/kubelet.go` NewMainKubelet: `kubeClient`,
 * `heartbeatClient`, and the event client). Every request of the main client first waits for a
 * token of the kubeAPIQPS/kubeAPIBurst bucket (spec §10.7, case C22); events use their own
 * bucket and a bounded queue (the broadcaster drops when its 1000-deep channel is full); the
 * heartbeat client (node status GET) is not rate limited (QPS −1 upstream with NodeLease).
 */
import { CLIENT_THROTTLE_TRACE, type ApiRequest, type ApiResult } from '@podsim/api';
import type { KubeletEnv } from './env.js';
import { TokenBucket } from './rateLimiter.js';

export class ApiClient {
  private readonly bucket: TokenBucket | undefined;
  private waiting = 0;

  /** `qps` ≤ 0 = unlimited. `maxWaiting` bounds the queue (excess requests are dropped: callback not called). */
  constructor(
    private readonly env: KubeletEnv,
    private readonly qps: number,
    private readonly burst: number,
    private readonly maxWaiting = Infinity,
    /** Names the client in {@link CLIENT_THROTTLE_TRACE} records. */
    private readonly name = 'kubelet',
  ) {
    this.bucket = qps > 0 ? new TokenBucket(qps, burst, env.now()) : undefined;
  }

  /** Requests waiting for a token now. */
  get queued(): number {
    return this.waiting;
  }

  /** Sends `req` once a token is available; `cb` gets the apiserver's reply. Returns false if dropped. */
  request(req: ApiRequest, cb: (res: ApiResult) => void): boolean {
    if (this.waiting >= this.maxWaiting) return false;
    const delay = this.bucket ? this.bucket.reserve(this.env.now()) : 0;
    if (delay === 0) {
      this.env.api(req, cb);
      return true;
    }
    this.waiting++;
    // Only when the report asks: the wait that makes a mass delete drain at kubeAPIQPS (C22).
    if (this.env.tracing(CLIENT_THROTTLE_TRACE)) {
      this.env.trace(CLIENT_THROTTLE_TRACE, `${req.type} waited ${delay}us`, { client: this.name, waitUs: delay, qps: this.qps, burst: this.burst });
    }
    this.env.setTimer(delay, () => {
      this.waiting--;
      this.env.api(req, cb);
    });
    return true;
  }
}
