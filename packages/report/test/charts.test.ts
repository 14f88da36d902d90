/**
 * The chart data of the HTML report, table-driven over small hand-made inputs: pod state counts
 * (exact, then sampled past the bound, said so), latency percentiles and bins, the kill-path
 * sample (bounded, seeded, reproducible, user-chosen), token-bucket waiting counts, node drain,
 * explore groupings; and the page: self-contained (no network URL), escaped, sections present.
 */
import test from 'ava';
import {
  chooseKillPathPods,
  exploreChart,
  ganttChart,
  latencyChart,
  nodeDrainChart,
  podStateAt,
  podStateChart,
  renderReportHtml,
  throttleChart,
  renderCharts,
  exposureChart,
  trafficFailuresChart,
  trafficOverTimeChart,
  NO_POD,
  type PodLife,
  type ReportInput,
  type TrafficExposure,
  type TrafficSection,
  type TrafficSourceResults,
} from '../src/index.js';

const S = 1_000_000;

const pods: PodLife[] = [
  { name: 'a', node: 'n1', createdUs: 0, scheduledUs: 1 * S, runningUs: 2 * S, deletedUs: 10 * S, goneUs: 40 * S },
  { name: 'b', node: 'n1', createdUs: 0, scheduledUs: 1 * S, runningUs: 3 * S, deletedUs: 10 * S, goneUs: 35 * S },
  { name: 'c', node: 'n2', createdUs: 5 * S, deletedUs: 10 * S, goneUs: 11 * S },
  { name: 'd', node: 'n2', createdUs: 5 * S, scheduledUs: 6 * S, runningUs: 7 * S, finishedUs: 8 * S },
];

test('podStateAt follows a pod from Pending to gone; undefined before it exists', (t) => {
  const a = pods[0];
  t.deepEqual(
    [-1, 0, 1, 2, 10, 40].map((s) => podStateAt(a, s * S)),
    [undefined, 'Pending', 'ContainerCreating', 'Running', 'Terminating', 'gone'],
  );
  t.is(podStateAt(pods[3], 9 * S), 'Completed');
});

test('podStateChart: exact counts at every change; every pod counted once at any time', (t) => {
  const c = podStateChart(pods);
  t.is(c.note, undefined);
  const at = (tS: number) => {
    const pts = c.points.filter((p) => p.tS <= tS);
    const last = pts[pts.length - 1].tS;
    return Object.fromEntries(pts.filter((p) => p.tS === last).map((p) => [p.state, p.count]));
  };
  t.like(at(4), { Pending: 0, ContainerCreating: 0, Running: 2, Terminating: 0, gone: 0 });
  t.like(at(10), { Pending: 0, Running: 0, Completed: 1, Terminating: 3, gone: 0 });
  t.like(at(36), { Terminating: 1, gone: 2, Completed: 1 });
  t.like(at(40), { Terminating: 0, gone: 3, Completed: 1 });
  for (const tS of new Set(c.points.map((p) => p.tS))) {
    const sum = c.points.filter((p) => p.tS === tS).reduce((s, p) => s + p.count, 0);
    t.is(sum, pods.filter((p) => p.createdUs <= tS * S).length, `at ${tS}s`);
  }
  t.deepEqual(c.states, ['Pending', 'ContainerCreating', 'Running', 'Completed', 'Terminating', 'gone']);
});

test('podStateChart past its bound samples evenly spaced instants and says so', (t) => {
  const many: PodLife[] = Array.from({ length: 5000 }, (_, i) => ({ name: `p${i}`, createdUs: i * 1000, deletedUs: 10 * S + i * 1000, goneUs: 20 * S + i * 1000 }));
  const c = podStateChart(many, 100);
  t.regex(c.note ?? '', /^5,000 pods changed state at 15,000 distinct instants: counts shown at 101 evenly spaced instants/);
  t.is(new Set(c.points.map((p) => p.tS)).size, 101);
  const last = c.points.filter((p) => p.tS === Math.max(...c.points.map((x) => x.tS)));
  t.is(last.find((p) => p.state === 'gone')!.count, 5000);
});

