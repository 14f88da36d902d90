/**
 * The `kubelet-restart-keeps-running-pods` checker against hand-written traces (issue #27 item 1):
 * a restarted kubelet that stops a running container of a pod nobody deleted is flagged; a
 * restart during a deletion, after the pod went terminal, or of a pod whose containers were not
 * all running is not.
 */
import test from 'ava';
import type { TraceRecord } from '@podsim/api';
import { TraceModel } from '../src/checkers/model.js';
import { checkInvariants } from '../src/checkers/invariants.js';

const S = 1_000_000;
const EPOCH = 1735689600;
const ID = 'kubelet-restart-keeps-running-pods';
const K = 'kubelet/n1';
const RT = 'runtime/n1';

type R = { t: number; actor: string; kind: string; data?: Record<string, unknown> };

const pod = { resource: 'pods', namespace: 'default', name: 'p', uid: 'u1', nodeName: 'n1' };
const app = { containerId: 'c1', podUid: 'u1', pod: 'p', namespace: 'default', container: 'app' };
const side = { ...app, containerId: 'c2', container: 'side' };

/** p runs from 1 s; the kubelet is down 10–12 s; the restarted kubelet SIGTERMs app at 15 s. */
function restartKills(): R[] {
  return [
    { t: 0, actor: 'apiserver', kind: 'api.write', data: { ...pod, event: 'ADDED', rv: '10', phase: 'Pending' } },
    { t: 1 * S, actor: RT, kind: 'cri.start', data: app },
    { t: 2 * S, actor: 'apiserver', kind: 'api.write', data: { ...pod, event: 'MODIFIED', rv: '11', phase: 'Running' } },
    { t: 10 * S, actor: K, kind: 'engine.crash' },
    { t: 12 * S, actor: K, kind: 'engine.restart' },
    { t: 15 * S, actor: RT, kind: 'cri.signal', data: { ...app, signal: 'SIGTERM' } },
    { t: 16 * S, actor: RT, kind: 'cri.exit', data: { ...app, exitCode: 0, reason: 'Completed' } },
  ];
}

function check(records: R[]) {
  const sorted = records
    .map((r, i) => ({ ...r, i }))
    .sort((a, b) => a.t - b.t || a.i - b.i)
    .map((r, seq) => ({ t: r.t, actor: r.actor, seq, kind: r.kind, msg: r.kind, data: r.data }) as TraceRecord);
  return checkInvariants(new TraceModel(sorted), { epochUnixSeconds: EPOCH }).filter((v) => v.invariant === ID);
}

test('a restarted kubelet that SIGTERMs the running container of an undeleted pod is a violation', (t) => {
  const v = check(restartKills());
  t.is(v.length, 1);
  t.is(v[0].t, 15 * S);
  t.is(v[0].message, 'kubelet/n1 restarted at 12s (down since 10s) and SIGTERM reached default/p/app at 15s: the pod is not being deleted and its containers were running');
});

test('a SIGKILL counts too, and only the incarnation after the restart is judged', (t) => {
  const r = restartKills();
  r[5].data = { ...app, signal: 'SIGKILL' };
  t.is(check(r).length, 1);
  // The same signal before the crash (the first incarnation's doing) is none of this checker's business.
  const before = restartKills();
  before[5].t = 9 * S;
  before[6].t = 9.5 * S;
  t.deepEqual(check(before), []);
});

test('a restart during a deletion, or after the pod went terminal, may stop the container', (t) => {
  const deleting = restartKills();
  deleting.splice(5, 0, { t: 13 * S, actor: 'apiserver', kind: 'api.write', data: { ...pod, event: 'MODIFIED', rv: '12', phase: 'Running', deletionTimestamp: '2025-01-01T00:00:43Z', deletionGracePeriodSeconds: 30 } });
  t.deepEqual(check(deleting), []);
  const failed = restartKills();
  failed.splice(5, 0, { t: 13 * S, actor: 'apiserver', kind: 'api.write', data: { ...pod, event: 'MODIFIED', rv: '12', phase: 'Failed' } });
  t.deepEqual(check(failed), []);
});

test('a pod whose containers did not all run at the restart, or that the runtime lost, is not judged', (t) => {
  // side exited during the downtime: the restarted kubelet may legitimately restart the pod.
  const partial = restartKills();
  partial.splice(2, 0, { t: 1 * S, actor: RT, kind: 'cri.start', data: side }, { t: 11 * S, actor: RT, kind: 'cri.exit', data: { ...side, exitCode: 1, reason: 'Error' } });
  t.deepEqual(check(partial), []);
  // Both containers running at the restart: a violation again.
  const both = restartKills();
  both.splice(2, 0, { t: 1 * S, actor: RT, kind: 'cri.start', data: side });
  t.is(check(both).length, 1);
  // A container started after the crash is not one the restart found running.
  const late = restartKills();
  late[1].t = 11 * S;
  t.deepEqual(check(late), []);
});

test('bug: a liveness probe that failed after the restart is the kubelet\'s own reason, not the restart\'s (differential breaker, explore seed 1 --faults 2 of a pod with unhealthy-after 12s)', (t) => {
  const r = restartKills();
  const kill = (message: string): R => ({
    t: 14.9 * S,
    actor: K,
    kind: 'kubelet.killContainer',
    data: { podUid: 'u1', pod: 'default/p', containerId: 'c1', container: 'app', gracePeriod: 30, ph: 'B', span: 1, message },
  });
  t.deepEqual(check([...r, kill('Container app failed liveness probe, will be restarted')]), []);
  t.deepEqual(check([...r, kill('Container app failed startup probe, will be restarted')]), []);
  // A spec-hash restart after a kubelet restart is exactly what the invariant is for.
  t.is(check([...r, kill('Container app definition changed, will be restarted')]).length, 1);
  // A probe kill before the restart does not excuse a signal after it.
  const early = kill('Container app failed liveness probe, will be restarted');
  t.is(check([...r, { ...early, t: 5 * S }]).length, 1);
});
