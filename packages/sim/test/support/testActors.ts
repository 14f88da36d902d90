/**
 * Actors for the engine's own tests, loaded by URL in host worker threads (compiled to
 * dist/test/support/testActors.js) and called directly for LocalSimulation comparisons.
 * Deliberately small: random timers, fan-out (multicast), request/reply with timeouts,
 * forwarding chains, and ways to fail (throw, exit the thread, spin forever).
 */
import type { Actor, ActorContext, Envelope, Message } from '@podsim/api';

export interface ChatterConfig {
  /** Ids this actor talks to. */
  readonly peers: readonly string[];
  /** Number of ticks, each a multicast + a request. */
  readonly ticks: number;
  /** Upper bound of the random gap between ticks, virtual µs. */
  readonly gapUs: number;
  /** At most this many multicast targets per tick. */
  readonly fanout: number;
  /** Call stopRun after the last tick. */
  readonly stopWhenDone?: boolean;
  /** Request timeout, virtual µs (default 5 ms). */
  readonly timeoutUs?: number;
}

interface Gossip extends Message {
  type: 'Gossip';
  n: number;
  hops: number;
}
interface Ask extends Message {
  type: 'Ask';
  n: number;
}
interface Answer extends Message {
  type: 'Answer';
  n: number;
  by: string;
}

/**
 * The determinism workload: on each tick (random gap) multicasts a Gossip to a random subset of
 * peers and requests an Answer from one peer; Gossip is forwarded onward with probability 1/3
 * (up to 3 hops); some Asks are answered after a random delay (a timer), some never.
 */
export function createActor(id: string, config: unknown): Actor {
  const c = config as ChatterConfig;
  let n = 0;
  const held = new Map<number, Envelope>();
  const tick = (ctx: ActorContext) => ctx.setTimer(1 + ctx.stream('gap').int(c.gapUs), 'tick');
  return {
    start(ctx) {
      ctx.trace('chatter.start', `inc ${ctx.incarnation}`);
      tick(ctx);
    },
    receive(ctx, env) {
      const b = env.body;
      if (b.type === 'Gossip') {
        const g = b as Gossip;
        ctx.trace('chatter.gossip', `${env.from}#${g.n} hop ${g.hops}`);
        ctx.count('gossip');
        if (g.hops < 3 && ctx.random() < 1 / 3) {
          const to = c.peers[ctx.stream('fwd').int(c.peers.length)];
          ctx.send(to, { type: 'Gossip', n: g.n, hops: g.hops + 1 } as Gossip);
        }
      } else if (b.type === 'Ask') {
        const r = ctx.random();
        if (r < 0.6) ctx.reply(env, { type: 'Answer', n: (b as Ask).n, by: id } as Answer);
        else if (r < 0.9) held.set(ctx.setTimer(1 + ctx.stream('hold').int(3 * c.gapUs), 'answer'), env);
        // else: never answered (the asker times out)
      }
    },
    onTimer(ctx, payload, timerId) {
      if (payload === 'answer') {
        const env = held.get(timerId)!;
        held.delete(timerId);
        ctx.reply(env, { type: 'Answer', n: (env.body as Ask).n, by: id } as Answer);
        return;
      }
      n++;
      ctx.count('ticks');
      const k = 1 + ctx.stream('fanout').int(c.fanout);
      const targets = c.peers.filter(() => ctx.random() < k / c.peers.length);
      if (targets.length > 0) ctx.multicast(targets, { type: 'Gossip', n, hops: 0 } as Gossip);
      const to = c.peers[ctx.stream('ask').int(c.peers.length)];
      const asked = n;
      ctx.request<Answer>(
        to,
        { type: 'Ask', n } as Ask,
        (reply) => ctx.trace('chatter.reply', reply.type === 'Answer' ? `#${asked} from ${(reply as Answer).by}` : `#${asked} timed out`),
        { timeoutUs: c.timeoutUs ?? 5_000 },
      );
      if (n < c.ticks) tick(ctx);
      else if (c.stopWhenDone) ctx.stopRun(`${id} done`);
    },
  };
}

export interface PingerConfig {
  readonly to: string;
  readonly everyUs: number;
  readonly untilUs: number;
  /** Requests with `failFast` (a local socket: a down `to` refuses at once). */
  readonly failFast?: boolean;
}

