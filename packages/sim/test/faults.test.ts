import test from 'ava';
import type { Fault, TraceRecord } from '@podsim/api';
import { Simulation } from '../src/index.js';
import { runLocal, runThreaded, spec, type RunConfig } from './support/run.js';

/**
 * a pings b every 1 ms from 1 ms to 10 ms (request, timeout 2 ms); b answers and also sends
 * a Tick to a every 1 ms from 0.5 ms. Links: 100 µs + up to 50 µs jitter.
 */
function pingPong(seed: number, faults: Fault[] = []): RunConfig {
  return {
    seed,
    faults,
    actors: [
      spec('a', 'createPinger', { to: 'b', everyUs: 1_000, untilUs: 10_000 }),
      spec('b', 'createPonger', { tickTo: 'a', tickEveryUs: 1_000, untilUs: 10_000 }),
    ],
  };
}

const recv = (tr: TraceRecord[]) => tr.filter((r) => r.kind === 'ping.recv');
const received = (tr: TraceRecord[]) => recv(tr).map((r) => (r.data as { n: number }).n);
/** The answer each ping got, by ping number (replies and timeouts interleave in time). */
const replies = (tr: TraceRecord[]) =>
  tr
    .filter((r) => r.kind === 'ping.reply')
    .map((r) => r.msg)
    .sort((x, y) => Number(x.split('#')[1]) - Number(y.split('#')[1]));
const kinds = (tr: TraceRecord[], kind: string) => tr.filter((r) => r.kind === kind);
const WINDOW = { startUs: 3_000, endUs: 5_000 };

/** Runs `faults` locally and on per-actor threads; asserts both agree; returns the local trace. */
async function both(t: import('ava').ExecutionContext, faults: Fault[], seed = 1): Promise<TraceRecord[]> {
  const cfg = pingPong(seed, faults);
  const local = runLocal(cfg);
  const threaded = await runThreaded(cfg, 'per-actor');
  t.deepEqual(threaded.traces, local.traces, 'threads and one thread agree');
  t.is(threaded.digest, local.digest);
  t.is(runLocal(cfg).digest, local.digest, 'reproducible');
  t.not(runLocal(pingPong(seed)).digest, local.digest, 'the fault changed the run');
  return local.traces;
}

