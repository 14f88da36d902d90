/**
 * The report's own cost at bench scale, without a simulation (docs/benchmarks.md, "HTML report"):
 * a synthetic 100k-pod input — 1,000 nodes × 100 pods created over 60 s, deleted at 100 s, gone
 * over the next 10 min, 40 kill paths, 400k token-bucket waits on 1,000 kubelets — rendered to
 * one page. Prints ONE JSON line: pods, render wall ms (median of 3), page bytes, chart data
 * bytes. Open the written page with harness's test/support/reportOpenTime.js for the browser side.
 *   pnpm build && node packages/report/dist/bench/reportBench.js [PODS] [OUT.html]
 */
import { writeFileSync } from 'node:fs';
import { deriveStream } from '@podsim/api';
import { renderReportHtml, type KillPath, type PodLife, type ReportInput, type ThrottleWait } from '../src/index.js';

const S = 1_000_000;
const pods = Number(process.argv[2] ?? 100_000);
const out = process.argv[3] ?? '/tmp/podsim-report-bench.html';
const rng = deriveStream(1, 'report-bench');
const nodes = Math.max(1, Math.round(pods / 100));
const lives: PodLife[] = [];
const waits: ThrottleWait[] = [];
for (let i = 0; i < pods; i++) {
  const created = Math.floor(rng.float() * 60 * S);
  const deleted = 100 * S + Math.floor(rng.float() * S);
  lives.push({ name: `web-${i}`, node: `node-${i % nodes}`, createdUs: created, scheduledUs: created + 50_000, runningUs: created + 2 * S, deletedUs: deleted, goneUs: deleted + 15 * S + Math.floor(rng.float() * 600 * S) });
  for (let k = 0; k < 4; k++) waits.push({ t: deleted + Math.floor(rng.float() * 600 * S), actor: `kubelet/node-${i % nodes}`, client: 'kubelet', waitUs: 200_000, qps: 5, burst: 10 });
}
waits.sort((a, b) => a.t - b.t);
const killPaths: KillPath[] = lives.slice(0, 40).map((p) => ({
  pod: p.name,
  node: p.node,
  deleteUs: p.deletedUs!,
  goneUs: p.goneUs!,
  spans: [
    { step: 'Terminating', beginUs: p.deletedUs!, endUs: p.goneUs! },
    { step: 'killPod', beginUs: p.deletedUs! + S, endUs: p.deletedUs! + 12 * S },
    { step: 'StopContainer', container: 'app', beginUs: p.deletedUs! + S, endUs: p.deletedUs! + 11 * S },
  ],
  marks: [
    { step: 'DELETE', t: p.deletedUs! },
    { step: 'SIGTERM', t: p.deletedUs! + S, container: 'app' },
    { step: 'exit', t: p.deletedUs! + 11 * S, container: 'app', detail: 'exit 0' },
    { step: 'DELETED', t: p.goneUs! },
  ],
}));
const input: ReportInput = {
  header: { command: 'bench', scenario: `synthetic ${pods} pods`, podsimVersion: 'podsim bench', kubernetesVersion: 'v1.22.8', verdict: 'PASS', ok: true, failures: [] },
  checks: [],
  pods: lives,
  nodeDrain: true,
  killPaths,
  killPathNote: `40 of ${pods} deleted pods`,
  throttle: waits,
};
const times: number[] = [];
let html = '';
for (let i = 0; i < 3; i++) {
  const t0 = performance.now();
  html = renderReportHtml(input);
  times.push(performance.now() - t0);
}
writeFileSync(out, html);
times.sort((a, b) => a - b);
const data = /<script type="application\/json" id="podsim-report-data">([^<]*)<\/script>/.exec(html)?.[1] ?? '';
process.stdout.write(`${JSON.stringify({ name: 'report-render', pods, nodes, throttleWaits: waits.length, renderMsMedian: Math.round(times[1]), renderMs: times.map(Math.round), pageBytes: Buffer.byteLength(html), chartDataBytes: Buffer.byteLength(data), out })}\n`);
