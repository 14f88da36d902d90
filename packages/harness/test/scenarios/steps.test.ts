/**
 * Every step kind end to end (apply, create, scale, wait in each condition, delete by selector
 * and by name with kubectl's flag rewrites and --wait, watch start/stop, sleep), through the real
 * apiserver, controllers, kubelets and runtimes. Fault steps are in faults.test.ts.
 */
import test from 'ava';
import { S, runText, stepTimes, why, writesOf } from './helpers.js';

const STEPS = `kind: Scenario
cluster:
  nodes: [{ name: node-1 }, { name: node-2 }]
steps:
  - apply: Deployment/web
  - id: running
    wait: { for: running, selector: app=web, count: 2, timeout: 2m }
  - scale: { name: web, replicas: 3 }
  - id: ready
    wait: { for: ready, selector: app=web, count: 3, timeout: 2m }
  - create: Pod/solo
  - wait: { for: exists, name: solo }
  - id: watch
    watch: { action: start, selector: app=web }
  - id: del-now
    delete: { kind: pod, selector: app=web, now: true, wait: true, timeout: 1m }
  - wait: { for: ready, selector: app=web, count: 3 }
  - id: del-solo
    delete: { name: solo, gracePeriod: 0 }
  - id: terminating
    wait: { for: terminating, name: solo }
  - id: gone
    wait: { for: gone, name: solo, timeout: 1m }
  - sleep: 2s
  - id: unwatch
    watch: stop
  - sleep: 5s
  - delete: { kind: deployment, name: web }
expect:
  pods: [web1, web2, web3, solo]
  timings:
    - { pod: solo, event: TERM, since: del-solo, within: [0s, 1500ms] }
    - { pod: solo, event: KILL, since: del-solo, within: [1s, 2500ms] }
  exitCodes:
    - { pod: solo, code: 137 }
    - { pod: web1, code: 143 }
  signals:
    - { pod: solo, TERM: 1, KILL: 1 }
    - { pod: web1, TERM: 1, KILL: 0 }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 2
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      containers:
        - name: nginx
          image: nginx:1.21
          readinessProbe: { httpGet: { port: 80, path: / }, periodSeconds: 2 }
---
apiVersion: v1
kind: Pod
metadata:
  name: solo
  annotations: { podsim.dev/on-sigterm: ignore }
spec:
  containers: [{ name: sh, image: busybox:1.34, command: [sh, -c, "sleep 3600"] }]
`;

test('apply, scale, wait, delete --now --wait, delete --grace-period=0, watch with a selector', async (t) => {
  const { report, model } = await runText('steps', STEPS);
  t.true(report.ok, why(report));
  t.deepEqual(
    report.steps.map((s) => [s.kind, s.ok]),
    [
      ['apply', true],
      ['wait', true],
      ['scale', true],
      ['wait', true],
      ['create', true],
      ['wait', true],
      ['watch', true],
      ['delete', true],
      ['wait', true],
      ['delete', true],
      ['wait', true],
      ['wait', true],
      ['sleep', true],
      ['watch', true],
      ['sleep', true],
      ['delete', true],
    ],
  );

  // scale: three web pods were running before the delete, and the ReplicaSet replaced all three.
  const web = report.pods.filter((p) => p.name.startsWith('web-'));
  t.is(web.length, 6);
  const firstThree = web.slice(0, 3);
  // `--now` is grace 1: every deleted pod carried deletionGracePeriodSeconds=1.
  for (const p of firstThree) {
    const w = writesOf(model, p.name).find((x) => x.deletionTimestamp !== undefined)!;
    t.is(w.deletionGracePeriodSeconds, 1, p.name);
  }
  // `--wait`: the step ended only once all three were gone.
  const delNow = stepTimes(model, 'del-now');
  for (const p of firstThree) t.true(p.goneAt! <= delNow.end, `${p.name} gone at ${p.goneAt} after the delete returned at ${delNow.end}`);
  t.true(delNow.end - delNow.start >= 1 * S, 'the delete waited for the kubelets');

  // `--grace-period=0` without --force is sent as 1 (kubectl), so solo is Terminating, not gone at once.
  const solo = writesOf(model, 'solo');
  const first = solo.find((w) => w.deletionTimestamp !== undefined)!;
  t.is(first.deletionGracePeriodSeconds, 1);
  t.is(first.event, 'MODIFIED');
  t.true(stepTimes(model, 'terminating').end >= first.t);
  const gone = solo.find((w) => w.event === 'DELETED')!;
  t.true(gone.t - first.t >= 1 * S, 'graceful: the object stays until the kubelet confirms');
  t.true(stepTimes(model, 'gone').end >= gone.t);

  // The watch printed only app=web pods, and only while it ran.
  const rows = model.watchRows;
  t.true(rows.length > 0);
  t.false(report.watch.some((l) => l.startsWith('solo')), report.watch.join('\n'));
  const w0 = stepTimes(model, 'watch').start;
  const w1 = stepTimes(model, 'unwatch').end;
  t.true(rows.every((r) => r.t >= w0 && r.t <= w1));
  t.is(report.watch[0].replace(/\s+/g, ' '), 'NAME READY STATUS RESTARTS AGE');
  // The `running` wait ended once both initial pods ran; `ready` once the third one was ready.
  t.true(stepTimes(model, 'running').end < stepTimes(model, 'ready').end);
});

