/**
 * Synthetic actors for the engine stress runner (bench/stress.ts) and its pinned regression tests, shaped like podsim's cluster:
 * a hub (apiserver-like: answers requests, multicasts a watch event to its watchers on writes),
 * node agents (kubelet-like periodic chains: relist the runtime, then write status to the hub),
 * runtimes (answer some calls at once, some after a delay, push unsolicited events), a quiet
 * controller (long idle stretches, occasional bursts) and a driver (idle, then a burst of
 * writes at `burstAtUs`). Loaded by URL in host threads and called directly for LocalSimulation.
 */
import type { Actor, ActorContext, Envelope, Message } from '@podsim/api';

export interface HubConfig {
  /** Ids that receive a watch event (multicast) for every write. */
  readonly watchers: readonly string[];
}

/** apiserver-like: every request is answered; a `Write` also multicasts `Event` to the watchers. */
export function createHub(_id: string, config: unknown): Actor {
  const c = config as HubConfig;
  let rv = 0;
  return {
    receive(ctx, env) {
      const b = env.body as Message & { key?: string };
      if (b.type === 'Write') {
        rv++;
        ctx.trace('hub.write', `${env.from} ${b.key ?? ''} rv ${rv}`);
        ctx.reply(env, { type: 'WriteResult', rv } as Message);
        if (c.watchers.length > 0) ctx.multicast(c.watchers, { type: 'Event', rv, key: b.key } as Message);
      } else if (env.requestId !== undefined) {
        ctx.reply(env, { type: `${b.type}Result`, rv } as Message);
      }
    },
  };
}

export interface AgentConfig {
  readonly hub: string;
  readonly runtime: string;
  /** Relist period (virtual µs); housekeeping runs every 2 periods. */
  readonly periodUs: number;
  readonly untilUs: number;
}

/** kubelet-like: relist the runtime every period; on its answer write status to the hub. */
export function createAgent(id: string, config: unknown): Actor {
  const c = config as AgentConfig;
  let n = 0;
  const relist = (ctx: ActorContext) => {
    const k = ++n;
    ctx.request(
      c.runtime,
      { type: 'ListContainers', n: k } as Message,
      (reply) => {
        ctx.trace('agent.relist', `#${k} ${reply.type}`);
        if (ctx.random() < 0.3) ctx.request(c.hub, { type: 'Write', key: `${id}/${k}` } as Message, (r) => ctx.trace('agent.status', r.type));
      },
      { timeoutUs: 4 * c.periodUs },
    );
  };
  return {
    start(ctx) {
      ctx.setTimer(1 + ctx.stream('phase').int(c.periodUs), 'relist');
      ctx.setTimer(1 + ctx.stream('phase').int(2 * c.periodUs), 'housekeeping');
    },
    receive(ctx, env) {
      ctx.trace('agent.recv', `${env.body.type} from ${env.from}`);
      if (env.body.type === 'ContainerDied') relist(ctx);
    },
    onTimer(ctx, payload) {
      if (ctx.now >= c.untilUs) return;
      if (payload === 'relist') {
        relist(ctx);
        ctx.setTimer(c.periodUs, 'relist');
      } else {
        ctx.count('housekeeping');
        if (ctx.random() < 0.1) ctx.request(c.hub, { type: 'List' } as Message, (r) => ctx.trace('agent.list', r.type));
        ctx.setTimer(2 * c.periodUs, 'housekeeping');
      }
    },
  };
}

export interface RuntimeConfig {
  readonly agent: string;
  /** Mean gap between unsolicited ContainerDied events (virtual µs; 0 = none). */
  readonly diesEveryUs: number;
  readonly untilUs: number;
}

/** CRI-like: answers most calls at once, some after a delay; now and then a container dies. */
export function createRuntime(_id: string, config: unknown): Actor {
  const c = config as RuntimeConfig;
  const held = new Map<number, Envelope>();
  return {
    start(ctx) {
      if (c.diesEveryUs > 0) ctx.setTimer(1 + ctx.stream('die').int(2 * c.diesEveryUs), 'die');
    },
    receive(ctx, env) {
      if (env.requestId === undefined) return;
      if (ctx.random() < 0.8) ctx.reply(env, { type: 'ListContainersResult' } as Message);
      else held.set(ctx.setTimer(1 + ctx.stream('slow').int(500), 'answer'), env);
    },
    onTimer(ctx, payload, timerId) {
      if (payload === 'answer') {
        const env = held.get(timerId)!;
        held.delete(timerId);
        ctx.reply(env, { type: 'ListContainersResult', slow: true } as Message);
        return;
      }
      if (ctx.now >= c.untilUs) return;
      ctx.send(c.agent, { type: 'ContainerDied' } as Message);
      ctx.setTimer(1 + ctx.stream('die').int(2 * c.diesEveryUs), 'die');
    },
  };
}

export interface QuietConfig {
  readonly hub: string;
  /** Local tick period (virtual µs): most ticks send nothing. */
  readonly tickUs: number;
  /** Probability that a tick writes to the hub. */
  readonly writeProbability: number;
  readonly untilUs: number;
}

/** scheduler/controller-like: frequent local ticks, rare writes; reacts to some watch events. */
export function createQuiet(id: string, config: unknown): Actor {
  const c = config as QuietConfig;
  let ticks = 0;
  return {
    start(ctx) {
      ctx.setTimer(1 + ctx.stream('phase').int(c.tickUs));
    },
    receive(ctx, env) {
      if (env.body.type === 'Event' && ctx.random() < 0.05) {
        ctx.request(c.hub, { type: 'Write', key: `${id}/react` } as Message, (r) => ctx.trace('quiet.react', r.type));
      }
    },
    onTimer(ctx) {
      ticks++;
      ctx.count('quiet.ticks');
      if (ctx.random() < c.writeProbability) {
        ctx.request(c.hub, { type: 'Write', key: `${id}/${ticks}` } as Message, (r) => ctx.trace('quiet.write', r.type));
      }
      if (ctx.now + c.tickUs < c.untilUs) ctx.setTimer(c.tickUs);
    },
  };
}

export interface DriverConfig {
  readonly hub: string;
  readonly burstAtUs: number;
  readonly burst: number;
  /** Calls stopRun after the burst was answered. */
  readonly stop: boolean;
}

/** The scenario driver: idle until `burstAtUs`, then `burst` writes one after another, then stop. */
export function createDriver(_id: string, config: unknown): Actor {
  const c = config as DriverConfig;
  let left = c.burst;
  const next = (ctx: ActorContext) => {
    if (left-- <= 0) {
      ctx.trace('driver.done', 'burst answered');
      if (c.stop) ctx.stopRun('driver done');
      return;
    }
    ctx.request(c.hub, { type: 'Write', key: `driver/${left}` } as Message, () => next(ctx));
  };
  return {
    start(ctx) {
      ctx.setTimer(c.burstAtUs);
    },
    receive(ctx, env) {
      ctx.trace('driver.recv', env.body.type);
    },
    onTimer(ctx) {
      next(ctx);
    },
  };
}
