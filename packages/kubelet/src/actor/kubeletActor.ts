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
  runtimeActorId,
  type Actor,
  type ActorContext,
  type ApiResult,
  type ApiWatchEvent,
  type Message,
} from '@podsim/api';
import type { KubeletEnv } from '../env.js';
import { Kubelet } from '../kubelet.js';
import { resolveKubeletConfig } from '../kubeletConfig.js';

/**
 * A {@link KubeletEnv} over the engine's context: `getCtx()` returns the context of the handler
 * running now. Timers map to callbacks kept here; CRI calls go to `runtime/<nodeName>`.
 */
export function actorEnv(getCtx: () => ActorContext, nodeName: string): { env: KubeletEnv; fireTimer(id: number): void } {
  const runtime = runtimeActorId(nodeName);
  const callbacks = new Map<number, () => void>();
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
      getCtx().request(runtime, req, (reply) => {
        if (reply.type === 'RequestTimedOut') return;
        cb(reply as never);
      });
    },
    api(req, cb) {
      getCtx().request(APISERVER_ACTOR, req, (reply) => {
        if (reply.type === 'RequestTimedOut') return;
        cb(reply as ApiResult);
      });
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

/** `createActor(id, config)`: config is a partial `KubeletConfig` with at least `nodeName`. */
export function createActor(id: string, config: unknown): Actor {
  const cfg = resolveKubeletConfig(config);
  let ctx!: ActorContext;
  let kubelet!: Kubelet;
  const { env, fireTimer } = actorEnv(() => ctx, cfg.nodeName);
  return {
    start(c) {
      ctx = c;
      const prefix = `${id}#${c.incarnation}`;
      // The previous incarnation's watch would keep sending to this actor id.
      if (c.incarnation > 1) c.send(APISERVER_ACTOR, { type: 'ApiUnwatch', watchId: `${id}#${c.incarnation - 1}-pods` } as Message);
      kubelet = new Kubelet(env, cfg, prefix);
      kubelet.start();
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
