/**
 * Scenarios at cluster scale (issue #23, items 7–11): `cluster.nodePools`, the client rate limits
 * of kubectl (client-go's 5 / 10), kube-controller-manager and kube-scheduler as the scenario sets
 * them, the mass-deletion summary (`--rows`, `--json`), GONE AFTER past a minute, progress on
 * stderr, and the `ready` timing without a `watch` step. Each test is pinned on the input that
 * showed the problem.
 */
import test from 'ava';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main, EXIT_OK } from '../../src/cli.js';
import { compileScenario } from '../../src/scenario/compile.js';
import { loadScenarioText } from '../../src/scenario/load.js';
import { ScenarioError } from '../../src/scenario/source.js';
import type { RunReport } from '../../src/run.js';
import { PodPhaseTally, runProgress } from '../../src/report/progress.js';
import { formatClientLimits } from '../../src/scenario/clientLimits.js';
import { S, runText, stepTimes, why } from './helpers.js';

function cli(args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  return main(args, { out: (l) => out.push(l), err: (l) => err.push(l) }).then((code) => ({ code, out, err }));
}

function tmp(t: { teardown(f: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'podsim-scale-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// ---- node pools -------------------------------------------------------------------------------

const POOLS = `kind: Scenario
cluster:
  nodes: [{ name: solo }]
  nodePools:
    - { count: 2, namePrefix: general-, labels: { pool: general } }
    - count: 2
      namePrefix: gpu-
      capacity: { cpu: "8", memory: 32Gi, pods: "20" }
      labels: { pool: gpu }
      taints: [{ key: nvidia.com/gpu, value: "true", effect: NoSchedule }]
steps:
  - apply: all
  - wait: { for: running, selector: app=web, count: 6, timeout: 2m }
  - wait: { for: running, selector: app=cuda, count: 2, timeout: 2m }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 6
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      containers: [{ name: web, image: nginx:1.21 }]
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: cuda }
spec:
  replicas: 2
  selector: { matchLabels: { app: cuda } }
  template:
    metadata: { labels: { app: cuda } }
    spec:
      nodeSelector: { pool: gpu }
      tolerations: [{ key: nvidia.com/gpu, operator: Exists, effect: NoSchedule }]
      containers: [{ name: cuda, image: cuda:11 }]
`;

test('cluster.nodePools: members are named prefix-1…, register with the pool labels and taints, and the scheduler honours them', async (t) => {
  t.timeout(60_000);
  const plan = compileScenario(loadScenarioText('pools.yaml', POOLS));
  t.deepEqual(plan.nodes, ['solo', 'general-1', 'general-2', 'gpu-1', 'gpu-2']);
  const { report, model } = await runText('pools', POOLS);
  t.true(report.ok, why(report));
  const nodeOf = new Map<string, string>();
  for (const w of model.writes) if (w.resource === 'pods' && w.nodeName) nodeOf.set(w.name, w.nodeName);
  const web = [...nodeOf].filter(([n]) => n.startsWith('web-')).map(([, node]) => node);
  const cuda = [...nodeOf].filter(([n]) => n.startsWith('cuda-')).map(([, node]) => node);
  t.is(web.length, 6);
  // The gpu pool's NoSchedule taint keeps the untolerating pods off it; its label draws cuda there.
  t.true(web.every((n) => !n.startsWith('gpu-')), web.join(' '));
  t.is(cuda.length, 2);
  t.true(cuda.every((n) => n.startsWith('gpu-')), cuda.join(' '));
});

test('cluster.nodePools: a name clash with cluster.nodes and a cluster without nodes are file:line errors', (t) => {
  const clash = `kind: Scenario
cluster:
  nodes: [{ name: node-2 }]
  nodePools: [{ count: 3, namePrefix: node- }]
steps: [{ sleep: 1s }]
`;
  const e1 = t.throws(() => compileScenario(loadScenarioText('clash.yaml', clash)), { instanceOf: ScenarioError }) as ScenarioError;
  t.is(e1.issues.length, 1);
  t.is(e1.issues[0].line, 4);
  t.regex(e1.issues[0].message, /duplicate node name "node-2" \(also from cluster\.nodes\[0\]\)/);
  const none = `kind: Scenario
cluster: { nodePools: [] }
steps: [{ sleep: 1s }]
`;
  const e2 = t.throws(() => compileScenario(loadScenarioText('none.yaml', none)), { instanceOf: ScenarioError }) as ScenarioError;
  t.regex(e2.issues[0].message, /at least one node/);
  const big = `kind: Scenario
cluster: { nodePools: [{ count: 5001, namePrefix: n- }] }
steps: [{ sleep: 1s }]
`;
  const e3 = t.throws(() => loadScenarioText('big.yaml', big), { instanceOf: ScenarioError }) as ScenarioError;
  t.regex(e3.issues[0].message, /at most 5000 nodes/);
  // Two pools within the per-pool bound, over it together.
  const two = `kind: Scenario
cluster: { nodePools: [{ count: 3000, namePrefix: a- }, { count: 2001, namePrefix: b- }] }
steps: [{ sleep: 1s }]
`;
  const e4 = t.throws(() => compileScenario(loadScenarioText('two.yaml', two)), { instanceOf: ScenarioError }) as ScenarioError;
  t.is(e4.issues.length, 1);
  t.is(e4.issues[0].line, 2);
  t.regex(e4.issues[0].message, /the cluster has 5001 nodes; podsim runs at most 5000/);
});

test('a scenario with two node pools and 20k pods validates in under a few seconds', async (t) => {
  const dir = tmp(t);
  const file = join(dir, 'big.yaml');
  writeFileSync(
    file,
    `kind: Scenario
cluster:
  nodePools:
    - { count: 200, namePrefix: a- }
    - { count: 100, namePrefix: b-, labels: { pool: b } }
steps:
  - apply: all
  - delete: { selector: app=web }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 20000
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec: { containers: [{ name: web, image: nginx:1.21 }] }
`,
  );
  const t0 = performance.now();
  const r = await cli(['validate', file]);
  const ms = performance.now() - t0;
  t.is(r.code, EXIT_OK, r.err.join('\n'));
  t.regex(r.out[0], /ok \(2 steps, 300 nodes, 604 actors\)/);
  t.true(ms < 5000, `validate took ${ms.toFixed(0)} ms`);
});

test('examples/mass-delete-300-nodes.yaml validates: 300 nodes from its pool, kubectl at client-go 5 / 10', (t) => {
  const plan = compileScenario(loadScenarioText('examples/mass-delete-300-nodes.yaml', readFileSync('examples/mass-delete-300-nodes.yaml', 'utf8')));
  t.is(plan.nodes.length, 300);
  t.is(plan.nodes[299], 'node-300');
  t.deepEqual(plan.clientLimits.kubectl, { qps: 5, burst: 10 });
});

test("the run's bound allows for a throttled kubectl step (was: a delete needing more than the 1 h margin ended at the bound)", async (t) => {
  t.timeout(120_000);
  const pods = Array.from({ length: 12 }, (_, i) => `---\napiVersion: v1\nkind: Pod\nmetadata: { name: p${i}, labels: { app: slow } }\nspec: { containers: [{ name: c, image: busybox:1.34 }] }\n`).join('');
  // One token at once and one every 333 s: apply's 12 creates take ≈ 3,700 s, then delete's
  // LIST + 12 DELETEs ≈ 4,000 s more — each step past the bound's 1 h margin on its own.
  const { report } = await runText(
    'slow-kubectl',
    `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
  kubectl: { kubeAPIQPS: 0.003, kubeAPIBurst: 1 }
steps:
  - apply: all
  - id: del
    delete: { selector: app=slow }
${pods}`,
  );
  t.true(report.ok, why(report));
  t.true(report.virtualSeconds > 7500, String(report.virtualSeconds));
});

// ---- client rate limits -------------------------------------------------------------------------

/** 40 bare pods, deleted by selector: kubectl LISTs, then DELETEs each pod through its limiter. */
function massDelete(cluster: string): string {
  const pods = Array.from({ length: 40 }, (_, i) => `---\napiVersion: v1\nkind: Pod\nmetadata: { name: p${i}, labels: { app: bulk } }\nspec: { terminationGracePeriodSeconds: 1, containers: [{ name: c, image: busybox:1.34 }] }\n`).join('');
  return `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
${cluster}steps:
  - apply: all
  - wait: { for: running, selector: app=bulk, count: 40, timeout: 5m }
  - id: del
    delete: { selector: app=bulk }
  - sleep: 40s
${pods}`;
}

/** Virtual µs from the step's start to the driver's last DELETE reaching the apiserver. */
function lastDeleteAfter(model: Parameters<typeof stepTimes>[0]): number {
  const { start } = stepTimes(model, 'del');
  const deletes = model.requests.filter((r) => r.client === 'driver' && r.verb === 'delete' && r.t >= start);
  t0Check(deletes.length);
  return deletes[deletes.length - 1].t - start;
}
function t0Check(n: number): void {
  if (n !== 40) throw new Error(`expected 40 DELETEs from the driver, saw ${n}`);
}

test('kubectl delete -l over 40 pods sends its DELETEs at client-go QPS 5 after a burst of 10 (was: all within a few ms)', async (t) => {
  t.timeout(120_000);
  const { report, model } = await runText('kubectl-qps', massDelete(''));
  t.true(report.ok, why(report));
  // LIST + 40 DELETEs = 41 tokens: 10 from the burst, 31 more at 5 a second → the last at ≈ 6.2 s.
  const after = lastDeleteAfter(model);
  t.true(after >= 6.1 * S && after <= 6.5 * S, `last DELETE ${after / S}s after the step began`);
  t.deepEqual(report.clientLimits.kubectl, { qps: 5, burst: 10 });
});

test('cluster.kubectl sets the kubectl limit; kubeAPIQPS 0 turns it off', async (t) => {
  t.timeout(120_000);
  const slow = await runText('kubectl-qps-2', massDelete('  kubectl: { kubeAPIQPS: 2, kubeAPIBurst: 1 }\n'));
  t.true(slow.report.ok, why(slow.report));
  const a = lastDeleteAfter(slow.model);
  t.true(a >= 19.9 * S && a <= 20.5 * S, `QPS 2, burst 1: last DELETE ${a / S}s after the step began`);
  const off = await runText('kubectl-qps-off', massDelete('  kubectl: { kubeAPIQPS: 0 }\n'));
  t.true(off.report.ok, why(off.report));
  const b = lastDeleteAfter(off.model);
  t.true(b < 0.5 * S, `no limit: last DELETE ${b / S}s after the step began`);
  t.is(formatClientLimits(off.report.clientLimits), 'client qps/burst: kubectl off, kube-controller-manager 20/30, kube-scheduler 50/100, kubelet 5/10');
  t.regex(formatClientLimits(slow.report.clientLimits), /^client qps\/burst: kubectl 2\/1, /);
});

test('cluster.controllerManager and cluster.scheduler set those clients\' QPS / burst (a ReplicaSet of 12 at kcm QPS 1 takes ~10 s to create)', async (t) => {
  t.timeout(120_000);
  const text = (cluster: string) => `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
${cluster}steps:
  - apply: all
  - id: up
    wait: { for: exists, selector: app=r, count: 12, timeout: 2m }
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: { name: r }
spec:
  replicas: 12
  selector: { matchLabels: { app: r } }
  template:
    metadata: { labels: { app: r } }
    spec: { containers: [{ name: c, image: busybox:1.34 }] }
`;
  const created = (model: Parameters<typeof stepTimes>[0]) => {
    const adds = model.writes.filter((w) => w.resource === 'pods' && w.event === 'ADDED');
    return adds[adds.length - 1].t - adds[0].t;
  };
  const dflt = await runText('kcm-default', text('').replace('for: exists', 'for: running'));
  t.true(dflt.report.ok, why(dflt.report));
  t.true(created(dflt.model) < 1 * S, `default (20/30): ${created(dflt.model) / S}s`);
  const slow = await runText('kcm-slow', text('  controllerManager: { kubeAPIQPS: 1, kubeAPIBurst: 2 }\n'));
  t.true(slow.report.ok, why(slow.report));
  // 12 creates, each followed by its SuccessfulCreate Event through the same client (client-go's
  // broadcaster shares the controller's clientset and its rate limiter), with 2 tokens at once
  // and 1 a second: 23 writes, the last create ≈ 17 s after the first.
  t.true(created(slow.model) >= 16 * S && created(slow.model) <= 18.5 * S, `kcm 1/2: ${created(slow.model) / S}s`);
  t.deepEqual(slow.report.clientLimits.controllerManager, { qps: 1, burst: 2 });
  // The scheduler's binds (POST pods/binding) at 1 a second: the 12th ≈ 11 s after the first.
  const sched = await runText('sched-slow', text('  scheduler: { kubeAPIQPS: 1, kubeAPIBurst: 1 }\n').replace('for: exists', 'for: running'));
  t.true(sched.report.ok, why(sched.report));
  const binds = sched.model.requests.filter((r) => r.client === 'kube-scheduler' && r.verb === 'create' && r.subresource === 'binding' && r.code < 300);
  t.is(binds.length, 12);
  t.true(binds[11].t - binds[0].t >= 10.5 * S, binds.map((b) => b.t / S).join(' '));
  const fast = dflt.model.requests.filter((r) => r.client === 'kube-scheduler' && r.verb === 'create' && r.subresource === 'binding' && r.code < 300);
  t.true(fast[fast.length - 1].t - fast[0].t < 2 * S, fast.map((b) => b.t / S).join(' '));
});

// ---- the summary ------------------------------------------------------------------------------

test('run prints the limits in its header and a summary before at most --rows rows; --json carries it', async (t) => {
  t.timeout(120_000);
  const dir = tmp(t);
  const file = join(dir, 'mass.yaml');
  writeFileSync(file, massDelete(''));
  const json = join(dir, 'r.json');
  const r = await cli(['run', file, '--engine', 'local', '--json', json, '--rows', '3']);
  t.is(r.code, EXIT_OK, [...r.out, ...r.err].join('\n'));
  t.is(r.out[1], 'client qps/burst: kubectl 5/10, kube-controller-manager 20/30, kube-scheduler 50/100, kubelet 5/10');
  const i = r.out.findIndex((l) => l.startsWith('deleted by step at line'));
  t.true(i > 0, r.out.join('\n'));
  t.regex(r.out[i], /^deleted by step at line 7 \(del\): kubectl delete pod -l app=bulk --wait=false$/);
  t.is(r.out[i + 1], '  40 pods deleted, 40 gone, 0 still terminating');
  t.regex(r.out[i + 2], /^ {2}gone after the step began: first [\d.]+s, p50 [\d.]+s, p90 [\d.]+s, p99 [\d.]+s, last [\d.]+s$/);
  t.is(r.out[i + 4], '  by reason: 40 exited after SIGTERM');
  // Then the table, cut at 3 rows, and how many were left out.
  const header = r.out.findIndex((l) => l.startsWith('POD '));
  t.is(r.out[header + 4], '… and 37 more deleted pods (--rows N prints more rows; --json has every pod)');
  const report = JSON.parse(readFileSync(json, 'utf8')) as RunReport;
  t.is(report.summary.length, 1);
  const s = report.summary[0];
  t.is(s.deleted, 40);
  t.is(s.gone, 40);
  t.is(s.step?.id, 'del');
  // The last DELETE leaves kubectl ≈ 6.2 s in (QPS 5); the node's kubelet, at its own QPS 5,
  // needs a status GET + PATCH and the final DELETE per pod: 40 pods ≈ 24 s more.
  t.true(s.goneAfterUs!.last > 20 * S && s.goneAfterUs!.last < 40 * S, String(s.goneAfterUs!.last));
  t.true(s.goneAfterUs!.first <= s.goneAfterUs!.p50 && s.goneAfterUs!.p50 <= s.goneAfterUs!.p99 && s.goneAfterUs!.p99 <= s.goneAfterUs!.last);
  t.deepEqual(report.clientLimits.controllerManager, { qps: 20, burst: 30 });

  // --rows 0: the summary alone; --quiet keeps the summary, drops the rows.
  const q = await cli(['run', file, '--engine', 'local', '--quiet']);
  t.true(q.out.includes('  40 pods deleted, 40 gone, 0 still terminating'), q.out.join('\n'));
  t.false(q.out.some((l) => l.startsWith('POD ')));
  // No --rows: up to 30 rows by default, 40 pods → summary and 30 rows.
  const d = await cli(['run', file, '--engine', 'local']);
  const h = d.out.findIndex((l) => l.startsWith('POD '));
  t.is(d.out[h + 31], '… and 10 more deleted pods (--rows N prints more rows; --json has every pod)');
});

test('a pod still Terminating at the end counts as such in the summary (held by a finalizer), never as gone', async (t) => {
  t.timeout(60_000);
  const pods = ['a', 'b']
    .map((n) => `---\napiVersion: v1\nkind: Pod\nmetadata: { name: ${n}, labels: { app: x }${n === 'b' ? ', finalizers: [example.com/hold]' : ''} }\nspec: { terminationGracePeriodSeconds: 1, containers: [{ name: c, image: busybox:1.34 }] }\n`)
    .join('');
  const { report } = await runText('held', `kind: Scenario
cluster: { nodes: [{ name: node-1 }] }
steps:
  - apply: all
  - wait: { for: running, selector: app=x, count: 2 }
  - id: del
    delete: { selector: app=x }
  - sleep: 10s
${pods}`);
  const s = report.summary[0];
  t.is(s.deleted, 2);
  t.is(s.gone, 1);
  t.is(s.stillTerminating, 1);
  t.is(s.byReason['still terminating: finalizers'], 1);
  t.is(s.byReason['exited after SIGTERM'], 1);
});

test('GONE AFTER keeps sub-second precision past one minute (was 1m32s for 92.02 s)', async (t) => {
  t.timeout(60_000);
  const dir = tmp(t);
  const file = join(dir, 'slow.yaml');
  writeFileSync(
    file,
    `kind: Scenario
cluster: { nodes: [{ name: node-1 }] }
steps:
  - apply: all
  - wait: { for: running, name: slow }
  - delete: { name: slow, wait: true, timeout: 3m }
---
apiVersion: v1
kind: Pod
metadata: { name: slow, annotations: { podsim.dev/on-sigterm: ignore } }
spec: { terminationGracePeriodSeconds: 90, containers: [{ name: c, image: busybox:1.34 }] }
`,
  );
  const r = await cli(['run', file, '--engine', 'local']);
  const row = r.out.find((l) => l.startsWith('slow '));
  t.truthy(row, r.out.join('\n'));
  // SIGKILL at 90 s, then the kubelet's status write and final DELETE: 1m32.02s, not 1m32s.
  t.regex(row!.split(/\s{2,}/)[2], /^1m3\ds?\.\d{1,2}s$|^1m3\d\.\d{1,2}s$/);
});

// ---- progress ---------------------------------------------------------------------------------

test('progress: one stderr line every 5 s of wall time (not on a terminal), none in the first seconds, pods by phase', (t) => {
  let now = 0;
  const lines: string[] = [];
  const p = runProgress(3, { tty: false, write: (l) => lines.push(l), now: () => now });
  const write = (t2: number, uid: string, extra: Record<string, unknown>) => ({ t: t2, actor: 'apiserver', seq: 0, kind: 'api.write', msg: '', data: { resource: 'pods', uid, event: 'MODIFIED', ...extra } });
  p.onSegment({ virtualUs: 1 * S, events: 10, records: [write(1, 'u1', { event: 'ADDED' }), write(1, 'u2', { phase: 'Running' })] });
  t.deepEqual(lines, []);
  now = 2_000;
  p.onSegment({ virtualUs: 2 * S, events: 20, records: [] });
  t.deepEqual(lines, [], 'nothing before 3 s of wall time');
  now = 5_100;
  p.onSegment({
    virtualUs: 90 * S,
    events: 5_000,
    records: [write(2, 'u2', { phase: 'Running', deletionTimestamp: 'x' }), { t: 2, actor: 'driver', seq: 1, kind: 'driver.step', msg: '', data: { ph: 'B' } },
      { t: 2, actor: 'driver', seq: 2, kind: 'driver.step', msg: '', data: { ph: 'E' } },
      // The second step (a wait, say) has begun and not ended: the run is in step 2 of 3.
      { t: 2, actor: 'driver', seq: 3, kind: 'driver.step', msg: '', data: { ph: 'B' } },],
  });
  t.is(lines.length, 1);
  t.regex(lines[0], /^podsim run: virtual 1m30s, step 2\/3, pods: 1 Pending, 1 Terminating, \S+ events\/s, wall 5s$/);
  now = 7_000;
  p.onSegment({ virtualUs: 91 * S, events: 6_000, records: [write(3, 'u2', { event: 'DELETED' })] });
  t.is(lines.length, 1, 'at most one line per 5 s');
  now = 10_200;
  p.onSegment({ virtualUs: 92 * S, events: 7_000, records: [] });
  t.is(lines.length, 2);
  t.regex(lines[1], /pods: 1 Pending, 1 gone,/);
  p.stop();
});

test('PodPhaseTally: Terminating is a deletionTimestamp whatever the phase; DELETED is gone', (t) => {
  const tally = new PodPhaseTally();
  const w = (uid: string, d: Record<string, unknown>) => ({ t: 0, actor: 'apiserver', seq: 0, kind: 'api.write', msg: '', data: { resource: 'pods', uid, event: 'MODIFIED', ...d } });
  tally.add([w('a', { phase: 'Running' }), w('b', { phase: 'Pending' }), w('c', { phase: 'Succeeded' }), w('a', { phase: 'Running', deletionTimestamp: 't' }), w('b', { event: 'DELETED' })]);
  t.is(tally.describe(), '1 Terminating, 1 Succeeded, 1 gone');
});

test('run --quiet shows no progress; without --quiet the progress lines go to stderr (not stdout)', async (t) => {
  t.timeout(120_000);
  const dir = tmp(t);
  const file = join(dir, 'long.yaml');
  writeFileSync(file, 'kind: Scenario\ncluster: { nodes: [{ name: node-1 }, { name: node-2 }, { name: node-3 }] }\nsteps: [{ sleep: 3h }, { sleep: 3h }]\n');
  // Progress at once and at every segment (the CLI's test hooks), so the test does not depend on this machine's speed.
  const hooks = { progressAfterMs: 0, progressEveryMs: 0 };
  const run = async (args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) }, hooks);
    return { code, out, err };
  };
  const q = await run(['run', file, '--engine', 'local', '--quiet']);
  t.is(q.code, EXIT_OK);
  t.false(q.err.some((l) => l.startsWith('podsim run: virtual')), q.err.join('\n'));
  const v = await run(['run', file, '--engine', 'local']);
  t.is(v.code, EXIT_OK);
  t.true(v.err.some((l) => /^podsim run: virtual \S+, step 2\/2, pods: no pods, \S+ events\/s, wall \d+s$/.test(l)), v.err.join('\n'));
  t.false(v.out.some((l) => l.startsWith('podsim run:')));
});

// ---- ready without watch ----------------------------------------------------------------------

test('the ready timing works without a watch step (was: never ready, the timing failed)', async (t) => {
  t.timeout(60_000);
  const { report } = await runText(
    'ready-no-watch',
    `kind: Scenario
cluster: { nodes: [{ name: node-1 }] }
steps:
  - id: up
    apply: all
  - wait: { for: ready, name: web, timeout: 1m }
expect:
  pods: [web]
  timings:
    - { pod: web, event: ready, since: up, within: [5s, 7s] }
---
apiVersion: v1
kind: Pod
metadata: { name: web, annotations: { podsim.dev/startup: 5s } }
spec:
  containers:
    - name: c
      image: nginx:1.21
      readinessProbe: { httpGet: { port: 80, path: / }, periodSeconds: 1 }
`,
  );
  t.deepEqual(report.watch, [], 'no watch step, no rows');
  t.true(report.ok, why(report));
});