test('latencyChart: nearest-rank p50/p90/p99/max, bins that hold every gone pod, CDF to 1; not-gone pods counted apart', (t) => {
  const l = latencyChart([...pods, { name: 'e', createdUs: 0, deletedUs: 5 * S }]);
  t.is(l.count, 3);
  t.is(l.notGone, 1);
  t.deepEqual(l.marks, { p50: 25, p90: 30, p99: 30, max: 30 });
  t.is(l.bins.reduce((s, b) => s + b.count, 0), 3);
  t.true(l.bins[0].x0 <= 1 && l.bins[l.bins.length - 1].x1 > 30);
  t.deepEqual(l.cdf, [
    { latS: 1, fraction: 1 / 3 },
    { latS: 25, fraction: 2 / 3 },
    { latS: 30, fraction: 1 },
  ]);
  const big = latencyChart(Array.from({ length: 10_000 }, (_, i) => ({ name: `p${i}`, createdUs: 0, deletedUs: 0, goneUs: (i + 1) * 1000 })), 500);
  t.is(big.cdf.length, 500);
  t.is(big.marks!.p99, 9.9);
  t.regex(big.note ?? '', /500 quantiles of 10,000 pods; the percentiles are exact/);
  t.deepEqual(latencyChart([pods[3]]), { count: 0, notGone: 0, bins: [], cdf: [] });
});

test('chooseKillPathPods: all up to the bound; beyond it a sample of exactly the bound, reproducible from the seed, in creation order', (t) => {
  const names = Array.from({ length: 1000 }, (_, i) => `p${i}`);
  t.deepEqual(chooseKillPathPods(names.slice(0, 5), 1).pods, names.slice(0, 5));
  t.is(chooseKillPathPods(names.slice(0, 5), 1).note, 'every deleted pod (5)');
  const a = chooseKillPathPods(names, 7, 40);
  t.is(a.pods.length, 40);
  t.is(new Set(a.pods).size, 40);
  t.deepEqual(a.pods, [...a.pods].sort((x, y) => Number(x.slice(1)) - Number(y.slice(1))));
  t.deepEqual(chooseKillPathPods(names, 7, 40).pods, a.pods, 'same seed, same sample');
  t.notDeepEqual(chooseKillPathPods(names, 8, 40).pods, a.pods, 'another seed, another sample');
  t.regex(a.note, /^40 of 1,000 deleted pods, a sample drawn with seed 7/);
  const chosen = chooseKillPathPods(names, 7, 40, ['p3', 'nope', 'p999']);
  t.deepEqual(chosen.pods, ['p3', 'p999']);
  t.deepEqual(chosen.unknown, ['nope']);
});

test('ganttChart: rows by DELETE time; an open span ends at the end of the run, marked unfinished', (t) => {
  const g = ganttChart(
    [
      { pod: 'late', deleteUs: 5 * S, spans: [{ step: 'Terminating', beginUs: 5 * S }], marks: [{ step: 'DELETE', t: 5 * S }] },
      { pod: 'early', deleteUs: 1 * S, goneUs: 2 * S, spans: [{ step: 'preStop', container: 'app', beginUs: 1 * S, endUs: 2 * S }], marks: [{ step: 'SIGTERM', t: 2 * S, container: 'app' }] },
    ],
    9 * S,
  );
  t.deepEqual(g.rows, ['early', 'late']);
  t.like(g.spans.find((s) => s.pod === 'late'), { endS: 9, unfinished: true });
  t.like(g.spans.find((s) => s.pod === 'early'), { lane: 'preStop app', beginS: 1, endS: 2, unfinished: false });
  t.like(g.marks.find((m) => m.pod === 'early'), { lane: 'SIGTERM app', tS: 2 });
});

