/** deployment_util.go helpers as tables: fenceposts, new RS sizing, proportions, hash, annotations. */
import test from 'ava';
import type { Deployment, ReplicaSet } from '@podsim/api';
import {
  computeHash,
  equalIgnoreHash,
  findActiveOrLatest,
  getProportion,
  isSaturated,
  maxSurge,
  maxUnavailable,
  newRSNewReplicas,
  resolveFenceposts,
  safeEncodeString,
  setNewReplicaSetAnnotations,
  withDeploymentDefaults,
} from '../src/deployment/deploymentUtil.js';
import { oldPodsRunning } from '../src/deployment/recreate.js';
import { calculateStatus } from '../src/deployment/sync.js';

function dep(replicas: number, strategy?: Deployment['spec']['strategy']): Deployment {
  return withDeploymentDefaults({
    metadata: { name: 'd', namespace: 'ns', uid: 'd-uid', generation: 1 },
    spec: { replicas, strategy, selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.21' }] } } },
  });
}

function rs(name: string, replicas: number, o: { available?: number; created?: string; annotations?: Record<string, string> } = {}): ReplicaSet {
  return {
    metadata: { name, namespace: 'ns', uid: `${name}-uid`, creationTimestamp: o.created ?? '2025-01-01T00:00:00Z', annotations: o.annotations },
    spec: { replicas, selector: {}, template: { spec: { containers: [] } } },
    status: { replicas, availableReplicas: o.available ?? replicas, readyReplicas: o.available ?? replicas },
  };
}

test('fenceposts: surge rounds up, unavailable down; both zero → unavailable 1', (t) => {
  t.deepEqual(resolveFenceposts('25%', '25%', 4), [1, 1]);
  t.deepEqual(resolveFenceposts('25%', '25%', 3), [1, 0]);
  t.deepEqual(resolveFenceposts('25%', '25%', 10), [3, 2]);
  t.deepEqual(resolveFenceposts(0, '10%', 5), [0, 1]);
  t.deepEqual(resolveFenceposts(2, 0, 5), [2, 0]);
  t.is(maxUnavailable(dep(3)), 0);
  t.is(maxSurge(dep(3)), 1);
  t.is(maxUnavailable(dep(2, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 5 } })), 2, 'at most replicas');
  t.is(maxUnavailable(dep(3, { type: 'Recreate' })), 0);
  t.is(maxSurge(dep(3, { type: 'Recreate' })), 0);
});

test('NewRSNewReplicas: scale up within replicas + maxSurge, never beyond replicas; Recreate takes replicas', (t) => {
  const d = dep(4, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } });
  const newRS = rs('new', 0);
  t.is(newRSNewReplicas(d, [rs('old', 4), newRS], newRS), 1);
  t.is(newRSNewReplicas(d, [rs('old', 3), rs('new', 1)], rs('new', 1)), 2);
  t.is(newRSNewReplicas(d, [rs('old', 5), rs('new', 0)], rs('new', 0)), 0);
  t.is(newRSNewReplicas(d, [rs('old', 0), rs('new', 3)], rs('new', 3)), 4);
  t.is(newRSNewReplicas(dep(4, { type: 'Recreate' }), [rs('old', 4), newRS], newRS), 4);
});

test('proportional scaling: each RS gets its share of the change (GetProportion)', (t) => {
  // Scaling 10 → 15 (maxSurge 25% → 3 then 4): RSs of 6 and 4 annotated max-replicas 13.
  const d = dep(15);
  const a = rs('a', 6, { annotations: { 'deployment.kubernetes.io/max-replicas': '13' } });
  const b = rs('b', 4, { annotations: { 'deployment.kubernetes.io/max-replicas': '13' } });
  const toAdd = 15 + maxSurge(d) - 10;
  t.is(toAdd, 9);
  const pa = getProportion(a, d, toAdd, 0, 10);
  const pb = getProportion(b, d, toAdd, pa, 10);
  t.deepEqual([pa, pb], [Math.round((6 * 19) / 13) - 6, Math.round((4 * 19) / 13) - 4]);
  t.is(getProportion(rs('z', 0), d, toAdd, 0, 10), 0);
});

