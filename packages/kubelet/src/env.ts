/**
 * What the kubelet's pure modules need from the outside, as one small interface: virtual time,
 * timers, CRI calls, API calls, seeded jitter and trace. The actor shell
 * (`actor/kubeletActor.ts`) implements it over `ActorContext`; unit tests implement it with a
 * fake clock and fake runtime. A Kubernetes goroutine blocked on a call is a callback here.
 */
import type { ApiRequest, ApiResult, Clock, cri, Prng, VirtualTime } from '@podsim/api';

export type CriRequestOf<K extends cri.CriRequest['type']> = Extract<cri.CriRequest, { type: K }>;

export interface KubeletEnv {
  /** Virtual µs. */
  now(): VirtualTime;
  /** Maps virtual time to RFC 3339 (`metav1.Time`). */
  readonly clock: Clock;
  /** Runs `fn` after `delayUs` virtual µs; returns a handle for {@link cancelTimer}. */
  setTimer(delayUs: number, fn: () => void): number;
  cancelTimer(handle: number): void;
  /** One CRI call to this node's runtime; `cb` gets the reply (`error` set on failure). */
  cri<K extends cri.CriRequest['type']>(req: CriRequestOf<K>, cb: (res: cri.CriResultOf[K]) => void): void;
  /**
   * One raw apiserver call (callers go through the rate-limited `ApiClient`). `timeoutUs`
   * overrides the client timeout (the heartbeat client's is 10 s); 504 after it.
   */
  api(req: ApiRequest, cb: (res: ApiResult) => void, timeoutUs?: number): void;
  /** `wait.Jitter(d, factor)`: d + rand·factor·d, from the kubelet's seeded jitter stream. */
  jitter(d: number, factor: number): number;
  /** A seeded stream for one purpose (`ctx.stream(name)`). */
  stream(name: string): Prng;
  /** A seeded id (event names). */
  newId(): string;
  trace(kind: string, msg: string, data?: Record<string, unknown>): void;
  tracing(kind: string): boolean;
  count(name: string, delta?: number): void;
}