/** Sends Ping{n} to `to` every `everyUs` from `everyUs` on, and traces each Pong. */
export function createPinger(id: string, config: unknown): Actor {
  const c = config as PingerConfig;
  let n = 0;
  return {
    start(ctx) {
      ctx.setTimer(c.everyUs);
    },
    receive(ctx, env) {
      ctx.trace('ping.other', `${env.body.type} from ${env.from}`);
    },
    onTimer(ctx) {
      const k = ++n;
      const onReply = (r: Message) => ctx.trace('ping.reply', `${r.type} #${k}`);
      if (c.failFast) ctx.request(c.to, { type: 'Ping', n: k, sentAt: ctx.now } as Message, onReply, { timeoutUs: 2 * c.everyUs, failFast: true });
      else ctx.request(c.to, { type: 'Ping', n: k, sentAt: ctx.now } as Message, onReply, { timeoutUs: 2 * c.everyUs });
      if (ctx.now + c.everyUs <= c.untilUs) ctx.setTimer(c.everyUs);
    },
  };
}

export interface PongerConfig {
  /** Also sends a Tick to this actor every `tickEveryUs` (offset by half a period). */
  readonly tickTo?: string;
  readonly tickEveryUs?: number;
  readonly untilUs?: number;
}

/** Answers every Ping with a Pong and traces it (`ping.recv`, with n, send time and incarnation). */
export function createPonger(_id: string, config: unknown): Actor {
  const c = (config ?? {}) as PongerConfig;
  return {
    start(ctx) {
      if (c.tickTo && c.tickEveryUs) ctx.setTimer(c.tickEveryUs / 2);
    },
    receive(ctx, env) {
      if (env.body.type !== 'Ping') return;
      const b = env.body as Message & { n: number; sentAt: number };
      ctx.trace('ping.recv', `#${b.n} sent ${b.sentAt} inc ${ctx.incarnation}`, { n: b.n, sentAt: b.sentAt });
      ctx.reply(env, { type: 'Pong', n: b.n } as Message);
    },
    onTimer(ctx) {
      ctx.send(c.tickTo!, { type: 'Tick' } as Message);
      if (ctx.now + c.tickEveryUs! <= (c.untilUs ?? Infinity)) ctx.setTimer(c.tickEveryUs!);
    },
  };
}

export interface FailConfig {
  /** Fail when this timer fires (virtual µs), or on receiving a `Boom` message if omitted. */
  readonly atUs?: number;
  readonly how: 'throw' | 'exit' | 'spin';
}

/** Fails in the requested way: throws, ends its thread with process.exit(3), or never returns. */
export function createFailer(id: string, config: unknown): Actor {
  const c = config as FailConfig;
  const fail = (ctx: ActorContext) => {
    ctx.trace('fail.now', c.how);
    if (c.how === 'throw') throw new Error(`${id} was told to fail`);
    if (c.how === 'exit') process.exit(3);
    for (;;) {
      // Spins until the host thread is terminated.
    }
  };
  return {
    start(ctx) {
      if (c.atUs !== undefined) ctx.setTimer(c.atUs);
    },
    receive(ctx, env) {
      ctx.trace('fail.recv', env.body.type);
      if (env.body.type === 'Boom') fail(ctx);
    },
    onTimer(ctx) {
      fail(ctx);
    },
  };
}

/** Replies `Echo` to requests; forwards `Forward{to}` bodies as `Forwarded`; traces everything. */
export function createEcho(_id: string): Actor {
  return {
    receive(ctx, env) {
      ctx.trace('echo.recv', `${env.body.type} from ${env.from}`);
      if (env.requestId !== undefined) ctx.reply(env, { type: 'Echo', of: env.body } as Message);
      else if (env.body.type === 'Forward') ctx.send((env.body as Message & { to: string }).to, { type: 'Forwarded', by: ctx.self } as Message);
    },
  };
}

export interface StopperConfig {
  readonly atUs: number;
  readonly reason: string;
}

/** Calls stopRun(reason) from a timer at `atUs`. */
export function createStopper(_id: string, config: unknown): Actor {
  const c = config as StopperConfig;
  return {
    start(ctx) {
      ctx.setTimer(c.atUs);
    },
    receive() {},
    onTimer(ctx) {
      ctx.stopRun(c.reason);
    },
  };
}

export interface SlowTickerConfig {
  readonly everyUs: number;
  readonly untilUs: number;
  /** Wall ms each tick blocks its thread (Atomics.wait on a private word: slow, but no CPU). */
  readonly napMs: number;
}

/**
 * Ticks every `everyUs` until `untilUs`, each tick blocking its host thread for `napMs` of wall
 * time: a host that is busy (slow handlers) for seconds whatever the machine's speed or load.
 */
export function createSlowTicker(_id: string, config: unknown): Actor {
  const c = config as SlowTickerConfig;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  return {
    start(ctx) {
      ctx.setTimer(c.everyUs);
    },
    receive() {},
    onTimer(ctx) {
      Atomics.wait(nap, 0, 0, c.napMs);
      ctx.count('ticks');
      ctx.trace('slow.tick', String(ctx.now));
      if (ctx.now + c.everyUs <= c.untilUs) ctx.setTimer(c.everyUs);
    },
  };
}
