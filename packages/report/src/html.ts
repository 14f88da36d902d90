/**
 * Writes the report as one self-contained HTML page: styles, the chart data (JSON), d3 and
 * Observable Plot (their minified UMD builds, read from this package's dependencies) and the
 * drawing script (client.ts) are all inlined, so the file opens with no network access. Text
 * parts (header, checks, the `kubectl get pods -w` rows, explore's replay commands and shrunk
 * scenarios) are plain HTML and readable without JavaScript.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  exploreChart,
  exposureChart,
  formatSeconds,
  ganttChart,
  ganttExtent,
  latencyChart,
  nodeDrainChart,
  podStateChart,
  throttleChart,
  trafficFailuresChart,
  trafficOverTimeChart,
  type ExploreChart,
  type ExposureChart,
  type GanttChart,
} from './charts.js';
import { renderCharts, type PageCharts } from './client.js';
import { TRAFFIC_OUTCOMES, type ReportCheck, type ReportInput, type ThrottleWait, type TrafficSection } from './input.js';

/** At most this many `kubectl get pods -w` lines go into the page (the rest are counted). */
export const MAX_WATCH_LINES = 5000;

let libs: string | undefined;

/** The inlined chart libraries: d3 7 and Observable Plot 0.6 (UMD, minified), each in its own script tag. */
function chartLibraries(): string {
  if (libs === undefined) {
    const d3 = join(dirname(fileURLToPath(import.meta.resolve('d3'))), 'd3.min.js');
    const plot = join(dirname(fileURLToPath(import.meta.resolve('@observablehq/plot'))), '..', 'dist', 'plot.umd.min.js');
    libs = [d3, plot].map((f) => `<script>${scriptText(readFileSync(f, 'utf8'))}</script>`).join('\n');
  }
  return libs;
}

