/**
 * The disruption controller against the real apiserver (pair tests over the engine): the status
 * `kubectl get pdb` shows for a Deployment of 3 with minAvailable 2, what an eviction does to it
 * (disruptedPods, one allowed disruption taken, the next refused 429 until the replacement is
 * Ready), and expectedPods from the Deployment's scale for a percentage.
 */
import test from 'ava';
import type { ApiRequest, Pod, PodDisruptionBudget, Status, TraceRecord } from '@podsim/api';
import { DELETION_TIMEOUT_US } from '../src/disruption/disruptionController.js';
import { create, createNode, mkDeployment, mkNode, runCluster, S, type Step } from './helpers/cluster.js';

function pdb(name: string, spec: PodDisruptionBudget['spec']): PodDisruptionBudget {
  return { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name, namespace: 'default' }, spec };
}

function createPdb(at: number, p: PodDisruptionBudget): Step {
  return { at, req: { type: 'ApiCreate', resource: 'poddisruptionbudgets', namespace: 'default', object: p }, label: `create pdb ${p.metadata.name}` };
}

/**
 * Evicts the n-th running pod (by name) that is not deleting (a Pending replacement would be
 * evicted without consulting the budget, so it is skipped).
 */
function evictNth(at: number, n: number, label: string): Step {
  return {
    at,
    label,
    req: (pods: ReadonlyMap<string, Pod>): ApiRequest => {
      const names = [...pods.values()].filter((p) => !p.metadata.deletionTimestamp && p.status?.phase === 'Running').map((p) => p.metadata.name ?? '').sort();
      const name = names[n];
      return { type: 'ApiCreate', resource: 'pods', namespace: 'default', name, subresource: 'eviction', object: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' } } as never };
    },
  };
}

const statusAt = (updates: TraceRecord[], t: number) => updates.filter((u) => u.t <= t && u.data?.code === 200).at(-1)?.data;

test('disruption controller constants are v1.22.8 defaults', (t) => {
  t.is(DELETION_TIMEOUT_US, 120 * S);
});

test('Deployment of 3, minAvailable 2: status 3 expected / 3 healthy / 2 desired / 1 allowed; one eviction allowed, the next 429 until the replacement is Ready', (t) => {
  const run = runCluster({
    steps: [
      createNode(0, mkNode('n1')),
      create(0.5 * S, 'deployments', mkDeployment('web', 3)),
      createPdb(1 * S, pdb('web', { minAvailable: 2, selector: { matchLabels: { app: 'web' } } })),
      evictNth(20 * S, 0, 'evict first'),
      evictNth(20.001 * S, 0, 'evict second'),
      evictNth(40 * S, 0, 'evict later'),
    ],
    kubelet: { nodes: ['n1'], stopDelayUs: 5 * S },
    untilUs: 60 * S,
  });
  const updates = run.all('controller.disruption.update');
  t.like(statusAt(updates, 19 * S), { expectedPods: 3, currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1 });

  const result = (label: string) => run.all('test.result', (r) => r.data?.label === label)[0].data!;
  t.is(result('evict first').code, 201);
  const second = result('evict second');
  t.is(second.code, 429);
  t.is((second.body as Status).message, "Cannot evict pod as it would violate the pod's disruption budget.");
  t.deepEqual((second.body as Status).details?.causes, [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 2 healthy pods and has 2 currently' }]);

  // After the eviction: 2 healthy (the evicted pod is deleting), none allowed; then the
  // replacement becomes Ready and one disruption is allowed again.
  const after = updates.filter((u) => u.t > 20 * S && u.data?.code === 200);
  t.like(after[0].data, { currentHealthy: 2, disruptionsAllowed: 0 });
  const recovered = after.find((u) => u.data?.currentHealthy === 3);
  t.truthy(recovered, 'replacement counted healthy');
  // With an integer minAvailable expectedPods is the number of matching pods, the terminating one included.
  t.like(recovered!.data, { expectedPods: 4, desiredHealthy: 2, disruptionsAllowed: 1 });
  t.true(recovered!.t < 40 * S);
  t.is(result('evict later').code, 201);
});

test("a percentage takes expectedPods from the Deployment's scale; maxUnavailable 1 of 3 allows 1; a budget matching no pods allows none", (t) => {
  const run = runCluster({
    steps: [
      createNode(0, mkNode('n1')),
      create(0.5 * S, 'deployments', mkDeployment('web', 3)),
      createPdb(1 * S, pdb('pct', { minAvailable: '50%', selector: { matchLabels: { app: 'web' } } })),
      createPdb(1 * S, pdb('none', { maxUnavailable: 1, selector: { matchLabels: { app: 'nothing' } } })),
    ],
    kubelet: { nodes: ['n1'] },
    untilUs: 20 * S,
  });
  const last = (name: string) => run.all('controller.disruption.update', (r) => r.data?.pdb === name).at(-1)?.data;
  // 50% of 3 rounded up is 2.
  t.like(last('pct'), { expectedPods: 3, currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1 });
  t.like(last('none'), { expectedPods: 0, currentHealthy: 0, desiredHealthy: 0, disruptionsAllowed: 0 });
});
