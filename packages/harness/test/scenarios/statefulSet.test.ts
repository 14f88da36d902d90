/**
 * StatefulSet flows end to end (spec workload-controllers §2.5, §2.6, §2.7, §2.14; cases W01 and
 * W02): the serial OrderedReady scale-down (each pod gone before the next DELETE, status.replicas
 * stepping at each removal), Parallel, a deleted pod replaced only once its object is gone, a bad
 * rollout that reverting cannot undo, and a force delete running two containers of one identity.
 */
import test from 'ava';
import type { TraceModel } from '../../src/checkers/model.js';
import { readFileSync } from 'node:fs';
import { declaredExpectations, runText, stepTimes, why, writesOf, S } from './helpers.js';

const sts = (o: { replicas?: number; policy?: string; tgps?: number; sigterm?: string; image?: string } = {}) => `
---
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: web }
spec:
  replicas: ${o.replicas ?? 3}
  serviceName: web
  podManagementPolicy: ${o.policy ?? 'OrderedReady'}
  selector: { matchLabels: { app: web } }
  template:
    metadata:
      labels: { app: web }
      annotations: { podsim.dev/on-sigterm: "${o.sigterm ?? 'ignore'}" }
    spec:
      terminationGracePeriodSeconds: ${o.tgps ?? 30}
      containers: [{ name: app, image: ${o.image ?? 'nginx:1.21'} }]
  volumeClaimTemplates:
    - metadata: { name: data }
      spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: 1Gi } } }
`;

/** Virtual µs of each uid's DELETED write of pod `name`, in order. */
const goneTimes = (m: TraceModel, name: string) => writesOf(m, name).filter((w) => w.event === 'DELETED').map((w) => w.t);
/** The first write of pod `name` that set a deletionTimestamp, per uid (the DELETE's instant). */
const deleteTimes = (m: TraceModel, name: string) => {
  const seen = new Set<string>();
  const out: number[] = [];
  for (const w of writesOf(m, name)) {
    if (!w.deletionTimestamp || seen.has(w.uid)) continue;
    seen.add(w.uid);
    out.push(w.t);
  }
  return out;
};
const uids = (m: TraceModel, name: string) => [...new Set(writesOf(m, name).map((w) => w.uid))];
const stsReplicas = (m: TraceModel) =>
  m.writes.filter((w) => w.resource === 'statefulsets' && w.event !== 'DELETED').map((w) => w.statusReplicas).filter((v, i, a) => i === 0 || v !== a[i - 1]);

test('W01 part A: OrderedReady scale 3→0 is strictly serial; each pod is gone before the next DELETE', async (t) => {
  const { report, model } = await runText(
    'w01a',
    `kind: Scenario
cluster: { seed: 1, nodes: [{ name: n1 }] }
steps:
  - apply: all
  - wait: { for: ready, selector: app=web, count: 3, timeout: 2m }
  - id: scale
    scale: { kind: sts, name: web, replicas: 0 }
  - wait: { for: gone, selector: app=web, timeout: 5m }
  - sleep: 2s
expect: { invariants: clean }
${sts()}`,
  );
  t.true(report.ok, why(report));
  const t0 = stepTimes(model, 'scale').start;
  const del = ['web-2', 'web-1', 'web-0'].map((n) => deleteTimes(model, n)[0] - t0);
  const gone = ['web-2', 'web-1', 'web-0'].map((n) => goneTimes(model, n)[0] - t0);
  // δ ≤ 1 s after the scale, then each DELETE after the previous pod is gone (≤ δ later).
  t.true(del[0] <= 1 * S, `web-2 DELETE at ${del[0]}`);
  for (let i = 1; i < 3; i++) {
    t.true(del[i] >= gone[i - 1], `DELETE of pod ${i} (${del[i]}) before the previous was gone (${gone[i - 1]})`);
    t.true(del[i] - gone[i - 1] <= 1 * S, `DELETE ${i} came ${del[i] - gone[i - 1]} µs after the previous was gone`);
  }
  // Each ignores SIGTERM: SIGKILL at 30 s, gone at ≈ 30 + ε per pod (≈ 90 + 3ε + 2δ in all).
  t.true(gone[0] >= 30 * S && gone[0] <= 33 * S, `web-2 gone at ${gone[0]}`);
  t.true(gone[2] >= 90 * S && gone[2] <= 99 * S, `web-0 gone at ${gone[2]}`);
  // status.replicas steps at each removal, not at each DELETE.
  t.deepEqual(stsReplicas(model).slice(-4), [3, 2, 1, 0]);
  // Exactly one pod terminating at any moment.
  t.true(del[1] >= gone[0] && del[2] >= gone[1]);
});

