/**
 * What the `podsim bench` figures mean (issue #25 items 8–12), checked on small real storms:
 * the ceiling ratio is deletions per wall second ÷ (raw rate ÷ messages per pod), the
 * cross-thread ratio exists only where messages cross threads, start-up is timed on its own and
 * outside `wallSeconds`, the harness's share of the deletion phase is reported inside it, the
 * host threads' heap is reported apart from the process's RSS, `bench scale` interleaves and
 * repeats its sizes and reports the spread and the memory per added pod, and the bench header
 * states what the deletion SLI assumes of the apiserver. No timing is asserted, only relations.
 */
import test from 'ava';
import { main, EXIT_OK } from '../src/cli.js';
import { runBenchPlan, type BenchFigures } from '../src/bench/runBench.js';
import { scaleOrder, summarizeScale, type ScaleRun } from '../src/bench/scaleSummary.js';
import { stormPlan } from '../src/bench/stormPlan.js';

const near = (a: number, b: number, rel: number) => Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b));

async function benchJson(args: string[]): Promise<BenchFigures & Record<string, unknown>> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['bench', 'storm', '--json', ...args], { out: (l) => out.push(l), err: (l) => err.push(l) });
  if (code !== EXIT_OK || out.length !== 1) throw new Error(`bench storm ${args.join(' ')} exited ${code}:\n${[...out, ...err].join('\n')}`);
  return JSON.parse(out[0]) as BenchFigures & Record<string, unknown>;
}

test('single placement: ceilingRatio = deletions per wall s ÷ (raw rate ÷ deletion-phase messages per pod); no cross-thread ratio', async (t) => {
  t.timeout(120_000);
  const f = await benchJson(['--nodes', '4', '--pods-per-node', '10', '--seed', '2', '--raw-messages', '5000']);
  t.is(f.deleted, 40);
  t.true(f.deleteMessagesPerPod > 0);
  // Only the deletion phase's messages: creation, scheduling and the idle loops before it are not a deletion's cost.
  t.true(f.deleteMessagesPerPod * f.deleted < f.messages, `${f.deleteMessagesPerPod} × ${f.deleted} ≥ ${f.messages} messages of the whole run`);
  t.true(f.rawTransportMsgsPerSec > 0);
  t.true(near(f.ceilingDeletionsPerWallSecond, f.rawTransportMsgsPerSec / f.deleteMessagesPerPod, 0.01), `ceiling ${f.ceilingDeletionsPerWallSecond}`);
  // Issue #19's name for the same figure.
  t.is(f.transportCeilingDeletionsPerSec, f.ceilingDeletionsPerWallSecond);
  t.true(f.ceilingRatio > 0);
  // From deleted ÷ deleteWallSeconds, not the rounded deletionsPerWallSecond (40 pods in 2 s round by 1 %).
  const rate = f.deleted / f.deleteWallSeconds;
  t.true(near(f.ceilingRatio, rate / f.ceilingDeletionsPerWallSecond, 0.01), `ceilingRatio ${f.ceilingRatio} vs ${rate} / ${f.ceilingDeletionsPerWallSecond}`);
  t.false('engineToRawRatio' in f, 'the in-thread-work ÷ two-thread-port ratio is gone');
  t.false('crossThreadRatio' in f, 'one host thread: no message crosses a thread');
  t.is(f.remoteMessages, 0);
  t.is(f.remoteBatches, 0, 'one thread: no hand-off');
});

