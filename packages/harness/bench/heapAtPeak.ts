/**
 * Where a storm's memory is, mid-run (issue #19): runs `bench storm`'s plan and after every 1 s
 * segment prints one JSON line with the virtual time, the main thread's `process.memoryUsage()`
 * (rss, heapUsed, heapTotal, external, arrayBuffers) and the host threads' used and total heap; at `--snapshot-at S`
 * (virtual seconds after the mass DELETE; repeatable) it writes a V8 heap snapshot of every host
 * thread and of the main thread under `--out` (`bench/heapSummary.ts` breaks one down).
 * Run: `pnpm build && node packages/harness/dist/bench/heapAtPeak.js --nodes 100 --pods-per-node 100 --snapshot-at 20 --out /tmp/storm10k`.
 */
import { writeHeapSnapshot } from 'node:v8';
import { parseArgs } from 'node:util';
import { US_PER_SECOND } from '@podsim/api';
import { runBenchPlan } from '../src/bench/runBench.js';
import { stormPlan } from '../src/bench/stormPlan.js';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '20' },
    'pods-per-node': { type: 'string', default: '100' },
    'snapshot-at': { type: 'string', multiple: true, default: [] },
    out: { type: 'string', default: '/tmp/podsim-heap' },
    placement: { type: 'string', default: 'single' },
  },
});
const positive = (name: string, v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(`heapAtPeak: --${name} must be a positive integer, got ${JSON.stringify(v)}\n`);
    process.exit(2);
  }
  return n;
};
const nodes = positive('nodes', values.nodes);
const podsPerNode = positive('pods-per-node', values['pods-per-node']);
const snapshotAt = values['snapshot-at'].map((v) => positive('snapshot-at', v));
const plan = stormPlan({ nodes, podsPerNode, containers: 1, seed: 1, placement: values.placement });
const mb = (b: number) => Math.round(b / 2 ** 20);
const figures = await runBenchPlan(plan, {
  skipRaw: true,
  async onSegment({ sim, nowUs, deleteAtUs }) {
    const m = process.memoryUsage();
    const hosts = await sim.heapStatistics();
    const sinceDeleteS = deleteAtUs === undefined ? undefined : Math.round((nowUs - deleteAtUs) / US_PER_SECOND);
    const line: Record<string, unknown> = { t: nowUs / US_PER_SECOND, sinceDeleteS, rssMB: mb(m.rss), mainHeapMB: mb(m.heapUsed), mainHeapTotalMB: mb(m.heapTotal), externalMB: mb(m.external), arrayBuffersMB: mb(m.arrayBuffers), hostHeapMB: hosts.map((h) => mb(h.usedHeapBytes)), hostHeapTotalMB: hosts.map((h) => mb(h.totalHeapBytes)) };
    if (sinceDeleteS !== undefined && snapshotAt.includes(sinceDeleteS)) {
      const prefix = `${values.out}-d${sinceDeleteS}`;
      line.snapshots = [...(await sim.writeHeapSnapshots(prefix)), writeHeapSnapshot(`${prefix}-main.heapsnapshot`)];
    }
    process.stdout.write(JSON.stringify(line) + '\n');
  },
});
process.stdout.write(JSON.stringify({ pods: figures.pods, deleted: figures.deleted, ok: figures.ok, peakRssBytes: figures.peakRssBytes, hostHeapPeakBytes: figures.hostHeapPeakBytes, traceRecords: figures.traceRecords, traceDigest: figures.traceDigest }) + '\n');
