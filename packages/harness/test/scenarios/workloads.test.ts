/**
 * DaemonSet and Job end to end (issue #17; spec WC §3.10 and §4.14 timelines, cases W04, W06,
 * W08): scenarios with the real apiserver, controllers, scheduler, kubelets and runtimes, judged
 * by their own expectations (`podsim run` semantics) plus a few direct checks of the API writes.
 * The node-loss case (a daemon pod tolerating the taints of a powered-off node) waits for the node
 * lifecycle controller and is not here.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { EXIT_OK } from '../../src/cli.js';
import { S, declaredExpectations, digestOf, expectationTally, podsimRun, runText, stepTimes, why } from './helpers.js';

const CLUSTER1 = `kind: Scenario
cluster:
  seed: 1
  nodes: [{ name: n1 }]
`;

for (const file of ['examples/job-backoff.yaml', 'examples/drain-with-daemonset.yaml']) {
  test(`podsim run ${file} passes every expectation it declares`, async (t) => {
    t.timeout(120_000);
    const { code, out } = await podsimRun(file, 'single');
    t.is(code, EXIT_OK, out.join('\n'));
    const declared = declaredExpectations(readFileSync(file, 'utf8'));
    t.true(declared > 0);
    t.deepEqual(expectationTally(out), { passed: declared, total: declared }, out.join('\n'));
  });
}

for (const file of ['examples/job-backoff.yaml', 'examples/drain-with-daemonset.yaml']) {
  test(`${file} gives the same trace digest on per-actor, shards:2 and nodes:2 as in one thread`, async (t) => {
    t.timeout(180_000);
    const single = await podsimRun(file, 'single');
    t.truthy(digestOf(single.out));
    for (const placement of ['per-actor', 'shards:2', 'nodes:2']) {
      const r = await podsimRun(file, placement);
      t.is(r.code, EXIT_OK, r.out.join('\n'));
      t.is(digestOf(r.out), digestOf(single.out), placement);
    }
  });
}

const agent = (strategy: string) => `apiVersion: apps/v1
kind: DaemonSet
metadata: { name: agent }
spec:
  selector: { matchLabels: { app: agent } }
  ${strategy}
  template:
    metadata:
      labels: { app: agent }
      annotations: { podsim.dev/on-sigterm: "exit:20s:0" }
    spec:
      terminationGracePeriodSeconds: 30
      containers: [{ name: agent, image: busybox:1.34 }]
`;

const W04_STEPS = `steps:
  - apply: all
  - wait: { for: ready, selector: app=agent, count: 1, timeout: 1m }
  - watch: start
  - id: delete
    delete: { selector: app=agent, count: 1 }
  - sleep: 40s
  - watch: stop
`;

test('W04 part A: a deleted DaemonSet pod (maxSurge 0) is replaced only after it is gone: ~20 s without a daemon', async (t) => {
  const { report } = await runText(
    'w04a',
    `${CLUSTER1}${W04_STEPS}expect:
  pods: [old, new]
  timings:
    - { pod: old, event: exit, after: TERM, within: [20s, 20s] }
    - { pod: old, event: gone, since: delete, within: [20s, 24s] }
    - { pod: new, event: created, since: delete, within: [20s, 25s] }
    - { pod: new, event: ready, after: created, within: [0s, 3s] }
  counts: { maxPods: 1, podsAtEnd: 1, runningAtEnd: 1 }
  invariants: clean
---
${agent('')}`,
  );
  t.true(report.ok, why(report));
});

test('W04 part B: with maxSurge 1 the replacement is created at once and both pods overlap ~20 s', async (t) => {
  const { report } = await runText(
    'w04b',
    `${CLUSTER1}${W04_STEPS}expect:
  pods: [old, new]
  timings:
    - { pod: new, event: created, since: delete, within: [0s, 1s] }
    - { pod: new, event: ready, since: delete, within: [0s, 3s] }
    - { pod: old, event: gone, since: delete, within: [20s, 24s] }
  counts: { maxPods: 2, podsAtEnd: 1, runningAtEnd: 1 }
  invariants: clean
---
${agent('updateStrategy: { type: RollingUpdate, rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } }')}`,
  );
  t.true(report.ok, why(report));
});

test('DaemonSet on 3 nodes: one unbound pod per node with the node-name affinity term, bound there by the scheduler; deleting the DaemonSet deletes them', async (t) => {
  const { report, model } = await runText(
    'ds3',
    `kind: Scenario
cluster:
  nodes: [{ name: n1 }, { name: n2 }, { name: n3 }]
steps:
  - apply: all
  - wait: { for: ready, selector: app=agent, count: 3, timeout: 1m }
  - id: delete-ds
    delete: { kind: daemonset, name: agent }
  - wait: { for: gone, selector: app=agent, timeout: 1m }
expect:
  counts: { maxPods: 3, podsAtEnd: 0 }
  invariants: clean
---
${agent('')}`,
  );
  t.true(report.ok, why(report));
  // Each pod was created without a node (ADDED with no nodeName) and bound once, to its own node.
  const added = model.writes.filter((w) => w.resource === 'pods' && w.event === 'ADDED');
  t.is(added.length, 3);
  t.true(added.every((w) => w.nodeName === undefined));
  const boundTo = new Map<string, string>();
  for (const w of model.writes) if (w.resource === 'pods' && w.nodeName && !boundTo.has(w.name)) boundTo.set(w.name, w.nodeName);
  t.deepEqual([...boundTo.values()].sort(), ['n1', 'n2', 'n3']);
  // The background delete of the DaemonSet removed it at once; the GC deleted its pods.
  const del = stepTimes(model, 'delete-ds');
  t.true(model.writes.some((w) => w.resource === 'daemonsets' && w.event === 'DELETED' && w.t - del.start < S));
});

test('a DaemonSet deleted with --cascade=orphan and applied again adopts the pods it left (getDaemonPods → ClaimPods): no second pod per node', async (t) => {
  const { report, model } = await runText(
    'ds-adopt',
    `kind: Scenario
cluster:
  nodes: [{ name: n1 }, { name: n2 }]
steps:
  - apply: all
  - wait: { for: ready, selector: app=agent, count: 2, timeout: 1m }
  - delete: { kind: daemonset, name: agent, cascade: orphan }
  - sleep: 5s
  - id: reapply
    apply: all
  - sleep: 20s
expect:
  counts: { maxPods: 2, podsAtEnd: 2, runningAtEnd: 2 }
  invariants: clean
---
${agent('')}`,
  );
  t.true(report.ok, why(report));
  t.is(model.writes.filter((w) => w.resource === 'pods' && w.event === 'ADDED').length, 2, 'no pod created after the re-apply');
  const reapply = stepTimes(model, 'reapply');
  // Each orphan was patched (its ownerReferences) after the re-apply: the adoption.
  const patched = new Set(model.writes.filter((w) => w.resource === 'pods' && w.event === 'MODIFIED' && w.t >= reapply.start && w.t - reapply.start < 2 * S).map((w) => w.name));
  t.is(patched.size, 2);
});

test('spec §3.6: drain without --ignore-daemonsets refuses a node with a daemon pod, naming it', async (t) => {
  const { report } = await runText(
    'ds-drain-refused',
    `${CLUSTER1}steps:
  - apply: all
  - wait: { for: ready, selector: app=agent, count: 1, timeout: 1m }
  - id: drain
    drain: { node: n1, timeout: 30s }
    expectFailure: true
expect:
  output:
    - step: drain
      contains: ["node/n1 cordoned", "error: cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): default/agent-"]
  counts: { podsAtEnd: 1, runningAtEnd: 1 }
---
${agent('')}`,
  );
  t.true(report.ok, why(report));
});

const job = (spec: string, annotations: string, restartPolicy = 'Never') => `apiVersion: batch/v1
kind: Job
metadata: { name: work }
spec:
${spec}
  template:
    metadata:
      annotations: { ${annotations} }
    spec:
      restartPolicy: ${restartPolicy}
      terminationGracePeriodSeconds: 30
      containers: [{ name: work, image: busybox:1.34 }]
`;

test('spec §4.14: completions 1, succeeds in 5 s: Complete, the pod stays Succeeded; ttlSecondsAfterFinished 60 removes Job and pod ~60 s later', async (t) => {
  const { report, model } = await runText(
    'job-ttl',
    `${CLUSTER1}steps:
  - id: create
    apply: all
  - sleep: 80s
expect:
  pods: [p]
  timings:
    - { pod: p, event: exit, after: running, within: [5s, 5s] }
    - { pod: p, event: gone, since: create, within: [65s, 70s] }
  jobs:
    - { name: work, event: Complete, since: create, within: [5s, 8s] }
    - { name: work, event: gone, since: create, within: [65s, 70s] }
  exitCodes: [{ pod: p, code: 0 }]
  counts: { podsAtEnd: 0, runningAtEnd: 0 }
  invariants: clean
---
${job('  ttlSecondsAfterFinished: 60', 'podsim.dev/crash: "5s:0"')}`,
  );
  t.true(report.ok, why(report));
  // Until the TTL expires the finished pod is kept, phase Succeeded.
  const pod = model.writes.filter((w) => w.resource === 'pods' && w.event !== 'DELETED' && w.t < 60 * S).at(-1);
  t.is(pod?.phase, 'Succeeded');
  // The TTL controller deleted with Foreground: the Job carried the foregroundDeletion finalizer.
  t.true(model.writes.some((w) => w.resource === 'jobs' && (w.finalizers ?? []).includes('foregroundDeletion')));
});

test('spec §4.14: activeDeadlineSeconds 30 fails the Job DeadlineExceeded and deletes the running pod gracefully', async (t) => {
  const { report } = await runText(
    'job-ads',
    `${CLUSTER1}steps:
  - id: create
    apply: all
  - sleep: 45s
expect:
  pods: [p]
  jobs:
    - { name: work, event: Failed, reason: DeadlineExceeded, since: create, within: [30s, 31s] }
  timings:
    - { pod: p, event: terminating, since: create, within: [30s, 31s] }
    - { pod: p, event: exit, after: TERM, within: [2s, 2s] }
    - { pod: p, event: gone, since: create, within: [32s, 36s] }
  grace: [{ pod: p, deletionGracePeriodSeconds: [30, 0] }]
  counts: { podsAtEnd: 0 }
  invariants: clean
---
${job('  activeDeadlineSeconds: 30', 'podsim.dev/on-sigterm: "exit:2s:0"')}`,
  );
  t.true(report.ok, why(report));
});

test('W06: restartPolicy OnFailure reaching backoffLimit 2 fails the Job and deletes its only (running) pod', async (t) => {
  const { report, model } = await runText(
    'w06',
    `${CLUSTER1}steps:
  - id: create
    apply: all
  - sleep: 60s
expect:
  pods: [p]
  jobs:
    # t_r, the second restart, is in [14.5 s, 21 s] (case W06): the container back-off 10 s after its second exit, then the pod worker's retry.
    - { name: work, event: Failed, reason: BackoffLimitExceeded, since: create, within: [14s, 22s] }
  timings:
    - { pod: p, event: gone, since: create, within: [15s, 26s] }
  counts: { maxPods: 1, podsAtEnd: 0, runningAtEnd: 0 }
  invariants: clean
---
${job('  backoffLimit: 2', 'podsim.dev/crash: "1s:1", podsim.dev/crash-attempts: always', 'OnFailure')}`,
  );
  t.true(report.ok, why(report));
  // The pod never turned Failed (the kubelet restarted its container in place); the Job
  // controller deleted it while it was Running (or restarting), with its own grace.
  const pw = model.writes.filter((w) => w.resource === 'pods');
  t.false(pw.some((w) => w.phase === 'Failed'));
  t.true(pw.some((w) => w.deletionGracePeriodSeconds === 30));
});

const SLEEPER = job('  completions: 1', 'podsim.dev/on-sigterm: "exit:1s:0"');

test('W08 part A: a raw API DELETE of a Job (no propagationPolicy) orphans its running pod', async (t) => {
  const { report, model } = await runText(
    'w08a',
    `${CLUSTER1}steps:
  - apply: all
  - wait: { for: running, selector: job-name=work, count: 1, timeout: 1m }
  - id: delete
    delete: { kind: job, name: work, rawApi: true }
  - sleep: 30s
expect:
  pods: [p]
  jobs: [{ name: work, event: gone, since: delete, within: [0s, 2s] }]
  counts: { podsAtEnd: 1, runningAtEnd: 1 }
  signals: [{ pod: p, TERM: 0, KILL: 0 }]
  invariants: clean
---
${SLEEPER}`,
  );
  t.true(report.ok, why(report));
  // The apiserver applied batch/v1's OrphanDependents: the orphan finalizer, then the GC's removal.
  t.true(model.writes.some((w) => w.resource === 'jobs' && (w.finalizers ?? []).includes('orphan')));
  t.deepEqual(
    report.steps.find((s) => s.id === 'delete')?.output,
    ['job.batch "work" deleted'],
  );
});

test('W08 part B: kubectl delete job (propagationPolicy Background) deletes its pod gracefully', async (t) => {
  const { report } = await runText(
    'w08b',
    `${CLUSTER1}steps:
  - apply: all
  - wait: { for: running, selector: job-name=work, count: 1, timeout: 1m }
  - id: delete
    delete: { kind: job, name: work }
  - sleep: 30s
expect:
  pods: [p]
  jobs: [{ name: work, event: gone, since: delete, within: [0s, 10ms] }]
  timings:
    - { pod: p, event: terminating, since: delete, within: [0s, 1s] }
    - { pod: p, event: gone, since: delete, within: [1s, 5s] }
  grace: [{ pod: p, deletionGracePeriodSeconds: [30, 0] }]
  counts: { podsAtEnd: 0 }
  invariants: clean
---
${SLEEPER}`,
  );
  t.true(report.ok, why(report));
});

test('spec §3.10: a template update on 4 nodes (maxUnavailable 1) replaces one node at a time: never more than one node without its daemon', async (t) => {
  const { report, model } = await runText(
    'ds-rolling',
    `kind: Scenario
cluster:
  nodes: [{ name: n1 }, { name: n2 }, { name: n3 }, { name: n4 }]
steps:
  - apply: all
  - wait: { for: ready, selector: app=agent, count: 4, timeout: 1m }
  - id: update
    setImage: { kind: daemonset, name: agent, container: agent, image: "busybox:1.35" }
  - sleep: 60s
expect:
  pods: [a, b, c, d, e, f, g, h]
  timings:
    - { pod: h, event: ready, since: update, within: [12s, 30s] }
  counts: { maxPods: 4, podsAtEnd: 4, runningAtEnd: 4 }
  invariants: clean
---
apiVersion: apps/v1
kind: DaemonSet
metadata: { name: agent }
spec:
  selector: { matchLabels: { app: agent } }
  template:
    metadata:
      labels: { app: agent }
      annotations: { podsim.dev/on-sigterm: "exit:1s:0" }
    spec:
      terminationGracePeriodSeconds: 30
      containers: [{ name: agent, image: busybox:1.34 }]
`,
  );
  t.true(report.ok, why(report));
  // Old pods turn Terminating one after the other, each after the previous node's new pod is ready.
  const terminating = new Map<string, number>();
  for (const w of model.writes) if (w.resource === 'pods' && w.deletionTimestamp && !terminating.has(w.name)) terminating.set(w.name, w.t);
  const times = [...terminating.values()].sort((a, b) => a - b);
  t.is(times.length, 4);
  for (let i = 1; i < times.length; i++) t.true(times[i] - times[i - 1] >= 3 * S, `node ${i} started ${(times[i] - times[i - 1]) / S} s after the previous one`);
  // The four nodes go in a seeded random order, each exactly once.
  const nodes = new Map<string, string>();
  for (const w of model.writes) if (w.resource === 'pods' && w.nodeName && !nodes.has(w.name)) nodes.set(w.name, w.nodeName);
  const oldNodes = [...terminating.keys()].map((n) => nodes.get(n));
  t.deepEqual([...oldNodes].sort(), ['n1', 'n2', 'n3', 'n4']);
});

test('spec §3.1 node events: labelling a node to match the nodeSelector creates its daemon pod; removing the label or an untolerated NoExecute taint deletes it; a NoSchedule taint does not', async (t) => {
  const { report } = await runText(
    'ds-node-events',
    `kind: Scenario
cluster:
  nodes: [{ name: n1 }, { name: n2 }]
steps:
  - apply: all
  - sleep: 5s
  - id: label-n1
    patch: { kind: node, name: n1, type: merge, patch: { metadata: { labels: { disk: ssd } } } }
  - wait: { for: ready, selector: app=agent, count: 1, timeout: 30s }
  - id: label-n2
    patch: { kind: node, name: n2, type: merge, patch: { metadata: { labels: { disk: ssd } } } }
  - wait: { for: ready, selector: app=agent, count: 2, timeout: 30s }
  - id: noschedule-n1
    patch: { kind: node, name: n1, type: merge, patch: { spec: { taints: [{ key: dedicated, value: x, effect: NoSchedule }] } } }
  - sleep: 5s
  - id: unlabel-n1
    patch: { kind: node, name: n1, type: merge, patch: { metadata: { labels: { disk: null } } } }
  - sleep: 10s
  - id: noexecute-n2
    patch: { kind: node, name: n2, type: merge, patch: { spec: { taints: [{ key: dedicated, value: x, effect: NoExecute }] } } }
  - sleep: 10s
expect:
  pods: [a, b]
  timings:
    - { pod: a, event: created, since: label-n1, within: [0s, 1s] }
    - { pod: b, event: created, since: label-n2, within: [0s, 1s] }
    - { pod: a, event: terminating, since: unlabel-n1, within: [0s, 1s] }
    - { pod: b, event: terminating, since: noexecute-n2, within: [0s, 1s] }
  counts: { maxPods: 2, podsAtEnd: 0, runningAtEnd: 0 }
  invariants: clean
---
apiVersion: apps/v1
kind: DaemonSet
metadata: { name: agent }
spec:
  selector: { matchLabels: { app: agent } }
  template:
    metadata:
      labels: { app: agent }
      annotations: { podsim.dev/on-sigterm: "exit:1s:0" }
    spec:
      nodeSelector: { disk: ssd }
      terminationGracePeriodSeconds: 30
      containers: [{ name: agent, image: busybox:1.34 }]
`,
  );
  t.true(report.ok, why(report));
});

test('a DaemonSet pod on a node that loses power stays in the API, Running, while the Deployment pod beside it is evicted (the daemon tolerates unreachable:NoExecute without tolerationSeconds)', async (t) => {
  t.timeout(120_000);
  const { report, model } = await runText(
    'ds-node-loss',
    `kind: Scenario
cluster:
  seed: 1
  nodes: [{ name: w1 }, { name: w2 }]
steps:
  - sleep: 2s
  - cordon: w1
  - apply: all
  - sleep: 30s
  - uncordon: w1
  - id: down
    fault: { kind: nodeDown, node: w2 }
  - sleep: 420s
expect:
  invariants: clean
---
apiVersion: apps/v1
kind: DaemonSet
metadata: { name: agent }
spec:
  selector: { matchLabels: { app: agent } }
  template:
    metadata: { labels: { app: agent } }
    spec: { containers: [{ name: agent, image: fluentd:1.14 }] }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 1
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec: { containers: [{ name: web, image: nginx:1.21 }] }
`,
  );
  t.true(report.ok, why(report));
  const down = stepTimes(model, 'down').start;
  const podsOn = (node: string, label: string) => [...new Set(model.writes.filter((w) => w.resource === 'pods' && w.nodeName === node && w.name.startsWith(label)).map((w) => w.uid))];
  const [daemonOnW2] = podsOn('w2', 'agent-');
  const [webOnW2] = podsOn('w2', 'web-');
  t.truthy(daemonOnW2, 'a daemon pod ran on w2');
  t.truthy(webOnW2, 'the web pod ran on w2 (w1 was cordoned when it was created)');
  const terminating = (uid: string) => model.podWrites.get(uid)?.find((w) => w.deletionTimestamp)?.t;
  const webEvicted = terminating(webOnW2);
  t.truthy(webEvicted, 'the taint manager evicted the web pod');
  t.true(webEvicted! - down > 300 * S && webEvicted! - down < 360 * S, `web evicted ${(webEvicted! - down) / S}s after the power-off`);
  t.is(terminating(daemonOnW2), undefined, 'the daemon pod was never deleted');
  // Its node is NotReady and tainted all the while; the pod keeps its last posted phase.
  const last = model.podWrites.get(daemonOnW2)!.at(-1)!;
  t.is(last.phase, 'Running');
  t.is(last.podReady, 'False', 'MarkPodsNotReady set its Ready condition False');
});
