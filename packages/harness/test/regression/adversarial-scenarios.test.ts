/**
 * Odd scenario timelines found by trying to break `podsim run`: each input here once produced a
 * wrong verdict, a stack trace or a hang. Each test runs the input that showed it and checks what
 * a user sees (verdict, timings, violations).
 */
import test from 'ava';
import { S, runText, stepTimes, why } from '../scenarios/helpers.js';

test('kubelet restart while a preStop hook runs: the restarted kubelet re-runs the hook, SIGTERM after it is no prestop-before-sigterm violation', async (t) => {
  // Used to fail: "SIGTERM to p/app at 29.001098s while its preStop (from 5.000236s) was still
  // running" — the crashed kubelet's preStop span never ended.
  const { report, model } = await runText(
    'restart-prestop',
    `kind: Scenario
cluster: { nodes: [{ name: n1 }] }
steps:
  - apply: all
  - sleep: 5s
  - id: del
    delete: { name: p }
  - sleep: 1s
  - fault: { kind: kubeletRestart, node: n1, downFor: 3s }
  - sleep: 60s
expect:
  pods: [p]
  signals: [{ pod: p, TERM: 1, KILL: 0 }]
  exitCodes: [{ pod: p, code: 143 }]
---
apiVersion: v1
kind: Pod
metadata: { name: p }
spec:
  nodeName: n1
  containers: [{ name: app, image: nginx, lifecycle: { preStop: { exec: { command: [sleep, '20'] } } } }]
`,
  );
  t.true(report.ok, why(report));
  t.deepEqual(report.violations, []);
  // The new incarnation (up at 9 s) waits the whole 20 s hook again before SIGTERM.
  const del = stepTimes(model, 'del').start;
  const term = model.processes.flatMap((p) => p.signals).find((s) => s.signal === 'SIGTERM');
  t.truthy(term);
  t.true(term!.t - del >= 23 * S && term!.t - del <= 25 * S, `SIGTERM ${(term!.t - del) / S}s after the delete`);
});
