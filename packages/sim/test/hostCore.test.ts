import test from 'ava';
import type { Actor, Message } from '@podsim/api';
import { LocalSimulation } from '../src/index.js';

interface Seq extends Message {
  type: 'Seq';
  n: number;
}

/** Sends Seq{n} to `b` every 10 µs (n = 0, 1, 2, …) until 2 ms. */
const sender = (): Actor => {
  let n = 0;
  return {
    start(ctx) {
      ctx.setTimer(10);
    },
    receive() {},
    onTimer(ctx) {
      ctx.send('b', { type: 'Seq', n: n++ } as Message);
      if (ctx.now < 2_000) ctx.setTimer(10);
    },
  };
};

/** Traces every Seq it receives, in delivery order. */
const receiver = (): Actor => ({
  receive(ctx, env) {
    ctx.trace('seq', String((env.body as Seq).n));
  },
});

// Regression: HostCore.addFault used to clear every link's state, which reset the per-link FIFO
// watermark (and replayed the jitter stream from its start). With 1 ms of jitter and a message
// every 10 µs, a message sent just after the injection then overtook ones sent before it.
test('a fault injected mid-run keeps every link FIFO and its jitter stream', (t) => {
  const run = (inject: boolean) => {
    const sim = new LocalSimulation({
      seed: 3,
      actors: [
        { id: 'a', factory: sender },
        { id: 'b', factory: receiver },
        { id: 'c', factory: receiver },
      ],
      latency: { default: { minUs: 100, jitterUs: 1_000 } },
    });
    sim.runUntil(1_000);
    // A fault on an unrelated link must not disturb a → b.
    if (inject) sim.core.addFault({ kind: 'drop', from: 'c', to: 'a', probability: 1, startUs: 0 });
    sim.runUntil(10_000);
    return sim.traces().map((r) => Number(r.msg));
  };
  const got = run(true);
  t.is(got.length, 200);
  t.deepEqual(got, [...got].sort((x, y) => x - y), 'a → b delivered out of send order');
  t.deepEqual(got, run(false));
});
