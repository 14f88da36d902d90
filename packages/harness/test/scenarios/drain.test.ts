/**
 * `cordon`, `uncordon`, `evict` and `drain` steps end to end (kubectl v0.22.8 `pkg/cmd/drain`,
 * `pkg/drain`): drain cordons the node, evicts its pods with the drain's grace (the kubelet runs
 * preStop and StopContainer with it), waits for them to be gone and prints what kubectl prints;
 * the replacements are scheduled to the other node; an unreplicated pod or an emptyDir pod stops
 * the drain unless `force` / `deleteEmptydirData`. Also: examples/drain-node.yaml passes, and an
 * unknown node is a file:line error.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { EXIT_BAD_INPUT, EXIT_OK, main } from '../../src/cli.js';
import { compileScenario } from '../../src/scenario/compile.js';
import { loadScenarioText } from '../../src/scenario/load.js';
import { ScenarioError, formatIssue } from '../../src/scenario/source.js';
import type { TraceModel } from '../../src/checkers/model.js';
import type { RunReport } from '../../src/run.js';
import { S, declaredExpectations, expectationTally, runText, stepTimes, why } from './helpers.js';

const WEB = `apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 4
  selector: { matchLabels: { app: web } }
  template:
    metadata:
      labels: { app: web }
      annotations: { podsim.dev/on-sigterm: "exit:1s:0" }
    spec:
      terminationGracePeriodSeconds: 30
      containers:
        - name: web
          image: nginx:1.21
          lifecycle: { preStop: { exec: { command: [sleep, "2"] } } }
`;

/** A pod without a controller, bound to node-1 by its manifest. */
const SOLO = `apiVersion: v1
kind: Pod
metadata: { name: solo }
spec:
  nodeName: node-1
  containers: [{ name: app, image: busybox:1.34 }]
`;

const CLUSTER = `kind: Scenario
cluster:
  nodes: [{ name: node-1 }, { name: node-2 }]
`;

function step(r: RunReport, id: string) {
  const s = r.steps.find((x) => x.id === id);
  if (!s) throw new Error(`no step ${id}`);
  return s;
}

/** Names of the pods whose first binding was to `node` (api.write nodeName). */
function podsBoundTo(model: TraceModel, node: string): string[] {
  const first = new Map<string, string | undefined>();
  for (const w of model.writes) if (w.resource === 'pods' && w.nodeName && !first.has(w.name)) first.set(w.name, w.nodeName);
  return [...first].filter(([, n]) => n === node).map(([name]) => name);
}