test('no fault: every ping arrives 100–150 µs after it was sent and is answered', (t) => {
  const tr = runLocal(pingPong(1)).traces;
  t.deepEqual(received(tr), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  for (const r of recv(tr)) {
    const lat = r.t - (r.data as { sentAt: number }).sentAt;
    t.true(lat >= 100 && lat <= 150, `latency ${lat}`);
  }
  t.deepEqual(replies(tr), Array(10).fill('Pong #' + 0).map((_, i) => `Pong #${i + 1}`));
});

test('delay adds delayUs to messages sent inside its window only', async (t) => {
  const tr = await both(t, [{ kind: 'delay', from: 'a', to: 'b', delayUs: 500, ...WINDOW }]);
  t.deepEqual(received(tr), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  for (const r of recv(tr)) {
    const { n, sentAt } = r.data as { n: number; sentAt: number };
    const lat = r.t - sentAt;
    if (n === 3 || n === 4) t.true(lat >= 600 && lat <= 650, `#${n} delayed: ${lat}`);
    else t.true(lat >= 100 && lat <= 150, `#${n} not delayed: ${lat}`);
  }
});

test('drop with probability 1 loses the messages sent inside its window; their requests time out', async (t) => {
  const tr = await both(t, [{ kind: 'drop', from: 'a', to: 'b', probability: 1, ...WINDOW }]);
  t.deepEqual(received(tr), [1, 2, 5, 6, 7, 8, 9, 10]);
  t.deepEqual(
    kinds(tr, 'fault.drop').map((r) => [r.t, r.actor, r.msg]),
    [
      [3_000, 'a', 'dropped Ping to b'],
      [4_000, 'a', 'dropped Ping to b'],
    ],
  );
  t.deepEqual(replies(tr).slice(2, 4), ['RequestTimedOut #3', 'RequestTimedOut #4']);
});

test('drop with probability 0.5 is drawn from the seed: same seed same losses, threads included', async (t) => {
  const faults: Fault[] = [{ kind: 'drop', from: '*', to: '*', probability: 0.5, startUs: 0 }];
  const lost = (seed: number) => runLocal(pingPong(seed, faults)).traces.filter((r) => r.kind === 'fault.drop').map((r) => `${r.t}${r.actor}`);
  t.deepEqual(lost(7), lost(7));
  t.true(lost(7).length > 3 && lost(7).length < 17);
  t.notDeepEqual(lost(7), lost(8));
  await both(t, faults, 7);
});

test('removing one fault leaves the draws of a fault with an id unchanged (DESIGN.md §9: shrinking depends on it)', (t) => {
  // `early` drops everything a → b in [1, 2) ms; `coin` drops b → a with probability 0.5 from 3 ms.
  // Removing `early` must not change which of b's messages `coin` drops: its stream is named by id.
  const early: Fault = { kind: 'drop', from: 'a', to: 'b', probability: 1, startUs: 1_000, endUs: 2_000 };
  const coin: Fault = { kind: 'drop', id: 'coin', from: 'b', to: 'a', probability: 0.5, startUs: 3_000 };
  const lost = (faults: Fault[]) => runLocal(pingPong(3, faults)).traces.filter((r) => r.kind === 'fault.drop' && r.actor === 'b').map((r) => `${r.t} ${r.msg}`);
  const withBoth = lost([early, coin]);
  t.true(withBoth.length > 2, `coin dropped ${withBoth.length}`);
  // b's messages from 3 ms on are the same in both runs (the lost ping #1 was answered before).
  t.deepEqual(lost([coin]), withBoth);
});

test('duplicate delivers each message sent inside its window twice, the copy delayUs later', async (t) => {
  const tr = await both(t, [{ kind: 'duplicate', from: 'a', to: 'b', probability: 1, delayUs: 200, ...WINDOW }]);
  t.deepEqual(received(tr), [1, 2, 3, 3, 4, 4, 5, 6, 7, 8, 9, 10]);
  const three = recv(tr).filter((r) => (r.data as { n: number }).n === 3);
  t.is(three[1].t - three[0].t, 200);
  t.is(kinds(tr, 'fault.duplicate').length, 2);
  // The second answer finds no pending request: still one reply per ping.
  t.is(replies(tr).length, 10);
});

test('duplicate with requests: false repeats messages within a stream (one-way messages, replies), never a request (issue #27 item 7)', async (t) => {
  // a → b carries only requests (pings): nothing is repeated, b answers each ping once.
  const req = runLocal(pingPong(1, [{ kind: 'duplicate', from: 'a', to: 'b', probability: 1, delayUs: 200, requests: false, ...WINDOW }])).traces;
  t.deepEqual(received(req), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  t.is(kinds(req, 'fault.duplicate').length, 0);
  t.is(runLocal(pingPong(1, [{ kind: 'duplicate', from: 'a', to: 'b', probability: 1, delayUs: 200, requests: false, ...WINDOW }])).digest, runLocal(pingPong(1)).digest);
  // b → a carries replies and Ticks: both are repeated.
  const tr = await both(t, [{ kind: 'duplicate', from: 'b', to: 'a', probability: 1, delayUs: 200, requests: false, ...WINDOW }]);
  const dup = kinds(tr, 'fault.duplicate').map((r) => r.msg);
  t.true(dup.some((m) => /Tick/.test(m)), dup.join('\n'));
  t.true(dup.some((m) => /Pong/.test(m)), dup.join('\n'));
  t.is(replies(tr).length, 10);
});

test('partition drops both directions between a and b inside its window', async (t) => {
  const tr = await both(t, [{ kind: 'partition', a: 'a', b: 'b', ...WINDOW }]);
  t.deepEqual(received(tr), [1, 2, 5, 6, 7, 8, 9, 10]);
  const parts = kinds(tr, 'fault.partition').map((r) => [r.t, r.actor, r.msg]);
  t.deepEqual(parts, [
    [3_000, 'a', 'dropped Ping to b'],
    [3_500, 'b', 'dropped Tick to a'],
    [4_000, 'a', 'dropped Ping to b'],
    [4_500, 'b', 'dropped Tick to a'],
  ]);
  const ticks = tr.filter((r) => r.kind === 'ping.other').map((r) => Math.floor(r.t / 1000));
  t.deepEqual(ticks, [0, 1, 2, 5, 6, 7, 8, 9]);
});

test('crash + restart: state and timers lost, messages to the down actor dropped, new incarnation answers', async (t) => {
  const tr = await both(t, [{ kind: 'crash', actor: 'b', atUs: 3_500, restartAfterUs: 2_000 }]);
  t.deepEqual(
    tr.filter((r) => r.kind.startsWith('engine.')).map((r) => [r.t, r.kind, r.msg.replace(/ \(fault \d+\)/, '')]),
    [
      [3_500, 'engine.crash', 'crashed'],
      [tr.find((r) => r.kind === 'engine.drop')!.t, 'engine.drop', 'down: Ping from a'],
      [kinds(tr, 'engine.drop')[1].t, 'engine.drop', 'down: Ping from a'],
      [5_500, 'engine.restart', 'restarted as incarnation 2'],
    ],
  );
  t.deepEqual(received(tr), [1, 2, 3, 6, 7, 8, 9, 10]);
  t.true(recv(tr).every((r) => r.msg.endsWith((r.data as { n: number }).n >= 6 ? 'inc 2' : 'inc 1')));
  t.deepEqual(replies(tr).slice(2, 6), ['Pong #3', 'RequestTimedOut #4', 'RequestTimedOut #5', 'Pong #6']);
  // b's Tick timer died with it; the new incarnation restarts it half a period after 5.5 ms.
  const ticks = tr.filter((r) => r.kind === 'ping.other').map((r) => r.t);
  t.true(ticks.every((x) => x < 3_500 + 200 || x >= 6_000));
});

test('overlapping crashes: the actor comes back only when every crash that holds it down is over (a kubeletRestart inside a nodeDown)', async (t) => {
  // b is down 3.5–7.5 ms (fault 0, a nodeDown) and crashed again at 4 ms for 1.5 ms (fault 1): the
  // end of fault 1 at 5.5 ms must not revive it.
  const tr = await both(t, [
    { kind: 'crash', actor: 'b', atUs: 3_500, restartAfterUs: 4_000 },
    { kind: 'crash', actor: 'b', atUs: 4_000, restartAfterUs: 1_500 },
  ]);
  const engine = (kind: string) => kinds(tr, kind).map((r) => [r.t, r.msg]);
  t.deepEqual(engine('engine.crash'), [[3_500, 'crashed (fault 0)']]);
  t.deepEqual(engine('engine.stayDown'), [[5_500, 'fault 1 over, still down (fault 0)']]);
  t.deepEqual(engine('engine.restart'), [[7_500, 'restarted as incarnation 2']]);
  t.deepEqual(received(tr), [1, 2, 3, 8, 9, 10]);
  // The other order: the longer crash comes second and still holds b down after the first ends.
  const tr2 = runLocal(
    pingPong(1, [
      { kind: 'crash', actor: 'b', atUs: 3_500, restartAfterUs: 1_500 },
      { kind: 'crash', actor: 'b', atUs: 4_000, restartAfterUs: 3_500 },
    ]),
  ).traces;
  t.deepEqual(kinds(tr2, 'engine.restart').map((r) => r.t), [7_500]);
  // A crash without restart (a node down for good) keeps b down whatever ends around it.
  const tr3 = runLocal(
    pingPong(1, [
      { kind: 'crash', actor: 'b', atUs: 3_500 },
      { kind: 'crash', actor: 'b', atUs: 4_000, restartAfterUs: 1_000 },
    ]),
  ).traces;
  t.deepEqual(kinds(tr3, 'engine.restart'), []);
  t.deepEqual(received(tr3), [1, 2, 3]);
});

test('failFast: a request to a down or restarted actor is refused at once (RequestUnavailable), on threads as in one thread', async (t) => {
  const cfg = (failFast: boolean): RunConfig => ({
    seed: 1,
    faults: [{ kind: 'crash', actor: 'b', atUs: 3_500, restartAfterUs: 2_000 }],
    actors: [spec('a', 'createPinger', { to: 'b', everyUs: 1_000, untilUs: 10_000, failFast }), spec('b', 'createPonger', {})],
  });
  const local = runLocal(cfg(true));
  const threaded = await runThreaded(cfg(true), 'per-actor');
  t.deepEqual(threaded.traces, local.traces, 'threads and one thread agree');
  t.is(threaded.digest, local.digest);
  // Pings 4 and 5 reach b while it is down (3.5–5.5 ms): refused one link latency after they
  // arrive, not timed out 2 ms after they were sent as without the option.
  t.deepEqual(replies(local.traces).slice(2, 6), ['Pong #3', 'RequestUnavailable #4', 'RequestUnavailable #5', 'Pong #6']);
  const refusedAt = kinds(local.traces, 'ping.reply').filter((r) => r.msg === 'RequestUnavailable #4')[0].t;
  t.true(refusedAt >= 4_200 && refusedAt <= 4_300, `refused at ${refusedAt}`);
  t.deepEqual(kinds(local.traces, 'engine.refuse').map((r) => r.msg), ['down: Ping from a', 'down: Ping from a']);
  t.deepEqual(replies(runLocal(cfg(false)).traces).slice(2, 6), ['Pong #3', 'RequestTimedOut #4', 'RequestTimedOut #5', 'Pong #6']);
});

test('a fault injected while paused takes effect at the paused time, on threads as in one thread', async (t) => {
  const drop: Fault = { kind: 'drop', from: 'a', to: 'b', probability: 1, startUs: 0, endUs: 6_000 };
  const crash: Fault = { kind: 'crash', actor: 'b', atUs: 0, restartAfterUs: 1_500 };
  const local = runLocal(pingPong(3), 2_500);
  local.sim.core.addFault(drop);
  local.sim.runUntil(6_500);
  local.sim.core.addFault(crash);
  local.sim.runUntil(20_000);
  const want = local.sim.traces();
  // Pings 3–5 are sent while the drop is active; ping 7 arrives while b is down (6.5–8 ms).
  t.deepEqual(received(want), [1, 2, 6, 8, 9, 10]);
  t.is(kinds(want, 'engine.crash')[0].t, 6_500);
  t.is(kinds(want, 'engine.restart')[0].t, 8_000);
  for (const placement of ['single', 'shards:2'] as const) {
    const sim = await Simulation.create({ ...pingPong(3), placement, reuseThreads: true });
    try {
      await sim.runUntil(2_500);
      await sim.injectFault(drop);
      await sim.runUntil(6_500);
      await sim.injectFault(crash);
      await sim.runUntil(20_000);
      t.deepEqual(await sim.traces(), want, placement);
      t.is(await sim.digest(), local.sim.digest());
    } finally {
      await sim.close();
    }
  }
});

test('failFast across a partition: an incarnation started inside it cannot connect (RequestUnavailable unreachable); one connected before loses its requests (timeouts)', async (t) => {
  // a ⇹ b partitioned 2.5–8 ms; a crashes at 4 ms and is back at 5 ms, inside the partition.
  const cfg: RunConfig = {
    seed: 1,
    faults: [
      { kind: 'partition', a: 'a', b: 'b', startUs: 2_500, endUs: 8_000 },
      { kind: 'crash', actor: 'a', atUs: 4_000, restartAfterUs: 1_000 },
    ],
    actors: [spec('a', 'createPinger', { to: 'b', everyUs: 1_000, untilUs: 10_000, failFast: true }), spec('b', 'createPonger', {})],
  };
  const local = runLocal(cfg);
  const threaded = await runThreaded(cfg, 'per-actor');
  t.deepEqual(threaded.traces, local.traces, 'threads and one thread agree');
  const answers = kinds(local.traces, 'ping.reply').map((r) => [r.t, r.msg]);
  t.deepEqual(answers, [
    [local.traces.find((r) => r.msg === 'Pong #1')!.t, 'Pong #1'],
    [local.traces.find((r) => r.msg === 'Pong #2')!.t, 'Pong #2'],
    // Ping 3 (3 ms, first incarnation): lost with the old connection, times out at 5 ms — but
    // that incarnation crashed at 4 ms, so nothing is reported. The second incarnation's pings
    // at 6 and 7 ms fail one link latency (100 µs) after they were sent; ping 3 at 8 ms gets through.
    [6_100, 'RequestUnavailable #1'],
    [7_100, 'RequestUnavailable #2'],
    [local.traces.find((r) => r.msg === 'Pong #3')!.t, 'Pong #3'],
    [local.traces.find((r) => r.msg === 'Pong #4')!.t, 'Pong #4'],
    [local.traces.find((r) => r.msg === 'Pong #5')!.t, 'Pong #5'],
  ]);
  t.deepEqual(
    kinds(local.traces, 'fault.partition').filter((r) => r.actor === 'a').map((r) => [r.t, r.msg]),
    [
      [3_000, 'dropped Ping to b'],
      [6_000, 'no connection, failed Ping to b'],
      [7_000, 'no connection, failed Ping to b'],
    ],
  );
  // Without the restart a was connected when the partition began: its pings 3–7 are lost and time out.
  const connected = runLocal({ ...cfg, faults: [cfg.faults![0]] }).traces;
  t.deepEqual(replies(connected).slice(2, 7), ['RequestTimedOut #3', 'RequestTimedOut #4', 'RequestTimedOut #5', 'RequestTimedOut #6', 'RequestTimedOut #7']);
});
