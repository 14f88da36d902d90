/**
 * The node-lifecycle checkers against the real controllers going wrong (issue #15 item 7): each
 * test plants one bug in the controller manager (test-only `cluster.controllerManager.plantedBugs`,
 * packages/controllers/src/plantedBugs.ts), runs a node-loss scenario for real, and expects the
 * run to fail with that checker, naming the pod or node and the virtual time; the same run judged
 * with the checker disabled no longer reports it, and the scenario without the bug is clean.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { compileScenario } from '../../src/scenario/compile.js';
import { loadScenarioText } from '../../src/scenario/load.js';
import { runPlan } from '../../src/engine.js';
import { judge } from '../../src/run.js';
import type { Violation } from '../../src/checkers/invariants.js';

const S = 1_000_000;
const NODE_LOSS = readFileSync(new URL('../../../../../examples/node-loss.yaml', import.meta.url), 'utf8');

/** `text` with `bugs` planted in the controller manager (after the `cluster:` line). */
function planted(text: string, bugs: readonly string[]): string {
  if (bugs.length === 0) return text;
  return text.replace(/^cluster:\n/m, `cluster:\n  controllerManager: { plantedBugs: [${bugs.join(', ')}] }\n`);
}

/** Runs `text` with `bugs`; the violations, and the same run judged with `off` disabled. */
async function run(name: string, text: string, bugs: readonly string[], off: readonly string[] = []) {
  const sc = () => loadScenarioText(`${name}.yaml`, planted(text, bugs));
  const res = await runPlan(compileScenario(sc()), { engine: 'local' });
  const on = judge(compileScenario(sc()), res).report;
  const disabled = judge(compileScenario(sc(), { disabledInvariants: off }), res).report;
  const ids = (vs: readonly Violation[]) => [...new Set(vs.map((v) => v.invariant))].sort();
  return { on, ids: ids(on.violations), offIds: ids(disabled.violations), of: (id: string) => on.violations.filter((v) => v.invariant === id) };
}

/** Deployment web, 2 replicas (the manifest document, after the Scenario one). */
const WEB = `${'---'}
apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 2
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      containers: [{ name: app, image: nginx:1.21 }]`;
/** The control-plane node of §10 (tainted NoSchedule, so no workload lands there). */
const CP1 = `    - { name: cp1, labels: { node-role.kubernetes.io/master: "" }, taints: [{ key: node-role.kubernetes.io/master, effect: NoSchedule }] }`;

/** The Deployment half of §10 with a DaemonSet: cp1 + w1 + w2, w2 powered off at `down` (30 s). */
const DAEMONSET_LOSS = `kind: Scenario
cluster:
  seed: 1
  nodes:
${CP1}
    - { name: w1 }
    - { name: w2 }
steps:
  - apply: all
  - sleep: 30s
  - id: down
    fault: { kind: nodeDown, node: w2 }
  - sleep: 120s
---
apiVersion: apps/v1
kind: DaemonSet
metadata: { name: agent }
spec:
  selector: { matchLabels: { app: agent } }
  template:
    metadata: { labels: { app: agent } }
    spec:
      containers: [{ name: agent, image: fluent/fluent-bit:1.8 }]
`;

/** cp1 + `workers` workers in one zone with a 2-replica Deployment; the workers named in `lose` powered off at 30 s. */
function zoneLoss(workers: number, lose: readonly string[]): string {
  const nodes = Array.from({ length: workers }, (_, i) => `    - { name: w${i + 1} }`).join('\n');
  return `kind: Scenario
cluster:
  seed: 1
  nodes:
${CP1}
${nodes}
steps:
  - apply: all
  - sleep: 30s
${lose.map((n) => `  - fault: { kind: nodeDown, node: ${n} }`).join('\n')}
  - sleep: 120s
${WEB}
`;
}

/** w2's kubelet down 100 s from 30 s: Ready again before its pods' 300 s deadline (nodeReturns.test.ts). */
const NODE_RETURNS = `kind: Scenario
cluster:
  seed: 1
  nodes:
${CP1}
    - { name: w1 }
    - { name: w2 }
steps:
  - apply: all
  - sleep: 30s
  - fault: { kind: kubeletDown, node: w2, for: 100s }
  - sleep: 400s
${WEB}
`;

