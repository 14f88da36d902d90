/**
 * syncPod for real workloads (pair tests): readiness probes setting READY, CrashLoopBackOff with
 * restartCount / lastState and the 10 s doubling backoff (quantized by the pod worker's 10–15 s
 * error requeue, as upstream: kubernetes#123602), restartPolicy Never finishing as Succeeded.
 */
import test from 'ava';
import { checkInvariants, mkPod, runPair, S } from './pairHarness.js';

test('readiness probe: READY stays 0/1 while the probe fails, flips to 1/1 with Ready/ContainersReady True', (t) => {
  const run = runPair({
    steps: [
      {
        at: 1 * S,
        create: mkPod('web', {
          annotations: { 'podsim.dev/not-ready': '0s-20s' },
          containers: [{ name: 'app', image: 'nginx', readinessProbe: { httpGet: { port: 80 }, periodSeconds: 2, initialDelaySeconds: 3, successThreshold: 1, failureThreshold: 3 } }],
        }),
      },
    ],
    untilS: 40,
  });
  const rows = run.rows('web');
  const running = rows.find((r) => r.status === 'Running')!;
  t.is(running.ready, '0/1');
  t.is(running.pod.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
  const ready = rows.find((r) => r.ready === '1/1')!;
  t.truthy(ready);
  t.true(ready.t / S >= 21 && ready.t / S <= 24, `ready at ${ready.t / S}`);
  t.is(ready.pod.status?.conditions?.find((c) => c.type === 'ContainersReady')?.status, 'True');
  t.true(run.all('cri.call', (r) => r.msg.startsWith('ProbeContainer')).length >= 8);
});

test('exec readiness probe via ExecSync: a failing command keeps the pod unready', (t) => {
  const run = runPair({
    steps: [{ at: 1 * S, create: mkPod('web', { containers: [{ name: 'app', image: 'nginx', readinessProbe: { exec: { command: ['false'] }, periodSeconds: 1 } }] }) }],
    untilS: 15,
  });
  t.false(run.rows('web').some((r) => r.ready === '1/1'));
  t.true(run.all('cri.call', (r) => r.msg.startsWith('ExecSync')).length >= 10);
});

test('CrashLoopBackOff: restartCount, lastState and growing restart intervals (first restart at once, then ≥10 s, ≥20 s, ≥40 s)', (t) => {
  const run = runPair({
    steps: [{ at: 1 * S, create: mkPod('crash', { annotations: { 'podsim.dev/crash': '5s:1', 'podsim.dev/crash-attempts': 'always' } }) }],
    untilS: 200,
  });
  const starts = run.all('cri.start').map((r) => r.t / S);
  const exits = run.all('cri.exit').map((r) => r.t / S);
  t.true(starts.length >= 5, `starts ${starts.join(', ')}`);
  // Gap between a crash and the next start.
  const gaps = starts.slice(1).map((s, i) => s - exits[i]);
  t.true(gaps[0] < 2, `first restart after ${gaps[0]}`);
  t.true(gaps[1] >= 10 && gaps[1] <= 17, `second after ${gaps[1]}`);
  t.true(gaps[2] >= 20 && gaps[2] <= 37, `third after ${gaps[2]}`);
  t.true(gaps[3] >= 40 && gaps[3] <= 57, `fourth after ${gaps[3]}`);
  const rows = run.rows('crash');
  const clb = rows.find((r) => r.status === 'CrashLoopBackOff')!;
  t.truthy(clb);
  const cs = clb.pod.status!.containerStatuses![0];
  t.true(cs.restartCount >= 1);
  t.is(cs.lastState.terminated?.exitCode, 1);
  t.is(cs.lastState.terminated?.reason, 'Error');
  t.truthy(cs.lastState.terminated?.finishedAt, 'the printer can show "N (Xs ago)"');
  const maxRestarts = Math.max(...rows.map((r) => r.pod.status?.containerStatuses?.[0]?.restartCount ?? 0));
  t.is(maxRestarts, starts.length - 1);
  t.deepEqual(checkInvariants(run), []);
});

// 1.22: the worker only notices the terminal phase on the next UpdatePod after the status echo
// (RECONCILE), i.e. the 60–90 s resync here (1.23 made syncPod return isTerminal; spec §5.4).
test('restartPolicy Never: a container that exits 0 makes the pod Succeeded; the worker terminates at the next resync without deleting it', (t) => {
  const pod = mkPod('job', { annotations: { 'podsim.dev/crash': '3s:0' } });
  pod.spec.restartPolicy = 'Never';
  const run = runPair({ steps: [{ at: 1 * S, create: pod }], untilS: 120 });
  const last = run.rows('job').at(-1)!;
  t.is(last.pod.status?.phase, 'Succeeded');
  t.is(last.status, 'Completed');
  t.is(run.all('cri.start').length, 1);
  const works = run.all('kubelet.sync', (r) => r.data?.ph === 'B').map((r) => r.data!.work);
  t.true(works.includes('TerminatedPodWork'));
  const terminating = run.first('kubelet.sync', (r) => r.data?.work === 'TerminatingPodWork')!;
  t.true(terminating > 60 && terminating < 100, `terminating at ${terminating}`);
  t.is(run.all('kubelet.finalDelete').length, 0, 'no deletionTimestamp: the pod stays in the API');
  t.false(run.rows('job').some((r) => r.type === 'DELETED'));
});

test('events: Pulling/Pulled/Created/Started on start; Killing and FailedPreStopHook on delete; none when eventsEnabled is false', (t) => {
  const pod = mkPod('web', { containers: [{ name: 'app', image: 'nginx', lifecycle: { preStop: { exec: { command: ['sh', '-c', 'exit 3'] } } } }] });
  const steps = [
    { at: 1 * S, create: pod },
    { at: 10 * S, delete: 'web' },
  ];
  const run = runPair({ steps, untilS: 20 });
  const reasons = run.all('client.event').map((r) => r.data!.reason);
  // An untagged image defaults to imagePullPolicy Always (apiserver defaulting), hence Pulling.
  t.deepEqual(reasons, ['Pulling', 'Pulled', 'Created', 'Started', 'Killing', 'FailedPreStopHook']);
  t.regex(String(run.all('client.event').at(-1)!.data!.message), /exited with 3/);
  const quiet = runPair({ steps, untilS: 20, kubelet: { eventsEnabled: false } });
  t.is(quiet.all('client.event').length, 0);
  t.is(quiet.rows('web').at(-1)?.type, 'DELETED');
});