test('W01 variant: Parallel scale 3→0 deletes all three at once; all gone at ≈ 30 + ε', async (t) => {
  const { report, model } = await runText(
    'w01p',
    `kind: Scenario
cluster: { seed: 1, nodes: [{ name: n1 }] }
steps:
  - apply: all
  - wait: { for: ready, selector: app=web, count: 3, timeout: 2m }
  - id: scale
    scale: { kind: sts, name: web, replicas: 0 }
  - wait: { for: gone, selector: app=web, timeout: 5m }
expect: { invariants: clean }
${sts({ policy: 'Parallel' })}`,
  );
  t.true(report.ok, why(report));
  const t0 = stepTimes(model, 'scale').start;
  for (const n of ['web-0', 'web-1', 'web-2']) {
    t.true(deleteTimes(model, n)[0] - t0 <= 1 * S, `${n} deleted late`);
    const g = goneTimes(model, n)[0] - t0;
    t.true(g >= 30 * S && g <= 33 * S, `${n} gone at ${g}`);
  }
});

test('§2.14: a deleted web-1 is recreated only after the old object is gone; web-0 and web-2 untouched', async (t) => {
  const { report, model } = await runText(
    'delete-web-1',
    `kind: Scenario
cluster: { seed: 1, nodes: [{ name: n1 }] }
steps:
  - apply: all
  - wait: { for: ready, selector: app=web, count: 3, timeout: 2m }
  - id: del
    delete: { kind: pod, name: web-1 }
  - sleep: 20s
expect: { invariants: clean }
${sts({ sigterm: 'exit:2s:0' })}`,
  );
  t.true(report.ok, why(report));
  const [oldUid, newUid] = uids(model, 'web-1');
  t.truthy(newUid, 'web-1 was recreated');
  const gone = goneTimes(model, 'web-1')[0];
  const created = writesOf(model, 'web-1').find((w) => w.uid === newUid && w.event === 'ADDED')!.t;
  const t0 = stepTimes(model, 'del').start;
  t.true(gone - t0 >= 2 * S && gone - t0 <= 5 * S, `old web-1 gone at ${gone - t0}`);
  t.true(created >= gone, `new web-1 (${created}) created before the old (${oldUid}) was gone (${gone})`);
  t.true(created - gone <= 1 * S);
  // The controller never POSTed web-1 while the old object held the name. (Had it, the answer
  // would be 500 ServerTimeout, not 409: the pod carries generateName too, and
  // rest.CheckGeneratedNameError turns AlreadyExists into a ServerTimeout.)
  t.deepEqual(
    model.requests.filter((r) => r.verb === 'create' && r.resource === 'pods' && r.name === 'web-1' && r.code >= 300).map((r) => r.t),
    [],
  );
  t.is(uids(model, 'web-0').length, 1);
  t.is(uids(model, 'web-2').length, 1);
  t.deepEqual(deleteTimes(model, 'web-2'), []);
});

test('a force delete makes a twin: the new web-0 runs while the old container is still in its grace period', async (t) => {
  const { report, model } = await runText(
    'twin',
    `kind: Scenario
cluster: { seed: 1, nodes: [{ name: n1 }] }
steps:
  - apply: all
  - wait: { for: ready, selector: app=web, count: 1, timeout: 2m }
  - id: force
    delete: { kind: pod, name: web-0, gracePeriod: 0, force: true }
  - wait: { for: ready, name: web-0, timeout: 1m }
  - sleep: 40s
expect: { invariants: clean }
${sts({ replicas: 1 })}`,
  );
  t.true(report.ok, why(report));
  const [oldUid, newUid] = uids(model, 'web-0');
  t.truthy(newUid, 'web-0 was recreated');
  const oldProc = model.processesOf(oldUid).find((p) => p.container === 'app')!;
  const newProc = model.processesOf(newUid).find((p) => p.container === 'app')!;
  t.truthy(newProc, 'the new web-0 started a container');
  // Twins: the new container started before the old one (ignoring SIGTERM, grace 30) exited.
  t.true(newProc.startedAt < (oldProc.exitedAt ?? Infinity), `new started ${newProc.startedAt}, old exited ${oldProc.exitedAt}`);
  t.true(oldProc.exitedAt !== undefined, 'the old container was killed in the end');
  // The new object survives the old kubelet's cleanup (UID precondition): it is never deleted.
  t.false(writesOf(model, 'web-0').some((w) => w.uid === newUid && w.event === 'DELETED'));
});

