/**
 * `podsim bench storm` at CI size (20 nodes × 10 pods, real worker threads): every pod created
 * through the Deployments is deleted through the full protocol — none lost, none left running —
 * and the invariant checkers find nothing in the collected trace. No timing assertions.
 */
import test from 'ava';
import { main, EXIT_OK } from '../src/cli.js';
import { runBenchPlan } from '../src/bench/runBench.js';
import { churnPlan, stormPlan } from '../src/bench/stormPlan.js';

test('a small storm deletes every pod, loses none, and checks clean', async (t) => {
  t.timeout(120_000);
  const plan = stormPlan({ nodes: 20, podsPerNode: 10, containers: 2, seed: 1, placement: 'single' });
  const f = await runBenchPlan(plan, { skipRaw: true });
  t.is(f.end, 'stopped', f.failure);
  t.is(f.pods, 200);
  t.is(f.created, f.pods, 'every Deployment replica was created and became ready');
  t.is(f.deleted, f.pods);
  t.is(f.lost, 0);
  t.is(f.violations, 0, f.violationSamples.join('\n'));
  t.true(f.ok);
});

test('podsim bench storm --json prints one JSON line with the figures and exits 0', async (t) => {
  t.timeout(120_000);
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['bench', 'storm', '--nodes', '4', '--pods-per-node', '5', '--seed', '3', '--json', '--raw-messages', '2000'], {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
  });
  t.is(code, EXIT_OK, [...out, ...err].join('\n'));
  t.is(out.length, 1, 'one line');
  const f = JSON.parse(out[0]) as Record<string, unknown>;
  for (const key of [
    'scenario', 'seed', 'nodes', 'pods', 'deleted', 'lost', 'wallSeconds', 'virtualSeconds', 'deletionsPerWallSecond', 'createWallSeconds',
    'timeCompression', 'deleteLatencyP50', 'deleteLatencyP90', 'deleteLatencyP99', 'deleteLatencyMax', 'messagesPerWallSecond', 'windows',
    'peakRssBytes', 'rssBytesPerPod', 'rawTransportMsgsPerSec', 'ceilingRatio',
  ]) {
    t.true(key in f, `missing ${key}`);
  }
  t.like(f, { scenario: 'storm', seed: 3, nodes: 4, pods: 20, deleted: 20, lost: 0, violations: 0 });
});

test('a small churn deletes every pod it created', async (t) => {
  t.timeout(120_000);
  const plan = churnPlan({ nodes: 5, rate: 20, durationS: 5, lifetimeS: 3, containers: 1, seed: 2, placement: 'single' });
  const f = await runBenchPlan(plan, { skipRaw: true });
  t.is(f.end, 'stopped', f.failure);
  t.is(f.created, 100);
  t.is(f.deleted, f.created);
  t.is(f.lost, 0);
  t.is(f.violations, 0, f.violationSamples.join('\n'));
});

test('bench storm --nodes 1 --pods-per-node 1: no latency percentile exceeds the maximum (p50 read 5.734 s, max 5.731 s)', async (t) => {
  t.timeout(120_000);
  const plan = stormPlan({ nodes: 1, podsPerNode: 1, containers: 1, seed: 1, placement: 'single' });
  const f = await runBenchPlan(plan, { skipRaw: true });
  t.is(f.deleted, 1);
  t.true(f.deleteLatencyMax > 0);
  for (const p of [f.deleteLatencyP50, f.deleteLatencyP90, f.deleteLatencyP99]) t.true(p <= f.deleteLatencyMax, `p ${p} > max ${f.deleteLatencyMax}`);
  t.is(f.deleteLatencyP50, f.deleteLatencyMax, 'one deletion: every percentile is that deletion');
});

test('the bench table says which cluster settings it ran with (Events, control-plane QPS, link latency)', async (t) => {
  t.timeout(120_000);
  const out: string[] = [];
  const code = await main(['bench', 'storm', '--nodes', '2', '--pods-per-node', '2', '--raw-messages', '2000', '--events', '--control-plane-qps', '20', '--network-us', '2500'], {
    out: (l) => out.push(l),
    err: () => {},
  });
  t.is(code, EXIT_OK, out.join('\n'));
  t.is(out[1], 'cluster: kubelet API QPS 5 / burst 10, kubelet Events on, controller-manager / scheduler QPS 20, kubelet ↔ apiserver 2.5 ms one way');
  t.true(out.includes('PASS'));
});