const NODE_LIFECYCLE_IDS = ['nlc-status-writes', 'noexecute-taint-limiter-zero', 'noexecute-taint-zone-rate', 'taint-manager-spares-tolerating-pods', 'taint-manager-deadline-kept', 'podgc-force-delete-justified', 'rs-replacement-after-deletion'];

test('without a planted bug the node-lifecycle scenarios below are clean of every checker', async (t) => {
  for (const [name, text] of [
    ['daemonset-loss', DAEMONSET_LOSS],
    ['zone-two-of-four', zoneLoss(4, ['w1', 'w2'])],
    ['zone-all-three', zoneLoss(3, ['w1', 'w2', 'w3'])],
    ['node-returns', NODE_RETURNS],
  ] as const) {
    const r = await run(name, text, []);
    t.deepEqual(r.ids, [], `${name}: ${r.on.failures.join('\n')}`);
  }
});

test('replicaSetNotReadyInactive: the ReplicaSet replaces the powered-off pod at T_U (Ready=False), not after its deletionTimestamp; rs-replacement-after-deletion names the RS, the new pod and the Ready=False one', async (t) => {
  const r = await run('rs-not-ready', NODE_LOSS, ['replicaSetNotReadyInactive'], ['rs-replacement-after-deletion']);
  t.true(r.ids.includes('rs-replacement-after-deletion'), r.on.failures.join('\n'));
  // The bug also over-creates while new pods are not yet Ready at start; the replacement of the
  // lost one comes at T_U (w2 went down at 30 s: T_U is 29–46 s later, long before the eviction).
  const v = r.of('rs-replacement-after-deletion').find((x) => x.t > 59 * S && x.t < 77 * S);
  if (!v) return t.fail(r.of('rs-replacement-after-deletion').map((x) => `${x.t / S}s ${x.message}`).join('\n'));
  t.regex(v.message, /^ReplicaSet default\/web-\w+ created web-\w+-\w+ at \d+(\.\d+)?s while 2 active pod\(s\) already met spec\.replicas 2: .*\(Ready=False, no deletionTimestamp\)/);
  t.false(r.offIds.includes('rs-replacement-after-deletion'));
});

test('podgcSkipQuarantine: pod GC force-deletes the deleted node\'s pod at first sight; podgc-force-delete-justified names the pod, the node and the time', async (t) => {
  const r = await run('podgc-no-quarantine', NODE_LOSS, ['podgcSkipQuarantine'], ['podgc-force-delete-justified']);
  t.true(r.ids.includes('podgc-force-delete-justified'), r.on.failures.join('\n'));
  const v = r.of('podgc-force-delete-justified')[0];
  // `kubectl delete node w2` at 630 s; podgc's next pass is within 20 s, 40 s before it may act.
  t.true(v.t >= 630 * S && v.t < 651 * S, `at ${v.t / S}s`);
  t.regex(v.message, /^kube-controller-manager force-deleted default\/web-\S+ at \d+(\.\d+)?s, \d+(\.\d+)?s after its node w2 went missing, without a live GET of the node answered 404 after the 40s quarantine$/);
  t.false(r.offIds.includes('podgc-force-delete-justified'));
});

test('nlcAdvanceHeartbeat: the controller stamps its own lastHeartbeatTime on the Unknown update; nlc-status-writes names the node and the conditions', async (t) => {
  const r = await run('nlc-heartbeat', NODE_LOSS, ['nlcAdvanceHeartbeat'], ['nlc-status-writes']);
  t.true(r.ids.includes('nlc-status-writes'), r.on.failures.join('\n'));
  const vs = r.of('nlc-status-writes');
  t.true(vs.every((v) => v.t > 59 * S && v.t < 77 * S), vs.map((v) => `${v.t / S}s`).join(', '));
  t.true(vs.some((v) => /^node w2: the node lifecycle controller advanced Ready's lastHeartbeatTime from \S+ to \S+ \(it keeps the kubelet's\)$/.test(v.message)), vs.map((v) => v.message).join('\n'));
  t.false(r.offIds.includes('nlc-status-writes'));
});