test('throttleChart: requests waiting per client over time (a freed token serves a request of the same instant); overflow clients summed', (t) => {
  const waits = [
    { t: 0, actor: 'kubelet/n1', client: 'kubelet', waitUs: 2 * S, qps: 5, burst: 10 },
    { t: 1 * S, actor: 'kubelet/n1', client: 'kubelet', waitUs: 1 * S },
    { t: 2 * S, actor: 'kubelet/n1', client: 'kubelet', waitUs: 1 * S },
    { t: 0, actor: 'kube-controller-manager', client: 'replicaset-controller', waitUs: 5 * S },
  ];
  const k = throttleChart(waits, (w) => w.actor.startsWith('kubelet/'));
  t.deepEqual(
    k.points.map((p) => [p.tS, p.waiting]),
    [
      [0, 0],
      [0, 1],
      [1, 2],
      [2, 1],
      [3, 0],
    ],
  );
  t.like(k.series[0], { name: 'kubelet/n1 kubelet', waits: 3, maxWaitS: 2, totalWaitS: 4, qps: 5, burst: 10 });
  const many = throttleChart(
    Array.from({ length: 12 }, (_, i) => ({ t: 0, actor: `kubelet/n${i}`, client: 'kubelet', waitUs: (i + 1) * S })),
    () => true,
    4,
  );
  t.deepEqual(many.series.map((s) => s.name), ['kubelet/n11 kubelet', 'kubelet/n10 kubelet', 'kubelet/n9 kubelet', '9 other clients (summed)']);
  t.regex(many.note ?? '', /^12 clients waited: the 3 that waited longest in total are drawn alone, the other 9 summed\./);
  t.is(Math.max(...many.points.filter((p) => p.series.startsWith('9 other')).map((p) => p.waiting)), 9);
});

test('nodeDrainChart: first DELETE to last gone per node, slowest first; never-gone pods counted', (t) => {
  const d = nodeDrainChart([...pods, { name: 'x', node: 'n2', createdUs: 0, deletedUs: 10 * S }]);
  t.deepEqual(d.nodes, [
    { node: 'n1', pods: 2, drainS: 30, notGone: 0 },
    { node: 'n2', pods: 2, drainS: 1, notGone: 1 },
  ]);
  t.is(d.bins.reduce((s, b) => s + b.count, 0), 2);
  const wide = nodeDrainChart(Array.from({ length: 100 }, (_, i) => ({ name: `p${i}`, node: `n${i}`, createdUs: 0, deletedUs: 0, goneUs: (i + 1) * S })), 10);
  t.is(wide.nodes.length, 10);
  t.is(wide.nodes[0].node, 'n99');
  t.regex(wide.note ?? '', /^100 nodes: bars for the 10 slowest; the histogram covers all\./);
});

test('exploreChart: seeds per outcome; failures grouped by first violation, most first', (t) => {
  const x = exploreChart({
    seeds: [
      { seed: 1, outcome: 'pass' },
      { seed: 2, outcome: 'invariant violated', firstViolation: 'no-early-sigkill' },
      { seed: 3, outcome: 'invariant violated', firstViolation: 'final-delete-gated' },
      { seed: 4, outcome: 'invariant violated', firstViolation: 'no-early-sigkill' },
    ],
  });
  t.deepEqual(x.outcomes, [
    { outcome: 'pass', seeds: 1 },
    { outcome: 'invariant violated', seeds: 3 },
  ]);
  t.deepEqual(x.byViolation, [
    { violation: 'no-early-sigkill', seeds: 2, example: 2 },
    { violation: 'final-delete-gated', seeds: 1, example: 3 },
  ]);
  t.deepEqual(x.failing.map((s) => s.seed), [2, 3, 4]);
});

const input: ReportInput = {
  header: { command: 'run', scenario: 'x.yaml', scenarioName: '<script>alert(1)</script>', seed: 1, placement: 'single', podsimVersion: 'podsim 0.1.0', kubernetesVersion: 'v1.22.8', traceDigest: 'abc', replay: 'pnpm podsim run x.yaml --seed 1', verdict: 'PASS', ok: true, failures: [] },
  checks: [
    { group: 'invariant', name: 'no-early-sigkill', ok: true },
    { group: 'expectation', name: 'timing: a TERM', ok: 'unchecked', detail: 'not judged' },
  ],
  pods,
  killPaths: [],
  throttle: [],
  watch: ['NAME READY STATUS', 'a 1/1 Running </pre>'],
  extra: [{ id: 'traffic', title: 'Client traffic', series: [{ name: 'ok', points: [[0, 1], [S, 3]] }], unit: 'requests/s' }],
};

