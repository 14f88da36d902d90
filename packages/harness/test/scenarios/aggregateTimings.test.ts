/**
 * Issue #23 item 1 (false PASS): a timing over every pod (`pod: "*"`) with `of: last` ignored the
 * pods that never reached the event. Two pods deleted, `b` held by a finalizer, and
 * `{pod: "*", of: last, event: gone, since: del, within: [0s, 60s]}` passed while the pod table
 * said `b … not gone`. Now `of: last` (and `each`) fail and name the pods without the event;
 * `of: first` is the earliest pod that reached it, so it holds as long as one did.
 */
import test from 'ava';
import { runText, why } from './helpers.js';

const scenario = (timings: string) => `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
steps:
  - apply: all
  - wait: { for: ready, selector: app=web, count: 2 }
  - id: del
    delete: { selector: app=web }
  - sleep: 90s
expect:
  timings:
${timings}
---
apiVersion: v1
kind: Pod
metadata: { name: a, labels: { app: web } }
spec:
  terminationGracePeriodSeconds: 5
  containers: [{ name: app, image: nginx }]
---
apiVersion: v1
kind: Pod
metadata: { name: b, labels: { app: web }, finalizers: [example.com/hold] }
spec:
  terminationGracePeriodSeconds: 5
  containers: [{ name: app, image: nginx }]
`;

test('bug: of: last over two pods, one held by a finalizer, passed — now it fails naming the pod that is not gone', async (t) => {
  const { report } = await runText('last', scenario('    - { pod: "*", of: last, event: gone, since: del, within: [0s, 60s] }'));
  t.false(report.ok, why(report));
  t.is(report.expectations.length, 1);
  const e = report.expectations[0];
  t.false(e.ok);
  t.regex(e.actual, /gone never happened to b \(1 of 2 pods had it/);
  t.true(report.failures.some((f) => /expectation timing failed: .*gone never happened to b/.test(f)), why(report));
  // The table agrees: b is still there.
  t.true(report.pods.some((p) => p.name === 'b'), 'b is in the pod table');
});

test('of: each names every pod without the event; of: first holds on the pod that did reach it', async (t) => {
  const { report } = await runText(
    'each-first',
    scenario(['    - { pod: "*", event: gone, since: del, within: [0s, 60s] }', '    - { pod: "*", of: first, event: gone, since: del, within: [0s, 60s] }'].join('\n')),
  );
  const [each, first] = report.expectations;
  t.false(each.ok);
  t.regex(each.actual, /gone never happened to b$/);
  t.true(first.ok, first.actual);
  t.regex(first.actual, /\(a, 1 of 2 pods had it\)/);
  t.false(report.ok);
});