test('nodes:2: the cross-thread ratio is the deletion phase\'s cross-thread messages per wall s ÷ the raw rate', async (t) => {
  t.timeout(120_000);
  const f = await benchJson(['--nodes', '4', '--pods-per-node', '5', '--seed', '3', '--placement', 'nodes:2', '--raw-messages', '5000']);
  t.is(f.hostThreads, 2);
  t.is(f.deleted, 20);
  t.true(f.remoteMessages > 0);
  // The hand-offs: every cross-thread message travels in some batch, a batch holds at least one.
  t.true(f.remoteBatches > 0 && f.remoteBatches <= f.remoteMessages, `${f.remoteBatches} batches, ${f.remoteMessages} messages`);
  t.true(Math.abs(f.remoteBatchesPerWindow - f.remoteBatches / f.windows) <= 0.005, `${f.remoteBatchesPerWindow} per window`);
  t.true(f.hostWaitSeconds >= 0);
  t.true(typeof f.crossThreadRatio === 'number' && f.crossThreadRatio > 0, `crossThreadRatio ${String(f.crossThreadRatio)}`);
  // Under nodes:N each kubelet and its runtime share a thread, so the CRI traffic never crosses:
  // the cross-thread rate is well below all of the deletion phase's messages over the raw rate.
  const allMessagesRatio = (f.deleteMessagesPerPod * f.deleted) / f.deleteWallSeconds / f.rawTransportMsgsPerSec;
  t.true(f.crossThreadRatio! < 0.9 * allMessagesRatio, `crossThreadRatio ${f.crossThreadRatio} vs all messages ${allMessagesRatio}`);
});

test('start-up is timed on its own and is not in wallSeconds; the harness\'s share of the deletion phase is inside it', async (t) => {
  t.timeout(120_000);
  const plan = stormPlan({ nodes: 5, podsPerNode: 10, containers: 1, seed: 4, placement: 'single' });
  const t0 = performance.now();
  const f = await runBenchPlan(plan, { skipRaw: true });
  const elapsed = (performance.now() - t0) / 1000;
  t.true(f.ok, f.failure);
  t.true(f.startupWallSeconds > 0);
  t.true(near(f.wallSeconds, f.createWallSeconds + f.deleteWallSeconds, 0.01), `${f.wallSeconds} ≠ ${f.createWallSeconds} + ${f.deleteWallSeconds}`);
  // Start-up counted twice (once on its own, once in the creation phase) would exceed what the whole call took.
  t.true(f.startupWallSeconds + f.wallSeconds <= elapsed + 0.002, `start-up ${f.startupWallSeconds} + run ${f.wallSeconds} > ${elapsed} elapsed`);
  t.true(f.deletePausedWallSeconds > 0, 'the hosts pause between the deletion phase\'s 1 s segments');
  t.true(f.deletePausedWallSeconds + f.deleteModelWallSeconds <= f.deleteWallSeconds + 0.002);
});

test('the host threads\' heap is reported apart from the whole process\'s RSS', async (t) => {
  t.timeout(120_000);
  const plan = stormPlan({ nodes: 5, podsPerNode: 10, containers: 1, seed: 5, placement: 'single' });
  const f = await runBenchPlan(plan, { skipRaw: true });
  t.true(f.hostHeapAtDeleteBytes > 0);
  t.true(f.hostHeapPeakBytes >= f.hostHeapAtDeleteBytes);
  t.true(f.hostHeapAtDeleteBytes < f.peakRssBytes, 'one thread\'s heap is part of the process');
  t.is(f.hostHeapBytesPerPod, Math.round(f.hostHeapAtDeleteBytes / f.pods));
});

test('the bench header states what the deletion SLI assumes of the apiserver', async (t) => {
  t.timeout(120_000);
  const out: string[] = [];
  const code = await main(['bench', 'storm', '--nodes', '2', '--pods-per-node', '2', '--raw-messages', '2000'], { out: (l) => out.push(l), err: () => {} });
  t.is(code, EXIT_OK, out.join('\n'));
  t.is(out[2], 'deletion SLI model: apiserver: zero processing time per request, no in-flight limit (--max-requests-inflight 400 / --max-mutating-requests-inflight 200 not modelled)');
  t.true(out.some((l) => l.startsWith('start-up ')), 'start-up has its own row');
  t.true(out.some((l) => l.startsWith('the delete wall includes the harness: ')));
});

test('bench scale runs its sizes interleaved: ascending, then descending', (t) => {
  t.deepEqual(scaleOrder([1000, 10_000, 100_000], 3), [1000, 10_000, 100_000, 100_000, 10_000, 1000, 1000, 10_000, 100_000]);
  t.deepEqual(scaleOrder([1000, 10_000], 1), [1000, 10_000]);
});