test('the page is self-contained: no external script, stylesheet or fetch; user text escaped; every section present', (t) => {
  const html = renderReportHtml(input);
  t.notRegex(html, /<script[^>]+src=|<link[^>]+href=|@import/);
  // d3 carries d3-fetch (unused); the page's own script loads nothing.
  t.notRegex(renderCharts.toString(), /fetch|XMLHttpRequest|import\(/);
  t.notRegex(html, /<script>alert/);
  t.regex(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  t.regex(html, /a 1\/1 Running &lt;\/pre&gt;/);
  for (const id of ['pods-over-time', 'latency-histogram', 'latency-cdf', 'extra-traffic']) t.regex(html, new RegExp(`data-chart="${id}"`));
  t.regex(html, /<span class="verdict unchecked">unchecked<\/span>/, 'an unchecked expectation is not shown as a pass');
  t.regex(html, /<details id="checks-table" open>/, 'open when something is not a pass');
  t.regex(html, /No pod was deleted\./);
  t.regex(html, /No kubelet request waited/);
  t.regex(html, /<details id="watch-rows"><summary>2 rows<\/summary>/);
  // The chart data is one JSON document the page parses.
  const json = /<script type="application\/json" id="podsim-report-data">([^<]*)<\/script>/.exec(html);
  t.truthy(json);
  const data = JSON.parse(json![1]) as Record<string, unknown>;
  t.deepEqual(Object.keys(data).sort(), ['extra-traffic', 'latency-histogram', 'pods-over-time']);
});

/** A traffic source of `rate` req/s for `seconds`, counted in buckets of `bucketS`; failures as [bucket index, outcome, count]. */
function source(id: string, rate: number, seconds: number, bucketS: number, failures: ReadonlyArray<readonly [number, 'refused' | 'reset' | 'timedOut', number]> = [], extra: Partial<TrafficSourceResults> = {}): TrafficSourceResults {
  const n = Math.ceil(seconds / bucketS);
  const counts = { served: new Array<number>(n).fill(rate * bucketS), refused: new Array<number>(n).fill(0), reset: new Array<number>(n).fill(0), timedOut: new Array<number>(n).fill(0) };
  for (const [i, o, c] of failures) {
    counts[o][i] += c;
    counts.served[i] -= c;
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const byOutcome = { served: sum(counts.served), refused: sum(counts.refused), reset: sum(counts.reset), timedOut: sum(counts.timedOut) };
  return {
    id,
    service: `default/${id}`,
    connection: 'new',
    fromNodes: ['n1', 'n2'],
    startUs: 10 * S,
    stopUs: 10 * S + seconds * S,
    requests: rate * seconds,
    byOutcome,
    byCause: {},
    byPod: {},
    byNode: {},
    overTime: { startUs: 10 * S, bucketUs: bucketS * S, counts },
    ...extra,
  };
}

test('trafficOverTimeChart: 100 req/s for 10 virtual minutes (60k requests) is at most 300 bars per outcome, every request counted once, the bucket stated', (t) => {
  const big = source('big', 100, 600, 0.5, [[100, 'refused', 3], [101, 'timedOut', 7], [1199, 'reset', 1]]);
  const c = trafficOverTimeChart([big]);
  t.true(c.bars.length <= 4 * 300, `${c.bars.length} bars`);
  t.is(c.bars.filter((b) => b.outcome === 'served').length, 300);
  for (const o of ['served', 'refused', 'reset', 'timedOut'] as const) {
    t.is(c.bars.filter((b) => b.outcome === o).reduce((a, b) => a + b.count, 0), big.byOutcome[o], o);
  }
  t.is(c.bars.reduce((a, b) => a + b.count, 0), 60_000);
  // 1200 half-second buckets merged 4 at a time: 2 s bars, from the source's start.
  const refused = c.bars.find((b) => b.outcome === 'refused')!;
  t.deepEqual([refused.x0S, refused.x1S, refused.count], [10 + 50, 10 + 52, 3]);
  t.is(c.bars.find((b) => b.outcome === 'timedOut')!.x0S, 60, 'bucket 101 (50.5 s in) is in the same 2 s bar as bucket 100');
  t.is(Math.max(...c.bars.map((b) => b.x1S)), 610);
  t.deepEqual(c.outcomes, ['served', 'refused', 'reset', 'timedOut']);
  t.regex(c.note, /60,000 requests\): buckets of 2s \(300 buckets\)/);
  // A short source keeps its own buckets (no merge), and a clean one has no failure in the legend.
  const small = trafficOverTimeChart([source('small', 10, 20, 0.1)]);
  t.is(small.bars.length, 200);
  t.deepEqual([small.bars[0].x0S, small.bars[0].x1S], [10, 10.1]);
  t.deepEqual(small.outcomes, ['served']);
  t.regex(small.note, /buckets of 100ms \(200 buckets\)/);
});

test('trafficFailuresChart: per pod (no pod chosen named as such) and per node, most first, stacked by source; rows past the bound summed and said so', (t) => {
  const a = source('a', 10, 10, 1, [], { byPod: { 'web-1': 5, 'web-2': 2, '': 4 }, byNode: { n1: 6, n2: 5 } });
  const b = source('b', 10, 10, 1, [], { byPod: { 'web-2': 4 }, byNode: { n1: 4 } });
  const clean = source('clean', 10, 10, 1);
  const pods = trafficFailuresChart([a, b, clean], 'byPod');
  t.deepEqual(pods.rows, ['web-2', 'web-1', NO_POD]);
  t.deepEqual(pods.bars.filter((x) => x.row === 'web-2'), [{ row: 'web-2', source: 'a', failed: 2 }, { row: 'web-2', source: 'b', failed: 4 }]);
  t.is(pods.total, 15);
  t.deepEqual(pods.sources, ['a', 'b'], 'the clean source is not in the legend');
  t.is(pods.note, undefined);
  const nodes = trafficFailuresChart([a, b, clean], 'byNode');
  t.deepEqual(nodes.rows, ['n1', 'n2']);
  t.is(nodes.total, 15, 'the same failures, by client node');
  const many = source('m', 10, 10, 1, [], { byPod: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`p${String(i).padStart(2, '0')}`, 50 - i])) });
  const bounded = trafficFailuresChart([many], 'byPod', 10);
  t.is(bounded.rows.length, 10);
  t.is(bounded.rows[9], '41 other pods (summed)');
  t.is(bounded.total, (50 * 51) / 2, 'nothing lost in the sum');
  t.regex(bounded.note!, /^50 pods had failed requests: the 9 with the most are drawn alone, the other 41 summed\.$/);
});

