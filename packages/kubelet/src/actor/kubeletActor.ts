/**
 * The kubelet actor shell (`kubelet/<node>`): decodes messages and timers, hands them to the
 * {@link Kubelet}, and implements {@link KubeletEnv} over the engine's ActorContext (timers map
 * to callbacks, CRI calls go to `runtime/<node>`, API calls to `apiserver`). A crash loses all of
 * this; the restarted incarnation rebuilds from the apiserver (list/watch) and the runtime
 * (relist), as a restarted kubelet does (spec §15).
 */
import {
  APISERVER_ACTOR,
  Clock,
  US_PER_MINUTE,
  US_PER_SECOND,
  type cri,
  runtimeActorId,
  type Actor,
  type ActorContext,
  type ApiResult,
  type ApiWatchEvent,
  type Message,
  type RequestUnavailable,
} from '@podsim/api';
import type { KubeletEnv } from '../env.js';
import { Kubelet } from '../kubelet.js';
import { resolveKubeletConfig } from '../kubeletConfig.js';

/**
 * A {@link KubeletEnv} over the engine's context: `getCtx()` returns the context of the handler
 * running now. Timers map to callbacks kept here; CRI calls go to `runtime/<nodeName>`.
 */
/** Request options of a CRI call without a deadline (every CRI call is failFast). */
const CRI_NO_TIMEOUT = { timeoutUs: undefined, failFast: true } as const;

export function actorEnv(
  getCtx: () => ActorContext,
  nodeName: string,
  timeouts: { runtimeRequestTimeoutUs: number; apiRequestTimeoutUs: number } = { runtimeRequestTimeoutUs: 2 * US_PER_MINUTE, apiRequestTimeoutUs: US_PER_MINUTE },
): { env: KubeletEnv; fireTimer(id: number): void } {
  const runtime = runtimeActorId(nodeName);
  const callbacks = new Map<number, () => void>();
  const apiOpts = { timeoutUs: timeouts.apiRequestTimeoutUs, failFast: true } as const;
  let clock: Clock | undefined;
  const env: KubeletEnv = {
    now: () => getCtx().now,
    get clock() {
      clock ??= new Clock(getCtx().epochUnixSeconds);
      return clock;
    },
    setTimer(delayUs, fn) {
      const t = getCtx().setTimer(Math.max(0, delayUs));
      callbacks.set(t, fn);
      return t;
    },
    cancelTimer(t) {
      getCtx().cancelTimer(t);
      callbacks.delete(t);
    },
    cri(req, cb) {
      const timeoutUs = criTimeoutUs(req, timeouts.runtimeRequestTimeoutUs);
      // containerd's unix socket: with the runtime down, gRPC fails at once (Unavailable) and
      // the caller retries on its own schedule (the PLEG relists again after 1 s).
      getCtx().request(
        runtime,
        req,
        (reply) =>
          cb((reply.type === 'RequestTimedOut' ? criDeadlineExceeded(req.type) : reply.type === 'RequestUnavailable' ? criUnavailable(req.type) : reply) as never),
        // One object shape for every call (a spread of a conditional literal made each call
        // build a new shape: ~10 % of a 5k-pod storm's deletion wall time).
        timeoutUs === undefined ? CRI_NO_TIMEOUT : { timeoutUs, failFast: true },
      );
    },
    api(req, cb, timeoutUs) {
      // A kubelet (re)started while its connection to the apiserver is broken has none to lose
      // requests on: its dials fail at once (failFast) and the callers retry on their schedules.
      getCtx().request(
        APISERVER_ACTOR,
        req,
        (reply) => cb(reply.type === 'RequestTimedOut' ? apiTimeout() : reply.type === 'RequestUnavailable' ? apiUnavailable(reply as RequestUnavailable) : (reply as ApiResult)),
        timeoutUs === undefined ? apiOpts : { timeoutUs, failFast: true },
      );
    },
    jitter: (d, f) => getCtx().stream('jitter').jitter(d, f),
    stream: (name) => getCtx().stream(name),
    newId: () => getCtx().newId(10, '0123456789abcdef'),
    trace: (kind, msg, data) => getCtx().trace(kind, msg, data),
    tracing: (kind) => getCtx().tracing(kind),
    count: (name, delta) => getCtx().count(name, delta),
  };
  return {
    env,
    fireTimer(t) {
      const fn = callbacks.get(t);
      if (fn === undefined) return;
      callbacks.delete(t);
      fn();
    },
  };
}

