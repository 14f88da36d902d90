import test from 'ava';
import type { ActorSpec } from '@podsim/api';
import type { LatencyConfig } from '@podsim/api/protocol/control';
import { Simulation } from '../src/index.js';
import { inBatches, runLocal, runThreaded, spec, type RunConfig } from './support/run.js';
import type { ChatterConfig } from './support/testActors.js';

const IDS = ['apiserver', 'kubelet/node-1', 'kubelet/node-2', 'runtime/node-1'];

/** Four chatter actors; every seed gets its own latencies (minimum, jitter, overrides) and pace. */
function workload(seed: number, extra: Partial<ChatterConfig> = {}): RunConfig {
  const latency: LatencyConfig = {
    default: { minUs: 20 + (seed % 5) * 40, jitterUs: 5 + ((seed * 37) % 200) },
    links: [
      { from: 'kubelet/*', to: 'runtime/*', minUs: 3 + (seed % 4), jitterUs: 10 },
      { from: 'apiserver', to: '*', minUs: 150, jitterUs: 60 + (seed % 3) * 50 },
    ],
  };
  const actors: ActorSpec[] = IDS.map((id) =>
    spec(id, 'createActor', {
      peers: IDS.filter((p) => p !== id),
      ticks: 12 + (seed % 7),
      gapUs: 400 + ((seed * 53) % 1500),
      fanout: 3,
      ...extra,
    } satisfies ChatterConfig),
  );
  return { seed, actors, latency };
}

const SEEDS = Array.from({ length: 20 }, (_, i) => 1 + i * 7919);

test('20 seeds: the same trace and digest under single, per-actor and shards:2 as in one LocalSimulation', async (t) => {
  const runs = await inBatches(SEEDS, 2, async (seed) => {
    const cfg = workload(seed);
    const local = runLocal(cfg);
    const threaded = await Promise.all((['single', 'per-actor', 'shards:2'] as const).map((p) => runThreaded(cfg, p)));
    return { seed, local, threaded };
  });
  const digests = new Set<string>();
  for (const { seed, local, threaded } of runs) {
    t.true(local.traces.length > 100, `seed ${seed}: workload too small`);
    t.true(
      local.traces.some((r) => r.msg.endsWith('timed out')) && local.traces.some((r) => r.msg.includes('hop 2')),
      `seed ${seed}: timeouts and forwarding chains are exercised`,
    );
    for (const [i, p] of ['single', 'per-actor', 'shards:2'].entries()) {
      t.is(threaded[i].digest, local.digest, `seed ${seed} ${p}: digest`);
      t.deepEqual(threaded[i].traces, local.traces, `seed ${seed} ${p}: trace`);
      t.is(threaded[i].result.reason, 'quiescent');
    }
    digests.add(local.digest);
  }
  t.is(digests.size, SEEDS.length, 'different seeds give different runs');
});

test('shards:3 and shards:4 give the same digest as single', async (t) => {
  const cfg = workload(42);
  const [single, s3, s4] = await Promise.all([runThreaded(cfg, 'single'), runThreaded(cfg, 'shards:3'), runThreaded(cfg, 'shards:4')]);
  t.is(s3.digest, single.digest);
  t.is(s4.digest, single.digest);
  t.deepEqual(s4.traces, single.traces);
});