test('exposureChart: a bar from the listener closing to the last node\'s rule removal, a tick per node; none when every node dropped the pod first; bounded rows', (t) => {
  const e: TrafficExposure[] = [
    { pod: 'late', listenerClosedUs: 20 * S, ruleRemovedUs: { n1: 20.4 * S, n2: 21 * S }, failedRequests: 3 },
    { pod: 'safe', listenerClosedUs: 17 * S, ruleRemovedUs: { n1: 12.1 * S, n2: 12.2 * S }, failedRequests: 0 },
    { pod: 'open', ruleRemovedUs: { n1: 30 * S }, failedRequests: 0 },
  ];
  const c = exposureChart(e);
  t.deepEqual(c.rows, ['safe', 'late', 'open'], 'by listener close (else first removal)');
  t.deepEqual(c.windows, [{ pod: 'late', beginS: 20, endS: 21, failed: 3 }]);
  t.deepEqual(c.closes.map((x) => x.pod), ['safe', 'late']);
  t.deepEqual(c.removals.filter((r) => r.pod === 'late'), [{ pod: 'late', node: 'n1', tS: 20.4 }, { pod: 'late', node: 'n2', tS: 21 }]);
  t.deepEqual(c.extent, [12.1, 30]);
  t.is(c.note, '3 pods left the rules, 1 with an exposure window.');
  const many: TrafficExposure[] = Array.from({ length: 60 }, (_, i) => ({ pod: `p${String(i).padStart(2, '0')}`, listenerClosedUs: i * S, ruleRemovedUs: { n1: i * S + (i % 7) * 1000 }, failedRequests: i % 5 }));
  const b = exposureChart(many, 10);
  t.is(b.rows.length, 10);
  t.true(b.rows.every((p) => many.find((x) => x.pod === p)!.failedRequests === 4), 'the pods with the most failures');
  t.regex(b.note, /^60 pods left the rules, 51 with an exposure window: the 10 with the most failed requests, then the widest windows, are drawn\.$/);
});

