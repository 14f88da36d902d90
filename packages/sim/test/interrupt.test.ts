/**
 * Simulation.interrupt (a user's Ctrl-C, issue #23 item 6): the hosts end their window within a
 * few events and the run pauses with reason `interrupted`. Before, an interruptible run could
 * only stop between segments, and one segment of a 20k-pod storm lasted seconds (Ctrl-C took
 * ~30 s). Here a ticker whose every event blocks its thread for 2 ms would need 20 s of wall time
 * to reach its end; interrupted after 300 ms, the run ends far from it, in one thread and in two.
 */
import test from 'ava';
import { Simulation } from '../src/index.js';
import { spec } from './support/run.js';

for (const placement of ['single', 'per-actor'] as const) {
  test(`interrupt() ends a run mid-window (placement ${placement}): reason interrupted, paused long before the target, traces and digest readable`, async (t) => {
    t.timeout(60_000);
    const sim = await Simulation.create({
      seed: 7,
      placement,
      actors: [
        spec('slow', 'createSlowTicker', { everyUs: 1_000, untilUs: 10_000_000, napMs: 2 }),
        spec('a', 'createPinger', { to: 'e', everyUs: 500, untilUs: 10_000_000 }),
        spec('e', 'createEcho'),
      ],
      hostTimeoutMs: 20_000,
    });
    try {
      const timer = setTimeout(() => sim.interrupt(), 300);
      const r = await sim.run({ maxUs: 10_000_000 });
      clearTimeout(timer);
      t.is(r.reason, 'interrupted');
      // 10,000 ticks of 2 ms: the whole run is 20 s of wall time; 300 ms reach a few hundred.
      t.true(r.now > 0 && r.now < 5_000_000, `paused at ${r.now} µs`);
      const traces = await sim.traces();
      t.true(traces.some((x) => x.kind === 'slow.tick'));
      t.regex(await sim.digest(), /^[0-9a-f]{16}$/);
    } finally {
      await sim.close();
    }
  });
}
