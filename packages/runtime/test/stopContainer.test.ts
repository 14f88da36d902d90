/**
 * StopContainer timing table (spec §8 "Simulation model", §14 invariants 6 and 16; cases C01,
 * C02, C05, C16): when the runtime delivers SIGTERM and SIGKILL, when the process exits with which
 * code, and when the (blocking) StopContainer call answers. All times are virtual seconds after the
 * container started at t = 0.
 */
import test from 'ava';
import { RuntimeDriver, S } from './fakeHost.js';

interface Row {
  name: string;
  onSigterm?: string;
  /** Already exited (crashed) before the first call. */
  crashFirst?: boolean;
  /** StopContainer calls: at (s), timeout (s). */
  calls: Array<[number, number]>;
  /** Expected signals: [signal, at s]. */
  signals: Array<[string, number]>;
  exit: { code: number; at: number; reason: string };
  /** When each call is answered (s). */
  replies: number[];
}

const rows: Row[] = [
  { name: 'exits on TERM after 3 s (C18-like)', onSigterm: 'exit:3s', calls: [[10, 30]], signals: [['SIGTERM', 10]], exit: { code: 0, at: 13, reason: 'Completed' }, replies: [13] },
  { name: 'TERM then exit with its own code', onSigterm: 'exit:5s:7', calls: [[10, 30]], signals: [['SIGTERM', 10]], exit: { code: 7, at: 15, reason: 'Error' }, replies: [15] },
  { name: 'ignores TERM, timeout 30 → KILL at the deadline, 137 (C16)', onSigterm: 'ignore', calls: [[10, 30]], signals: [['SIGTERM', 10], ['SIGKILL', 40]], exit: { code: 137, at: 40, reason: 'Error' }, replies: [40] },
  { name: 'default SIGTERM action kills at once, 143', onSigterm: 'default', calls: [[10, 30]], signals: [['SIGTERM', 10]], exit: { code: 143, at: 10, reason: 'Error' }, replies: [10] },
  { name: 'no annotation behaves like default', calls: [[10, 30]], signals: [['SIGTERM', 10]], exit: { code: 143, at: 10, reason: 'Error' }, replies: [10] },
  { name: 'timeout 0 kills at once, no TERM', onSigterm: 'ignore', calls: [[10, 0]], signals: [['SIGKILL', 10]], exit: { code: 137, at: 10, reason: 'Error' }, replies: [10] },
  { name: 'timeout 1 (C05: --grace-period=0 without --force)', onSigterm: 'ignore', calls: [[10, 1]], signals: [['SIGTERM', 10], ['SIGKILL', 11]], exit: { code: 137, at: 11, reason: 'Error' }, replies: [11] },
  { name: 'shutdown longer than the timeout is cut off by KILL (C02 fixed variant)', onSigterm: 'exit:25s', calls: [[10, 20]], signals: [['SIGTERM', 10], ['SIGKILL', 30]], exit: { code: 137, at: 30, reason: 'Error' }, replies: [30] },
  { name: 'exit exactly at the deadline keeps its own code', onSigterm: 'exit:30s:3', calls: [[10, 30]], signals: [['SIGTERM', 10]], exit: { code: 3, at: 40, reason: 'Error' }, replies: [40] },
  {
    name: 'called twice: TERM twice, KILL at the first deadline, both answered then',
    onSigterm: 'ignore',
    calls: [[10, 30], [20, 30]],
    signals: [['SIGTERM', 10], ['SIGTERM', 20], ['SIGKILL', 40]],
    exit: { code: 137, at: 40, reason: 'Error' },
    replies: [40, 40],
  },
  {
    name: 'called twice, second with timeout 0: KILL then, both answered',
    onSigterm: 'ignore',
    calls: [[10, 30], [15, 0]],
    signals: [['SIGTERM', 10], ['SIGKILL', 15]],
    exit: { code: 137, at: 15, reason: 'Error' },
    replies: [15, 15],
  },
  {
    name: 'called twice while the handler shuts down: the second TERM does not restart it',
    onSigterm: 'exit:5s:0',
    calls: [[10, 30], [12, 30]],
    signals: [['SIGTERM', 10], ['SIGTERM', 12]],
    exit: { code: 0, at: 15, reason: 'Completed' },
    replies: [15, 15],
  },
  { name: 'already exited: a no-op answered at once', onSigterm: 'ignore', crashFirst: true, calls: [[10, 30]], signals: [], exit: { code: 1, at: 5, reason: 'Error' }, replies: [10] },
];

