/**
 * The StatefulSet sync decisions (`updateStatefulSet`, v1.22) as a pure table: for a set and its
 * pods, which pod is created, deleted or updated next and where the sync stops (spec
 * workload-controllers §2.3–§2.9). Then revisions, identity and history truncation.
 */
import test from 'ava';
import type { ControllerRevision, Pod, StatefulSet } from '@podsim/api';
import { planStatefulSetUpdate, revisionsToTruncate, type StopReason } from '../src/statefulset/statefulSetControl.js';
import { applyRevision, completeRollingUpdate, getPersistentVolumeClaims, inconsistentStatus, newRevision, newStatefulSetPod } from '../src/statefulset/statefulSetUtils.js';

type Policy = 'OrderedReady' | 'Parallel';
function mkSet(replicas: number, o: { policy?: Policy; onDelete?: boolean; partition?: number; image?: string; deleting?: boolean; currentReplicas?: number } = {}): StatefulSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'web', namespace: 'ns', uid: 'sts-uid', generation: 2, ...(o.deleting ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}) },
    spec: {
      replicas,
      serviceName: 'web',
      podManagementPolicy: o.policy ?? 'OrderedReady',
      updateStrategy: o.onDelete ? { type: 'OnDelete' } : { type: 'RollingUpdate', rollingUpdate: { partition: o.partition ?? 0 } },
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: o.image ?? 'nginx:1.21' }] } },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      revisionHistoryLimit: 10,
    },
    status: { replicas: 0, currentReplicas: o.currentReplicas ?? 0 },
  };
}

const REV_A = newRevision(mkSet(3), 1, 0);
const REV_B = newRevision(mkSet(3, { image: 'nginx:doesnotexist' }), 2, 0);

/** Pod states: R = Running+Ready, U = Running not ready, P = Pending, T = terminating (Ready), F = Failed; suffix b = at revision B. */
function pod(ordinal: number, state: string): Pod {
  const rev = state.endsWith('b') ? REV_B : REV_A;
  const p = newStatefulSetPod(applyRevision(mkSet(3), rev), ordinal, rev.metadata.name ?? '');
  const s = state.replace(/b$/, '');
  p.metadata.uid = `uid-${ordinal}`;
  if (s === 'T') p.metadata.deletionTimestamp = '2025-01-01T00:00:30Z';
  const phase = s === 'P' ? 'Pending' : s === 'F' ? 'Failed' : 'Running';
  const ready = s === 'R' || s === 'T';
  p.status = { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] };
  return p;
}

/** `"R R T"` → pods web-0..2 in those states ('-' = absent). */
const podsOf = (spec: string) =>
  (spec === '' ? [] : spec.split(' '))
    .map((s, i) => (s === '-' ? undefined : pod(i, s)))
    .filter((p): p is Pod => p !== undefined);

function plan(set: StatefulSet, pods: string, update: ControllerRevision = REV_A, current: ControllerRevision = REV_A) {
  const r = planStatefulSetUpdate(set, applyRevision(set, current), applyRevision(set, update), current, update, 0, podsOf(pods));
  return { steps: r.steps.map((s) => `${s.op} ${s.pod.metadata.name}`), stop: r.stop, status: r.status };
}

