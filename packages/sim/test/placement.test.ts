import test from 'ava';
import { InvalidConfigError, assignHosts, lookaheadMatrix, parsePlacement, windowMatrix } from '../src/index.js';

const IDS = ['runtime/node-2', 'apiserver', 'kubelet/node-1', 'kubelet/node-2', 'runtime/node-1'];
const hosts = (ids: readonly string[], p: Parameters<typeof assignHosts>[1]) => {
  const { hostCount, hostOf } = assignHosts(ids, p);
  return { hostCount, byHost: Array.from({ length: hostCount }, (_, h) => [...hostOf].filter(([, x]) => x === h).map(([id]) => id)) };
};

test('single puts every actor on host 0; per-actor gives each its own host in id order', (t) => {
  t.deepEqual(hosts(IDS, 'single'), { hostCount: 1, byHost: [[...IDS].sort()] });
  const per = hosts(IDS, 'per-actor');
  t.is(per.hostCount, 5);
  t.deepEqual(per.byHost, [...IDS].sort().map((id) => [id]));
});

test('shards:N deals sorted ids round-robin with apiserver alone in shard 0', (t) => {
  t.deepEqual(hosts(IDS, 'shards:3').byHost, [['apiserver'], ['kubelet/node-1', 'runtime/node-1'], ['kubelet/node-2', 'runtime/node-2']]);
  t.deepEqual(hosts(['a', 'b', 'c'], 'shards:2').byHost, [['a', 'c'], ['b']]);
  // More shards than actors: empty hosts are dropped.
  t.is(hosts(['a', 'b'], 'shards:8').hostCount, 2);
  t.is(hosts(IDS, 'shards:1').hostCount, 1);
});

test('nodes:N keeps each node\'s kubelet and runtime on one host, control plane alone on host 0', (t) => {
  const ids = [...IDS, 'kube-scheduler', 'kubelet/node-3', 'runtime/node-3'];
  t.deepEqual(hosts(ids, 'nodes:3').byHost, [
    ['apiserver', 'kube-scheduler'],
    ['kubelet/node-1', 'kubelet/node-3', 'runtime/node-1', 'runtime/node-3'],
    ['kubelet/node-2', 'runtime/node-2'],
  ]);
  t.is(hosts(ids, 'nodes:1').hostCount, 1);
  t.throws(() => parsePlacement('nodes:0'), { instanceOf: InvalidConfigError });
});

test('malformed placements are rejected', (t) => {
  for (const p of ['shards:0', 'shards:', 'shards:-1', 'perActor', '']) t.throws(() => parsePlacement(p), { instanceOf: InvalidConfigError });
});

test('the window matrix bounds chains through other hosts and round trips back', (t) => {
  // Three hosts a, b, c: a→b 10 µs, b→c 10 µs, everything else 100 µs.
  const { hostOf } = assignHosts(['a', 'b', 'c'], 'per-actor');
  const l = lookaheadMatrix(
    {
      default: { minUs: 100, jitterUs: 0 },
      links: [
        { from: 'a', to: 'b', minUs: 10, jitterUs: 0 },
        { from: 'b', to: 'c', minUs: 10, jitterUs: 0 },
      ],
    },
    hostOf,
    3,
  );
  t.deepEqual(l, [0, 10, 100, 100, 0, 10, 100, 100, 0]);
  // a→c is 20 via b; a's own events can come back to a after 10 + 100, c's after 100 + 10.
  t.deepEqual(windowMatrix(l, 3), [110, 10, 20, 100, 110, 10, 100, 100, 110]);
  t.deepEqual(windowMatrix([0], 1), [Number.MAX_SAFE_INTEGER]);
});

test('a 0 µs link between two hosts is refused', (t) => {
  const { hostOf } = assignHosts(['a', 'b'], 'per-actor');
  t.throws(() => lookaheadMatrix({ default: { minUs: 0, jitterUs: 5 } }, hostOf, 2), { message: /minimum latency ≥ 1 µs/ });
});
