/**
 * The scenario `duplicate` fault repeats messages within a stream only (issue #27 item 7): a
 * repeated kubelet watch request opened a second stream that replayed events (exploration saw
 * it re-add a forgotten pod worker, `one-sync-at-a-time`), and repeated writes doubled them.
 * From a client to the apiserver every message is a request, so there it repeats nothing.
 */
import test from 'ava';
import { compileScenario } from '../../src/scenario/compile.js';
import { loadScenarioText } from '../../src/scenario/load.js';
import { runText, why } from './helpers.js';

const text = `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
steps:
  - fault: { kind: duplicate, from: kubelet/node-1, to: apiserver, delay: 3s, for: 1s }
  - apply: all
  - sleep: 2s
  - id: del
    delete: { kind: pod, name: app, gracePeriod: 0, force: true }
  - sleep: 30s
expect:
  pods: [p]
  timings: [{ pod: p, event: TERM, since: del, within: [0s, 3s] }]
  signals: [{ pod: p, TERM: 1, KILL: 0 }]
  invariants: clean
---
apiVersion: v1
kind: Pod
metadata:
  name: app
  annotations: { podsim.dev/on-sigterm: "exit:1s:0" }
spec:
  terminationGracePeriodSeconds: 30
  containers: [{ name: app, image: nginx:1.21 }]
`;

test('duplicate kubelet → apiserver during startup repeats no request: one pod watch, and the force-deleted container is stopped at once', async (t) => {
  const { report, model } = await runText('duplicate-kubelet-requests', text);
  t.true(report.ok, why(report));
  t.is(report.expectations.filter((e) => e.ok).length, 2, why(report));
  const watches = model.requests.filter((r) => r.verb === 'watch' && r.resource === 'pods' && r.client === 'kubelet/node-1');
  t.is(watches.length, 1, 'one watch stream of the kubelet pod source');
  t.is(model.records.filter((r) => r.kind === 'fault.duplicate').length, 0);
});

test('a duplicate fault to the apiserver is named in a warning at its line: it repeats nothing there', (t) => {
  const plan = compileScenario(loadScenarioText('dup.yaml', text));
  const hit = plan.warnings.find((x) => x.message.includes('every message to the apiserver is a request, so this fault repeats nothing'));
  t.truthy(hit, JSON.stringify(plan.warnings));
  t.is(hit!.line, 5);
  t.is(hit!.field, 'steps[0].fault.to');
});
