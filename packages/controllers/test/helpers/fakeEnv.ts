/**
 * A ControllerEnv on a manual virtual clock, and a fake API that records requests and lets the
 * test answer them: table-driven tests of the pure controllers, no engine.
 */
import type { ApiRequest, ApiResult, KubeObject, Prng, Status } from '@podsim/api';
import { Clock, DEFAULT_EPOCH_UNIX_SECONDS, deriveStream } from '@podsim/api';
import type { ControllerEnv } from '../../src/env.js';
import { ApiClient } from '../../src/client.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

export class FakeEnv implements ControllerEnv {
  now = 0;
  readonly clock = new Clock(DEFAULT_EPOCH_UNIX_SECONDS);
  readonly traces: { kind: string; msg: string; data?: Record<string, unknown> }[] = [];
  private timers: Timer[] = [];
  private seq = 0;
  private readonly streams = new Map<string, Prng>();

  after(delayUs: number, fn: () => void): number {
    const t = { at: this.now + delayUs, seq: this.seq++, fn, cancelled: false };
    this.timers.push(t);
    return t.seq;
  }
  cancel(h: number): void {
    const t = this.timers.find((x) => x.seq === h);
    if (t) t.cancelled = true;
  }
  stream(name: string): Prng {
    let s = this.streams.get(name);
    if (!s) this.streams.set(name, (s = deriveStream(1, name)));
    return s;
  }
  trace(kind: string, msg: string, data?: Record<string, unknown>): void {
    this.traces.push({ kind, msg, data });
  }
  tracing(): boolean {
    return true;
  }
  count(): void {}

  /** Runs due timers (in time, then creation order) up to now + `us`, moving the clock. */
  advance(us: number): void {
    const end = this.now + us;
    for (;;) {
      const due = this.timers.filter((t) => !t.cancelled && t.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.now = due.at;
      due.fn();
    }
    this.now = end;
  }

  /** Fires zero-delay timers (the worker wake-ups) without moving the clock. */
  flush(): void {
    this.advance(0);
  }
}

/** A pending request and how to answer it. */
export interface Pending {
  readonly req: ApiRequest;
  answer(code: number, body?: unknown): void;
}

/** Records requests; answers them automatically with `auto` when given, else leaves them pending. */
export class FakeApi {
  readonly sent: ApiRequest[] = [];
  pending: Pending[] = [];
  auto: ((req: ApiRequest) => ApiResult | undefined) | undefined;

  readonly transport = (req: ApiRequest, onResult: (res: ApiResult) => void): void => {
    this.sent.push(req);
    const r = this.auto?.(req);
    if (r) {
      onResult(r);
      return;
    }
    this.pending.push({ req, answer: (code, body) => onResult({ type: 'ApiResult', code, body: (body ?? status(code)) as KubeObject }) });
  };

  client(env: ControllerEnv, qps = 0, burst = 0): ApiClient {
    return new ApiClient(env, this.transport, { name: 'test', qps, burst, timeoutUs: 60_000_000 });
  }

  /** Takes the pending requests (the test answers them). */
  take(): Pending[] {
    const p = this.pending;
    this.pending = [];
    return p;
  }
}

export function status(code: number, reason?: string, message?: string): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: code < 300 ? 'Success' : 'Failure', code, reason: reason as Status['reason'], message };
}