const table: [string, StatefulSet, string, string[], StopReason, ControllerRevision?][] = [
  // [title, set, pods, steps, stop, updateRevision]
  ['scale up from 0 creates web-0 only', mkSet(3), '', ['create web-0'], 'created'],
  ['scale up waits for web-0 Running and Ready', mkSet(3), 'P', [], 'waitRunningAndReady'],
  ['scale up creates the lowest missing ordinal', mkSet(3), 'R', ['create web-1'], 'created'],
  ['Parallel creates every missing ordinal in one sync', mkSet(3, { policy: 'Parallel' }), 'P', ['create web-1', 'create web-2'], 'updateWaitHealthy'],
  ['a terminating replica holds its slot: no create while the old object exists', mkSet(3), 'R T R', [], 'waitTerminating'],
  ['Parallel: a terminating replica is not recreated either', mkSet(3, { policy: 'Parallel' }), 'R T R', [], 'updateWaitHealthy'],
  ['the slot is recreated once the old object is gone', mkSet(3), 'R - R', ['create web-1'], 'created'],
  ['an unhealthy lower ordinal blocks recreating a higher one', mkSet(3), 'U R -', [], 'waitRunningAndReady'],
  ['scale down deletes the highest ordinal first, one per sync', mkSet(0), 'R R R', ['deleteCondemned web-2'], 'deletedCondemned'],
  ['scale down waits for the terminating pod to be gone', mkSet(0), 'R R T', [], 'condemnedTerminating'],
  ['scale down continues once it is gone', mkSet(0), 'R R', ['deleteCondemned web-1'], 'deletedCondemned'],
  ['an unready remaining replica blocks scale down (W01 part B)', mkSet(1), 'U R R', [], 'waitRunningAndReady'],
  ['an unhealthy condemned pod that is the first unhealthy one is deleted', mkSet(1), 'R R U', ['deleteCondemned web-2'], 'deletedCondemned'],
  ['a higher unhealthy condemned pod waits for a lower one (corner case §2.6)', mkSet(1), 'R U U', [], 'condemnedUnhealthy'],
  ['Parallel scale down deletes all condemned pods, skipping terminating ones', mkSet(0, { policy: 'Parallel' }), 'R T R', ['deleteCondemned web-2', 'deleteCondemned web-0'], 'done'],
  ['a Failed replica is deleted and recreated in the same sync', mkSet(3), 'R F R', ['deleteFailed web-1', 'create web-1'], 'created'],
  ['rolling update deletes the highest ordinal not at updateRevision', mkSet(3), 'R R R', ['deleteForUpdate web-2'], 'deletedForUpdate', REV_B],
  ['rolling update waits for the updated pod to be healthy', mkSet(3, { policy: 'Parallel' }), 'R R Ub', [], 'updateWaitHealthy', REV_B],
  ['rolling update moves down once the updated pod is healthy', mkSet(3), 'R R Rb', ['deleteForUpdate web-1'], 'deletedForUpdate', REV_B],
  ['partition 2 leaves web-0 and web-1 alone', mkSet(3, { partition: 2 }), 'R R Rb', [], 'done', REV_B],
  ['OnDelete never deletes for an update', mkSet(3, { onDelete: true }), 'R R R', [], 'onDelete', REV_B],
  ['W02: reverting the template does not replace the stuck pod under OrderedReady', mkSet(3), 'R R Pb', [], 'waitRunningAndReady', REV_A],
  ['W02 Parallel: the update loop deletes the stuck pod itself', mkSet(3, { policy: 'Parallel' }), 'R R Pb', ['deleteForUpdate web-2'], 'deletedForUpdate', REV_A],
  ['a set being deleted creates and deletes nothing', mkSet(3, { deleting: true }), 'R', [], 'deleting'],
];

for (const [title, set, pods, steps, stop, update] of table) {
  test(title, (t) => {
    const r = plan(set, pods, update ?? REV_A);
    t.deepEqual(r.steps, steps);
    t.is(r.stop, stop);
  });
}

test('a placeholder below the partition is built at currentRevision, above it at updateRevision', (t) => {
  const set = mkSet(3, { partition: 2 });
  const r = planStatefulSetUpdate(set, applyRevision(set, REV_A), applyRevision(mkSet(3, { image: 'nginx:doesnotexist' }), REV_B), REV_A, REV_B, 0, podsOf('R R -'));
  t.deepEqual(
    r.steps.map((s) => [s.pod.metadata.name, s.pod.metadata.labels?.['controller-revision-hash'], s.pod.spec.containers[0].image]),
    [['web-2', REV_B.metadata.name, 'nginx:doesnotexist']],
  );
  const low = planStatefulSetUpdate(set, applyRevision(set, REV_A), applyRevision(set, REV_B), REV_A, REV_B, 0, podsOf('- R R'));
  t.is(low.steps[0].pod.metadata.labels?.['controller-revision-hash'], REV_A.metadata.name);
});