const traffic: TrafficSection = {
  sources: [source('plain', 100, 20, 0.1, [[5, 'refused', 2], [9, 'timedOut', 3]], { byPod: { 'web-1': 5 }, byNode: { n1: 2, n2: 3 }, byCause: { REFUSED_POD: 2, TIMEOUT_DEAD_IP: 3 } })],
  exposure: [{ pod: 'web-1', listenerClosedUs: 10.4 * S, ruleRemovedUs: { n1: 11 * S, n2: 11.2 * S }, failedRequests: 5 }],
  checks: [{ group: 'expectation', name: 'traffic: plain failed ≤ 0', ok: false, detail: 'failed 5 of 2000 requests' }],
  notSimulated: ['UDP'],
};
const killPath = { pod: 'web-1', deleteUs: 10 * S, goneUs: 13 * S, spans: [{ step: 'Terminating', beginUs: 10 * S, endUs: 13 * S }], marks: [{ step: 'SIGTERM', t: 10.4 * S }] };

test('the traffic section: present with its charts when the run had traffic, absent without; the exposure Gantt on the kill path\'s time axis; a cut-short run says so and never shows a traffic pass', (t) => {
  const base: ReportInput = { header: { ...input.header, verdict: 'FAIL', ok: false }, checks: [], killPaths: [killPath] };
  const html = renderReportHtml({ ...base, traffic });
  const data = JSON.parse(/<script type="application\/json" id="podsim-report-data">([^<]*)<\/script>/.exec(html)![1]) as Record<string, { xDomain?: number[]; marginLeft?: number }>;
  t.deepEqual(Object.keys(data).sort(), ['kill-path', 'traffic-exposure', 'traffic-failures-by-node', 'traffic-failures-by-pod', 'traffic-over-time']);
  t.deepEqual(data['kill-path'].xDomain, [10, 13], 'one domain over the kill path (10–13 s) and the exposure window (10.4–11.2 s)');
  t.deepEqual(data['traffic-exposure'].xDomain, data['kill-path'].xDomain);
  t.is(data['traffic-exposure'].marginLeft, data['kill-path'].marginLeft);
  t.regex(html, /<h2 id="traffic">Client traffic<\/h2>/);
  t.regex(html, /<td>plain<\/td><td>default\/plain<\/td><td>new<\/td><td>n1, n2<\/td><td>2000<\/td><td>1995<\/td><td>2<\/td><td>0<\/td><td>3<\/td><td>REFUSED_POD 2, TIMEOUT_DEAD_IP 3<\/td>/);
  t.regex(html, /<table class="checks" id="traffic-checks">.*<span class="verdict bad">fail<\/span><\/td><td>traffic: plain failed ≤ 0/);
  t.regex(html, /buckets of 100ms \(200 buckets\)/, 'the bucket is stated on the page');
  t.notRegex(html, /traffic-cut-short/);
  const none = renderReportHtml(base);
  t.notRegex(none, /id="traffic|data-chart="traffic/, 'no traffic, no (empty) traffic section');
  t.false('xDomain' in (JSON.parse(/<script type="application\/json" id="podsim-report-data">([^<]*)<\/script>/.exec(none)![1]) as Record<string, object>)['kill-path']);
  const cut = renderReportHtml({ ...base, traffic: { ...traffic, cutShort: 'the run was interrupted at virtual 15s', checks: [{ group: 'expectation', name: 'traffic: plain failed ≤ 0', ok: 'unchecked', detail: 'not judged' }] } });
  t.regex(cut, /id="traffic-cut-short"><span class="verdict unchecked">unchecked<\/span> The traffic was cut short: the run was interrupted at virtual 15s\./);
  const checks = /<table class="checks" id="traffic-checks">.*?<\/table>/.exec(cut)![0];
  t.regex(checks, /verdict unchecked">unchecked/);
  t.notRegex(checks, /verdict ok/);
});