test('taintManagerEvictForeverTolerating: the DaemonSet pod on the lost node is deleted although it tolerates unreachable forever; taint-manager-spares-tolerating-pods names it', async (t) => {
  const r = await run('tm-forever', DAEMONSET_LOSS, ['taintManagerEvictForeverTolerating'], ['taint-manager-spares-tolerating-pods']);
  t.true(r.ids.includes('taint-manager-spares-tolerating-pods'), r.on.failures.join('\n'));
  const v = r.of('taint-manager-spares-tolerating-pods')[0];
  // unreachable:NoExecute comes one pass after T_U (spec §1: T_NE ∈ [34, 51] s after the loss).
  t.true(v.t > 64 * S && v.t < 82 * S, `at ${v.t / S}s`);
  t.regex(v.message, /^taint manager deleted default\/agent-\w+ at \d+(\.\d+)?s although it tolerates every NoExecute taint of node w2 \(node\.kubernetes\.io\/unreachable:NoExecute\) forever$/);
  // It had no deletion scheduled, so the deadline checker sees it too; disabled, the first one is gone.
  t.true(r.ids.includes('taint-manager-deadline-kept'));
  t.false(r.offIds.includes('taint-manager-spares-tolerating-pods'));
});

test('taintManagerNoCancel: the node returns before 340 s but the pending deletion is not cancelled; taint-manager-deadline-kept says it was deleted after the cancellation', async (t) => {
  const r = await run('tm-no-cancel', NODE_RETURNS, ['taintManagerNoCancel'], ['taint-manager-deadline-kept']);
  t.deepEqual(r.ids, ['taint-manager-deadline-kept'], r.on.failures.join('\n'));
  const v = r.of('taint-manager-deadline-kept')[0];
  // Tainted ≈ 75 s (45 s after the loss at 30 s), so the stale timer fires ≈ 375 s.
  t.true(v.t > 360 * S && v.t < 385 * S, `at ${v.t / S}s`);
  t.regex(v.message, /^taint manager deleted default\/web-\S+ at \d+(\.\d+)?s, after its deletion \(due \d+(\.\d+)?s\) had been cancelled at \d+(\.\d+)?s$/);
  t.deepEqual(r.offIds, []);
});

test('nlcIgnoreEvictionLimiter, two of four workers lost (zone Normal, 0.1/s): both get unreachable:NoExecute in one tainting pass; noexecute-taint-zone-rate names the zone, both nodes and the gap', async (t) => {
  const r = await run('zone-rate', zoneLoss(4, ['w1', 'w2']), ['nlcIgnoreEvictionLimiter'], ['noexecute-taint-zone-rate']);
  t.deepEqual(r.ids, ['noexecute-taint-zone-rate'], r.on.failures.join('\n'));
  const v = r.of('noexecute-taint-zone-rate')[0];
  t.true(v.t > 64 * S && v.t < 82 * S, `at ${v.t / S}s`);
  t.regex(v.message, /^zone "": node w[12] got its NoExecute taint 0(\.\d+)?s after node w[12]'s \(limiter 0\.1\/s: one every 10s\)$/);
  t.deepEqual(r.offIds, []);
});

test('nlcIgnoreEvictionLimiter, all three workers lost (PartialDisruption in a 4-node zone: limiter 0): the nodes still get tainted; noexecute-taint-limiter-zero names each node', async (t) => {
  const r = await run('zone-zero', zoneLoss(3, ['w1', 'w2', 'w3']), ['nlcIgnoreEvictionLimiter'], ['noexecute-taint-limiter-zero']);
  t.true(r.ids.includes('noexecute-taint-limiter-zero'), r.on.failures.join('\n'));
  const vs = r.of('noexecute-taint-limiter-zero');
  t.true(vs.length >= 2, vs.map((v) => v.message).join('\n'));
  for (const v of vs) t.regex(v.message, /^node w[123] got node\.kubernetes\.io\/unreachable:NoExecute at \d+(\.\d+)?s while zone ""'s eviction limiter was 0$/);
  t.false(r.offIds.includes('noexecute-taint-limiter-zero'));
});

test('the checkers above are the node-lifecycle ones this file plants bugs for', (t) => {
  // Every id named here is a real checker (a renamed checker would make the tests above vacuous).
  const sc = loadScenarioText('ids.yaml', NODE_RETURNS);
  t.notThrows(() => compileScenario(sc, { disabledInvariants: NODE_LIFECYCLE_IDS }));
});