test('W02: reverting a bad rollout does not replace the stuck web-2 under OrderedReady; deleting it does', async (t) => {
  const { report, model } = await runText(
    'w02',
    `kind: Scenario
cluster: { seed: 1, nodes: [{ name: n1 }] }
steps:
  - apply: all
  - sleep: 30s
  - fault: { kind: runtimeError, node: n1, call: PullImage, code: NotFound, message: "not found", for: 205s }
  - id: bad
    setImage: { kind: sts, name: web, container: app, image: "nginx:doesnotexist" }
  - sleep: 120s
  - id: revert
    setImage: { kind: sts, name: web, container: app, image: "nginx:1.21" }
  - sleep: 80s
  - id: del
    delete: { kind: pod, name: web-2 }
  - wait: { for: ready, name: web-2, timeout: 1m }
  - sleep: 5s
expect: { invariants: clean }
${sts({ tgps: 10, sigterm: 'exit:1s:0' })}`,
  );
  t.true(report.ok, why(report));
  const web2 = uids(model, 'web-2');
  t.is(web2.length, 3, 'web-2: the original, the rev-B pod, the rev-A pod after the manual delete');
  const revert = stepTimes(model, 'revert').start;
  const del = stepTimes(model, 'del').start;
  // The rev-B web-2 is not deleted between the revert and the manual delete.
  const stuck = writesOf(model, 'web-2').filter((w) => w.uid === web2[1]);
  t.false(stuck.some((w) => w.deletionTimestamp && w.t < del), 'the controller replaced the stuck pod by itself');
  t.true(stuck.some((w) => w.t > revert));
  t.false(stuck.some((w) => w.ready), 'the rev-B web-2 never became ready (image pull fails)');
  // web-0 and web-1 were never touched.
  t.is(uids(model, 'web-0').length, 1);
  t.is(uids(model, 'web-1').length, 1);
  const sets = model.writes.filter((w) => w.resource === 'controllerrevisions' && w.event === 'ADDED');
  t.is(sets.length, 2, 'two ControllerRevisions: rollback bumps the old one instead of creating a third');
});

test('§2.14: an image update rolls web-2, web-1, web-0 one at a time, each after the previous is Ready; partition 2 updates only web-2', async (t) => {
  const text = (partition: number) => `kind: Scenario
cluster: { seed: 1, nodes: [{ name: n1 }] }
steps:
  - apply: all
  - wait: { for: ready, selector: app=web, count: 3, timeout: 2m }
  - id: update
    setImage: { kind: sts, name: web, container: app, image: "nginx:1.22" }
  - sleep: 60s
expect: { invariants: clean }
${sts({ sigterm: 'exit:1s:0' }).replace('  serviceName: web', `  serviceName: web\n  updateStrategy: { type: RollingUpdate, rollingUpdate: { partition: ${partition} } }`)}`;
  const { report, model } = await runText('rolling', text(0));
  t.true(report.ok, why(report));
  const del = ['web-2', 'web-1', 'web-0'].map((n) => deleteTimes(model, n)[0]);
  t.true(del[0] < del[1] && del[1] < del[2], `order ${del.join(', ')}`);
  // Each next DELETE comes after the replacement of the previous ordinal is ready.
  for (const [i, prev] of [[1, 'web-2'], [2, 'web-1']] as const) {
    const newUid = uids(model, prev)[1];
    const ready = writesOf(model, prev).find((w) => w.uid === newUid && w.ready)!.t;
    t.true(del[i] >= ready, `${prev} replacement ready at ${ready}, next DELETE at ${del[i]}`);
  }
  for (const n of ['web-0', 'web-1', 'web-2']) t.is(uids(model, n).length, 2, n);

  const part = await runText('rolling-partition', text(2));
  t.true(part.report.ok, why(part.report));
  t.is(uids(part.model, 'web-2').length, 2);
  t.is(uids(part.model, 'web-1').length, 1);
  t.is(uids(part.model, 'web-0').length, 1);
});

