/**
 * `delete: { kind: namespace, name: demo }` end to end (apiserver namespace registry, the
 * kube-controller-manager's namespace controller, kubelets, runtimes): the namespace turns
 * Terminating at once; 5 s later its pods turn Terminating and their containers get SIGTERM,
 * SIGKILL after their grace; the pods are DELETED by their kubelets, and only then the
 * namespace is DELETED. A create into the terminating namespace is answered 403; deleting
 * `default` is 403 Forbidden as kubectl prints it.
 */
import test from 'ava';
import { S, declaredExpectations, runText, stepTimes, why } from './helpers.js';

const SCENARIO = `kind: Scenario
cluster:
  namespace: demo
  nodes: [{ name: node-1 }]
steps:
  - apply: [Namespace/demo, Deployment/web, Pod/stubborn]
  - wait: { for: ready, all: true, count: 3, timeout: 2m }
  - watch: start
  - id: del-ns
    delete: { kind: namespace, name: demo }
  - sleep: 2s
  - id: late
    create: Pod/late
  - id: del-default
    delete: { kind: ns, name: default }
  - sleep: 90s
expect:
  pods: [stubborn, web1, web2]
  signals:
    - { pod: web1, TERM: 1, KILL: 0 }
    - { pod: stubborn, TERM: 1, KILL: 1 }
  exitCodes:
    - { pod: web1, code: 0 }
    - { pod: stubborn, code: 137 }
  timings:
    - { pod: "*", event: TERM, since: del-ns, within: [5s, 6s] }
    - { pod: stubborn, event: KILL, after: TERM, within: [20s, 20500ms] }
  grace:
    - { pod: stubborn, deletionGracePeriodSeconds: [20, 0], killPod: [20], stopContainer: [20] }
  output:
    - { step: del-ns, contains: ['namespace "demo" deleted'] }
    - { step: del-default, contains: ['Error from server (Forbidden): namespaces "default" is forbidden: this namespace may not be deleted'] }
---
apiVersion: v1
kind: Namespace
metadata: { name: demo }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 2
  selector: { matchLabels: { app: web } }
  template:
    metadata:
      labels: { app: web }
      annotations: { podsim.dev/on-sigterm: "exit:2s" }
    spec:
      terminationGracePeriodSeconds: 10
      containers: [{ name: app, image: nginx:1.21 }]
---
apiVersion: v1
kind: Pod
metadata:
  name: stubborn
  annotations: { podsim.dev/on-sigterm: ignore }
spec:
  terminationGracePeriodSeconds: 20
  containers: [{ name: app, image: busybox:1.36 }]
---
apiVersion: v1
kind: Pod
metadata: { name: late }
spec:
  containers: [{ name: app, image: busybox:1.36 }]
`;

test('delete namespace: Terminating, pods Terminating + SIGTERM with their grace, pods DELETED, then the namespace DELETED; create into it 403, default 403', async (t) => {
  const { report, model } = await runText('namespace-delete', SCENARIO);
  // The only failed steps are the two refused on purpose: the create (403) and deleting default (403).
  const failedSteps = report.steps.filter((s) => !s.ok).map((s) => [s.id, s.error]);
  t.deepEqual(failedSteps, [
    ['late', 'Pod/late: 403 pods "late" is forbidden: unable to create new content in namespace demo because it is being terminated'],
    ['del-default', 'default: 403'],
  ]);
  // kubectl's own line for the refused create (steps[].output, what `expect.output` reads).
  t.deepEqual(report.steps.find((s) => s.id === 'late')?.output, ['Error from server (Forbidden): pods "late" is forbidden: unable to create new content in namespace demo because it is being terminated']);
  // Every expectation the scenario declares was judged and held (`every` alone holds for none).
  t.is(report.expectations.length, declaredExpectations(SCENARIO));
  t.true(report.expectations.length > 0 && report.expectations.every((e) => e.ok), why(report));
  t.deepEqual(report.violations, [], why(report));

  const del = stepTimes(model, 'del-ns').start;
  const ns = model.writes.filter((w) => w.resource === 'namespaces' && w.name === 'demo');
  const terminating = ns.find((w) => w.event === 'MODIFIED' && w.deletionTimestamp)!;
  t.is(terminating.phase, 'Terminating');
  t.true(terminating.t - del < 0.01 * S, 'Terminating at the DELETE');
  const nsGone = ns.find((w) => w.event === 'DELETED')!;
  t.truthy(nsGone, 'namespace removed');

  // Every pod of the namespace: Terminating (graceful, its own grace), DELETED, all before the namespace.
  const podWrites = model.writes.filter((w) => w.resource === 'pods' && w.namespace === 'demo');
  const uids = [...new Set(podWrites.map((w) => w.uid))];
  t.is(uids.length, 3, 'no pod was created after the namespace began terminating');
  for (const uid of uids) {
    const ws = podWrites.filter((w) => w.uid === uid);
    const marked = ws.find((w) => w.deletionTimestamp)!;
    t.true(marked.t - del >= 5 * S && marked.t - del < 6 * S, `${ws[0].name} Terminating 5 s after the namespace`);
    t.is(marked.deletionGracePeriodSeconds, ws[0].name === 'stubborn' ? 20 : 10);
    const gone = ws.find((w) => w.event === 'DELETED')!;
    t.true(gone.t < nsGone.t, `${ws[0].name} DELETED before the namespace`);
  }
  const lastPodGone = Math.max(...podWrites.filter((w) => w.event === 'DELETED').map((w) => w.t));
  // stubborn is SIGKILLed 20 s after SIGTERM (~25 s after the delete); the controller's next
  // sync (estimate 20 → requeue 11 s) finalizes the namespace.
  t.true(lastPodGone - del > 25 * S && lastPodGone - del < 27 * S, `last pod gone at +${(lastPodGone - del) / S} s`);
  t.true(nsGone.t - lastPodGone < 12 * S, `namespace gone ${(nsGone.t - lastPodGone) / S} s after its last pod`);

  // The watch printed the pods' Terminating rows.
  t.true(report.watch.some((l) => /^stubborn\s+1\/1\s+Terminating/.test(l)), report.watch.join('\n'));
});
