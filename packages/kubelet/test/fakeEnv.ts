/**
 * A deterministic fake of {@link KubeletEnv} for unit tests: a virtual clock with a timer queue,
 * CRI and API handlers supplied by the test (replies after `latencyUs`), recorded traces.
 */
import { Clock, deriveStream, type ApiRequest, type ApiResult, type cri, type Prng } from '@podsim/api';
import type { CriRequestOf, KubeletEnv } from '../src/env.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

export type CriHandler = (req: cri.CriRequest, reply: (res: cri.CriResult, delayUs?: number) => void) => void;
export type ApiHandler = (req: ApiRequest, reply: (res: ApiResult, delayUs?: number) => void) => void;

export class FakeEnv implements KubeletEnv {
  t = 0;
  private seq = 0;
  private readonly timers = new Map<number, Timer>();
  private readonly streams = new Map<string, Prng>();
  readonly clock = new Clock();
  readonly traces: { t: number; kind: string; msg: string; data?: Record<string, unknown> }[] = [];
  readonly criCalls: { t: number; req: cri.CriRequest }[] = [];
  readonly apiCalls: { t: number; req: ApiRequest }[] = [];
  latencyUs = 100;

  constructor(
    public criHandler: CriHandler = () => {},
    public apiHandler: ApiHandler = () => {},
  ) {}

  now(): number {
    return this.t;
  }
  setTimer(delayUs: number, fn: () => void): number {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, Math.floor(delayUs)), seq: id, fn, cancelled: false });
    return id;
  }
  cancelTimer(id: number): void {
    this.timers.delete(id);
  }
  cri<K extends cri.CriRequest['type']>(req: CriRequestOf<K>, cb: (res: cri.CriResultOf[K]) => void): void {
    this.criCalls.push({ t: this.t, req });
    this.setTimer(this.latencyUs, () => this.criHandler(req, (res, d) => this.setTimer(d ?? this.latencyUs, () => cb(res as cri.CriResultOf[K]))));
  }
  api(req: ApiRequest, cb: (res: ApiResult) => void): void {
    this.apiCalls.push({ t: this.t, req });
    this.setTimer(this.latencyUs, () => this.apiHandler(req, (res, d) => this.setTimer(d ?? this.latencyUs, () => cb(res))));
  }
  jitter(d: number, f: number): number {
    return this.stream('jitter').jitter(d, f);
  }
  stream(name: string): Prng {
    let s = this.streams.get(name);
    if (!s) this.streams.set(name, (s = deriveStream(1, name)));
    return s;
  }
  newId(): string {
    return `id${++this.seq}`;
  }
  trace(kind: string, msg: string, data?: Record<string, unknown>): void {
    this.traces.push({ t: this.t, kind, msg, data });
  }
  tracing(): boolean {
    return true;
  }
  count(): void {}

  /** Runs timers due before `until` (µs) in (time, creation) order. */
  runUntil(until: number): void {
    for (;;) {
      let next: Timer | undefined;
      for (const tm of this.timers.values()) if (!next || tm.at < next.at || (tm.at === next.at && tm.seq < next.seq)) next = tm;
      if (!next || next.at >= until) break;
      this.timers.delete(next.seq);
      this.t = next.at;
      next.fn();
    }
    this.t = Math.max(this.t, until);
  }
}

export const S = 1_000_000;
