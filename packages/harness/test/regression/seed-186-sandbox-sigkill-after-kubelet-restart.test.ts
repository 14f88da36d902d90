/**
 * Found by `podsim explore examples/explore-kubelet-restart.yaml --seeds 101..200 --faults 5`,
 * seed 186, shrunk from 32 faults to these 2 (`podsim replay … --seed 186 --faults 5 --shrink`):
 * a pod is deleted (TGPS 10) and gets SIGTERM; its kubelet restarts 1 s later; the new kubelet
 * kills the pod again while StopContainer fails (runtimeError), so killPod goes on to
 * StopPodSandbox, which SIGKILLs the container 3.7 s after the SIGTERM — what the v1.22.8 kubelet
 * does too (killPodWithSyncResult stops the sandboxes whatever the container kills returned).
 * `no-early-sigkill` flagged it because the crashed incarnation's killContainer span never ended;
 * the checker now looks only at the incarnation running at the SIGKILL.
 */
import test from 'ava';
import { S, runText, why } from '../scenarios/helpers.js';

const scenario = `kind: Scenario
cluster:
  seed: 186
  nodes: [{ name: node-1 }, { name: node-2 }, { name: node-3 }]
steps:
  - apply: all
  - sleep: 20s
  - delete: { selector: app=web }
explore: { window: [15s, 60s], healAfter: 90s, livenessBudget: 3m, faults: [] }
faults:
  - { at: 20.041115s, id: runtimeError-1.1, kind: runtimeError, node: node-2, call: StopContainer, code: Unknown, for: 5.199196s }
  - { at: 21.004598s, id: kubeletRestart-0.4, kind: kubeletRestart, node: node-2, downFor: 2.73205s }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web, labels: { app: web } }
spec:
  replicas: 12
  selector: { matchLabels: { app: web } }
  template:
    metadata:
      labels: { app: web }
      annotations: { podsim.dev/on-sigterm: "exit:uniform(1s,5s):0", podsim.dev/startup: 1s }
    spec:
      terminationGracePeriodSeconds: 10
      containers:
        - name: web
          image: nginx:1.21
          readinessProbe: { httpGet: { port: 80, path: / }, periodSeconds: 2 }
`;

test('seed 186: StopPodSandbox SIGKILLs a container early after a restarted kubelet failed to stop it — allowed, and the pod is gone', async (t) => {
  const { report, model } = await runText('seed-186', scenario);
  t.true(report.ok, why(report));
  const killed = model.processes.filter((p) => p.runtime === 'runtime/node-2' && p.signals.some((s) => s.signal === 'SIGTERM') && p.signals.some((s) => s.signal === 'SIGKILL'));
  t.true(killed.length >= 1, 'a container on node-2 got SIGTERM, then SIGKILL');
  for (const p of killed) {
    const term = p.signals.find((s) => s.signal === 'SIGTERM')!.t;
    const kill = p.signals.find((s) => s.signal === 'SIGKILL')!.t;
    // Earlier than the 10 s grace, right after the restarted kubelet (up at ~23.74 s) killed again.
    t.true(kill - term < 10 * S && kill > 23.7 * S && kill < 23.8 * S, `TERM ${term / S}s KILL ${kill / S}s`);
    t.is(p.exitCode, 137);
  }
  t.true(model.crashes.get('kubelet/node-2')?.length === 1);
  // Every deleted pod is gone (liveness held), including those on node-2.
  t.true(report.pods.filter((p) => p.deletedAt !== undefined).every((p) => p.goneAt !== undefined));
});
