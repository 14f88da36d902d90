/**
 * Pair tests over the engine (apiserver + kubelet + runtime + client): force delete (C04), delete
 * before start (C25), delete during image pull, a second delete with a shorter grace, kill errors
 * then recovery (runtime fault), a kubelet restart mid-termination (engine crash fault), a volume
 * that will not unmount (C18). Times are virtual seconds.
 */
import test from 'ava';
import { checkInvariants, mkPod, runPair, S, type PairRun } from './pairHarness.js';

const gone = (run: PairRun, name: string) => run.first('client.watch', (r) => r.data?.type === 'DELETED' && r.data?.name === name);
const sig = (run: PairRun, name: string, signal: string) => run.all('cri.signal', (r) => r.data?.pod === name && r.data?.signal === signal).map((r) => r.t / S);
const exits = (run: PairRun, name: string) => run.all('cri.exit', (r) => r.data?.pod === name).map((r) => ({ t: r.t / S, code: r.data!.exitCode as number }));

test('force delete: the API object is gone at once, the container still gets the full TGPS on the node (C04, invariant 19)', (t) => {
  const run = runPair({
    steps: [
      { at: 1 * S, create: mkPod('p', { annotations: { 'podsim.dev/on-sigterm': 'ignore' } }) },
      { at: 10 * S, delete: 'p', options: { gracePeriodSeconds: 0 } },
    ],
    untilS: 80,
  });
  const g = gone(run, 'p')!;
  t.true(g >= 10 && g < 10.01, `API gone at ${g}`);
  const term = sig(run, 'p', 'SIGTERM');
  const kill = sig(run, 'p', 'SIGKILL');
  t.is(term.length, 1);
  t.true(term[0] >= 10 && term[0] <= 11.5, `TERM at ${term[0]}`);
  t.true(Math.abs(kill[0] - term[0] - 30) < 0.01, `KILL ${kill[0]} = TERM + 30`);
  t.deepEqual(exits(run, 'p').map((e) => e.code), [137]);
  // No write after the force delete: the status manager's GET is a 404 and nothing else is sent.
  t.is(run.all('kubelet.finalDelete').length, 0);
  const kubeletWrites = run.all('api.request', (r) => r.data?.client === 'kubelet/n1' && r.t > 10 * S && ['patch', 'delete'].includes(r.data?.verb as string) && r.data?.resource === 'pods');
  t.deepEqual(kubeletWrites, []);
  t.deepEqual(checkInvariants(run, { forceDeleted: ['p'] }), []);
});

test('delete before start: a pod created and deleted while the kubelet was down never starts a container (C25)', (t) => {
  const run = runPair({
    steps: [
      { at: 1 * S, create: mkPod('p') },
      { at: 2 * S, delete: 'p' },
    ],
    faults: [{ kind: 'crash', actor: 'kubelet/n1', atUs: 0.5 * S, restartAfterUs: 4.5 * S }],
    untilS: 30,
  });
  t.is(run.all('cri.start').length, 0);
  const g = gone(run, 'p')!;
  t.true(g > 5 && g < 8, `gone at ${g}`);
  const works = run.all('kubelet.sync', (r) => r.data?.ph === 'B').map((r) => r.data!.work);
  t.deepEqual(works, ['TerminatingPodWork', 'TerminatedPodWork']);
  t.is(run.all('kubelet.finalDelete')[0]?.data?.code, 200);
  t.deepEqual(checkInvariants(run), []);
});

test('delete during the image pull: ContainerCreating meanwhile; syncPod still starts the container, the next sync kills it', (t) => {
  const run = runPair({
    steps: [
      { at: 1 * S, create: mkPod('p', { annotations: { 'podsim.dev/image-pull': '5s' }, containers: [{ name: 'app', image: 'registry.example/slow:1' }] }) },
      { at: 3 * S, delete: 'p' },
    ],
    untilS: 40,
  });
  const creating = run.rows('p').find((r) => r.status === 'ContainerCreating');
  t.truthy(creating, 'the waiting reason ContainerCreating is written while pulling');
  t.true(creating!.t < 3 * S);
  const start = run.first('cri.start');
  t.true(start !== undefined && start > 6 && start < 6.1, `started after the pull at ${start}`);
  const term = sig(run, 'p', 'SIGTERM');
  t.is(term.length, 1);
  t.true(term[0] > start! && term[0] < start! + 2, `killed at ${term[0]}`);
  t.deepEqual(exits(run, 'p').map((e) => e.code), [143]);
  const g = gone(run, 'p')!;
  t.true(g > term[0] && g < term[0] + 3, `gone at ${g}`);
  t.deepEqual(checkInvariants(run), []);
});

