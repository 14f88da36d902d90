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
    untilS: 60,
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
  t.deepEqual(checkInvariants(run), []);
});
