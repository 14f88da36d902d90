/**
 * Actors for the engine benchmark (bench/engineBench.ts), loaded by URL in host threads.
 * `createFanout`: every `periodUs` (random phase) sends `fanout` requests to random members of
 * its neighbourhood (the next `neighbours` ids, wrapping) and counts the replies — a fan-out /
 * request-reply shape with ~10-field bodies and O(actors) links, like podsim's star and pair
 * topologies (uniformly random peers among all actors would make ~N² links, each touched a
 * few times: a cache-miss benchmark). `createRelister` / `createHub`: the sparse shape, a kubelet-like 1 s relist against
 * one hub (few events per virtual second per actor).
 */
import type { Actor, Message } from '@podsim/api';

export interface FanoutConfig {
  /** Peer ids are `${prefix}${i}` for i in [0, peers) (zero-padded to 3 digits). */
  readonly prefix: string;
  readonly peers: number;
  /** Size of each actor's neighbourhood (default 16). */
  readonly neighbours?: number;
  readonly periodUs: number;
  readonly fanout: number;
  readonly untilUs: number;
}

export interface Get extends Message {
  type: 'Get';
  namespace: string;
  name: string;
  resourceVersion: number;
  uid: string;
  phase: string;
  nodeName: string;
  deletionGracePeriodSeconds: number;
  ready: boolean;
  restarts: number;
}

/** The body shape the benchmark measures (also used for the raw transport measurement). */
export function makeGet(n: number, from: string): Get {
  return {
    type: 'Get',
    namespace: 'default',
    name: `pod-${n}`,
    resourceVersion: n,
    uid: from,
    phase: 'Running',
    nodeName: 'node-1',
    deletionGracePeriodSeconds: 30,
    ready: true,
    restarts: 0,
  };
}

export const peerId = (prefix: string, i: number) => `${prefix}${String(i).padStart(3, '0')}`;

export function createFanout(id: string, config: unknown): Actor {
  const c = config as FanoutConfig;
  // Neighbour ids built once, as a real actor holds its peers' names.
  const self = Number(id.slice(c.prefix.length));
  const peers = Array.from({ length: Math.min(c.neighbours ?? 16, c.peers - 1) }, (_, k) => peerId(c.prefix, (self + 1 + k) % c.peers));
  let n = 0;
  return {
    start(ctx) {
      ctx.setTimer(ctx.stream('phase').int(c.periodUs));
    },
    receive(ctx, env) {
      const b = env.body as Get;
      ctx.reply(env, { ...b, type: 'GetResult', resourceVersion: b.resourceVersion + 1 } as Message);
    },
    onTimer(ctx) {
      for (let k = 0; k < c.fanout; k++) {
        const to = peers[ctx.stream('peer').int(peers.length)];
        ctx.request(to, makeGet(n++, id), () => ctx.count('replies'));
      }
      if (ctx.now + c.periodUs < c.untilUs) ctx.setTimer(c.periodUs);
    },
  };
}

export interface RelisterConfig {
  readonly hub: string;
  readonly periodUs: number;
  readonly untilUs: number;
}

/** A kubelet-like loop: every periodUs (random phase) one List request to the hub. */
export function createRelister(_id: string, config: unknown): Actor {
  const c = config as RelisterConfig;
  return {
    start(ctx) {
      ctx.setTimer(ctx.stream('phase').int(c.periodUs));
    },
    receive() {},
    onTimer(ctx) {
      ctx.request(c.hub, { type: 'List' }, () => ctx.count('relists'));
      if (ctx.now + c.periodUs < c.untilUs) ctx.setTimer(c.periodUs);
    },
  };
}

/** Answers every request with an empty ListResult. */
export function createHub(): Actor {
  return {
    receive(ctx, env) {
      ctx.reply(env, { type: 'ListResult', items: 0 } as Message);
    },
  };
}