test('drain node-1 --grace-period=5: its pods terminate with grace 5 after preStop, replacements run on node-2, kubectl output per step', async (t) => {
  const { report, model } = await runText(
    'drain',
    `${CLUSTER}steps:
  - apply: all
  - wait: { for: ready, selector: app=web, count: 4, timeout: 2m }
  - id: drain
    drain: { node: node-1, gracePeriod: 5, timeout: 1m }
  - id: ready
    wait: { for: ready, selector: app=web, count: 4, timeout: 2m }
  - id: cordon-again
    cordon: node-1
  - id: uncordon
    uncordon: node-1
expect:
  invariants: clean
---
${WEB}`,
  );
  t.true(report.ok, why(report));
  const onNode1 = podsBoundTo(model, 'node-1');
  t.is(onNode1.length, 2, 'the scheduler spread the replicas 2 + 2');
  const drain = step(report, 'drain');
  // Evictions go out in list order (by name, as the apiserver lists); "evicted" lines as each
  // wait ends (both pods at the same virtual instant here).
  const out = drain.output as string[];
  t.is(out.length, 6, out.join('\n'));
  t.is(out[0], 'node/node-1 cordoned');
  t.deepEqual(out.slice(1, 3), [...onNode1].sort().map((n) => `evicting pod default/${n}`));
  t.deepEqual(out.slice(3, 5).sort(), [...onNode1].map((n) => `pod/${n} evicted`).sort());
  t.is(out[5], 'node/node-1 drained');
  t.deepEqual(step(report, 'cordon-again').output, ['node/node-1 already cordoned']);
  t.deepEqual(step(report, 'uncordon').output, ['node/node-1 uncordoned']);

  const { start, end } = stepTimes(model, 'drain');
  for (const name of onNode1) {
    const writes = model.writes.filter((w) => w.resource === 'pods' && w.name === name);
    t.deepEqual([...new Set(writes.map((w) => w.deletionGracePeriodSeconds).filter((g) => g !== undefined))], [5, 0], name);
    const pod = model.podWrites.get(writes[0].uid)!;
    const gone = pod.find((w) => w.event === 'DELETED')!.t;
    // preStop 2 s, SIGTERM, the app exits 1 s later, then PLEG, status sync and the final DELETE.
    t.true(gone - start >= 3 * S && gone - start <= 8 * S, `${name} gone ${(gone - start) / S}s after the drain began`);
    // kubectl polls every second: the drain ends within a second (plus a round trip) after the last pod is gone.
    t.true(end >= gone && end - gone <= 1.1 * S, `drain ended ${(end - gone) / S}s after ${name} was gone`);
    // The eviction carried gracePeriodSeconds 5 (the request the apiserver logged).
    t.true(model.requests.some((r) => r.client === 'driver' && r.subresource === 'eviction' && r.name === name && r.gracePeriodSeconds === 5 && r.code === 201));
  }
  const replacements = [...new Set(model.writes.filter((w) => w.resource === 'pods' && w.event === 'ADDED' && w.t >= start).map((w) => w.name))];
  t.is(replacements.length, 2);
  for (const name of replacements) t.deepEqual(podsBoundTo(model, 'node-2').includes(name), true, `${name} on node-2, not the cordoned node-1`);
});

test('an unreplicated pod stops the drain without force (nothing evicted); with force it is evicted and not replaced', async (t) => {
  const { report, model } = await runText(
    'drain-force',
    `${CLUSTER}steps:
  - apply: all
  - wait: { for: ready, selector: app=web, count: 4, timeout: 2m }
  - wait: { for: ready, name: solo, timeout: 2m }
  - id: refused
    drain: { node: node-1, gracePeriod: 5, timeout: 1m }
  - sleep: 10s
  - id: forced
    drain: { node: node-1, gracePeriod: 5, force: true, timeout: 1m }
---
${WEB}---
${SOLO}`,
  );
  const refused = step(report, 'refused');
  t.false(refused.ok);
  const fatal =
    'error: cannot delete Pods not managed by ReplicationController, ReplicaSet, Job, DaemonSet or StatefulSet (use --force to override): default/solo';
  t.deepEqual(refused.output, [
    'node/node-1 cordoned',
    'DEPRECATED WARNING: Aborting the drain command in a list of nodes will be deprecated in v1.23.',
    'The new behavior will make the drain command go through all nodes even if one or more nodes failed during the drain.',
    'For now, users can try such experience via: --ignore-errors',
    'error: unable to drain node "node-1", aborting command...',
    '',
    'There are pending nodes to be drained:',
    ' node-1',
    fatal,
  ]);
  // Nothing was evicted by the refused drain.
  const { start: refusedAt, end: refusedEnd } = stepTimes(model, 'refused');
  t.false(model.requests.some((r) => r.subresource === 'eviction' && r.t >= refusedAt && r.t <= refusedEnd));

  const forced = step(report, 'forced');
  t.true(forced.ok, why(report));
  const web1 = podsBoundTo(model, 'node-1').filter((n) => n !== 'solo');
  t.is(forced.output![0], 'node/node-1 already cordoned');
  t.is(
    forced.output![1],
    'WARNING: deleting Pods not managed by ReplicationController, ReplicaSet, Job, DaemonSet or StatefulSet: default/solo',
  );
  t.deepEqual(forced.output!.filter((l) => l.startsWith('evicting pod')).sort(), ['default/solo', ...web1.map((n) => `default/${n}`)].map((p) => `evicting pod ${p}`).sort());
  t.true(forced.output!.includes('pod/solo evicted'));
  t.is(forced.output!.at(-1), 'node/node-1 drained');
  t.true(model.writes.some((w) => w.resource === 'pods' && w.name === 'solo' && w.event === 'DELETED'));
  // The only failure of the run is the refused drain.
  t.deepEqual(
    report.failures.filter((f) => !f.includes('refused')),
    [],
  );
});