test('stopRun ends the run at the same virtual time and record under every placement', async (t) => {
  // runtime/node-1 stops the run after its 3rd tick while the others still have 20 to go.
  const cfg = workload(5, { ticks: 20 });
  const actors = cfg.actors.map((a) => (a.id === 'runtime/node-1' ? { ...a, config: { ...(a.config as ChatterConfig), ticks: 3, stopWhenDone: true } } : a));
  const stopCfg = { ...cfg, actors };
  const local = runLocal(stopCfg);
  const stopRec = local.traces.find((r) => r.kind === 'engine.stop')!;
  t.truthy(stopRec);
  t.is(stopRec.msg, 'runtime/node-1 done');
  // Horizon = largest link minimum (150 µs here): nothing at or after stop + 150 runs.
  const stopAt = stopRec.t + 150;
  t.is(local.sim.core.stopAt, stopAt);
  t.true(local.traces.every((r) => r.t < stopAt));
  t.true(local.sim.core.nextEventTime() >= stopAt, 'events remained after the stop');
  for (const p of ['single', 'per-actor', 'shards:2'] as const) {
    const r = await runThreaded(stopCfg, p);
    t.is(r.result.reason, 'stopped', p);
    t.is(r.result.stopReason, 'runtime/node-1 done', p);
    t.is(r.digest, local.digest, p);
    t.deepEqual(r.traces, local.traces, p);
  }
});

test('pausing at arbitrary times does not change the run', async (t) => {
  const cfg = workload(11);
  const whole = runLocal(cfg);
  const sim = await Simulation.create({ ...cfg, placement: 'shards:2', reuseThreads: true });
  try {
    let now = 0;
    for (const step of [1, 999, 3_000, 7, 5_000]) {
      now += step;
      const r = await sim.runUntil(now);
      t.is(r.now, now);
      t.is(r.reason, 'target');
    }
    const end = await sim.run();
    t.is(end.reason, 'quiescent');
    t.deepEqual(await sim.traces(), whole.traces);
    t.is(await sim.digest(), whole.digest);
    const m = await sim.metrics();
    t.is(m.hostCount, 2);
    t.is(m.counters.ticks, cfg.actors.reduce((s, a) => s + (a.config as ChatterConfig).ticks, 0));
    t.true(m.windows > 10);
    t.is(m.events, whole.sim.core.processed);
  } finally {
    await sim.close();
  }
});

// Regression: with the bound min_{p≠h}(E_p + L(p→h)) (no round trip back to h), host 1 ran past
// t = 877 µs while its own message to the apiserver was still being answered; the reply then
// arrived in its past and the trace diverged from LocalSimulation (this exact input).
test('regression: seed 5, shards:2 — a reply to a host’s own message never arrives in its past', async (t) => {
  const ids = ['apiserver', 'kubelet/node-1', 'kubelet/node-2', 'runtime/node-1', 'runtime/node-2'];
  const cfg: RunConfig = {
    seed: 5,
    actors: ids.map((id) => spec(id, 'createActor', { peers: ids.filter((x) => x !== id), ticks: 30, gapUs: 2000, fanout: 3 } satisfies ChatterConfig)),
  };
  const local = runLocal(cfg);
  const threaded = await runThreaded(cfg, 'shards:2');
  t.is(threaded.digest, local.digest);
  t.deepEqual(threaded.traces, local.traces);
});

test('two actors on different hosts stop the run within one horizon: the earlier call wins everywhere', async (t) => {
  // Horizon 100 µs: late stops at 5000 µs, before the stop time 4950 + 100 set by early.
  const cfg: RunConfig = {
    ...workload(8),
    actors: [
      ...workload(8).actors,
      spec('stop/late', 'createStopper', { atUs: 5_000, reason: 'late' }),
      spec('stop/early', 'createStopper', { atUs: 4_950, reason: 'early' }),
    ],
    latency: { default: { minUs: 100, jitterUs: 30 } },
  };
  const local = runLocal(cfg);
  t.is(local.sim.core.stopReason, 'early');
  t.is(local.sim.core.stopAt, 5_050);
  t.deepEqual(
    local.traces.filter((r) => r.kind === 'engine.stop').map((r) => [r.t, r.msg]),
    [
      [4_950, 'early'],
      [5_000, 'late'],
    ],
  );
  for (const p of ['per-actor', 'shards:3'] as const) {
    const r = await runThreaded(cfg, p);
    t.is(r.result.reason, 'stopped', p);
    t.is(r.result.stopReason, 'early', p);
    t.deepEqual(r.traces, local.traces, p);
  }
});
