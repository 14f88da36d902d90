/**
 * An httpGet preStop hook (kuberuntime_container.go `executePreStopHook` → `runner.Run` with an
 * HTTPGetAction): the kubelet itself performs the GET, so podsim times it with the container's
 * `podsim.dev/exec-duration` when set and 0 otherwise (README "Container behaviour annotations"),
 * and SIGTERM follows as soon as it answers (issue #25 item 14: the README said 10 ms).
 */
import test from 'ava';
import { S, runText, why } from './helpers.js';

const text = (annotations: string) => `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
steps:
  - apply: all
  - sleep: 10s
  - id: del
    delete: { kind: pod, name: app }
  - wait: { for: gone, name: app, timeout: 1m }
expect:
  pods: [p]
  invariants: clean
---
apiVersion: v1
kind: Pod
metadata:
  name: app
  annotations: { podsim.dev/on-sigterm: "exit:1s:0"${annotations} }
spec:
  terminationGracePeriodSeconds: 30
  containers:
    - name: app
      image: nginx:1.21
      lifecycle: { preStop: { httpGet: { port: 80, path: /drain } } }
`;

async function hook(annotations: string) {
  const { report, model } = await runText('prestop-httpget', text(annotations));
  const spans = model.records.filter((r) => r.kind === 'kubelet.preStop');
  const begin = spans.find((r) => (r.data as { ph: string }).ph === 'B');
  const end = spans.find((r) => (r.data as { ph: string }).ph === 'E');
  const term = model.processes.flatMap((p) => p.signals).find((s) => s.signal === 'SIGTERM');
  return { report, begin, end, term };
}

test('an httpGet preStop hook without exec-duration answers at once: SIGTERM in the same instant the hook began', async (t) => {
  const { report, begin, end, term } = await hook('');
  t.true(report.ok, why(report));
  t.truthy(begin, 'the kubelet ran the preStop hook');
  t.is(end!.t - begin!.t, 0, 'the hook took 0 s');
  t.true(term!.t >= end!.t && term!.t - end!.t < 1000, `SIGTERM ${(term!.t - end!.t) / 1000} ms after the hook`);
});

test('an httpGet preStop hook takes podsim.dev/exec-duration: SIGTERM 3 s after the hook began', async (t) => {
  const { report, begin, end, term } = await hook(', podsim.dev/exec-duration: 3s');
  t.true(report.ok, why(report));
  t.is(end!.t - begin!.t, 3 * S);
  t.true(term!.t - begin!.t >= 3 * S && term!.t - begin!.t < 3 * S + 1000, `SIGTERM ${(term!.t - begin!.t) / S} s after the hook began`);
});