/** Text safe inside a `<script>` element (no `</script`, no `<!--`). */
function scriptText(js: string): string {
  return js.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

const esc = (s: string | number): string => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const STYLE = `
:root { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #212529; }
body { margin: 0 auto; max-width: 1240px; padding: 16px 24px 48px; }
h1 { font-size: 1.4rem; margin: 0.2em 0; } h2 { font-size: 1.15rem; margin-top: 2em; border-bottom: 1px solid #dee2e6; padding-bottom: 4px; }
.verdict { display: inline-block; padding: 2px 10px; border-radius: 4px; font-weight: 600; color: white; }
.ok { background: #2f9e44; } .bad { background: #c92a2a; } .unchecked { background: #868e96; }
table { border-collapse: collapse; font-size: 0.9rem; } td, th { padding: 3px 10px; border-bottom: 1px solid #f1f3f5; text-align: left; vertical-align: top; }
th { color: #495057; font-weight: 600; }
code, pre, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: 0.85rem; }
pre { background: #f8f9fa; padding: 8px; overflow-x: auto; }
pre.notes { white-space: pre-wrap; overflow-wrap: anywhere; }
table.header td { overflow-wrap: anywhere; }
.note { color: #495057; font-size: 0.85rem; margin: 4px 0; } .empty { color: #868e96; font-style: italic; }
figure { margin: 12px 0 24px; } figcaption { font-weight: 600; margin-bottom: 4px; }
.failures li { color: #c92a2a; }
details summary { cursor: pointer; font-weight: 600; }
`;

interface Page {
  readonly charts: PageCharts;
  readonly body: string[];
}

function figure(page: Page, id: string, caption: string, data: unknown, notes: ReadonlyArray<string | undefined> = [], kind?: string, key?: string): void {
  (page.charts as Record<string, unknown>)[key ?? id] = data;
  page.body.push(
    `<figure class="chart" data-chart="${esc(id)}"${kind ? ` data-kind="${esc(kind)}"` : ''}${key ? ` data-key="${esc(key)}"` : ''}><figcaption>${esc(caption)}</figcaption><div class="plot"></div>` +
      notes.filter((n): n is string => !!n).map((n) => `<p class="note">${esc(n)}</p>`).join('') +
      '</figure>',
  );
}

function checkCell(c: ReportCheck): string {
  if (c.ok === 'unchecked') return '<span class="verdict unchecked">unchecked</span>';
  return c.ok ? '<span class="verdict ok">pass</span>' : '<span class="verdict bad">fail</span>';
}

function header(input: ReportInput, page: Page): void {
  const h = input.header;
  const rows: Array<[string, string]> = [
    ['scenario', `${esc(h.scenario)}${h.scenarioName ? ` (${esc(h.scenarioName)})` : ''}`],
    ...(h.seed !== undefined ? ([['seed', String(h.seed)]] as Array<[string, string]>) : []),
    ...(h.placement ? ([['placement', esc(h.placement)]] as Array<[string, string]>) : []),
    ['podsim', `${esc(h.podsimVersion)}, simulating Kubernetes ${esc(h.kubernetesVersion)}`],
    ...(h.virtualSeconds !== undefined ? ([['virtual time', esc(formatSeconds(h.virtualSeconds))]] as Array<[string, string]>) : []),
    ...(h.wallSeconds !== undefined ? ([['wall time', `${h.wallSeconds.toFixed(2)}s`]] as Array<[string, string]>) : []),
    ...(h.end ? ([['run ended', esc(h.end)]] as Array<[string, string]>) : []),
    ...(h.traceDigest !== undefined
      ? ([['trace digest', h.traceDigest ? `<code>${esc(h.traceDigest)}</code>` : '<span class="empty">none (the run failed before a digest was taken)</span>']] as Array<[string, string]>)
      : []),
    ...(h.replay ? ([['replay', `<code>${esc(h.replay)}</code>`]] as Array<[string, string]>) : []),
  ];
  page.body.push(
    `<header><h1>podsim ${esc(h.command)}: ${esc(h.scenarioName ?? h.scenario)} <span class="verdict ${h.ok ? 'ok' : 'bad'}" id="verdict">${esc(h.verdict)}</span></h1>`,
    `<table class="header">${rows.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${v}</td></tr>`).join('')}</table>`,
    ...(h.failures.length ? [`<ul class="failures">${h.failures.map((f) => `<li>${esc(f)}</li>`).join('')}</ul>`] : []),
    ...(h.notes?.length ? [`<pre class="notes">${h.notes.map(esc).join('\n')}</pre>`] : []),
    '</header>',
  );
  if (input.checks.length > 0) {
    const failed = input.checks.filter((c) => c.ok === false).length;
    const unchecked = input.checks.filter((c) => c.ok === 'unchecked').length;
    page.body.push(
      `<h2 id="checks">Expectations and invariants</h2>`,
      `<details id="checks-table"${failed || unchecked ? ' open' : ''}><summary>${input.checks.length - failed - unchecked} passed, ${failed} failed${unchecked ? `, ${unchecked} not checked` : ''} (${countBy(input.checks)})</summary>`,
      `<table class="checks"><tr><th></th><th>kind</th><th>check</th><th>detail</th></tr>${input.checks
        .map((c) => `<tr data-ok="${String(c.ok)}"><td>${checkCell(c)}</td><td>${esc(c.group)}</td><td>${esc(c.name)}</td><td>${esc(c.detail ?? '')}</td></tr>`)
        .join('')}</table></details>`,
    );
  }
}

/** `7 steps, 18 expectations, 17 invariants`. */
function countBy(checks: readonly ReportCheck[]): string {
  const n = (g: ReportCheck['group']) => checks.filter((c) => c.group === g).length;
  return (['step', 'expectation', 'invariant'] as const)
    .filter((g) => n(g) > 0)
    .map((g) => `${n(g)} ${g}${n(g) === 1 ? '' : 's'}`)
    .join(', ');
}

const isKubelet = (w: ThrottleWait) => w.actor.startsWith('kubelet/');

/** The report page for `input` (a complete HTML document). */
export function renderReportHtml(input: ReportInput): string {
  const page: Page = { charts: {}, body: [] };
  header(input, page);
  const pods = input.pods ?? [];
  if (input.pods) {
    page.body.push('<h2 id="pods">Pods over time</h2>');
    if (pods.length === 0) page.body.push('<p class="empty">The run created no pod.</p>');
    else {
      const c = podStateChart(pods);
      figure(page, 'pods-over-time', `Pods by state (${pods.length.toLocaleString('en-US')} pods)`, c, [c.note]);
    }
    page.body.push('<h2 id="latency">Deletion latency</h2>');
    const l = latencyChart(pods);
    if (l.count === 0) page.body.push(`<p class="empty">No deleted pod was gone by the end of the run${l.notGone ? ` (${l.notGone} deleted, still there)` : ''}.</p>`);
    else {
      const m = l.marks!;
      const summary = `${l.count.toLocaleString('en-US')} pods from DELETE accepted to DELETED: p50 ${formatSeconds(m.p50)}, p90 ${formatSeconds(m.p90)}, p99 ${formatSeconds(m.p99)}, max ${formatSeconds(m.max)}${l.notGone ? `; ${l.notGone} deleted pods were never gone (not drawn)` : ''}.`;
      figure(page, 'latency-histogram', 'Histogram', l, [summary]);
      figure(page, 'latency-cdf', 'CDF', l, [l.note], undefined, 'latency-histogram');
    }
    if (input.nodeDrain) {
      const d = nodeDrainChart(pods);
      if (d.total > 0) {
        figure(page, 'node-drain', `Drain time per node (${d.total.toLocaleString('en-US')} nodes)`, d, [d.note]);
        figure(page, 'node-drain-histogram', 'Node drain time, all nodes', d, [], undefined, 'node-drain');
      }
    }
  }
  // The exposure Gantt shares the kill-path Gantt's time axis (same domain, same left margin).
  const exposure = input.traffic ? exposureChart(input.traffic.exposure) : undefined;
  const gantt = input.killPaths?.length ? ganttChart(input.killPaths, (input.header.virtualSeconds ?? 0) * 1_000_000) : undefined;
  const axis = exposure?.extent ? sharedAxis(gantt, exposure) : undefined;
  if (input.killPaths) {
    page.body.push('<h2 id="kill-path">Kill path per pod</h2>');
    if (!gantt) page.body.push('<p class="empty">No pod was deleted.</p>');
    else {
      const g = axis ? { ...gantt, ...axis } : gantt;
      figure(page, 'kill-path', 'DELETE → preStop → StopContainer (SIGTERM … exit or SIGKILL) → StopPodSandbox → syncTerminatedPod → status PATCH → final DELETE → DELETED', g, [
        input.killPathNote ? `Pods shown: ${input.killPathNote}.` : undefined,
        'Bars: Terminating (DELETE accepted → DELETED), killPod, and per container preStop and StopContainer; syncTerminatedPod is where volumes are unmounted and the cgroup removed. Ticks: instants. Hover for times.',
      ]);
    }
  }
  if (input.traffic) trafficSection(input.traffic, { ...exposure!, ...(axis ?? {}) }, page);
  if (input.throttle) {
    page.body.push('<h2 id="rate-limits">Rate limits at work</h2>');
    const k = throttleChart(input.throttle, isKubelet);
    const cp = throttleChart(input.throttle, (w) => !isKubelet(w));
    const legend = (c: ReturnType<typeof throttleChart>) =>
      c.series.map((s) => `${s.name}: ${s.waits.toLocaleString('en-US')} requests waited, longest ${formatSeconds(s.maxWaitS)}, ${formatSeconds(s.totalWaitS)} in all${s.qps !== undefined ? ` (qps ${s.qps}, burst ${s.burst})` : ''}`).join('; ');
    if (k.series.length === 0) page.body.push('<p class="empty">No kubelet request waited for its token bucket (kubeAPIQPS / kubeAPIBurst).</p>');
    else figure(page, 'rate-limits-kubelet', 'Kubelets: requests waiting on the kubeAPIQPS token bucket', k, [legend(k), k.note]);
    if (cp.series.length === 0) page.body.push('<p class="empty">No control-plane or kubectl request waited for its client-side rate limiter.</p>');
    else figure(page, 'rate-limits-control-plane', 'Control plane and kubectl: requests waiting on client-side rate limiters', cp, [legend(cp), cp.note]);
  }
  if (input.explore) exploreSection(input.explore, page);
  for (const x of input.extra ?? []) {
    page.body.push(`<h2 id="${esc(x.id)}">${esc(x.title)}</h2>`, ...(x.description ? [`<p class="note">${esc(x.description)}</p>`] : []));
    if (x.series && x.series.length > 0) {
      const points = x.series.flatMap((s) => s.points.map(([t, v]) => ({ series: s.name, tS: t / 1_000_000, value: v })));
      figure(page, `extra-${x.id}`, x.title, { points, unit: x.unit }, [], 'extra');
    }
    if (x.table) page.body.push(`<table><tr>${x.table.columns.map((c) => `<th>${esc(c)}</th>`).join('')}</tr>${x.table.rows.map((r) => `<tr>${r.map((v) => `<td>${esc(v)}</td>`).join('')}</tr>`).join('')}</table>`);
  }
  if (input.watch) {
    const shown = input.watch.slice(0, MAX_WATCH_LINES);
    const more = input.watch.length - shown.length;
    page.body.push(
      '<h2 id="watch">kubectl get pods -w</h2>',
      input.watch.length === 0
        ? '<p class="empty">No watch was running (a scenario prints rows between <code>watch: start</code> and <code>watch: stop</code>).</p>'
        : `<details id="watch-rows"><summary>${input.watch.length.toLocaleString('en-US')} rows</summary><pre>${shown.map(esc).join('\n')}</pre>${more > 0 ? `<p class="note">… and ${more.toLocaleString('en-US')} more rows (the first ${MAX_WATCH_LINES} are shown; podsim run prints them all).</p>` : ''}</details>`,
    );
  }
  const data = JSON.stringify(page.charts).replace(/</g, '\\u003c');
  const title = `podsim ${input.header.command} ${input.header.scenarioName ?? input.header.scenario}: ${input.header.verdict}`;
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head><body>',
    ...page.body,
    `<script type="application/json" id="podsim-report-data">${data}</script>`,
    chartLibraries(),
    `<script>${scriptText(`(${renderCharts.toString()})(Plot, JSON.parse(document.getElementById('podsim-report-data').textContent), document);`)}</script>`,
    '</body></html>',
    '',
  ].join('\n');
}

/** The x domain (s) and left margin (px) the kill-path and exposure Gantts share, so that one instant is one column in both. */
function sharedAxis(g: GanttChart | undefined, e: ExposureChart): { xDomain: readonly [number, number]; marginLeft: number } {
  const ext = [e.extent!, ...(g ? [ganttExtent(g)] : [])].filter((x): x is readonly [number, number] => x !== undefined);
  const rows = [...e.rows, ...(g?.rows ?? [])];
  // About 6 px per character of Plot's 10 px sans-serif tick labels, and never less than the kill path's own 140.
  return { xDomain: [Math.min(...ext.map((x) => x[0])), Math.max(...ext.map((x) => x[1]))], marginLeft: Math.max(140, 10 + 6 * Math.max(0, ...rows.map((r) => r.length))) };
}

const OUTCOME_LABEL: Record<(typeof TRAFFIC_OUTCOMES)[number], string> = { served: 'served', refused: 'refused', reset: 'reset', timedOut: 'timed out' };

/**
 * The traffic section (issue #18; spec endpoints-traffic §9, §11): per source totals by outcome
 * and cause, the traffic expectations, requests over time by outcome, failures by pod and by
 * client node, and the per-pod exposure windows on the kill path's time axis.
 */
function trafficSection(t: TrafficSection, exposure: ExposureChart, page: Page): void {
  page.body.push('<h2 id="traffic">Client traffic</h2>');
  if (t.cutShort) page.body.push(`<p class="note cut-short" id="traffic-cut-short"><span class="verdict unchecked">unchecked</span> The traffic was cut short: ${esc(t.cutShort)}. Everything below covers the run until then; the traffic expectations are not judged.</p>`);
  const causes = (c: Readonly<Record<string, number>>) => Object.entries(c).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(', ');
  page.body.push(
    `<table class="traffic" id="traffic-table"><tr><th>source</th><th>Service</th><th>connections</th><th>from nodes</th><th>requests</th>${TRAFFIC_OUTCOMES.map((o) => `<th>${OUTCOME_LABEL[o]}</th>`).join('')}<th>failed by cause</th></tr>${t.sources
      .map(
        (s) =>
          `<tr><td>${esc(s.id)}</td><td>${esc(s.service)}</td><td>${esc(s.connection)}</td><td>${esc(s.fromNodes.join(', '))}</td><td>${s.requests}</td>${TRAFFIC_OUTCOMES.map((o) => `<td>${s.byOutcome[o]}</td>`).join('')}<td>${esc(causes(s.byCause))}</td></tr>`,
      )
      .join('')}</table>`,
  );
  if (t.checks.length > 0) {
    page.body.push(`<table class="checks" id="traffic-checks"><tr><th></th><th>traffic expectation</th><th>detail</th></tr>${t.checks.map((c) => `<tr data-ok="${String(c.ok)}"><td>${checkCell(c)}</td><td>${esc(c.name)}</td><td>${esc(c.detail ?? '')}</td></tr>`).join('')}</table>`);
  }
  const requests = t.sources.reduce((a, s) => a + s.requests, 0);
  if (requests === 0) page.body.push('<p class="empty">No request was sent during the run.</p>');
  else {
    const o = trafficOverTimeChart(t.sources);
    figure(page, 'traffic-over-time', 'Requests over time by outcome (served, refused, reset, timed out), per source', o, [o.note]);
    const pods = trafficFailuresChart(t.sources, 'byPod');
    if (pods.total === 0) page.body.push('<p class="empty">No request failed.</p>');
    else {
      figure(page, 'traffic-failures-by-pod', `Failed requests by the pod they were sent to (${pods.total.toLocaleString('en-US')} failed)`, pods, [pods.note]);
      const nodes = trafficFailuresChart(t.sources, 'byNode');
      figure(page, 'traffic-failures-by-node', 'Failed requests by client node', nodes, [nodes.note], 'traffic-failures-by-pod');
    }
  }
  if (exposure.rows.length === 0) page.body.push('<p class="empty">No pod left any node\'s rules during the run: no exposure window.</p>');
  else {
    figure(page, 'traffic-exposure', 'Exposure window per pod: listener closed → the last node\'s kube-proxy rule removed', exposure, [
      exposure.note,
      'Bars: the window in which a new connection could still be routed to a pod that no longer listens (refused, or timed out once its IP is gone). Dots: the listener closed; ticks: each client node\'s rules dropped the pod. Same time axis as the kill path above; hover for times.',
    ]);
  }
  page.body.push(`<p class="note">Not simulated (no verdict covers it): ${esc(t.notSimulated.join(', '))}.</p>`);
}

function exploreSection(x: NonNullable<ReportInput['explore']>, page: Page): void {
  const c: ExploreChart = exploreChart(x);
  page.body.push(
    '<h2 id="explore">Exploration</h2>',
    `<p class="note">${x.seeds.length} seeds ran${x.requested !== undefined && x.requested !== x.seeds.length ? ` of ${x.requested} asked for` : ''}${x.faults ? `, faults ${esc(x.faults)}` : ''}: ${c.outcomes.map((o) => `${o.seeds} ${esc(o.outcome)}`).join(', ')}.</p>`,
  );
  figure(page, 'explore-outcomes', 'Seeds per outcome', c);
  if (c.byViolation.length > 0) figure(page, 'explore-violations', 'Failing seeds by first violated invariant', c, [], undefined, 'explore-outcomes');
  if (c.failing.length === 0) {
    page.body.push('<p class="empty">No seed failed.</p>');
    return;
  }
  page.body.push(
    `<table class="failing"><tr><th>seed</th><th>outcome</th><th>first violation</th><th>replay</th></tr>${c.failing
      .map(
        (s) =>
          `<tr><td>${s.seed}</td><td>${esc(s.outcome)}</td><td>${esc(s.firstViolation ?? '')}${s.message ? `<div class="note">${esc(s.message)}</div>` : ''}</td><td><code>${esc(s.replay ?? '')}</code>${
            s.shrunk ? `<details><summary>shrunk scenario${s.shrunkSteps !== undefined ? ` (${s.shrunkSteps} steps)` : ''}</summary><pre>${esc(s.shrunk)}</pre></details>` : ''
          }</td></tr>`,
      )
      .join('')}</table>`,
  );
}

/** Writes the report page for `input` to `path`; returns its size in bytes. */
export function writeReport(path: string, input: ReportInput): number {
  const html = renderReportHtml(input);
  writeFileSync(path, html);
  return Buffer.byteLength(html);
}