test('W01 part B: while web-0 is unready an OrderedReady scale-down deletes nothing; then web-2, then web-1 once web-2 is gone', async (t) => {
  // Every pod is unready 20–40 s after its container started (readiness probe every 1 s); the
  // scale to 1 comes while web-0 is unready.
  const { report, model } = await runText(
    'w01b',
    `kind: Scenario
cluster: { seed: 1, nodes: [{ name: n1 }] }
steps:
  - apply: all
  - wait: { for: ready, selector: app=web, count: 3, timeout: 2m }
  - sleep: 20s
  - id: scale
    scale: { kind: sts, name: web, replicas: 1 }
  - sleep: 60s
expect: { invariants: clean }
${sts({ sigterm: 'exit:2s:0' })
  .replace('annotations: { podsim.dev/on-sigterm: "exit:2s:0" }', 'annotations: { podsim.dev/on-sigterm: "exit:2s:0", podsim.dev/not-ready: "20s-40s" }')
  .replace('containers: [{ name: app, image: nginx:1.21 }]', 'containers: [{ name: app, image: nginx:1.21, readinessProbe: { httpGet: { port: 80 }, periodSeconds: 1, failureThreshold: 1 } }]')}`,
  );
  t.true(report.ok, why(report));
  const scale = stepTimes(model, 'scale').start;
  const web0 = writesOf(model, 'web-0');
  const unready = web0.find((w) => w.t < scale && !w.ready && w.phase === 'Running' && web0.some((x) => x.t < w.t && x.ready))!.t;
  const readyAgain = web0.find((w) => w.t > unready && w.ready)!.t;
  t.true(unready < scale && readyAgain > scale, `web-0 unready ${unready}–${readyAgain}, scale at ${scale}`);
  const [del2] = deleteTimes(model, 'web-2');
  const [del1] = deleteTimes(model, 'web-1');
  t.true(del2 >= readyAgain, `web-2 deleted at ${del2}, before web-0 was ready again at ${readyAgain}`);
  t.true(del1 >= goneTimes(model, 'web-2')[0], 'web-1 deleted before web-2 was gone');
  t.deepEqual(deleteTimes(model, 'web-0'), []);
});

test('examples/statefulset-node-loss.yaml: db-0 on a powered-off node blocks its ordinal until the Node object is deleted; the new db-0 comes only once the old object is gone', async (t) => {
  t.timeout(120_000);
  const text = readFileSync('examples/statefulset-node-loss.yaml', 'utf8');
  const { report, model } = await runText('statefulset-node-loss', text);
  t.true(report.ok, why(report));
  t.is(report.expectations.length, declaredExpectations(text), 'every expectation the file declares was judged');
  const [oldUid, newUid] = uids(model, 'db-0');
  t.truthy(newUid, 'a second db-0 was created');
  const w = writesOf(model, 'db-0');
  const oldGone = w.find((x) => x.uid === oldUid && x.event === 'DELETED')!.t;
  const oldTerminating = w.find((x) => x.uid === oldUid && x.deletionTimestamp)!.t;
  const newAdded = w.find((x) => x.uid === newUid && x.event === 'ADDED')!.t;
  const down = stepTimes(model, 'down').start;
  const nodeDeleted = stepTimes(model, 'delete-node').start;
  // Terminating from the taint manager's eviction (≈345 s) until pod GC after the Node DELETE:
  // no replacement in between, however long.
  t.true(oldTerminating - down > 300 * S && nodeDeleted - oldTerminating > 200 * S);
  t.true(oldGone > nodeDeleted, 'the old db-0 outlived its node');
  t.true(newAdded > oldGone && newAdded - oldGone < S, `new db-0 created ${(newAdded - oldGone) / S}s after the old one was gone`);
  t.is(model.writes.filter((x) => x.resource === 'pods' && x.name === 'db-0' && x.event === 'ADDED').length, 2);
});
