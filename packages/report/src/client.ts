/**
 * The report page's own script: draws every chart with Observable Plot from the chart data the
 * page carries (charts.ts), into `figure[data-chart=ID] .plot`. The page inlines this function's
 * source (`renderCharts.toString()`), so it must not use anything from outside its body: Plot
 * and the document come in as arguments. A chart that fails to draw says so in its figure and
 * on the console (the browser test fails on console errors).
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- browser globals without DOM typings (lib is ES2023 only) */

/** Chart data by chart id, as html.ts embeds it. */
export type PageCharts = Record<string, any>;

/** Draws the charts of `charts` with `Plot` into `doc`; returns how many were drawn. */
export function renderCharts(Plot: any, charts: PageCharts, doc: any): number {
  const STATE_COLORS: Record<string, string> = {
    Pending: '#f2c94c',
    ContainerCreating: '#a0c4ff',
    Running: '#2f9e44',
    Completed: '#868e96',
    Terminating: '#e8590c',
    gone: '#ced4da',
  };
  const STEP_COLORS: Record<string, string> = {
    Terminating: '#e9ecef',
    killPod: '#ced4da',
    preStop: '#7048e8',
    StopContainer: '#1c7ed6',
    StopPodSandbox: '#0ca678',
    syncTerminatedPod: '#f59f00',
    DELETE: '#212529',
    SIGTERM: '#e8590c',
    SIGKILL: '#c92a2a',
    exit: '#2b8a3e',
    'status PATCH': '#5c940d',
    'final DELETE': '#862e9c',
    DELETED: '#495057',
  };
  const OUTCOME_COLORS: Record<string, string> = { served: '#8ce99a', refused: '#e8590c', reset: '#c92a2a', timedOut: '#7048e8' };
  const OUTCOME_LABELS: Record<string, string> = { served: 'served', refused: 'refused', reset: 'reset', timedOut: 'timed out' };
  const width = (el: any) => Math.max(480, Math.min(1200, el.clientWidth || 960));
  const secs = (s: number) => (s < 1 ? `${Math.round(s * 1000)}ms` : s < 60 ? `${+s.toFixed(3)}s` : `${Math.floor(s / 60)}m${+(s % 60).toFixed(1)}s`);
  const draw: Record<string, (c: any, el: any) => any> = {
    'pods-over-time': (c, el) =>
      Plot.plot({
        width: width(el),
        height: 280,
        x: { label: 'virtual time (s)' },
        y: { label: 'pods', grid: true },
        color: { domain: c.states, range: c.states.map((s: string) => STATE_COLORS[s]), legend: true },
        marks: [
          Plot.areaY(
            c.points.filter((p: any) => c.states.includes(p.state)),
            // No per-point title: a varying channel would split each state's area into one path per point.
            { x: 'tS', y: 'count', fill: 'state', z: 'state', order: c.states, curve: 'step-after' },
          ),
          Plot.ruleY([0]),
        ],
      }),
    'latency-histogram': (c, el) =>
      Plot.plot({
        width: width(el),
        height: 240,
        x: { label: 'DELETE accepted → DELETED (s)' },
        y: { label: 'pods', grid: true },
        marks: [
          Plot.rectY(c.bins, { x1: 'x0', x2: 'x1', y: 'count', fill: '#1c7ed6', inset: 0.5, title: (b: any) => `${b.count} pods in [${secs(b.x0)}, ${secs(b.x1)})` }),
          ...percentileMarks(c.marks),
          Plot.ruleY([0]),
        ],
      }),
    'latency-cdf': (c, el) =>
      Plot.plot({
        width: width(el),
        height: 240,
        x: { label: 'DELETE accepted → DELETED (s)' },
        y: { label: 'fraction of deleted pods gone', domain: [0, 1], grid: true, tickFormat: '%' },
        marks: [Plot.line(c.cdf, { x: 'latS', y: 'fraction', curve: 'step-after', stroke: '#1c7ed6' }), ...percentileMarks(c.marks)],
      }),
    'kill-path': (c, el) => {
      const layer = (steps: string[], inset: number) =>
        Plot.barX(
          c.spans.filter((s: any) => steps.includes(s.step)),
          {
            x1: 'beginS',
            x2: 'endS',
            y: 'pod',
            fill: 'step',
            insetTop: inset,
            insetBottom: inset,
            fillOpacity: (s: any) => (s.unfinished ? 0.5 : 1),
            title: (s: any) => `${s.pod}: ${s.lane} ${secs(s.beginS)} → ${secs(s.endS)}${s.unfinished ? ' (unfinished at the end of the run)' : ''}${s.detail ? ` — ${s.detail}` : ''}`,
          },
        );
      const steps = [...new Set([...c.spans.map((s: any) => s.step), ...c.marks.map((m: any) => m.step)])] as string[];
      return Plot.plot({
        width: width(el),
        height: 60 + 28 * c.rows.length,
        marginLeft: c.marginLeft ?? 140,
        x: { label: 'virtual time (s)', grid: true, ...(c.xDomain ? { domain: c.xDomain } : {}) },
        y: { label: null, domain: c.rows },
        color: { domain: steps, range: steps.map((s) => STEP_COLORS[s] ?? '#adb5bd'), legend: true },
        marks: [
          layer(['Terminating'], 1),
          layer(['killPod'], 4),
          layer(['preStop', 'StopContainer', 'StopPodSandbox', 'syncTerminatedPod'], 7),
          Plot.tickX(c.marks, {
            x: 'tS',
            y: 'pod',
            stroke: 'step',
            strokeWidth: 2,
            title: (m: any) => `${m.pod}: ${m.lane} at ${secs(m.tS)}${m.detail ? ` — ${m.detail}` : ''}`,
          }),
        ],
      });
    },
    'rate-limits-kubelet': (c, el) => throttle(c, el),
    'rate-limits-control-plane': (c, el) => throttle(c, el),
    'node-drain': (c, el) =>
      rowChart(el, c.nodes.map((n: any) => n.node), 16, 120, { label: 'first DELETE → last pod gone (s)' }, [
        Plot.barX(c.nodes, { x: 'drainS', y: 'node', fill: '#1c7ed6', title: (n: any) => `${n.node}: ${n.pods} pods drained in ${secs(n.drainS)}${n.notGone ? `, ${n.notGone} never gone` : ''}` }),
        Plot.ruleX([0]),
      ]),
    'node-drain-histogram': (c, el) =>
      Plot.plot({
        width: width(el),
        height: 220,
        x: { label: 'node drain time (s)' },
        y: { label: 'nodes', grid: true },
        marks: [Plot.rectY(c.bins, { x1: 'x0', x2: 'x1', y: 'count', fill: '#0ca678', inset: 0.5, title: (b: any) => `${b.count} nodes in [${secs(b.x0)}, ${secs(b.x1)})` }), Plot.ruleY([0])],
      }),
    'explore-outcomes': (c, el) =>
      Plot.plot({
        width: width(el),
        height: 60 + 28 * c.outcomes.length,
        marginLeft: 120,
        x: { label: 'seeds', grid: true },
        y: { label: null },
        marks: [Plot.barX(c.outcomes, { x: 'seeds', y: 'outcome', fill: (o: any) => (o.outcome === 'pass' ? '#2f9e44' : '#c92a2a'), title: (o: any) => `${o.outcome}: ${o.seeds} seeds` }), Plot.ruleX([0])],
      }),
    'explore-violations': (c, el) =>
      rowChart(el, c.byViolation.map((v: any) => v.violation), 28, 260, { label: 'failing seeds' }, [
        Plot.barX(c.byViolation, { x: 'seeds', y: 'violation', fill: '#c92a2a', title: (v: any) => `${v.violation}: ${v.seeds} seeds (e.g. seed ${v.example})` }),
        Plot.ruleX([0]),
      ]),
    'traffic-over-time': (c, el) =>
      Plot.plot({
        width: width(el),
        height: 50 + 170 * c.sources.length,
        marginRight: 90,
        x: { label: 'virtual time (s), when the request was sent', grid: true },
        y: { label: 'requests per bucket', grid: true },
        fy: { label: null, domain: c.sources },
        color: { domain: c.outcomes, range: c.outcomes.map((o: string) => OUTCOME_COLORS[o]), tickFormat: (o: string) => OUTCOME_LABELS[o] ?? o, legend: true },
        marks: [
          Plot.rectY(c.bars, {
            x1: 'x0S',
            x2: 'x1S',
            y: 'count',
            fy: 'source',
            fill: 'outcome',
            order: c.outcomes,
            title: (b: any) => `${b.source}: ${b.count} ${OUTCOME_LABELS[b.outcome] ?? b.outcome} sent in [${secs(b.x0S)}, ${secs(b.x1S)})`,
          }),
          Plot.ruleY([0]),
        ],
      }),
    'traffic-failures-by-pod': (c, el) =>
      rowChart(
        el,
        c.rows,
        18,
        Math.max(140, 10 + 6 * Math.max(0, ...c.rows.map((r: string) => r.length))),
        { label: 'failed requests' },
        [Plot.barX(c.bars, { x: 'failed', y: 'row', fill: 'source', title: (b: any) => `${b.row}: ${b.failed} failed requests of ${b.source}` }), Plot.ruleX([0])],
        { domain: c.sources, legend: true },
      ),
    'traffic-exposure': (c, el) =>
      rowChart(el, c.rows, 22, c.marginLeft ?? 140, { label: 'virtual time (s)', ...(c.xDomain ? { domain: c.xDomain } : {}) }, [
        Plot.barX(c.windows, { x1: 'beginS', x2: 'endS', y: 'pod', fill: '#ffa8a8', insetTop: 3, insetBottom: 3, title: (w: any) => `${w.pod}: exposed ${secs(w.endS - w.beginS)} (${secs(w.beginS)} → ${secs(w.endS)}), ${w.failed} failed requests` }),
        Plot.tickX(c.removals, { x: 'tS', y: 'pod', stroke: '#1c7ed6', strokeWidth: 2, title: (r: any) => `${r.pod}: ${r.node}'s rules dropped it at ${secs(r.tS)}` }),
        Plot.dot(c.closes, { x: 'tS', y: 'pod', fill: '#e8590c', r: 3.5, title: (d: any) => `${d.pod}: listener closed at ${secs(d.tS)}` }),
      ]),
    extra: (c, el) =>
      Plot.plot({
        width: width(el),
        height: 240,
        x: { label: 'virtual time (s)' },
        y: { label: c.unit ?? null, grid: true },
        color: { legend: true },
        marks: [Plot.line(c.points, { x: 'tS', y: 'value', stroke: 'series', curve: 'step-after' })],
      }),
  };
  /** A chart of one row per `rows` entry (top to bottom), `rowPx` high each, x grid on. */
  function rowChart(el: any, rows: readonly string[], rowPx: number, marginLeft: number, x: any, marks: any[], color?: any): any {
    return Plot.plot({
      width: width(el),
      height: 60 + rowPx * rows.length,
      marginLeft,
      x: { grid: true, ...x },
      y: { label: null, domain: rows },
      ...(color ? { color } : {}),
      marks,
    });
  }
  function percentileMarks(m: any): any[] {
    if (!m) return [];
    const rows = [
      { name: 'p50', v: m.p50 },
      { name: 'p90', v: m.p90 },
      { name: 'p99', v: m.p99 },
      { name: 'max', v: m.max },
    ];
    return [
      Plot.ruleX(rows, { x: 'v', stroke: '#c92a2a', strokeDasharray: '4,3' }),
      // One label row per mark (p50 top … max bottom): close percentiles must not overprint.
      // Labels near the right edge read leftwards, so that they are not cut off.
      ...rows.map((r, i) => {
        const right = r.v > m.p50 + 0.6 * (m.max - m.p50) && m.max > 0;
        return Plot.text([r], { x: 'v', frameAnchor: 'top', dy: 4 + 13 * i, dx: right ? -3 : 3, textAnchor: right ? 'end' : 'start', text: () => `${r.name} ${secs(r.v)}`, fill: '#c92a2a' });
      }),
    ];
  }
  function throttle(c: any, el: any): any {
    return Plot.plot({
      width: width(el),
      height: 260,
      x: { label: 'virtual time (s)' },
      y: { label: 'requests waiting for a token', grid: true },
      color: { legend: true, domain: c.series.map((s: any) => s.name) },
      marks: [
        Plot.line(c.points, { x: 'tS', y: 'waiting', stroke: 'series', z: 'series', curve: 'step-after' }),
        Plot.ruleY([0]),
      ],
    });
  }
  let drawn = 0;
  for (const fig of doc.querySelectorAll('figure[data-chart]')) {
    const id = fig.getAttribute('data-chart');
    const c = charts[fig.getAttribute('data-key') ?? id];
    const el = fig.querySelector('.plot');
    const fn = draw[fig.getAttribute('data-kind') ?? id];
    if (!c || !el || !fn) {
      console.error(`podsim report: no data or renderer for chart ${id}`);
      continue;
    }
    try {
      el.replaceChildren(fn(c, el));
      fig.setAttribute('data-rendered', 'true');
      drawn++;
    } catch (e) {
      el.textContent = `this chart could not be drawn: ${String(e)}`;
      console.error(`podsim report: chart ${id}: ${String(e)}`);
    }
  }
  // Set once every chart was tried, drawn or not: a browser test waits for it.
  doc.body.setAttribute('data-charts-drawn', String(drawn));
  return drawn;
}