test('bench scale: median per size with its spread and load, and memory per added pod as the slope between sizes (fixed costs cancel)', (t) => {
  // 130 MB fixed + 10 KB per pod of RSS, 2 MB fixed + 4 KB per pod of host heap; three noisy runs per size.
  const run = (pods: number, deleteWallSeconds: number, load: number): ScaleRun => ({
    pods,
    deleteWallSeconds,
    wallSeconds: 2 * deleteWallSeconds,
    peakRssBytes: 130e6 + 10_240 * pods,
    hostHeapAtDeleteBytes: 2e6 + 4_096 * pods,
    loadAvgAtStart: load,
  });
  const rows = summarizeScale([1000, 10_000], [run(1000, 1.0, 1.5), run(10_000, 8, 2), run(10_000, 10, 4), run(1000, 1.2, 3), run(1000, 1.4, 2.5), run(10_000, 9, 1)]);
  t.is(rows.length, 2);
  t.like(rows[0], { pods: 1000, repeats: 3, deleteWallUsPerPod: 1200, deleteWallUsPerPodMin: 1000, deleteWallUsPerPodMax: 1400, vsFirst: 1, loadAvg: [1.5, 3] });
  t.is(rows[0].spread, 0.333);
  t.is(rows[0].rssSlopeBytesPerPod, undefined, 'no slope for the first size');
  t.like(rows[1], { pods: 10_000, repeats: 3, deleteWallUsPerPod: 900, spread: 0.222, vsFirst: 0.75, loadAvg: [1, 4], wallUsPerPod: 1800 });
  t.is(rows[1].rssSlopeBytesPerPod, 10_240, 'bytes per added pod, without the fixed 130 MB');
  t.is(rows[1].hostHeapSlopeBytesPerPod, 4_096);
  t.true(rows[1].peakRssBytes / rows[1].pods > 20_000, 'while peak RSS ÷ pods still carries the fixed part');
});

test('podsim bench scale --repeat 2 --json: every size runs twice, interleaved, each row with its spread', async (t) => {
  // Four child processes, each starting its own threads: slow on a loaded 2-core machine.
  t.timeout(300_000);
  const out: string[] = [];
  const code = await main(['bench', 'scale', '--sizes', '10,20', '--pods-per-node', '5', '--repeat', '2', '--raw-messages', '2000', '--json'], { out: (l) => out.push(l), err: () => {} });
  t.is(code, EXIT_OK, out.join('\n'));
  const s = JSON.parse(out[0]) as { order: number[]; growth: Array<{ pods: number; repeats: number; spread: number; rssSlopeBytesPerPod?: number }>; runs: Array<{ pods: number; round: number }> };
  t.deepEqual(s.order, [10, 20, 20, 10]);
  t.deepEqual(s.runs.map((r) => [r.pods, r.round]), [[10, 1], [20, 1], [20, 2], [10, 2]]);
  t.deepEqual(s.growth.map((g) => [g.pods, g.repeats]), [[10, 2], [20, 2]]);
  t.true(s.growth.every((g) => g.spread >= 0));
  t.is(typeof s.growth[1].rssSlopeBytesPerPod, 'number');
});

test('bench scale --sizes: a size is rounded up to whole nodes and named as run; 0 is bad input (exit 2)', async (t) => {
  t.timeout(300_000);
  const err: string[] = [];
  t.is(await main(['bench', 'scale', '--sizes', '0,10'], { out: () => {}, err: (l) => err.push(l) }), 2);
  t.true(err.some((l) => l.includes("'--sizes <list>' argument '0,10' is invalid. expected pod counts of at least 1.")), err.join('\n'));
  const out: string[] = [];
  const code = await main(['bench', 'scale', '--sizes', '7', '--pods-per-node', '5', '--repeat', '1', '--raw-messages', '2000'], { out: (l) => out.push(l), err: () => {} });
  t.is(code, EXIT_OK, out.join('\n'));
  t.is(out[0], 'podsim bench scale: storm at 10 pods (5 per node), 1 run per size interleaved, seed 1, placement single', 'the header names the 10 pods that ran, not the 7 asked for');
  t.true(out.some((l) => /^10 {8}2 {7}1 /.test(l)), out.join('\n'));
});
