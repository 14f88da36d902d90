/**
 * Liveness and startup probes end to end (issue #26): a container that hangs is killed and
 * restarted by its liveness probe with the pod's terminationGracePeriodSeconds (the probe-level
 * one only under the ProbeTerminationGracePeriod gate, off by default in 1.22); and probes of a
 * terminating pod stop at the next housekeeping (1.22.8, kubernetes#110309), so a readiness
 * failure after SIGTERM is never posted and a hang during the grace period restarts nothing.
 */
import test from 'ava';
import { S, runText, stepTimes, why } from './helpers.js';

function livenessScenario(featureGates = ''): string {
  return `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
${featureGates}steps:
  - apply: all
  - watch: start
  - sleep: 80s
  - watch: stop
expect:
  pods: [p]
  invariants: clean
---
apiVersion: v1
kind: Pod
metadata:
  name: app
  annotations:
    podsim.dev/unhealthy-after: 20s
    podsim.dev/on-sigterm: "exit:1s:0"
spec:
  terminationGracePeriodSeconds: 30
  containers:
    - name: app
      image: nginx:1.21
      livenessProbe: { httpGet: { port: 80, path: /healthz }, periodSeconds: 5, failureThreshold: 3, terminationGracePeriodSeconds: 5 }
`;
}

test('liveness: a container hung 20 s after start is SIGTERMed after 3 failed probes, restarted at once (RESTARTS 1), StopContainer timeout = pod TGPS 30', async (t) => {
  const { report, model } = await runText('liveness', livenessScenario());
  t.true(report.ok, why(report));
  const lives = model.processes.filter((p) => p.pod === 'app').sort((a, b) => a.startedAt - b.startedAt);
  t.is(lives.length, 2, 'the hung container and its replacement');
  const [first, second] = lives;
  const term = first.signals.find((s) => s.signal === 'SIGTERM');
  t.truthy(term);
  // Hung from 20 s; probes every 5 s: the 1st failure within [20, 25) s, the 3rd 10 s later, the
  // kill follows the sync the liveness update dispatches.
  const termAfterStart = term!.t - first.startedAt;
  t.true(termAfterStart >= 30 * S && termAfterStart < 37 * S, `TERM ${termAfterStart / S}s after start`);
  t.false(first.signals.some((s) => s.signal === 'SIGKILL'));
  // No CrashLoopBackOff for the first restart: it starts within the same sync.
  t.true(second.startedAt - first.exitedAt! < 3 * S, `restart ${(second.startedAt - first.exitedAt!) / S}s after exit`);
  // The StopContainer timeout killContainer used (its span's end record).
  const kills = model.spansOf('kubelet.killContainer').filter((k) => k.data.containerId === first.containerId);
  t.deepEqual(kills.map((k) => k.endData?.gracePeriod), [30]);
  // What kubectl get pods -w shows: RESTARTS goes to 1 and the pod stays Running.
  t.true(report.watch.some((l) => /^app\s+1\/1\s+Running\s+1 \(/.test(l)), report.watch.join('\n'));
  t.false(report.watch.some((l) => /Terminating/.test(l)));
});

test('liveness with featureGates.ProbeTerminationGracePeriod: the kill uses the probe-level terminationGracePeriodSeconds (5)', async (t) => {
  const { report, model } = await runText('liveness-gate', livenessScenario('  kubelet: { featureGates: { ProbeTerminationGracePeriod: true } }\n'));
  t.true(report.ok, why(report));
  const first = model.processes.filter((p) => p.pod === 'app').sort((a, b) => a.startedAt - b.startedAt)[0];
  const kills = model.spansOf('kubelet.killContainer').filter((k) => k.data.containerId === first.containerId);
  t.deepEqual(kills.map((k) => k.endData?.gracePeriod), [5]);
});

test('startup probe: the liveness probe waits for it; a container that never starts is restarted after failureThreshold startup failures', async (t) => {
  const { report, model } = await runText(
    'startup',
    `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
steps:
  - apply: all
  - watch: start
  - sleep: 60s
  - watch: stop
expect:
  pods: [p]
  invariants: clean
---
apiVersion: v1
kind: Pod
metadata:
  name: app
  annotations:
    podsim.dev/startup: 1h
    podsim.dev/on-sigterm: "exit:1s:0"
spec:
  terminationGracePeriodSeconds: 30
  containers:
    - name: app
      image: nginx:1.21
      startupProbe: { httpGet: { port: 80, path: /healthz }, periodSeconds: 5, failureThreshold: 4 }
      livenessProbe: { httpGet: { port: 80, path: /healthz }, periodSeconds: 1, failureThreshold: 1 }
      readinessProbe: { httpGet: { port: 80, path: /healthz }, periodSeconds: 1 }
`,
  );
  t.true(report.ok, why(report));
  const lives = model.processes.filter((p) => p.pod === 'app').sort((a, b) => a.startedAt - b.startedAt);
  t.true(lives.length >= 2, `${lives.length} container runs`);
  const term = lives[0].signals.find((s) => s.signal === 'SIGTERM')!;
  // 4 startup failures 5 s apart: the 4th lands 15–20 s after start. The liveness probe (period
  // 1 s, threshold 1) would have killed it after ~1 s if it ran before the container started.
  const after = term.t - lives[0].startedAt;
  t.true(after >= 15 * S && after < 22 * S, `TERM ${after / S}s after start`);
  t.true(report.watch.every((l) => !/^app\s+1\/1/.test(l)), 'never ready: not started');
});

test('probes during termination (1.22.8): a readiness failure after SIGTERM is not posted — the pod stays 1/1 Terminating until its container exits (E06)', async (t) => {
  const { report, model } = await runText(
    'readiness-terminating',
    `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
steps:
  - apply: all
  - sleep: 10s
  - watch: start
  - id: del
    delete: { kind: pod, name: app }
  - wait: { for: gone, name: app, timeout: 2m }
  - sleep: 1s
  - watch: stop
expect:
  pods: [p]
  timings:
    - { pod: p, event: exit, since: del, within: [20s, 22s] }
  invariants: clean
---
apiVersion: v1
kind: Pod
metadata:
  name: app
  annotations:
    podsim.dev/on-sigterm: "exit:20s:0"
    podsim.dev/ready-after-sigterm: "false"
    podsim.dev/unhealthy-after: 15s
spec:
  terminationGracePeriodSeconds: 60
  containers:
    - name: app
      image: nginx:1.21
      readinessProbe: { httpGet: { port: 80, path: / }, periodSeconds: 10, failureThreshold: 1 }
      livenessProbe: { httpGet: { port: 80, path: /healthz }, periodSeconds: 1, failureThreshold: 1 }
`,
  );
  t.true(report.ok, why(report));
  const del = stepTimes(model, 'del').start;
  const app = model.processes.find((p) => p.pod === 'app')!;
  // READY drops to 0/1 only once the container has exited (~20 s after SIGTERM), not ~2 s after.
  const rows = model.watchRows.filter((r) => Array.isArray((r.data as { cells?: unknown }).cells));
  const unready = rows.filter((r) => {
    const cells = (r.data as { cells: string[] }).cells;
    return cells[0] === 'app' && cells[1] === '0/1' && cells[2] === 'Terminating';
  });
  t.true(unready.length > 0, report.watch.join('\n'));
  t.true(unready[0].t >= app.exitedAt!, `0/1 Terminating at ${(unready[0].t - del) / S}s, exit at ${(app.exitedAt! - del) / S}s`);
  // The liveness hang at 15 s after start (during the grace period) restarts nothing.
  t.is(model.processes.filter((p) => p.pod === 'app').length, 1);
  t.deepEqual(app.signals.map((s) => s.signal), ['SIGTERM']);
});
