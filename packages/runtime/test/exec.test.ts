/**
 * ExecSync: `sleep N` parsing (also inside `sh -c`), timeouts (DeadlineExceeded, the command goes
 * on in the background unless configured to be killed), a preStop-like exec that outlives the
 * kubelet's wait (spec §7.3 step 5; cases C01, C02), and execs dying with their container.
 */
import test from 'ava';
import { NEVER } from '@podsim/api';
import { planExec } from '../src/index.js';
import { RuntimeDriver, S } from './fakeHost.js';

const OTHER = 250_000;
const table: Array<[string[], number, number, string?]> = [
  [['sleep', '15'], 15 * S, 0],
  [['/bin/sleep', '2.5'], 2.5 * S, 0],
  [['sleep', '1m', '30'], 90 * S, 0],
  [['sleep', '2h'], 7200 * S, 0],
  [['sleep', 'infinity'], NEVER, 0],
  [['/bin/sh', '-c', 'sleep 5'], 5 * S, 0],
  [['sh', '-c', 'sleep 2; sleep 3'], 5 * S, 0],
  [['bash', '-ec', "sleep '4' && nginx -s quit"], 4 * S + OTHER, 9],
  [['sh', '-c', 'exec sleep 7'], 7 * S, 0],
  [['sh', '-c', 'sleep 10 && exit 3; sleep 100'], 10 * S, 3],
  [['/usr/bin/zsh', '-c', 'sleep infinity'], NEVER, 0],
  [['nginx', '-s', 'quit'], OTHER, 9],
  [['sh', 'script.sh'], OTHER, 9],
  [['true'], 0, 0],
  [['false'], 0, 1],
  [['sleep', 'soon'], 0, 1, "sleep: invalid time interval 'soon'"],
  [['sleep'], 0, 1, 'sleep: missing operand'],
];

for (const [cmd, durationUs, exitCode, stderr] of table) {
  test(`planExec ${JSON.stringify(cmd)}`, (t) => {
    const p = planExec(cmd, () => OTHER, 9);
    t.is(p.durationUs, durationUs);
    t.is(p.exitCode, exitCode);
    t.is(p.stderr, stderr ?? '');
  });
}

function running(config = {}, ann: Record<string, string> = {}) {
  const d = new RuntimeDriver({ imagePullUs: 0, ...config });
  const sb = d.runPod('p', ann);
  const id = d.startContainer(sb, 'p', 'app', ann);
  return { d, id, t0: d.now };
}

test('ExecSync sleep 5 without timeout answers after 5 s with exit 0', (t) => {
  const { d, id, t0 } = running();
  const k = d.call({ type: 'ExecSync', containerId: id, cmd: ['/bin/sh', '-c', 'sleep 5'], timeout: 0 });
  d.runFor(4.999999 * S);
  t.is(d.answer(k), undefined);
  d.runFor(1);
  t.like(d.answer(k), { at: t0 + 5 * S, body: { type: 'ExecSyncResult', exitCode: 0 } });
  t.deepEqual(
    d.proc(id, 'cri.exec').map((r) => [r.data!.ph, r.t - t0, r.data!.exitCode]),
    [['B', 0, undefined], ['E', 5 * S, 0]],
  );
});

test('ExecSync timeout: DeadlineExceeded at the timeout, the command keeps running and ends later', (t) => {
  const { d, id, t0 } = running();
  const k = d.call({ type: 'ExecSync', containerId: id, cmd: ['sleep', '5'], timeout: 2 });
  d.runFor(10 * S);
  const a = d.answer(k)!;
  t.is(a.at, t0 + 2 * S);
  t.is(a.body.error?.code, 'DeadlineExceeded');
  t.deepEqual(
    d.proc(id, 'cri.exec').map((r) => [r.data!.ph, r.t - t0, r.data!.exitCode, r.data!.timedOut]),
    [['B', 0, undefined, undefined], ['E', 5 * S, 0, true]],
  );
});

test('ExecSync timeout with execTimeout: kill (containerd): the command is killed, exit 137', (t) => {
  const { d, id, t0 } = running({ execTimeout: 'kill' });
  const k = d.call({ type: 'ExecSync', containerId: id, cmd: ['sleep', '5'], timeout: 2 });
  d.runFor(10 * S);
  t.is(d.answer(k)!.body.error?.code, 'DeadlineExceeded');
  t.deepEqual(
    d.proc(id, 'cri.exec').map((r) => [r.data!.ph, r.t - t0, r.data!.exitCode]),
    [['B', 0, undefined], ['E', 2 * S, 137]],
  );
  t.is(d.status(id).state, 'CONTAINER_RUNNING', 'the container itself is untouched');
});