test('an emptyDir pod stops the drain unless deleteEmptydirData', async (t) => {
  const withEmptyDir = `${SOLO.replace('containers: [{ name: app, image: busybox:1.34 }]', 'containers: [{ name: app, image: busybox:1.34 }]\n  volumes: [{ name: scratch, emptyDir: {} }]')}`;
  const { report } = await runText(
    'drain-emptydir',
    `${CLUSTER}steps:
  - apply: all
  - wait: { for: ready, name: solo, timeout: 2m }
  - id: refused
    drain: { node: node-1, force: true }
  - id: drained
    drain: { node: node-1, force: true, deleteEmptydirData: true, gracePeriod: 1, timeout: 1m }
---
${withEmptyDir}`,
  );
  t.is(step(report, 'refused').output!.at(-1), 'error: cannot delete Pods with local storage (use --delete-emptydir-data to override): default/solo');
  const drained = step(report, 'drained');
  t.true(drained.ok, why(report));
  // The unreplicated filter runs last, so its warning is the one kubectl keeps.
  t.true(drained.output!.includes('WARNING: deleting Pods not managed by ReplicationController, ReplicaSet, Job, DaemonSet or StatefulSet: default/solo'));
  t.is(drained.output!.at(-1), 'node/node-1 drained');
});

test('evict: one eviction per step; a refused eviction records the Status message', async (t) => {
  const { report, model } = await runText(
    'evict',
    `${CLUSTER}steps:
  - apply: all
  - wait: { for: ready, name: solo, timeout: 2m }
  - id: evict
    evict: { name: solo, gracePeriod: 3 }
  - id: missing
    evict: { name: nope }
  - wait: { for: gone, name: solo, timeout: 1m }
---
${SOLO}`,
  );
  t.deepEqual(step(report, 'evict').output, ['evicting pod default/solo', 'pod/solo evicted']);
  const missing = step(report, 'missing');
  t.false(missing.ok);
  t.deepEqual(missing.output, ['evicting pod default/nope', 'error when evicting pods/"nope" -n "default": pods "nope" not found']);
  t.deepEqual([...new Set(model.writes.filter((w) => w.name === 'solo').map((w) => w.deletionGracePeriodSeconds).filter((g) => g !== undefined))], [3, 0]);
});

test('examples/drain-node.yaml passes through the CLI', async (t) => {
  t.timeout(120_000);
  const out: string[] = [];
  const code = await main(['run', 'examples/drain-node.yaml', '--quiet'], { out: (l) => out.push(l), err: (l) => out.push(l) });
  t.is(code, EXIT_OK, out.join('\n'));
  t.is(out.at(-1), 'PASS');
  const declared = declaredExpectations(readFileSync('examples/drain-node.yaml', 'utf8'));
  t.true(declared > 0, 'examples/drain-node.yaml declares no expectation');
  t.deepEqual(expectationTally(out), { passed: declared, total: declared }, out.join('\n'));
});

test('an unknown node in cordon / drain is a file:line error', (t) => {
  const text = `${CLUSTER}steps:
  - cordon: node-3
  - drain: { node: nod-2 }
`;
  const e = t.throws(() => compileScenario(loadScenarioText('bad.yaml', text)), { instanceOf: ScenarioError }) as ScenarioError;
  const lines = e.issues.map((i) => formatIssue(i));
  t.true(lines.some((l) => /^bad\.yaml:5:\d+: steps\[0\]\.cordon: no node "node-3" in cluster\.nodes/.test(l)), lines.join('\n'));
  t.true(lines.some((l) => /^bad\.yaml:6:\d+: steps\[1\]\.drain\.node: no node "nod-2" in cluster\.nodes.*node-2/.test(l)), lines.join('\n'));
  t.is(EXIT_BAD_INPUT, 2);
});

