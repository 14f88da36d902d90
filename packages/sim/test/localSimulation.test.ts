import test from 'ava';
import type { Actor, ActorContext, Envelope, Message } from '@podsim/api';
import { LocalSimulation } from '../src/index.js';

interface Ping extends Message {
  type: 'Ping';
  n: number;
}

/** Answers every Ping with a Pong carrying n + 1. */
const ponger = (): Actor => ({
  receive(ctx: ActorContext, env: Envelope) {
    const b = env.body as Ping;
    ctx.reply(env, { type: 'Pong', n: b.n + 1 } as Message);
  },
});

/** Sends a Ping every second for 5 s and traces each Pong. */
const pinger = (): Actor => ({
  start(ctx) {
    ctx.setTimer(1_000_000, 'tick');
  },
  receive() {},
  onTimer(ctx) {
    ctx.request<Ping>('b', { type: 'Ping', n: ctx.now } as Message, (r) => ctx.trace('pong', `n=${(r as Ping).n}`));
    if (ctx.now < 5_000_000) ctx.setTimer(1_000_000, 'tick');
  },
});

test('request/reply and timers produce the same trace and digest for the same seed', (t) => {
  const run = (seed: number) => {
    const sim = new LocalSimulation({ seed, actors: [{ id: 'a', factory: pinger }, { id: 'b', factory: ponger }] });
    sim.runUntil(10_000_000);
    return { traces: sim.traces(), digest: sim.digest() };
  };
  const r1 = run(7);
  const r2 = run(7);
  t.is(r1.traces.length, 5);
  t.deepEqual(r1.traces, r2.traces);
  t.is(r1.digest, r2.digest);
  // Pong arrives one round trip (2 × 100–150 µs) after each tick.
  for (const rec of r1.traces) t.true(rec.t % 1_000_000 >= 200 && rec.t % 1_000_000 <= 300);
  t.not(run(8).digest, r1.digest);
});

test('a request to a crashed actor times out; the restarted actor answers again', (t) => {
  const sim = new LocalSimulation({
    seed: 1,
    actors: [
      {
        id: 'a',
        factory: () => ({
          start(ctx) {
            ctx.setTimer(1_000_000);
          },
          receive() {},
          onTimer(ctx) {
            ctx.request('b', { type: 'Ping', n: 0 } as Message, (r) => ctx.trace('reply', r.type), { timeoutUs: 500_000 });
            if (ctx.now < 4_000_000) ctx.setTimer(1_000_000);
          },
        }),
      },
      { id: 'b', factory: ponger },
    ],
    faults: [{ kind: 'crash', actor: 'b', atUs: 1_500_000, restartAfterUs: 1_000_000 }],
  });
  sim.runUntil(6_000_000);
  const replies = sim.traces().filter((r) => r.kind === 'reply').map((r) => r.msg);
  // t=1s ok; t=2s b is down → timeout; t=3s b restarted at 2.5s → ok; t=4s ok.
  t.deepEqual(replies, ['Pong', 'RequestTimedOut', 'Pong', 'Pong']);
});