test('ExecSync ending exactly at its timeout succeeds', (t) => {
  const { d, id, t0 } = running();
  const k = d.call({ type: 'ExecSync', containerId: id, cmd: ['sleep', '2'], timeout: 2 });
  d.runFor(3 * S);
  t.like(d.answer(k), { at: t0 + 2 * S, body: { exitCode: 0 } });
  t.is(d.answer(k)!.body.error, undefined);
});

test('exec-duration and exec-exit-code annotations shape other commands; sleep still takes its time', (t) => {
  const { d, id, t0 } = running({}, { 'podsim.dev/exec-duration': '3s', 'podsim.dev/app.exec-exit-code': '2' });
  const k1 = d.call({ type: 'ExecSync', containerId: id, cmd: ['curl', '-f', 'localhost/drain'], timeout: 0 });
  const k2 = d.call({ type: 'ExecSync', containerId: id, cmd: ['sleep', '1'], timeout: 0 });
  d.runFor(5 * S);
  t.like(d.answer(k1), { at: t0 + 3 * S, body: { exitCode: 2 } });
  t.like(d.answer(k2), { at: t0 + 1 * S, body: { exitCode: 0 } });
});

test('other commands take the configured default duration', (t) => {
  const { d, id, t0 } = running({ execDefaultUs: 40_000 });
  const k = d.call({ type: 'ExecSync', containerId: id, cmd: ['cat', '/tmp/healthy'], timeout: 1 });
  d.runFor(S);
  t.like(d.answer(k), { at: t0 + 40_000, body: { exitCode: 0 } });
});

test('preStop-like exec: the caller stops waiting at 30 s, StopContainer follows, the hook still ends at 40 s (C01/C02 shape)', (t) => {
  const { d, id, t0 } = running({}, { 'podsim.dev/on-sigterm': 'ignore' });
  // The kubelet runs the hook with ExecSync(timeout 0) and waits up to the grace period itself.
  const hook = d.call({ type: 'ExecSync', containerId: id, cmd: ['/bin/sh', '-c', 'sleep 40'], timeout: 0 });
  d.runUntil(t0 + 30 * S);
  t.is(d.answer(hook), undefined);
  const stop = d.call({ type: 'StopContainer', containerId: id, timeout: 30 });
  d.runUntil(t0 + 100 * S);
  const rel = (x: number) => (x - t0) / S;
  t.deepEqual(
    d.proc(id).map((r) => [r.kind, rel(r.t), r.data!.signal ?? r.data!.ph ?? r.data!.exitCode ?? '']),
    [
      ['cri.start', 0, ''],
      ['cri.exec', 0, 'B'],
      ['cri.signal', 30, 'SIGTERM'],
      ['cri.exec', 40, 'E'],
      ['cri.signal', 60, 'SIGKILL'],
      ['cri.exit', 60, 137],
    ],
  );
  t.like(d.answer(hook), { at: t0 + 40 * S, body: { exitCode: 0 } });
  t.is(d.answer(stop)!.at, t0 + 60 * S);
});

test('an exec still running when the container dies ends with it (137) and its caller gets 137', (t) => {
  const { d, id, t0 } = running({}, { 'podsim.dev/on-sigterm': 'ignore' });
  const hook = d.call({ type: 'ExecSync', containerId: id, cmd: ['sleep', 'infinity'], timeout: 0 });
  d.runFor(5 * S);
  d.call({ type: 'StopContainer', containerId: id, timeout: 0 });
  t.like(d.answer(hook), { at: t0 + 5 * S, body: { exitCode: 137 } });
  t.deepEqual(
    d.proc(id, 'cri.exec').map((r) => [r.data!.ph, r.t - t0, r.data!.exitCode]),
    [['B', 0, undefined], ['E', 5 * S, 137]],
  );
  const late = d.sync({ type: 'ExecSync', containerId: id, cmd: ['true'], timeout: 0 });
  t.is(late.error?.code, 'Unknown');
  t.is(late.error?.message, 'container is in CONTAINER_EXITED state');
});

test('an exec with a bad sleep operand fails at once with exit 1 and the message on stderr', (t) => {
  const { d, id } = running();
  t.like(d.sync({ type: 'ExecSync', containerId: id, cmd: ['sleep', '5x'], timeout: 0 }), { exitCode: 1, stderr: "sleep: invalid time interval '5x'" });
});
