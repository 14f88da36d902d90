/**
 * podsim's limit on StatefulSet size (found by the bad-input trial: `kubectl scale sts web
 * --replicas=1000000000` against podsim serve made the controller allocate one slot per replica,
 * the heap ran out and the whole simulation died). Past MAX_SIMULATED_STATEFULSET_REPLICAS the
 * set is traced as too large and left alone; the controller manager keeps running.
 */
import test from 'ava';
import type { ApiRequest, StatefulSet } from '@podsim/api';
import { MAX_SIMULATED_STATEFULSET_REPLICAS } from '../src/statefulset/statefulSet.js';
import { S, createNode, mkNode, runCluster } from './helpers/cluster.js';

const set = (name: string, replicas: number): StatefulSet => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name, namespace: 'default' },
  spec: {
    replicas,
    serviceName: name,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'a', image: 'x' }] } },
  },
});

test('a StatefulSet of 1e9 replicas is traced as too large and not synced; a small one beside it still gets its pod', (t) => {
  const run = runCluster({
    steps: [
      createNode(0, mkNode('n1')),
      { at: 1 * S, req: { type: 'ApiCreate', resource: 'statefulsets', namespace: 'default', object: set('huge', 1_000_000_000) } as ApiRequest, label: 'huge' },
      { at: 1 * S, req: { type: 'ApiCreate', resource: 'statefulsets', namespace: 'default', object: set('small', 1) } as ApiRequest, label: 'small' },
    ],
    untilUs: 6 * S,
    kubelet: { nodes: ['n1'] },
  });
  t.true(1_000_000_000 > MAX_SIMULATED_STATEFULSET_REPLICAS);
  t.true(run.all('controller.sts.tooLarge').some((r) => r.msg.includes('default/huge')), 'the huge set was traced');
  const pods = [...run.live('test-pods').values()].map((p) => p.metadata.name).sort();
  t.deepEqual(pods, ['small-0']);
});