test('examples/drain-node-pdb.yaml: with a PodDisruptionBudget (minAvailable 3) the second eviction gets 429 and succeeds on kubectl\'s 5 s retry, only after the first replacement is Running', async (t) => {
  t.timeout(120_000);
  const text = readFileSync('examples/drain-node-pdb.yaml', 'utf8');
  const { report, model } = await runText('drain-node-pdb', text);
  t.true(report.ok, why(report));
  t.is(report.expectations.length, declaredExpectations(text), 'every expectation the file declares was judged');
  t.true(report.expectations.length > 0);
  const evictions = model.requests.filter((r) => r.subresource === 'eviction' && r.client === 'driver');
  t.deepEqual(
    evictions.map((e) => e.code),
    [201, 429, 201],
    'first eviction allowed, the second refused by the budget, then allowed on the retry',
  );
  const [, refused, retried] = evictions;
  t.is(retried.name, refused.name);
  t.true(retried.t - refused.t >= 5 * S && retried.t - refused.t < 5.1 * S, `retried ${(retried.t - refused.t) / S}s after the 429`);
  // The first pod's replacement (created after the drain began, on node-2) was Running before the retry.
  const drainAt = stepTimes(model, 'drain').start;
  const replacementRunning = model.writes.find((w) => w.resource === 'pods' && w.t > drainAt && w.phase === 'Running' && w.nodeName === 'node-2');
  t.truthy(replacementRunning);
  t.true(replacementRunning!.t < retried.t, 'the budget allowed the second eviction only once the replacement ran');
});

test('a budget that allows no disruption blocks the drain until its timeout (expectFailure); delete { kind: pdb } lifts it and the next drain completes', async (t) => {
  t.timeout(120_000);
  const { report } = await runText(
    'drain-pdb-delete',
    `kind: Scenario
cluster: { nodes: [{ name: node-1 }, { name: node-2 }] }
steps:
  - apply: all
  - wait: { for: ready, selector: app=web, count: 4, timeout: 2m }
  - id: blocked
    drain: { node: node-1, gracePeriod: 5, timeout: 12s }
    expectFailure: true
  - id: del-pdb
    delete: { kind: pdb, name: web }
  - id: drain
    drain: { node: node-1, gracePeriod: 5, timeout: 1m }
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: web }
spec: { maxUnavailable: 0, selector: { matchLabels: { app: web } } }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 4
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      containers: [{ name: web, image: nginx:1.21 }]
`,
  );
  t.true(report.ok, why(report));
  const step = (id: string) => report.steps.find((s) => s.id === id)!;
  t.regex(step('blocked').expectedError ?? '', /global timeout reached: 12s/);
  t.true(step('blocked').output!.some((l) => l.endsWith("Cannot evict pod as it would violate the pod's disruption budget.")));
  t.deepEqual(step('del-pdb').output, ['poddisruptionbudget.policy "web" deleted']);
  t.is(step('drain').output!.at(-1), 'node/node-1 drained');
});

test('a PodDisruptionBudget without a spec (valid in policy/v1) selects no pod: a drain under it evicts at once (201, no 429) and completes', async (t) => {
  // Issue #25 item 4: the spec-less budget was only validated (scenarioErrors), never run.
  t.timeout(120_000);
  const { report, model } = await runText(
    'drain-pdb-no-spec',
    `${CLUSTER}steps:
  - apply: all
  - wait: { for: ready, selector: app=web, count: 4, timeout: 2m }
  - id: drain
    drain: { node: node-1, gracePeriod: 5, timeout: 30s }
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: everything }
---
${WEB}`,
  );
  t.true(report.ok, why(report));
  // The budget exists in the apiserver while the drain runs.
  t.true(model.writes.some((w) => w.resource === 'poddisruptionbudgets' && w.name === 'everything' && w.event === 'ADDED'));
  const onNode1 = podsBoundTo(model, 'node-1');
  t.is(onNode1.length, 2);
  const evictions = model.requests.filter((r) => r.subresource === 'eviction' && r.client === 'driver');
  t.deepEqual(evictions.map((e) => [e.name, e.code]).sort(), onNode1.map((n) => [n, 201]).sort(), 'each pod evicted once, none refused by the budget');
  t.is(step(report, 'drain').output!.at(-1), 'node/node-1 drained');
});