test('FindActiveOrLatest and IsSaturated', (t) => {
  const old = rs('old', 0, { created: '2025-01-01T00:00:00Z' });
  const nu = rs('new', 3, { created: '2025-01-01T00:01:00Z', annotations: { 'deployment.kubernetes.io/desired-replicas': '3' } });
  t.is(findActiveOrLatest(nu, [old])?.metadata.name, 'new');
  t.is(findActiveOrLatest(rs('new', 0, { created: '2025-01-01T00:01:00Z' }), [old])?.metadata.name, 'new');
  t.is(findActiveOrLatest(nu, [rs('old', 1)]), undefined);
  t.true(isSaturated(dep(3), nu));
  t.false(isSaturated(dep(3), rs('new', 3, { available: 2, annotations: { 'deployment.kubernetes.io/desired-replicas': '3' } })));
});

test('pod-template-hash: stable, insensitive to defaulting and the hash label, sensitive to the image and collisionCount', (t) => {
  const d = dep(1);
  const h = computeHash(d.spec.template, undefined);
  t.regex(h, /^[bcdfghjklmnpqrstvwxz2456789]{6,10}$/);
  const defaulted = structuredClone(d.spec.template);
  defaulted.spec.restartPolicy = 'Always';
  defaulted.spec.terminationGracePeriodSeconds = 30;
  defaulted.metadata!.labels!['pod-template-hash'] = h;
  t.is(computeHash(defaulted, undefined), h);
  t.true(equalIgnoreHash(d.spec.template, defaulted));
  const v2 = structuredClone(d.spec.template);
  v2.spec.containers[0].image = 'nginx:1.22';
  t.not(computeHash(v2, undefined), h);
  t.false(equalIgnoreHash(d.spec.template, v2));
  t.not(computeHash(d.spec.template, 1), h);
  t.is(safeEncodeString('0129'), '456f', 'digit d maps to alphanums[charCode(d) % 27]');
});

test('SetNewReplicaSetAnnotations: revision goes up only, history kept when an old revision is reused', (t) => {
  const d = dep(3);
  d.metadata.annotations = { team: 'x', 'kubectl.kubernetes.io/last-applied-configuration': '{}' };
  const r = rs('r', 0);
  t.true(setNewReplicaSetAnnotations(d, r, 1, false));
  t.deepEqual(r.metadata.annotations, {
    team: 'x',
    'deployment.kubernetes.io/revision': '1',
    'deployment.kubernetes.io/desired-replicas': '3',
    'deployment.kubernetes.io/max-replicas': '4',
  });
  t.false(setNewReplicaSetAnnotations(d, r, 1, true));
  t.true(setNewReplicaSetAnnotations(d, r, 3, true));
  t.is(r.metadata.annotations!['deployment.kubernetes.io/revision'], '3');
  t.is(r.metadata.annotations!['deployment.kubernetes.io/revision-history'], '1');
});

test('oldPodsRunning: a Terminating old pod (phase Running) blocks Recreate; terminal ones do not', (t) => {
  const newRS = rs('new', 0);
  const old = { ...rs('old', 0), status: { replicas: 0 } };
  const running = { metadata: { name: 'p', deletionTimestamp: '2025-01-01T00:00:00Z' }, spec: { containers: [] }, status: { phase: 'Running' as const } };
  const done = { metadata: { name: 'q' }, spec: { containers: [] }, status: { phase: 'Succeeded' as const } };
  t.true(oldPodsRunning(newRS, [old], new Map([['old-uid', [running]]])));
  t.false(oldPodsRunning(newRS, [old], new Map([['old-uid', [done]]])));
  t.false(oldPodsRunning(newRS, [old], new Map([['new-uid', [running]]])), 'new RS pods do not count');
  t.true(oldPodsRunning(newRS, [{ ...old, status: { replicas: 1 } }], new Map()), 'an old RS reporting replicas');
});

test('deployment calculateStatus: counts from RS status, Available by maxUnavailable', (t) => {
  const d = dep(4, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } });
  const s = calculateStatus([rs('old', 1, { available: 1 }), rs('new', 3, { available: 2 })], rs('new', 3, { available: 2 }), d, '2025-01-01T00:00:00Z');
  t.like(s, { observedGeneration: 1, replicas: 4, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3, unavailableReplicas: 1 });
  t.like(s.conditions?.[0], { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' });
  const s2 = calculateStatus([rs('new', 4, { available: 2 })], rs('new', 4, { available: 2 }), d, '2025-01-01T00:00:00Z');
  t.like(s2.conditions?.[0], { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' });
});
