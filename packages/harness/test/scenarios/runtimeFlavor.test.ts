/**
 * A kubelet restart during a StopContainer under each runtime flavour (issue #15 item 6;
 * containerd 1.5 `pkg/cri/server/container_stop.go` `stopContainer`). A pod that ignores SIGTERM
 * (grace 30) is deleted at `del`; the kubelet dies 5 s later and is back 10 s after that, and its
 * new incarnation sends its own StopContainer (timeout 30) at ≈15 s.
 * - `containerd` (default): the first stop's context is cancelled with the kubelet's connection,
 *   so its SIGKILL at 30 s never comes; the second stop's SIGKILL comes at ≈45 s.
 * - `detached-stop`: the first stop runs to its deadline: SIGKILL at 30 s.
 */
import test from 'ava';
import { S, runText, stepTimes, why } from './helpers.js';

function scenario(flavor?: string, window = '[44s, 46s]'): string {
  return `kind: Scenario
cluster:
  seed: 1
  nodes: [{ name: node-1${flavor ? `, runtime: { flavor: ${flavor} }` : ''} }]
steps:
  - apply: all
  - sleep: 10s
  - id: del
    delete: { kind: pod, name: app, wait: false }
  - sleep: 5s
  - fault: { kind: kubeletRestart, node: node-1, downFor: 10s }
  - wait: { for: gone, name: app, timeout: 3m }
expect:
  pods: [p]
  timings:
    - { pod: p, event: KILL, since: del, within: ${window} }
  signals: [{ pod: p, TERM: 2, KILL: 1 }]
  exitCodes: [{ pod: p, code: 137 }]
  invariants: clean
---
apiVersion: v1
kind: Pod
metadata:
  name: app
  annotations: { podsim.dev/on-sigterm: ignore }
spec:
  terminationGracePeriodSeconds: 30
  containers: [{ name: app, image: nginx:1.21 }]
`;
}

test('containerd (the default): the dead kubelet\'s StopContainer stops waiting; SIGKILL 30 s after the restarted kubelet\'s SIGTERM', async (t) => {
  const { report, model } = await runText('flavor-default', scenario());
  t.true(report.ok, why(report));
  const cancelled = model.records.filter((r) => r.kind === 'cri.stopCancelled');
  t.is(cancelled.length, 1);
  // Cancelled when the kubelet died (the fault at 15 s on the static clock), not at the deadline.
  t.is(cancelled[0].t, 15 * S);
  const explicit = await runText('flavor-containerd', scenario('containerd'));
  t.is(explicit.report.traceDigest, report.traceDigest, 'containerd is the default');
});

test('detached-stop: the first StopContainer runs to its deadline; SIGKILL 30 s after the first SIGTERM', async (t) => {
  const { report, model } = await runText('flavor-detached', scenario('detached-stop', '[30s, 30500ms]'));
  t.true(report.ok, why(report));
  t.is(model.records.filter((r) => r.kind === 'cri.stopCancelled').length, 0);
  t.true(stepTimes(model, 'del').start >= 10 * S);
});

test('a runtime flavour that does not exist is refused with its path', async (t) => {
  const err = await runText('flavor-typo', scenario('cri-o')).then(
    () => undefined,
    (e: Error) => e,
  );
  t.truthy(err);
  t.regex(String(err?.message), /cluster\.nodes\.0\.runtime\.flavor|runtime.*flavor/);
});
