/**
 * The CRI runtime actor of one node (`runtime/<nodeName>`): the containerd (CRI plugin) process the
 * kubelet's `remoteRuntimeService` / `remoteImageService` (`pkg/kubelet/cri/remote/`) talk to. A
 * thin shell: it checks the config, hands every CRI request and timer to {@link CriRuntime}, and
 * answers with `ctx.reply`. Requests must come through `ctx.request` (replies need a request id).
 */
import type { Actor, ActorContext, Envelope, cri } from '@podsim/api';
import { CriRuntime, type RuntimeConfig } from '../criRuntime.js';

export type { RuntimeConfig } from '../criRuntime.js';

/** `ActorFactory` for the runtime; `config` is a {@link RuntimeConfig} (throws if it is invalid). */
export function createActor(_id: string, config: unknown): Actor {
  const runtime = new CriRuntime<Envelope>(config as RuntimeConfig);
  return {
    start(ctx: ActorContext) {
      runtime.start(ctx);
    },
    receive(ctx: ActorContext, env: Envelope) {
      runtime.handle(ctx, env.body as cri.CriRequest, env);
    },
    onTimer(ctx: ActorContext, payload: unknown) {
      runtime.onTimer(ctx, payload);
    },
  };
}