for (const row of rows) {
  test(`StopContainer: ${row.name}`, (t) => {
    const d = new RuntimeDriver({ imagePullUs: 0 });
    const ann: Record<string, string> = {};
    if (row.onSigterm) ann['podsim.dev/on-sigterm'] = row.onSigterm;
    if (row.crashFirst) ann['podsim.dev/crash'] = '5s:1';
    const sb = d.runPod('p', ann);
    const id = d.startContainer(sb, 'p', 'app', ann);
    const t0 = d.now;
    const tokens: number[] = [];
    for (const [at, timeout] of row.calls) {
      d.runUntil(t0 + at * S);
      tokens.push(d.call({ type: 'StopContainer', containerId: id, timeout }));
    }
    d.runUntil(t0 + 200 * S);
    const rel = (at: number) => (at - t0) / S;
    t.deepEqual(
      d.proc(id, 'cri.signal').map((r) => [r.data!.signal, rel(r.t)]),
      row.signals,
    );
    const exits = d.proc(id, 'cri.exit');
    t.is(exits.length, 1);
    t.deepEqual({ code: exits[0].data!.exitCode, at: rel(exits[0].t), reason: exits[0].data!.reason }, row.exit);
    t.deepEqual(tokens.map((k) => rel(d.answer(k)!.at)), row.replies);
    for (const k of tokens) t.is(d.answer(k)!.body.error, undefined);
    const st = d.status(id);
    t.is(st.state, 'CONTAINER_EXITED');
    t.is(st.exitCode, row.exit.code);
    t.is(st.reason, row.exit.reason);
    t.is(st.finishedAt, t0 + row.exit.at * S);
    t.is(st.startedAt, t0);
  });
}

test('StopContainer: SIGKILL is never sent before timeout seconds after a SIGTERM (invariant 6), over random shutdown times', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 }, 42);
  const ann = { 'podsim.dev/on-sigterm': 'exit:uniform(0s,20s):0' };
  const sb = d.runPod('p', ann);
  const ids = Array.from({ length: 40 }, (_, i) => d.startContainer(sb, 'p', `c${i}`, ann));
  for (const id of ids) d.call({ type: 'StopContainer', containerId: id, timeout: 10 });
  d.runFor(100 * S);
  let killed = 0;
  for (const id of ids) {
    const sig = d.proc(id, 'cri.signal');
    const term = sig.find((r) => r.data!.signal === 'SIGTERM')!;
    const kill = sig.find((r) => r.data!.signal === 'SIGKILL');
    const exit = d.proc(id, 'cri.exit')[0];
    if (kill) {
      killed++;
      t.is(kill.t - term.t, 10 * S);
      t.is(exit.data!.exitCode, 137);
    } else {
      t.true(exit.t - term.t <= 10 * S);
      t.is(exit.data!.exitCode, 0);
    }
  }
  // uniform(0 s, 20 s) against a 10 s timeout: about half are killed.
  t.true(killed > 5 && killed < 35, `killed ${killed}`);
});

test('StopContainer: the same seed draws the same shutdown times; another seed differs', (t) => {
  const exitTimes = (seed: number) => {
    const d = new RuntimeDriver({ imagePullUs: 0 }, seed);
    const ann = { 'podsim.dev/on-sigterm': 'exit:uniform(1s,5s)' };
    const sb = d.runPod('p', ann);
    const ids = [0, 1, 2, 3].map((i) => d.startContainer(sb, 'p', `c${i}`, ann));
    for (const id of ids) d.call({ type: 'StopContainer', containerId: id, timeout: 30 });
    d.runFor(60 * S);
    return ids.map((id) => d.proc(id, 'cri.exit')[0].t);
  };
  t.deepEqual(exitTimes(7), exitTimes(7));
  t.notDeepEqual(exitTimes(7), exitTimes(8));
  t.true(exitTimes(7).every((x) => x >= 1 * S && x <= 5 * S));
});

test('StopContainer on a created, never started container is a no-op; unknown id is NotFound', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const sb = d.runPod('p');
  d.call({ type: 'PullImage', image: { image: 'nginx:1.21' } });
  d.runFor(1);
  const id = d.createContainer(sb, 'p', 'app');
  t.is(d.sync({ type: 'StopContainer', containerId: id, timeout: 30 }).error, undefined);
  t.is(d.status(id).state, 'CONTAINER_CREATED');
  t.deepEqual(d.proc(id), []);
  t.is(d.sync({ type: 'StopContainer', containerId: 'nope', timeout: 30 }).error?.code, 'NotFound');
});