test('kubectl delete --force --grace-period=0: gone from the API at once, the container runs on for the full grace (C04)', async (t) => {
  const { report, model } = await runText(
    'force',
    `kind: Scenario
cluster: { nodes: [{ name: node-1 }] }
steps:
  - apply: all
  - sleep: 10s
  - id: force
    delete: { name: stubborn, force: true, gracePeriod: 0 }
  - sleep: 40s
expect:
  pods: [p]
  timings:
    - { pod: p, event: gone, since: force, within: [0s, 10ms] }
    - { pod: p, event: KILL, since: force, within: [29s, 33s] }
  exitCodes: [{ pod: p, code: 137 }]
  signals: [{ pod: p, TERM: 1, KILL: 1 }]
  invariants: clean
---
apiVersion: v1
kind: Pod
metadata: { name: stubborn, annotations: { podsim.dev/on-sigterm: ignore } }
spec:
  terminationGracePeriodSeconds: 30
  containers: [{ name: app, image: busybox:1.34 }]
`,
  );
  t.true(report.ok, why(report));
  const w = writesOf(model, 'stubborn');
  const del = w.filter((x) => x.deletionTimestamp !== undefined);
  t.deepEqual(
    del.map((x) => [x.event, x.deletionGracePeriodSeconds]),
    [
      ['MODIFIED', 0],
      ['DELETED', 0],
    ],
  );
  t.is(del[0].t, del[1].t, 'one request: MODIFIED then DELETED at the same instant');
});

test('a step that fails (wait timeout) fails the run with the replay command', async (t) => {
  const { report } = await runText(
    'timeout',
    `kind: Scenario
cluster: { nodes: [{ name: node-1 }] }
steps:
  - apply: all
  - wait: { for: ready, name: never, timeout: 5s }
---
apiVersion: v1
kind: Pod
metadata: { name: never, annotations: { podsim.dev/not-ready: "0s-" } }
spec:
  containers: [{ name: app, image: nginx:1.21, readinessProbe: { httpGet: { port: 80 }, periodSeconds: 1 } }]
`,
    { seed: 7 },
  );
  t.false(report.ok);
  t.regex(report.failures.join('\n'), /step at line 5 wait failed: timed out after 5s waiting for ready/);
  t.is(report.replay, 'pnpm podsim run timeout.yaml --seed 7 --placement single');
  t.true(report.virtualSeconds >= 5 && report.virtualSeconds < 6);
});

test('--json steps: a sleep ends when the timeline clock says, durations read as written, open-ended faults last until the end', async (t) => {
  const { report } = await runText(
    'step-data',
    `kind: Scenario
cluster: { nodes: [{ name: node-1 }] }
steps:
  - apply: all
  - id: long
    sleep: 42h
  - fault: { kind: runtimeDelay, node: node-1, call: PullImage, delay: 17s }
  - fault: { kind: runtimeError, node: node-1, call: StopContainer, for: 20s }
  - id: short
    sleep: 2m30s
---
apiVersion: v1
kind: Pod
metadata: { name: p }
spec:
  containers: [{ name: app, image: busybox:1.34 }]
`,
  );
  t.true(report.ok, why(report));
  const [apply, long, delay, error, short] = report.steps;
  t.is(long.summary, '42h');
  t.is(long.endUs! - long.startUs, 42 * 3600 * S - (long.startUs - apply.startUs), 'the sleep ends 42h after the timeline reached it');
  t.is(delay.startUs, long.endUs!);
  t.is(delay.summary, 'runtime/node-1 answers PullImage 17s late until the end');
  t.is(error.summary, 'runtime/node-1 fails StopContainer (Unknown) for 20s');
  t.is(short.summary, '2m30s');
  t.is(short.endUs! - short.startUs, 150 * S);
});