/**
 * The CRI client's deadline (`pkg/kubelet/cri/remote/remote_runtime.go`): `runtimeRequestTimeout`
 * (2 m) for most calls, StopContainer timeout + it, ExecSync timeout + it (none for timeout 0,
 * e.g. a preStop hook), none for PullImage. Undefined = no deadline.
 */
function criTimeoutUs(req: cri.CriRequest, base: number): number | undefined {
  switch (req.type) {
    case 'StopContainer':
      return base + req.timeout * US_PER_SECOND;
    case 'ExecSync':
      return req.timeout === 0 ? undefined : base + req.timeout * US_PER_SECOND;
    case 'PullImage':
      return undefined;
    default:
      return base;
  }
}

/** The reply a CRI call gets when it failed with gRPC `code`: the error, empty lists. */
function criError(type: string, code: string, message: string): Message {
  return { type: `${type}Result`, error: { code, message }, items: [], containers: [], stdout: '', stderr: '', exitCode: -1, success: false } as Message;
}

/** The reply a CRI call gets when its deadline passed: DeadlineExceeded. */
function criDeadlineExceeded(type: string): Message {
  return criError(type, 'DeadlineExceeded', 'context deadline exceeded');
}

/**
 * The reply a CRI call gets when the runtime is not running (`RequestUnavailable`): gRPC
 * Unavailable, as from a dial of a containerd socket nobody listens on.
 */
function criUnavailable(type: string): Message {
  return criError(type, 'Unavailable', 'connection error: desc = "transport: Error while dialing dial unix /run/containerd/containerd.sock: connect: connection refused"');
}

/**
 * The result of an API request no connection could carry (`RequestUnavailable`): client-go
 * returns a dial error, not a Status; podsim's clients see a 503 whose message says so.
 */
function apiUnavailable(r: RequestUnavailable): ApiResult {
  const message = `dial tcp apiserver:6443: connect: ${r.reason === 'unreachable' ? 'no route to host' : 'connection refused'}`;
  return { type: 'ApiResult', code: 503, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'ServiceUnavailable', message, code: 503 } };
}

function apiTimeout(): ApiResult {
  return { type: 'ApiResult', code: 504, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Timeout', message: 'the client timed out waiting for the apiserver', code: 504 } };
}

/** `createActor(id, config)`: config is a partial `KubeletConfig` with at least `nodeName`. */
export function createActor(id: string, config: unknown): Actor {
  const cfg = resolveKubeletConfig(config);
  let ctx!: ActorContext;
  let kubelet!: Kubelet;
  const { env, fireTimer } = actorEnv(() => ctx, cfg.nodeName, cfg);
  return {
    start(c) {
      ctx = c;
      const prefix = `${id}#${c.incarnation}`;
      // The previous incarnation's watch would keep sending to this actor id.
      if (c.incarnation > 1) c.send(APISERVER_ACTOR, { type: 'ApiUnwatch', watchId: `${id}#${c.incarnation - 1}-pods` } as Message);
      kubelet = new Kubelet(env, cfg, prefix);
      // startDelayUs: the node boots later (nothing is addressed to it before: no watch yet).
      if (c.incarnation === 1 && cfg.startDelayUs > 0) env.setTimer(cfg.startDelayUs, () => kubelet.start());
      else kubelet.start();
    },
    receive(c, e) {
      ctx = c;
      if (e.body.type === 'ApiWatchEvent') kubelet.handleWatchEvent(e.body as unknown as ApiWatchEvent);
    },
    onTimer(c, _payload, t) {
      ctx = c;
      fireTimer(t);
    },
  };
}
