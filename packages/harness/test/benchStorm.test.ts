/**
 * `podsim bench storm` at CI size (20 nodes × 10 pods, real worker threads): every pod created
 * through the Deployments is deleted through the full protocol — none lost, none left running —
 * and the invariant checkers find nothing in the collected trace. No timing assertions.
 */
import test, { type ExecutionContext } from 'ava';
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
  assertFigureRelations(t, f);
});

/**
 * Relations between the figures that hold whatever their exact definitions (issue #25 item 4:
 * the test only checked that the names exist): the percentiles are ordered, the rates are the
 * counts over the phase's time, and the SIGTERM-ignoring quarter of the pods (stormPlan class 2:
 * `on-sigterm: ignore`, grace 10 s) cannot be gone before that grace, so at least a quarter of the
 * deletion latencies are ≥ 10 s.
 */
function assertFigureRelations(t: ExecutionContext, f: Record<string, unknown>): void {
  const n = (k: string) => {
    const v = f[k];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`figure ${k} is not a number: ${JSON.stringify(v)}`);
    return v;
  };
  const close = (a: number, b: number, what: string) => t.true(Math.abs(a - b) <= 1 + 0.02 * Math.abs(b), `${what}: ${a} vs ${b}`);
  const [p50, p90, p99, max] = ['deleteLatencyP50', 'deleteLatencyP90', 'deleteLatencyP99', 'deleteLatencyMax'].map(n);
  t.true(p50 > 0 && p50 <= p90 && p90 <= p99 && p99 <= max, `p50 ${p50} ≤ p90 ${p90} ≤ p99 ${p99} ≤ max ${max}`);
  // 5 of the 20 pods ignore SIGTERM: SIGKILL at their 10 s grace is the earliest they can be gone.
  t.true(p90 >= 10, `p90 ${p90} s: the SIGTERM-ignoring quarter of the pods went before their 10 s grace`);
  // Every DELETE is sent at or after the deletion phase begins, so no latency exceeds the phase.
  t.true(max <= n('deleteVirtualSeconds') + 0.001, `max latency ${max} s > deletion phase ${n('deleteVirtualSeconds')} s (virtual)`);
  t.true(n('deleteWallSeconds') > 0 && n('deleteWallSeconds') <= n('wallSeconds'), `deletion phase ${n('deleteWallSeconds')} s of ${n('wallSeconds')} s wall`);
  // deleteWallSeconds is printed to the millisecond and the rate to the unit: allow both roundings.
  const [dps, dws] = [n('deletionsPerWallSecond'), n('deleteWallSeconds')];
  t.true(dps >= n('deleted') / (dws + 0.0005) - 0.5 && dps <= n('deleted') / Math.max(1e-9, dws - 0.0005) + 0.5, `deletionsPerWallSecond = deleted ÷ deleteWallSeconds: ${dps} vs ${n('deleted') / dws}`);
  t.true(Math.abs(n('deletionsPerVirtualSecond') - n('deleted') / n('deleteVirtualSeconds')) <= 0.05 + 0.01 * n('deletionsPerVirtualSecond'), 'deletionsPerVirtualSecond = deleted ÷ deleteVirtualSeconds');
  close(n('timeCompression'), n('virtualSeconds') / n('wallSeconds'), 'timeCompression = virtualSeconds ÷ wallSeconds');
  // Every ratio the bench prints is a ratio of two measured rates: positive and finite.
  const ratios = Object.keys(f).filter((k) => /Ratio$|^timeCompression$/.test(k));
  t.true(ratios.length >= 2, `ratios: ${ratios.join(', ')}`);
  for (const k of ratios) t.true(n(k) > 0, `${k} ${f[k]}`);
}

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
