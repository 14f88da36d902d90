import test from 'ava';
import { Simulation } from '../src/index.js';
import { StallWatch } from '../src/liveness.js';
import { STATE_DRAIN, STATE_RUN, STATE_WAIT, SyncBoard } from '../src/syncBoard.js';
import { runLocal, spec, type RunConfig } from './support/run.js';

// Regression (per-actor minio example, virtual 36h16m under heavy load: "HostUnresponsive: host 1
// waited more than 61000 ms"): host 1 ran only the scenario driver, idle from the start until
// 42 h, and gave up waiting for a window after 2 × hostTimeoutMs + 1 s of wall time although
// its peers were making progress all along. An idle host must wait as long as the run moves.
test('an idle host waits as long as its peers make progress (no HostUnresponsive)', async (t) => {
  t.timeout(60_000);
  const cfg: RunConfig = {
    seed: 3,
    actors: [
      // 2 ms of wall time per tick, 2000 ticks: over 4 s, beyond 2 × 1 s + 1 s. (With a 300 ms
      // timeout the busy host itself, descheduled for 300 ms on a loaded machine, failed the test.)
      spec('busy', 'createSlowTicker', { everyUs: 100, untilUs: 200_000, napMs: 2 }),
      spec('idle', 'createStopper', { atUs: 200_050, reason: 'idle woke up' }),
    ],
  };
  const sim = await Simulation.create({ ...cfg, placement: 'per-actor', hostTimeoutMs: 1_000, reuseThreads: true });
  try {
    const r = await sim.run();
    t.is(r.reason, 'stopped');
    t.is(r.stopReason, 'idle woke up');
    t.is((await sim.metrics()).counters.ticks, 2_000);
    t.is(await sim.digest(), runLocal(cfg).digest);
  } finally {
    await sim.close();
  }
});

/** A board with `n` hosts in the given states, as the main thread would see it mid-segment. */
function boardWith(states: number[]): SyncBoard {
  const b = new SyncBoard(new SharedArrayBuffer(SyncBoard.bytes(states.length)), states.length);
  b.openSegment();
  states.forEach((s, h) => b.setState(h, s));
  return b;
}

const HOSTS = [
  { index: 0, actors: ['apiserver'] },
  { index: 1, actors: ['driver'] },
  { index: 2, actors: ['kubelet/node-1', 'runtime/node-1'] },
];

test('StallWatch: a host waiting for its window is never reported while another host makes progress', (t) => {
  const b = boardWith([STATE_RUN, STATE_WAIT, STATE_WAIT]);
  const w = new StallWatch(b, HOSTS, 1_000, 7, 0);
  for (let ms = 250; ms <= 60_000; ms += 250) {
    b.beat(0);
    t.is(w.check(ms, [false, false, false]), undefined);
  }
});

test('StallWatch: a working host without progress is named with its actors, virtual time and what it does', (t) => {
  const b = boardWith([STATE_WAIT, STATE_WAIT, STATE_RUN]);
  b.setNow(2, 130_560_500_000);
  b.f64[3 * 3 + 2] = 130_560_500_200; // B[2]: Float64 words Q[3], S[3], V[3], B[3], … (syncBoard.ts)
  const w = new StallWatch(b, HOSTS, 1_000, 7, 0);
  t.is(w.check(900, [false, false, false]), undefined);
  const f = w.check(1_100, [false, false, false]);
  t.like(f, { kind: 'HostUnresponsive', seed: 7, t: 130_560_500_000, actor: undefined });
  t.is(
    f?.message,
    'host 2 (kubelet/node-1, runtime/node-1) made no progress for 1000 ms at virtual 36h16m0.5s (130560500000 µs): ' +
      'it is processing its window up to 36h16m0.5002s (130560500200 µs) (an actor handler may be stuck)',
  );
});

test('StallWatch: a host stuck draining names the peer whose batch never arrived', (t) => {
  const b = boardWith([STATE_WAIT, STATE_DRAIN, STATE_WAIT]);
  b.setState(1, STATE_DRAIN, 0);
  const w = new StallWatch(b, HOSTS, 500, 7, 0);
  const f = w.check(600, [false, false, false]);
  t.like(f, { kind: 'HostUnresponsive', actor: 'driver' });
  t.regex(f!.message, /^host 1 \(driver\) made no progress for 500 ms at virtual 0s \(0 µs\): it waits for a batch that host 0 \(apiserver\) announced/);
});

test('StallWatch: every host waiting and no round completing is reported as a lost wake-up naming every host', (t) => {
  const b = boardWith([STATE_WAIT, STATE_WAIT, STATE_WAIT]);
  const w = new StallWatch(b, HOSTS, 1_000, 7, 0);
  t.is(w.check(800, [false, false, false]), undefined);
  // A host that finished its segment (paused) is not waited for.
  const f = w.check(1_200, [true, false, false]);
  t.like(f, { kind: 'HostUnresponsive', t: 0 });
  t.regex(f!.message, /^no host made progress for 1000 ms at virtual 0s \(0 µs\): every host waits for its go signal \(round 0: 0 of 3 arrivals; active: host 0 \(apiserver\); host 1 \(driver\); host 2 \(kubelet\/node-1, runtime\/node-1\)\) — a lost wake-up$/);
});