test('--json steps carry what kubectl printed (steps[].output): a force delete\'s warning, then "force deleted"', async (t) => {
  const { report } = await runText(
    'step-output',
    `kind: Scenario
cluster: { nodes: [{ name: node-1 }] }
steps:
  - apply: all
  - wait: { for: running, name: p, timeout: 60s }
  - delete: { name: p, force: true, gracePeriod: 0 }
  - sleep: 5s
---
apiVersion: v1
kind: Pod
metadata: { name: p }
spec:
  containers: [{ name: app, image: busybox:1.34 }]
`,
  );
  t.true(report.ok, why(report));
  const del = report.steps.find((s) => s.kind === 'delete')!;
  t.deepEqual(del.output, ['warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.', 'pod "p" force deleted']);
  t.is(report.steps.find((s) => s.kind === 'sleep')!.output, undefined, 'a sleep prints nothing');
});

test('expectFailure: a step that must fail (kubectl exiting non-zero) passes the run when it fails, with kubectl\'s error line, and fails it when it succeeds', async (t) => {
  const text = (second: string) => `kind: Scenario
cluster: { nodes: [{ name: node-1 }] }
steps:
  - apply: all
  - id: again
    create: Pod/p
    expectFailure: true
${second}
---
apiVersion: v1
kind: Pod
metadata: { name: p }
spec:
  containers: [{ name: app, image: busybox:1.34 }]
`;
  const { report } = await runText('expect-failure', text(''));
  t.true(report.ok, why(report));
  const again = report.steps.find((s) => s.id === 'again')!;
  t.like(again, { ok: true, expectFailure: true, expectedError: 'Pod/p: 409 pods "p" already exists' });
  t.deepEqual(again.output, ['Error from server (AlreadyExists): pods "p" already exists']);

  const { report: bad } = await runText('expect-failure-succeeds', text('  - cordon: node-1\n    expectFailure: true'));
  t.false(bad.ok);
  t.regex(bad.failures.join('\n'), /step at line 8 cordon failed: succeeded, but the scenario says expectFailure: true/);
});

test('delete { selector, count: 1 } deletes the oldest live pod of a Deployment; aliases in creation order name it', async (t) => {
  const { report } = await runText(
    'delete-count',
    `kind: Scenario
cluster: { nodes: [{ name: node-1 }] }
steps:
  - apply: all
  - wait: { for: ready, selector: app=web, count: 3, timeout: 1m }
  - id: del
    delete: { selector: app=web, count: 1 }
  - sleep: 2s
  - id: del2
    delete: { selector: app=web, count: 1 }
  - sleep: 40s
expect:
  pods: [web1, web2, web3, web4, web5]
  timings:
    - { pod: web1, event: terminating, since: del, within: [0s, 10ms] }
    - { pod: web1, event: gone, since: del, within: [30s, 35s] }
    - { pod: web2, event: terminating, since: del2, within: [0s, 10ms] }
    - { pod: web4, event: created, since: del, within: [0s, 100ms] }
  counts: { podsAtEnd: 3 }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 3
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web }, annotations: { podsim.dev/on-sigterm: ignore } }
    spec:
      containers: [{ name: app, image: nginx:1.21 }]
`,
  );
  t.true(report.ok, why(report));
  const deleted = report.pods.filter((p) => p.deletedAt !== undefined).map((p) => p.name);
  t.deepEqual(deleted, [report.pods[0].name, report.pods[1].name], 'the two oldest, one per step');
  t.deepEqual(
    report.steps.filter((s) => s.kind === 'delete').map((s) => s.summary),
    ['kubectl delete pod -l app=web (the oldest 1) --wait=false', 'kubectl delete pod -l app=web (the oldest 1) --wait=false'],
  );
});
