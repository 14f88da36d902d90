/** `getPodsToDelete` / `ActivePodsWithRanks.Less` (controller_utils.go, v1.22) as a table. */
import test from 'ava';
import type { Pod } from '@podsim/api';
import { Clock, DEFAULT_EPOCH_UNIX_SECONDS, Prng } from '@podsim/api';
import { getPodsToDelete, getPodsToDeleteByNodeCounts, lessActivePodsWithRanks, podDeletionCost, rankPods } from '../src/replicaset/podsToDelete.js';

const clock = new Clock(DEFAULT_EPOCH_UNIX_SECONDS);
const S = 1_000_000;
const NOW = 100_000 * S;

interface P {
  name: string;
  node?: string;
  phase?: 'Pending' | 'Running' | 'Unknown';
  readyAt?: number;
  created?: number;
  restarts?: number;
  cost?: string;
}

function pod(p: P): Pod {
  return {
    metadata: {
      name: p.name,
      uid: `uid-${p.name}`,
      creationTimestamp: clock.format(p.created ?? 0),
      ...(p.cost !== undefined ? { annotations: { 'controller.kubernetes.io/pod-deletion-cost': p.cost } } : {}),
    },
    spec: { containers: [{ name: 'c' }], ...(p.node ? { nodeName: p.node } : {}) },
    status: {
      phase: p.phase ?? 'Running',
      conditions: p.readyAt !== undefined ? [{ type: 'Ready', status: 'True', lastTransitionTime: clock.format(p.readyAt) }] : [],
      containerStatuses: [{ name: 'c', state: {}, lastState: {}, ready: p.readyAt !== undefined, restartCount: p.restarts ?? 0, image: '', imageID: '' }],
    },
  };
}

const ready = (name: string, extra: Partial<P> = {}): P => ({ name, node: 'n1', phase: 'Running', readyAt: 1000 * S, created: 500 * S, ...extra });

const cases: [string, P, P][] = [
  ['unscheduled before scheduled', { name: 'a', phase: 'Pending' }, ready('b')],
  ['Pending before Running', { name: 'a', node: 'n1', phase: 'Pending' }, ready('b')],
  ['Unknown before Running', { name: 'a', node: 'n1', phase: 'Unknown' }, ready('b')],
  ['not ready before ready', { name: 'a', node: 'n1', phase: 'Running' }, ready('b')],
  ['lower deletion cost first', ready('a', { cost: '-5' }), ready('b')],
  ['more recently ready first (different log2 bucket)', ready('a', { readyAt: NOW - 10 * S }), ready('b', { readyAt: NOW - 1000 * S })],
  ['more restarts first', ready('a', { restarts: 3 }), ready('b')],
  ['newer first (different log2 bucket)', ready('a', { created: NOW - 60 * S }), ready('b', { created: NOW - 6000 * S })],
];

for (const [name, a, b] of cases) {
  test(`ActivePodsWithRanks: ${name}`, (t) => {
    const ra = { pod: pod(a), rank: 0 };
    const rb = { pod: pod(b), rank: 0 };
    t.true(lessActivePodsWithRanks(ra, rb, NOW, clock));
    t.false(lessActivePodsWithRanks(rb, ra, NOW, clock));
  });
}

test('ActivePodsWithRanks: a pod doubled up with related pods goes first; same log2 bucket falls back to UID', (t) => {
  const a = { pod: pod(ready('a')), rank: 2 };
  const b = { pod: pod(ready('b')), rank: 1 };
  t.true(lessActivePodsWithRanks(a, b, NOW, clock));
  // 1000 s and 1001 s ago are in the same log2(ns) bucket: the UID decides.
  const c = { pod: pod(ready('c', { readyAt: NOW - 1000 * S })), rank: 0 };
  const d = { pod: pod(ready('d', { readyAt: NOW - 1001 * S })), rank: 0 };
  t.true(lessActivePodsWithRanks(c, d, NOW, clock));
  t.false(lessActivePodsWithRanks(d, c, NOW, clock));
});

test('podDeletionCost parses an int32 and defaults to 0', (t) => {
  t.is(podDeletionCost(pod(ready('a', { cost: '100' }))), 100);
  t.is(podDeletionCost(pod(ready('a', { cost: 'x' }))), 0);
  t.is(podDeletionCost(pod(ready('a', { cost: '99999999999' }))), 0);
  t.is(podDeletionCost(pod(ready('a'))), 0);
});

test('getPodsToDelete ranks by related pods on the same node and takes the first diff', (t) => {
  const pods = [pod(ready('x1', { node: 'n1' })), pod(ready('x2', { node: 'n2' })), pod({ name: 'pending', phase: 'Pending' }), pod(ready('x3', { node: 'n2' }))];
  const related = [...pods, pod(ready('other', { node: 'n2' }))];
  const ranks = rankPods(pods, related);
  t.deepEqual(
    ranks.map((r) => [r.pod.metadata.name, r.rank]),
    [
      ['x1', 1],
      ['x2', 3],
      ['pending', 1],
      ['x3', 3],
    ],
  );
  const out = getPodsToDelete(pods, related, 2, NOW, clock).map((p) => p.metadata.name);
  t.deepEqual(out, ['pending', 'x2']);
  // Deleting all: no ranking, input order.
  t.deepEqual(
    getPodsToDelete(pods, related, 4, NOW, clock).map((p) => p.metadata.name),
    ['x1', 'x2', 'pending', 'x3'],
  );
});

test('getPodsToDelete selects exactly the prefix of a full stable sort (random pods)', (t) => {
  const rng = new Prng('pods-to-delete');
  const phases = ['Pending', 'Running', 'Unknown'] as const;
  const pods = Array.from({ length: 400 }, (_, i) =>
    pod({
      name: `p${i}`,
      node: rng.int(4) === 0 ? undefined : `n${rng.int(5)}`,
      phase: phases[rng.int(3)],
      readyAt: rng.int(3) === 0 ? undefined : NOW - rng.int(5000) * S,
      created: NOW - rng.int(20000) * S,
      restarts: rng.int(3),
      cost: rng.int(10) === 0 ? String(rng.int(5)) : undefined,
    }),
  );
  const ranked = rankPods(pods, pods);
  const full = [...ranked].sort((a, b) => (lessActivePodsWithRanks(a, b, NOW, clock) ? -1 : lessActivePodsWithRanks(b, a, NOW, clock) ? 1 : 0)).map((r) => r.pod.metadata.name);
  const perNode = new Map<string, number>();
  for (const p of pods) perNode.set(p.spec.nodeName ?? '', (perNode.get(p.spec.nodeName ?? '') ?? 0) + 1);
  for (const diff of [1, 7, 50, 399]) {
    t.deepEqual(
      getPodsToDelete(pods, pods, diff, NOW, clock).map((p) => p.metadata.name),
      full.slice(0, diff),
    );
    t.deepEqual(
      getPodsToDeleteByNodeCounts(pods, perNode, diff, NOW, clock).map((p) => p.metadata.name),
      full.slice(0, diff),
    );
  }
});
