/**
 * The step kinds added for the reported cases, end to end through the real apiserver, controllers,
 * kubelet and runtime: `patch` (kubectl patch, json and merge: a finalizer removed — C10),
 * `setImage` (kubectl set image: a Deployment rollout — C15), `repeat` (the same steps N times —
 * C25), and kubectl's printed output recorded per step; plus the load-time checks of `repeat` and
 * `patch`.
 */
import test from 'ava';
import { loadScenarioText } from '../../src/scenario/load.js';
import { compileScenario } from '../../src/scenario/compile.js';
import { ScenarioError, formatIssue } from '../../src/scenario/source.js';
import { runText, why, writesOf } from './helpers.js';

const POD = `apiVersion: v1
kind: Pod
metadata: { name: p, finalizers: [example.com/hold], annotations: { podsim.dev/on-sigterm: "exit:1s:0" } }
spec:
  terminationGracePeriodSeconds: 30
  containers: [{ name: app, image: nginx:1.21 }]
`;

test('patch removes a finalizer (json, then merge), set image rolls a Deployment out, repeat runs its steps N times', async (t) => {
  const { report, model } = await runText(
    'patch-repeat',
    `kind: Scenario
cluster: { nodes: [{ name: n1 }] }
steps:
  - apply: Pod/p
  - apply: Deployment/web
  - wait: { for: ready, all: true, count: 2, timeout: 1m }
  - id: del
    delete: { name: p }
  - sleep: 10s
  - id: unhold
    patch: { name: p, type: json, patch: [{ op: remove, path: /metadata/finalizers/0 }] }
  - sleep: 1s
  - id: label
    patch: { kind: deployment, name: web, type: merge, patch: { metadata: { labels: { tier: front } } } }
  - id: rollout
    setImage: { name: web, container: app, image: "nginx:1.22" }
  - sleep: 20s
  - repeat:
      times: 3
      steps:
        - create: Pod/solo
        - delete: { name: solo, now: true, wait: true, timeout: 1m }
expect:
  pods: [p]
  timings:
    - { pod: p, event: gone, since: unhold, within: [0s, 10ms] }
  output:
    - { step: del, contains: ['pod "p" deleted'] }
    - { step: unhold, contains: [pod/p patched] }
    - { step: label, contains: [deployment.apps/web patched] }
    - { step: rollout, contains: [deployment.apps/web image updated] }
  invariants: clean
---
${POD}---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 1
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec: { containers: [{ name: app, image: "nginx:1.21" }] }
---
apiVersion: v1
kind: Pod
metadata: { name: solo }
spec: { containers: [{ name: app, image: nginx:1.21 }] }
`,
  );
  t.true(report.ok, why(report));
  // The finalizer kept p after the kubelet's grace-0 DELETE (dgps 0); the patch removed it.
  const p = writesOf(model, 'p');
  t.deepEqual(p.at(-2)?.finalizers, ['example.com/hold']);
  t.is(p.at(-2)?.deletionGracePeriodSeconds, 0);
  t.is(p.at(-1)?.event, 'DELETED');
  // set image: a second ReplicaSet, whose pod runs nginx:1.22 (the template hash changed).
  const rss = new Set(model.writes.filter((w) => w.resource === 'replicasets').map((w) => w.name));
  t.is(rss.size, 2);
  // repeat: three create/delete rounds of solo, each a new UID, all gone.
  const solos = report.pods.filter((x) => x.name === 'solo');
  t.is(solos.length, 3);
  t.is(new Set(solos.map((x) => x.uid)).size, 3);
  t.true(solos.every((x) => x.goneAt !== undefined));
  t.is(report.steps.filter((s) => s.kind === 'create').length, 3);
});

function issues(text: string): string[] {
  try {
    compileScenario(loadScenarioText('bad.yaml', text));
  } catch (e) {
    if (e instanceof ScenarioError) return e.issues.map(formatIssue);
    throw e;
  }
  return [];
}

test('load errors: ids or at: inside repeat; compile errors: a json patch that is not a list, an unknown output step', (t) => {
  const repeat = issues(`kind: Scenario
cluster: { nodes: [{ name: n1 }] }
steps:
  - repeat:
      times: 2
      steps:
        - id: twice
          sleep: 1s
        - at: 5s
          sleep: 1s
---
${POD}`);
  t.true(repeat.some((l) => /^bad\.yaml:7:\d+: steps\[0\]\.repeat\.steps\[0\]\.id: a step inside repeat cannot have an id/.test(l)), repeat.join('\n'));
  t.true(repeat.some((l) => /^bad\.yaml:9:\d+: steps\[0\]\.repeat\.steps\[1\]\.at: a step inside repeat cannot have at:/.test(l)), repeat.join('\n'));
  const patch = issues(`kind: Scenario
cluster: { nodes: [{ name: n1 }] }
steps:
  - patch: { name: p, type: json, patch: { metadata: {} } }
expect:
  output: [{ step: nope, contains: [x] }]
---
${POD}`);
  t.true(patch.some((l) => /^bad\.yaml:4:\d+: .*a json patch is a list of operations/.test(l)), patch.join('\n'));
  t.true(patch.some((l) => /^bad\.yaml:6:\d+: .*no step with id "nope"/.test(l)), patch.join('\n'));
});
