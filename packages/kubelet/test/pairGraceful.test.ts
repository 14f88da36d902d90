/**
 * Pair test (kubelet + runtime + apiserver over the engine): a plain graceful delete, spec §1
 * and §13. The app exits 0 two seconds after SIGTERM; the pod is gone about 3–4 s after the
 * DELETE, with exactly three `0/1 Terminating` rows (the status write with the container
 * terminated, the kubelet's grace-0 MODIFIED, DELETED) — the shape of the minio trace of issue #7.
 */
import test from 'ava';
import { checkInvariants, mkPod, runPair, S } from './pairHarness.js';

test('graceful delete: Running → 1/1 Terminating → three 0/1 Terminating writes → gone ≈3–4 s later', (t) => {
  const run = runPair({
    steps: [
      { at: 1 * S, create: mkPod('web', { annotations: { 'podsim.dev/on-sigterm': 'exit:2s:0' } }) },
      { at: 10 * S, delete: 'web' },
    ],
    untilS: 80,
  });
  const rows = run.rows('web');
  const after = rows.filter((r) => r.t >= 10 * S);
  const summary = after.map((r) => `${r.type} ${r.ready} ${r.status}`);
  t.is(rows.filter((r) => r.t < 10 * S).at(-1)?.ready, '1/1', `running before the delete: ${rows.map((r) => `${r.type} ${r.ready} ${r.status}`).join(' | ')}`);
  t.deepEqual(summary, ['MODIFIED 1/1 Terminating', 'MODIFIED 0/1 Terminating', 'MODIFIED 0/1 Terminating', 'DELETED 0/1 Terminating'], summary.join(' | '));
  // The first of them sets dts/dgps 30; the grace-0 MODIFIED precedes DELETED (invariant 10).
  t.is(after[0].dgps, 30);
  t.is(after[2].dgps, 0);
  const gone = after[3].t / S;
  t.true(gone >= 12 && gone <= 15, `gone at ${gone}`);
  // RVs strictly increase (invariant 11); the final DELETE came from the kubelet with code 200.
  const rvs = after.map((r) => Number(r.rv));
  t.deepEqual([...rvs].sort((a, b) => a - b), rvs);
  t.is(run.all('kubelet.finalDelete')[0]?.data?.code, 200);
  // Invariant 1: the container exited before the object was removed; the app's own exit code 0.
  const exit = run.all('cri.exit', (r) => r.data?.pod === 'web')[0];
  t.is(exit?.data?.exitCode, 0);
  t.true(exit.t < after[3].t);
  // The terminated status shows the container Completed, phase still Running (RestartPolicy Always, invariant 17).
  const st = after[1].pod.status!;
  t.is(st.phase, 'Running');
  t.is(st.containerStatuses?.[0].state.terminated?.reason, 'Completed');
  t.is(st.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
  // A Killing event at the delete; container GC (1 m) removes the dead container and sandbox.
  t.true(run.all('api.write', (r) => r.data?.resource === 'events' && r.t >= 10 * S && r.t < 10.01 * S).length === 1);
  const removed = run.all('cri.call', (r) => /^(RemoveContainer|RemovePodSandbox)/.test(r.msg)).map((r) => r.msg.split(' ')[0]);
  t.deepEqual([...new Set(removed)].sort(), ['RemoveContainer', 'RemovePodSandbox']);
  t.true(run.first('cri.call', (r) => r.msg.startsWith('RemovePodSandbox'))! < 75);
  t.deepEqual(checkInvariants(run), []);
});

test('same seed, same trace digest; another seed still passes the same checks', (t) => {
  const steps = [
    { at: 1 * S, create: mkPod('web', { annotations: { 'podsim.dev/on-sigterm': 'exit:2s:0' } }) },
    { at: 10 * S, delete: 'web' },
  ];
  const a = runPair({ steps, untilS: 30, seed: 7 });
  const b = runPair({ steps, untilS: 30, seed: 7 });
  t.is(a.sim.digest(), b.sim.digest());
  const c = runPair({ steps, untilS: 30, seed: 8 });
  t.not(c.sim.digest(), a.sim.digest());
  t.deepEqual(checkInvariants(c), []);
  t.is(c.rows('web').filter((r) => r.ready === '0/1' && r.status === 'Terminating').length, 3);
});
