/**
 * Init containers end to end (issue #26 item 3): what `kubectl get pods -w` prints while they run
 * (Init:N/M, PodInitializing, Init:Error, Init:CrashLoopBackOff — the apiserver's printPod), that
 * the app container starts only after the last one exited 0, that a failing one blocks the pod
 * (restarted with backoff, or the pod Failed under restartPolicy Never), and a delete during
 * initialization (the running init container gets SIGTERM, the app never starts).
 */
import test from 'ava';
import { S, runText, stepTimes, why } from './helpers.js';

function scenario(o: { annotations: string; restartPolicy?: string; steps?: string; expect?: string }): string {
  return `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
steps:
  - apply: all
  - watch: start
${o.steps ?? '  - sleep: 60s\n'}  - watch: stop
expect:
  pods: [p]
${o.expect ?? ''}  invariants: clean
---
apiVersion: v1
kind: Pod
metadata:
  name: app
  annotations:
${o.annotations}spec:
  restartPolicy: ${o.restartPolicy ?? 'Always'}
  terminationGracePeriodSeconds: 30
  containers:
    - name: app
      image: nginx:1.21
  initContainers:
    - name: wait-db
      image: busybox:1.35
    - name: migrate
      image: busybox:1.35
`;
}

const statuses = (watch: readonly string[]) => watch.slice(1).map((l) => l.trim().split(/\s+/).slice(1, 3).join(' '));

test('two init containers that exit 0: Init:0/2 → Init:1/2 → PodInitializing → 1/1 Running; the app starts after the last one exited', async (t) => {
  const { report, model } = await runText(
    'init-ok',
    scenario({
      annotations: `    podsim.dev/wait-db.crash: "3s:0"
    podsim.dev/wait-db.crash-attempts: always
    podsim.dev/migrate.crash: "5s:0"
    podsim.dev/migrate.crash-attempts: always
`,
    }),
  );
  t.true(report.ok, why(report));
  const rows = statuses(report.watch);
  const order = ['0/1 Init:0/2', '0/1 Init:1/2', '0/1 PodInitializing', '1/1 Running'];
  const idx = order.map((r) => rows.indexOf(r));
  t.true(idx.every((i) => i >= 0) && idx.every((i, k) => k === 0 || i > idx[k - 1]), report.watch.join('\n'));
  const byName = (n: string) => model.processes.filter((p) => p.container === n);
  t.is(byName('wait-db').length, 1);
  t.is(byName('migrate').length, 1);
  t.is(byName('app').length, 1);
  t.true(byName('migrate')[0].startedAt >= byName('wait-db')[0].exitedAt!);
  t.true(byName('app')[0].startedAt >= byName('migrate')[0].exitedAt!);
});

test('a failing init container (restartPolicy Always): Init:Error then Init:CrashLoopBackOff, restarted with backoff, the app never starts', async (t) => {
  const { report, model } = await runText(
    'init-crashloop',
    scenario({
      annotations: `    podsim.dev/wait-db.crash: "2s:1"
    podsim.dev/wait-db.crash-attempts: always
`,
    }),
  );
  t.true(report.ok, why(report));
  const rows = statuses(report.watch);
  t.true(rows.includes('0/1 Init:Error'), report.watch.join('\n'));
  t.true(rows.includes('0/1 Init:CrashLoopBackOff'), report.watch.join('\n'));
  const runs = model.processes.filter((p) => p.container === 'wait-db').sort((a, b) => a.startedAt - b.startedAt);
  // The first restart is immediate (doBackOff has no entry yet), then the backoff doubles from
  // 10 s: 4 runs in 60 s.
  t.is(runs.length, 4);
  const gaps = runs.slice(1).map((r, i) => (r.startedAt - runs[i].exitedAt!) / S);
  t.true(gaps[0] < 2 && gaps[1] >= 10 && gaps[1] < 15 && gaps[2] >= 20 && gaps[2] < 35, gaps.join(', '));
  t.is(model.processes.filter((p) => p.container === 'app' || p.container === 'migrate').length, 0);
  // RESTARTS counts the init container's restarts while initializing.
  t.true(report.watch.some((l) => /Init:CrashLoopBackOff\s+[2-9] \(/.test(l)), report.watch.join('\n'));
});

test('a failing init container under restartPolicy Never: the pod is Failed with Init:Error, not retried', async (t) => {
  const { report, model } = await runText(
    'init-never',
    scenario({
      restartPolicy: 'Never',
      annotations: `    podsim.dev/wait-db.crash: "2s:3"
`,
    }),
  );
  t.true(report.ok, why(report));
  t.is(model.processes.filter((p) => p.container === 'wait-db').length, 1);
  t.is(model.processes.filter((p) => p.container === 'app').length, 0);
  t.is(statuses(report.watch).at(-1), '0/1 Init:Error', report.watch.join('\n'));
  const phases = model.writes.filter((w) => w.resource === 'pods' && w.name === 'app').map((w) => w.phase);
  t.is(phases.at(-1), 'Failed');
});

test('delete during initialization: the running init container gets SIGTERM with the pod grace, the next init container and the app never start', async (t) => {
  const { report, model } = await runText(
    'init-delete',
    scenario({
      annotations: `    podsim.dev/wait-db.crash: "3s:0"
    podsim.dev/wait-db.crash-attempts: always
    podsim.dev/migrate.crash: "1h:0"
    podsim.dev/migrate.on-sigterm: "exit:2s:0"
`,
      steps: `  - sleep: 10s
  - id: del
    delete: { kind: pod, name: app }
  - wait: { for: gone, name: app, timeout: 1m }
  - sleep: 1s
`,
      expect: `  timings:
    - { pod: p, event: gone, since: del, within: [2s, 6s] }
`,
    }),
  );
  t.true(report.ok, why(report));
  const del = stepTimes(model, 'del').start;
  const migrate = model.processes.filter((p) => p.container === 'migrate');
  t.is(migrate.length, 1);
  t.deepEqual(migrate[0].signals.map((s) => s.signal), ['SIGTERM']);
  t.true(migrate[0].signals[0].t - del < 2 * S);
  t.is(model.processes.filter((p) => p.container === 'app').length, 0);
  const rows = statuses(report.watch);
  t.true(rows.includes('0/1 Init:1/2') && rows.includes('0/1 Terminating'), report.watch.join('\n'));
  t.false(rows.includes('0/1 PodInitializing'));
});
