/**
 * A node that comes back before its pods' NoExecute deadline (issue #15 tests; spec
 * node-lifecycle §6.2, §7.8): w2's kubelet is down 100 s (its containers keep running). The node
 * goes Unknown with the unreachable taints at ≈40–45 s; once the restarted kubelet posts Ready
 * the NLC removes the NoExecute taint, the NoSchedule one follows, the taint manager cancels the
 * pending deletion ("Cancelling deletion of Pod"), nothing is evicted and the ReplicaSet creates
 * no replacement. With `nodeDown` instead the pod is restarted in place (RESTARTS 1, the reboot of
 * §9.2) but still not evicted.
 */
import test from 'ava';
import type { TraceRecord } from '@podsim/api';
import { runText, why } from './helpers.js';

function scenario(fault: string): string {
  return `kind: Scenario
cluster:
  seed: 1
  nodes:
    - { name: cp1, labels: { node-role.kubernetes.io/master: "" }, taints: [{ key: node-role.kubernetes.io/master, effect: NoSchedule }] }
    - { name: w1 }
    - { name: w2 }
steps:
  - apply: all
  - sleep: 30s
  - watch: start
  - id: down
    fault: { ${fault}, node: w2, for: 100s }
  - sleep: 400s
  - watch: stop
expect:
  pods: [a, b]
  nodes:
    - { node: w2, since: down, at: 29s, ready: "True", taints: [] }
    - { node: w2, since: down, at: 51s, ready: Unknown, taints: [node.kubernetes.io/unreachable:NoSchedule, node.kubernetes.io/unreachable:NoExecute] }
    - { node: w2, since: down, at: 130s, ready: "True", taints: [] }
    - { node: w2, since: down, at: 399s, ready: "True", taints: [] }
  podReady:
    - { pod: a, since: down, at: 60s, ready: "False" }
    - { pod: a, since: down, at: 399s, ready: "True" }
  counts: { maxPods: 2, podsAtEnd: 2, runningAtEnd: 2 }
  invariants: clean
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
      containers: [{ name: app, image: nginx:1.21 }]
`;
}

const reasons = (records: readonly TraceRecord[], reason: string) =>
  records.filter((r) => r.kind === 'api.write' && (r.data as { eventReason?: string }).eventReason === reason && (r.data as { event?: string }).event === 'ADDED');

test('kubelet down 100 s: Unknown and tainted, then Ready again with no taint; the pending eviction is cancelled, nothing is deleted or replaced', async (t) => {
  const { report, model } = await runText('node-returns', scenario('kind: kubeletDown'));
  t.true(report.ok, why(report));
  t.is(model.requests.filter((r) => r.verb === 'delete' && r.resource === 'pods').length, 0, 'no pod DELETE at all');
  t.is(model.writes.filter((w) => w.resource === 'pods' && w.deletionTimestamp !== undefined).length, 0);
  t.is(reasons(model.records, 'TaintManagerEviction').length, 1, 'one event: the cancellation of a\'s deletion');
  // a's containers never stopped: the kubelet that comes back finds them running.
  t.is(model.processes.filter((p) => p.exitedAt !== undefined).length, 0);
});

test('node powered off 100 s: the same, and the rebooted node restarts the pod in place (RESTARTS 1)', async (t) => {
  const { report, model } = await runText('node-returns-reboot', scenario('kind: nodeDown'));
  t.true(report.ok, why(report));
  t.is(model.requests.filter((r) => r.verb === 'delete' && r.resource === 'pods').length, 0);
  t.is(reasons(model.records, 'SandboxChanged').length, 1);
  // The pod on w2 comes back Running with RESTARTS 1; the one on w1 never restarted.
  const rows = model.watchRows.map((r) => ((r.data as { cells?: string[] }).cells ?? []).join(' ')).filter((c) => c !== '');
  t.is(rows.filter((c) => /^web-\S+ 1\/1 Running 1 /.test(c)).length, 1, rows.join('\n'));
});
