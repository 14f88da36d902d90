import test from 'ava';
import type { Message } from '@podsim/api';
import { Simulation, type SimulationOptions } from '../src/index.js';
import { spec } from './support/run.js';

const options = (placement: SimulationOptions['placement']): SimulationOptions => ({
  seed: 4,
  placement,
  actors: [spec('e', 'createEcho'), spec('p', 'createPinger', { to: 'driver', everyUs: 1_000, untilUs: 3_000 })],
  mailboxes: ['driver'],
  reuseThreads: true,
});

test('a mailbox sends at the paused time and receives what reached it by the next pause', async (t) => {
  const sim = await Simulation.create(options('per-actor'));
  try {
    await sim.runUntil(500);
    sim.send('driver', 'e', { type: 'Forward', to: 'driver' } as Message);
    t.deepEqual(sim.takeMailbox('driver'), []);
    await sim.runUntil(1_050);
    // Two hops of 100–150 µs after 500 µs: e forwards at 600–650, the reply lands at 700–800.
    const box = sim.takeMailbox('driver');
    t.deepEqual(
      box.map((e) => [e.from, e.body.type]),
      [['e', 'Forwarded']],
    );
    t.true(box[0].at >= 700 && box[0].at <= 800, `at ${box[0].at}`);
    const recv = (await sim.traces()).find((r) => r.kind === 'echo.recv')!;
    t.is(recv.msg, 'Forward from driver');
    t.true(recv.t >= 600 && recv.t <= 650);
  } finally {
    await sim.close();
  }
});

test('messages to a mailbox are handed over only once their delivery time has passed', async (t) => {
  const sim = await Simulation.create(options('shards:2'));
  try {
    await sim.runUntil(2_050);
    // p's pings leave at 1 ms and 2 ms; the second is still in flight at 2.05 ms.
    t.deepEqual(
      sim.takeMailbox('driver').map((e) => [e.from, e.body.type, e.sentAt]),
      [['p', 'Ping', 1_000]],
    );
    await sim.runUntil(2_200);
    const [ping] = sim.takeMailbox('driver');
    t.is(ping.sentAt, 2_000);
    // The mailbox answers p's request; p traces the reply.
    sim.reply('driver', ping, { type: 'Pong' });
    await sim.runUntil(3_000);
    t.deepEqual(
      (await sim.traces()).filter((r) => r.kind === 'ping.reply').map((r) => r.msg),
      ['Pong #2'],
    );
  } finally {
    await sim.close();
  }
});

test('request from a mailbox resolves with the reply; sends are refused while running', async (t) => {
  const sim = await Simulation.create(options('single'));
  try {
    await sim.runUntil(5_000);
    const reply = sim.request('driver', 'e', { type: 'Hello' });
    const running = sim.runUntil(6_000);
    t.throws(() => sim.send('driver', 'e', { type: 'Hello' }), { message: /only allowed while the simulation is paused/ });
    await t.throwsAsync(() => sim.digest(), { message: /only while the simulation is paused/ });
    await running;
    const r = await reply;
    t.is(r.body.type, 'Echo');
    t.true(r.env!.at >= 5_200 && r.env!.at <= 5_300);
    t.throws(() => sim.send('e', 'driver', { type: 'Hello' }), { message: /not a mailbox/ });
  } finally {
    await sim.close();
  }
});

test('a run with mailbox traffic is the same under every placement', async (t) => {
  const drive = async (placement: SimulationOptions['placement']) => {
    const sim = await Simulation.create(options(placement));
    try {
      const taken: string[] = [];
      for (let now = 250; now <= 4_000; now += 250) {
        await sim.runUntil(now);
        for (const env of sim.takeMailbox('driver')) {
          taken.push(`${env.at} ${env.body.type}`);
          if (env.body.type === 'Ping') sim.reply('driver', env, { type: 'Pong' });
        }
        sim.send('driver', 'e', { type: 'Forward', to: 'driver' } as Message);
      }
      await sim.run();
      for (const env of sim.takeMailbox('driver')) taken.push(`${env.at} ${env.body.type}`);
      return { traces: await sim.traces(), digest: await sim.digest(), taken };
    } finally {
      await sim.close();
    }
  };
  const single = await drive('single');
  t.is(single.traces.filter((r) => r.kind === 'ping.reply').length, 3);
  t.is(single.taken.filter((x) => x.endsWith('Forwarded')).length, 16);
  t.is(single.taken.filter((x) => x.endsWith('Ping')).length, 3);
  t.deepEqual(await drive('per-actor'), single);
});