test('a second delete with a shorter grace: dgps and dts shrink in the API, the in-flight StopContainer keeps its 60 s', (t) => {
  const run = runPair({
    steps: [
      { at: 1 * S, create: mkPod('p', { tgps: 60, annotations: { 'podsim.dev/on-sigterm': 'ignore' } }) },
      { at: 10 * S, delete: 'p' },
      { at: 20 * S, delete: 'p', options: { gracePeriodSeconds: 5 } },
    ],
    untilS: 120,
  });
  const rows = run.rows('p');
  t.deepEqual(
    rows.filter((r) => r.dgps !== undefined).map((r) => r.dgps),
    [60, 5, 5, 0, 0],
    rows.map((r) => `${r.type}@${r.t / S} dgps=${r.dgps}`).join(' | '),
  );
  const kill = sig(run, 'p', 'SIGKILL');
  t.is(kill.length, 1);
  t.true(kill[0] > 70 && kill[0] < 71.5, `KILL at ${kill[0]} (60 s after the TERM at ~10)`);
  const g = gone(run, 'p')!;
  t.true(g > kill[0] && g < kill[0] + 3);
  t.deepEqual(checkInvariants(run), []);
});

test('kill errors then recovery: StopContainer and StopPodSandbox fail twice; syncTerminatingPod is retried after the 10–15 s backoff', (t) => {
  const wedged = { code: 'Unknown', message: 'runtime is wedged' };
  const run = runPair({
    steps: [
      { at: 1 * S, create: mkPod('p') },
      { at: 10 * S, delete: 'p' },
    ],
    runtime: {
      faults: [
        { call: 'StopContainer', error: wedged, attempts: 2 },
        { call: 'StopPodSandbox', error: wedged, attempts: 2 },
      ],
    },
    untilS: 80,
  });
  const stops = run.all('cri.call', (r) => r.msg.startsWith('StopContainer')).map((r) => r.t / S);
  t.is(stops.length, 3, `StopContainer at ${stops.join(', ')}`);
  t.true(stops[1] - stops[0] >= 10 && stops[1] - stops[0] <= 16.5, `retry after ${stops[1] - stops[0]}`);
  t.true(stops[2] - stops[1] >= 10 && stops[2] - stops[1] <= 16.5);
  const errs = run.all('kubelet.sync', (r) => r.data?.ph === 'E' && r.data?.work === 'TerminatingPodWork' && r.data?.error !== undefined);
  t.is(errs.length, 2);
  t.regex(String(errs[0].data!.error), /KillContainer.*runtime is wedged/);
  const failedKill = run.all('api.write', (r) => r.data?.resource === 'events' && String(r.data?.name).startsWith('p.'));
  t.true(failedKill.length > 0);
  const g = gone(run, 'p')!;
  t.true(g > stops[2] && g < stops[2] + 3);
  t.deepEqual(checkInvariants(run), []);
});

test('kubelet restart mid-termination: the new kubelet terminates again with the full grace; the pod is still deleted', (t) => {
  const run = runPair({
    steps: [
      { at: 1 * S, create: mkPod('p', { annotations: { 'podsim.dev/on-sigterm': 'ignore' } }) },
      { at: 10 * S, delete: 'p' },
    ],
    faults: [{ kind: 'crash', actor: 'kubelet/n1', atUs: 15 * S, restartAfterUs: 5 * S }],
    untilS: 90,
  });
  const killSpans = run.all('kubelet.killContainer', (r) => r.data?.ph === 'B');
  t.is(killSpans.length, 2);
  t.true(killSpans[1].t / S >= 20 && killSpans[1].t / S < 23, `second kill at ${killSpans[1].t / S}`);
  t.is(killSpans[1].data?.gracePeriod, 30, 'grace starts again from the full value (spec §15)');
  // The runtime's first StopContainer (from the old kubelet) still SIGKILLs at 10 + 30.
  const kill = sig(run, 'p', 'SIGKILL');
  t.true(kill[0] > 40 && kill[0] < 40.5, `KILL at ${kill[0]}`);
  const g = gone(run, 'p')!;
  t.true(g > kill[0] && g < kill[0] + 4, `gone at ${g}`);
  t.is(run.all('kubelet.finalDelete').at(-1)?.data?.code, 200);
  t.deepEqual(checkInvariants(run), []);
});

