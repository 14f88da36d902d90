import test from 'ava';
import type { RunFailure } from '@podsim/api';
import { Simulation, SimulationError, type SimulationOptions } from '../src/index.js';
import { TEST_ACTORS, spec } from './support/run.js';
import type { FailConfig } from './support/testActors.js';

/** a pings e every 1 ms; `boom` fails as configured. */
function failing(fail: FailConfig, extra: Partial<SimulationOptions> = {}): SimulationOptions {
  return {
    seed: 99,
    placement: 'per-actor',
    actors: [
      spec('a', 'createPinger', { to: 'e', everyUs: 1_000, untilUs: 10_000 }),
      spec('e', 'createEcho'),
      spec('boom', 'createFailer', fail),
    ],
    hostTimeoutMs: 2_000,
    ...extra,
  };
}

async function failureOf(sim: Simulation, run: () => Promise<unknown>): Promise<RunFailure> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof SimulationError)) throw new Error(`expected a SimulationError, got ${String(err)}`);
  // The run is over: further calls fail the same way, traces stay readable.
  await sim.runUntil(1e9).then(
    () => {
      throw new Error('run continued after a failure');
    },
    (e: unknown) => {
      if (!(e instanceof SimulationError) || e.failure !== err.failure) throw e;
    },
  );
  return err.failure;
}

test('an actor that throws in a timer ends the run with ActorThrew naming actor, time, kind and seed', async (t) => {
  t.timeout(15_000);
  const sim = await Simulation.create(failing({ atUs: 2_500, how: 'throw' }));
  try {
    const f = await failureOf(sim, () => sim.runUntil(20_000));
    t.like(f, { kind: 'ActorThrew', actor: 'boom', t: 2_500, messageType: 'timer', seed: 99 });
    t.regex(f.message, /boom was told to fail/);
    const tr = await sim.traces();
    // What was recorded before the failure is kept: the failing handler's own record, and a's
    // two completed round trips (answered at ~1.2 and ~2.2 ms) from another thread.
    t.truthy(tr.find((r) => r.kind === 'fail.now' && r.t === 2_500));
    t.is(tr.filter((r) => r.kind === 'ping.reply' && r.t < 2_500).length, 2);
  } finally {
    await sim.close();
  }
});

test('an actor that throws on a message names the message type', async (t) => {
  t.timeout(15_000);
  const sim = await Simulation.create({ ...failing({ how: 'throw' }), placement: 'shards:2', mailboxes: ['driver'] });
  try {
    await sim.runUntil(1_000);
    sim.send('driver', 'boom', { type: 'Boom' });
    const f = await failureOf(sim, () => sim.run());
    t.like(f, { kind: 'ActorThrew', actor: 'boom', messageType: 'Boom', seed: 99 });
    t.true(f.t! >= 1_100 && f.t! <= 1_150, `delivered one link latency after the send at 1 ms: ${f.t}`);
  } finally {
    await sim.close();
  }
});

test('a host thread that exits ends the run with HostDied', async (t) => {
  t.timeout(15_000);
  const sim = await Simulation.create(failing({ atUs: 2_500, how: 'exit' }));
  try {
    const f = await failureOf(sim, () => sim.run());
    t.like(f, { kind: 'HostDied', actor: 'boom', seed: 99 });
    t.regex(f.message, /exited with code 3/);
    t.true((await sim.traces()).some((r) => r.kind === 'ping.reply'));
  } finally {
    await sim.close();
  }
});

test('a host stuck in a handler ends the run with HostUnresponsive after hostTimeoutMs', async (t) => {
  t.timeout(15_000);
  const sim = await Simulation.create(failing({ atUs: 2_500, how: 'spin' }, { hostTimeoutMs: 1_000 }));
  try {
    const f = await failureOf(sim, () => sim.run());
    t.like(f, { kind: 'HostUnresponsive', actor: 'boom', seed: 99, t: 2_500 });
    // The message names the host, its actors, the virtual time and what it was doing.
    t.regex(f.message, /^host \d \(boom\) made no progress for 1000 ms at virtual 0\.0025s \(2500 µs\): it is processing its window up to /);
  } finally {
    await sim.close();
  }
});

test('a dead host in a shard is named by the actors it ran', async (t) => {
  t.timeout(15_000);
  const sim = await Simulation.create({ ...failing({ atUs: 500, how: 'exit' }), placement: 'single' });
  try {
    const f = await failureOf(sim, () => sim.runUntil(5_000));
    t.is(f.kind, 'HostDied');
    t.is(f.actor, undefined);
    t.regex(f.message, /host thread 0 \(a, boom, e\) exited with code 3/);
  } finally {
    await sim.close();
  }
});

test('invalid configurations are rejected with InvalidConfig before anything runs', async (t) => {
  const base = failing({ how: 'throw' });
  const kindOf = (o: SimulationOptions) =>
    Simulation.create(o).then(
      async (s) => {
        await s.close();
        return 'created';
      },
      (e: unknown) => (e instanceof SimulationError ? e.failure.kind : String(e)),
    );
  t.is(await kindOf({ ...base, placement: 'shards:0' }), 'InvalidConfig');
  t.is(await kindOf({ ...base, placement: 'bogus' as never }), 'InvalidConfig');
  t.is(await kindOf({ ...base, mailboxes: ['a'] }), 'InvalidConfig');
  // A 0 µs link cannot cross threads (no lookahead), but is fine inside one.
  const zero = { ...base, latency: { default: { minUs: 100, jitterUs: 0 }, links: [{ from: 'a', to: 'e', minUs: 0, jitterUs: 0 }] } };
  t.is(await kindOf(zero), 'InvalidConfig');
  t.is(await kindOf({ ...zero, placement: 'single' }), 'created');
  t.is(await kindOf({ ...base, actors: [{ id: 'x', module: TEST_ACTORS, exportName: 'noSuchExport' }] }), 'InvalidConfig');
});