test('status counts terminating pods in replicas and ready, not in current/updated', (t) => {
  const r = plan(mkSet(0), 'R R T');
  t.like(r.status, { replicas: 3, readyReplicas: 3, currentReplicas: 2, updatedReplicas: 2, currentRevision: REV_A.metadata.name, updateRevision: REV_A.metadata.name, observedGeneration: 2 });
});

test('identity: name, hostname, subdomain, labels, claim volume and claim name', (t) => {
  const p = newStatefulSetPod(mkSet(3), 1, 'web-abc');
  t.is(p.metadata.name, 'web-1');
  t.is(p.spec.hostname, 'web-1');
  t.is(p.spec.subdomain, 'web');
  t.deepEqual(p.metadata.labels, { app: 'web', 'statefulset.kubernetes.io/pod-name': 'web-1', 'controller-revision-hash': 'web-abc' });
  t.deepEqual(p.spec.volumes, [{ name: 'data', persistentVolumeClaim: { claimName: 'data-web-1', readOnly: false } }]);
  t.deepEqual(p.metadata.ownerReferences?.[0], { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'sts-uid', controller: true, blockOwnerDeletion: true });
  const [c] = getPersistentVolumeClaims(mkSet(3), p);
  t.is(c.claim.metadata.name, 'data-web-1');
  t.deepEqual(c.claim.metadata.labels, { app: 'web' });
});

test('revisions: one per template, named <set>-<hash>, the template restored by applyRevision', (t) => {
  t.regex(REV_A.metadata.name ?? '', /^web-[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
  t.not(REV_A.metadata.name, REV_B.metadata.name);
  t.is(newRevision(mkSet(5), 7, 0).metadata.name, REV_A.metadata.name, 'replicas do not change the revision');
  t.not(newRevision(mkSet(3), 1, 1).metadata.name, REV_A.metadata.name, 'the collision count changes the name');
  t.is(applyRevision(mkSet(3), REV_B).spec.template.spec.containers[0].image, 'nginx:doesnotexist');
});

test('truncateHistory keeps current, update and pod revisions, then the newest revisionHistoryLimit', (t) => {
  const set = { ...mkSet(3), spec: { ...mkSet(3).spec, revisionHistoryLimit: 1 } };
  const revs = [1, 2, 3, 4].map((n) => ({ ...newRevision(mkSet(3, { image: `img:${n}` }), n, 0) }));
  const names = revs.map((r) => r.metadata.name);
  const pods = [pod(0, 'R')];
  pods[0].metadata.labels!['controller-revision-hash'] = names[0] ?? '';
  const del = revisionsToTruncate(set, pods, revs, names[3] ?? '', names[3] ?? '');
  t.deepEqual(
    del.map((r) => r.metadata.name),
    [names[1]],
  );
});

test('completeRollingUpdate: current := update only for RollingUpdate with every replica updated and ready', (t) => {
  const st = () => ({ replicas: 3, readyReplicas: 3, updatedReplicas: 3, currentReplicas: 0, currentRevision: 'a', updateRevision: 'b' });
  const done = st();
  completeRollingUpdate(mkSet(3), done);
  t.like(done, { currentRevision: 'b', currentReplicas: 3 });
  const partial = { ...st(), updatedReplicas: 1 };
  completeRollingUpdate(mkSet(3, { partition: 2 }), partial);
  t.like(partial, { currentRevision: 'a', currentReplicas: 0 });
  const onDelete = st();
  completeRollingUpdate(mkSet(3, { onDelete: true }), onDelete);
  t.like(onDelete, { currentRevision: 'a' });
  t.true(inconsistentStatus({ ...mkSet(3), status: { replicas: 3, currentRevision: 'a', updateRevision: 'a' } }, { replicas: 3, currentRevision: 'a', updateRevision: 'b' }));
  t.false(inconsistentStatus({ ...mkSet(3), status: { replicas: 3, observedGeneration: 2 } }, { replicas: 3, observedGeneration: 2 }));
});