test('C18: a volume that fails to unmount keeps the pod 0/1 Terminating until the unmount succeeds', (t) => {
  const run = runPair({
    steps: [
      { at: 1 * S, create: mkPod('p', { annotations: { 'podsim.dev/on-sigterm': 'exit:1s:0' }, volumes: [{ name: 'cfg', secret: { secretName: 'cfg' } }] }) },
      { at: 10 * S, delete: 'p' },
    ],
    kubelet: { volumeUnmountByName: { cfg: { failUntilUs: 600 * S, error: 'device or resource busy' } } },
    untilS: 900,
  });
  const exit = exits(run, 'p')[0];
  t.true(exit.t > 11 && exit.t < 11.1);
  const terminatingRows = run.rows('p').filter((r) => r.ready === '0/1' && r.status === 'Terminating');
  t.true(terminatingRows[0].t / S < 13, '0/1 Terminating shortly after the exit');
  const g = gone(run, 'p')!;
  t.true(g >= 610 && g <= 735, `gone at ${g} (first unmount retry after 600 s of failures)`);
  t.true(run.all('kubelet.volume').length > 5, 'unmount retried with backoff');
  t.deepEqual(checkInvariants(run), []);
});

test('a failed StopContainer still stops the sandbox (SIGKILL, 137); the PLEG ContainerDied event retries at once', (t) => {
  const run = runPair({
    steps: [
      { at: 1 * S, create: mkPod('p') },
      { at: 10 * S, delete: 'p' },
    ],
    runtime: { faults: [{ call: 'StopContainer', error: { code: 'Unknown', message: 'runtime is wedged' }, attempts: 1 }] },
    untilS: 40,
  });
  t.deepEqual(exits(run, 'p').map((e) => e.code), [137]);
  const terminating = run.all('kubelet.sync', (r) => r.data?.ph === 'E' && r.data?.work === 'TerminatingPodWork');
  t.is(terminating.length, 2);
  t.truthy(terminating[0].data?.error);
  t.is(terminating[1].data?.error, undefined);
  t.true(terminating[1].t - terminating[0].t < 1.5 * S, 'retried by the PLEG event, not the 10 s backoff');
  const g = gone(run, 'p')!;
  t.true(g < 12.5, `gone at ${g}`);
  t.deepEqual(checkInvariants(run), []);
});

test('a StopContainer reply that never comes is cut by the CRI deadline (grace + runtimeRequestTimeout 2 m), then retried', (t) => {
  const run = runPair({
    steps: [
      { at: 1 * S, create: mkPod('p') },
      { at: 10 * S, delete: 'p' },
    ],
    runtime: { faults: [{ call: 'StopContainer', delayUs: 3600 * S, attempts: 1 }] },
    untilS: 400,
  });
  // The runtime acted (TERM, exit 143) but never answered; the kubelet gives up at 10 + 30 + 120.
  t.deepEqual(exits(run, 'p').map((e) => e.code), [143]);
  const err = run.all('kubelet.sync', (r) => r.data?.ph === 'E' && r.data?.error !== undefined)[0];
  t.true(err !== undefined && Math.abs(err.t / S - 160) < 0.1, `error at ${err && err.t / S}`);
  t.regex(String(err.data!.error), /DeadlineExceeded/);
  const g = gone(run, 'p')!;
  t.true(g > 160 && g < 163, `gone at ${g}`);
  t.deepEqual(checkInvariants(run), []);
});
