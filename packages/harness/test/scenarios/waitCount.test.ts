/**
 * Issue #23 item 5: `wait: {for: gone, count: N}` accepted `count` and ignored it (the wait
 * always waited for every pod). Now `count: N` ends the wait once any N of the pods that matched
 * when it began are gone; a count above the pods that matched fails the step at once.
 */
import test from 'ava';
import { S, runText, stepTimes, why } from './helpers.js';

/** A pod whose app ignores SIGTERM, so it takes its full grace period to go. */
const pod = (name: string, grace: number) => `---
apiVersion: v1
kind: Pod
metadata: { name: ${name}, labels: { app: web }, annotations: { podsim.dev/on-sigterm: ignore } }
spec:
  terminationGracePeriodSeconds: ${grace}
  containers: [{ name: app, image: nginx }]
`;

const scenario = (count: number) => `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
steps:
  - apply: all
  - wait: { for: ready, selector: app=web, count: 3 }
  - id: del
    delete: { selector: app=web }
  - id: gone
    wait: { for: gone, selector: app=web, count: ${count}, timeout: 2m }
  - id: after
    sleep: 45s
${pod('fast', 5)}${pod('mid', 20)}${pod('slow', 40)}`;

test('bug: wait for gone with count 2 waited for all three pods — now it ends when the second is gone', async (t) => {
  const { report, model } = await runText('wait-gone-2', scenario(2));
  t.true(report.ok, why(report));
  const del = stepTimes(model, 'del');
  const gone = stepTimes(model, 'gone');
  const after = (name: string) => model.writes.find((w) => w.resource === 'pods' && w.name === name && w.event === 'DELETED')!.t - del.start;
  // mid (grace 20 s) is the second pod to go; slow (40 s) is still terminating when the wait ends.
  t.true(after('mid') > 19 * S && after('mid') < 25 * S, `mid gone after ${after('mid') / S}s`);
  t.true(gone.end >= del.start + after('mid'), 'not before the second pod is gone');
  t.true(gone.end < del.start + after('slow'), `the wait ended at ${(gone.end - del.start) / S}s, slow went at ${after('slow') / S}s`);
});

test('wait for gone with a count above the matching pods fails at once, saying how many matched', async (t) => {
  const { report, model } = await runText('wait-gone-5', scenario(5));
  t.false(report.ok);
  const step = report.steps.find((s) => s.id === 'gone')!;
  t.false(step.ok);
  t.is(step.error, 'count 5: only 3 pods matched when the wait began');
  const gone = stepTimes(model, 'gone');
  t.true(gone.end - gone.start < S, 'failed at once, not after its timeout');
});
