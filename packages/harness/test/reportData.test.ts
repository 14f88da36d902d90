/**
 * The data the HTML report's charts get (issue #21), from scenarios with known timings: C02's
 * kill path (the preStop hook ends before SIGTERM, and SIGKILL follows 30 s later: "preStop time
 * added to the grace"), the pods-by-state counts, the deletion latency marks, the kubelet's
 * token-bucket waits of a mass delete (C22), and the CLI contract: `--report` is refused before
 * the run on a bad path and written when the run fails.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the page's chart data is read back as parsed JSON */
import test from 'ava';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exposureChart, ganttChart, latencyChart, podStateChart, renderReportHtml, throttleChart } from '@podsim/report';
import { compileScenario } from '../src/scenario/compile.js';
import { loadScenario, loadScenarioText } from '../src/scenario/load.js';
import { runPlan } from '../src/engine.js';
import { judge, type RunReport } from '../src/run.js';
import { TraceModel } from '../src/checkers/model.js';
import { evaluateTraffic, trafficExpectations } from '../src/traffic/evaluate.js';
import { REPORT_TRACE_KINDS, runReportInput } from '../src/report/htmlInput.js';
import { main } from '../src/cli.js';

const EXAMPLES = fileURLToPath(new URL('../../../../examples/', import.meta.url));
const S = 1_000_000;

async function reportOf(file: string, text?: string) {
  const plan = compileScenario(text === undefined ? loadScenario(file) : loadScenarioText(file, text));
  const res = await runPlan(plan, { engine: 'local', traceFilter: REPORT_TRACE_KINDS });
  const { report, model } = judge(plan, res);
  return { report, input: runReportInput(report, model, res.traces), res };
}

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const c02 = reportOf(join(EXAMPLES, 'cases/C02-prestop-time-added-to-grace.yaml'));

test('C02 kill path: preStop (10 s) ends before SIGTERM; a (ignores SIGTERM) gets SIGKILL 30 s after it, exit 137; b exits 0 25 s after it, no SIGKILL', async (t) => {
  const { input, report } = await c02;
  t.true(report.ok, report.failures.join('\n'));
  const g = ganttChart(input.killPaths!, report.virtualSeconds * S);
  t.deepEqual(g.rows, ['a', 'b']);
  const span = (pod: string, step: string) => {
    const s = g.spans.filter((x) => x.pod === pod && x.step === step);
    t.is(s.length, 1, `${pod} ${step}: ${JSON.stringify(s)}`);
    return s[0];
  };
  const marks = (pod: string, step: string) => g.marks.filter((m) => m.pod === pod && m.step === step);
  for (const pod of ['a', 'b']) {
    const del = marks(pod, 'DELETE');
    t.is(del.length, 1);
    const preStop = span(pod, 'preStop');
    t.is(preStop.lane, 'preStop app');
    const killPod = span(pod, 'killPod');
    t.true(del[0].tS <= killPod.beginS && killPod.beginS <= preStop.beginS && preStop.beginS - del[0].tS < 1.5, `${pod}: DELETE ${del[0].tS} ≤ killPod ${killPod.beginS} ≤ preStop ${preStop.beginS}`);
    t.is(Math.round((preStop.endS - preStop.beginS) * 1000), 10_000, `${pod}: sleep 10`);
    const term = marks(pod, 'SIGTERM');
    t.is(term.length, 1);
    t.true(preStop.endS <= term[0].tS, `${pod}: preStop ends (${preStop.endS}) before SIGTERM (${term[0].tS})`);
    t.true(term[0].tS - preStop.endS < 0.1, `${pod}: StopContainer follows the hook at once`);
    // StopContainer(30): the grace counted from SIGTERM, not from the DELETE (the 1.22 behaviour).
    const stop = span(pod, 'StopContainer');
    t.is(stop.beginS, preStop.endS);
    t.is(stop.detail, 'timeout 30s');
    t.is(marks(pod, 'DELETED').length, 1);
    t.true(marks(pod, 'final DELETE')[0].tS <= marks(pod, 'DELETED')[0].tS);
    t.true(span(pod, 'syncTerminatedPod').beginS >= stop.endS);
    t.true(marks(pod, 'status PATCH').length >= 1, `${pod}: the kubelet's status PATCH is drawn`);
  }
  const kill = marks('a', 'SIGKILL');
  t.is(kill.length, 1);
  t.is(Math.round((kill[0].tS - marks('a', 'SIGTERM')[0].tS) * 1000), 30_000, 'a: SIGKILL 30 s after SIGTERM');
  t.deepEqual(marks('a', 'exit').map((m) => m.detail.split(' ').slice(0, 2).join(' ')), ['exit 137']);
  t.is(marks('a', 'exit')[0].tS, kill[0].tS);
  t.is(marks('b', 'SIGKILL').length, 0);
  t.is(Math.round((marks('b', 'exit')[0].tS - marks('b', 'SIGTERM')[0].tS) * 1000), 25_000, 'b: exits 25 s after SIGTERM');
  t.regex(marks('b', 'exit')[0].detail, /^exit 0/);
  t.is(input.killPathNote, 'every deleted pod (2)');
});

test('C02 pods over time and deletion latency: 2 Running, then 2 Terminating, then gone; p50 ≈ 36 s (b), max ≈ 41 s (a)', async (t) => {
  const { input } = await c02;
  const c = podStateChart(input.pods!);
  t.deepEqual(c.states, ['Pending', 'ContainerCreating', 'Running', 'Terminating', 'gone']);
  t.is(c.note, undefined, 'two pods: exact, not sampled');
  const at = (state: string, tS: number) => {
    const pts = c.points.filter((p) => p.state === state && p.tS <= tS);
    return pts[pts.length - 1]?.count ?? 0;
  };
  const del = input.killPaths![0].deleteUs / S;
  t.is(at('Running', del - 0.01), 2);
  t.is(at('Terminating', del + 1), 2);
  t.is(at('Terminating', del + 37), 1, 'b is gone ~36 s after the DELETE, a is not');
  t.is(at('gone', del + 42), 2);
  const l = latencyChart(input.pods!);
  t.is(l.count, 2);
  t.is(l.notGone, 0);
  t.true(l.marks!.p50 > 35 && l.marks!.p50 < 38, `p50 ${l.marks!.p50}`);
  t.true(l.marks!.max > 40 && l.marks!.max < 43, `max ${l.marks!.max}`);
  t.is(l.marks!.p99, l.marks!.max);
  t.is(l.bins.reduce((a, b) => a + b.count, 0), 2);
  t.deepEqual(l.cdf.map((p) => p.fraction), [0.5, 1]);
});

test('C22 rate limits: 100 pods deleted on one kubelet at 5 QPS / burst 10 — its requests wait on the token bucket; nobody waits in C02', async (t) => {
  const { input } = await reportOf(join(EXAMPLES, 'cases/C22-mass-delete-slow-kubelet-qps.yaml'));
  const k = throttleChart(input.throttle!, (w) => w.actor.startsWith('kubelet/'));
  const main = k.series.find((s) => s.name === 'kubelet/n1 kubelet');
  t.truthy(main, JSON.stringify(k.series.map((s) => s.name)));
  t.is(main!.qps, 5);
  t.is(main!.burst, 10);
  // Status PATCHes and final DELETEs go one after another, each ~200 ms (1/5 s) behind the last.
  t.true(main!.waits > 100, `${main!.waits} requests waited`);
  t.true(main!.totalWaitS > 60, `${main!.totalWaitS}s waited in all`);
  t.true(main!.maxWaitS <= 0.2 + 1e-9, `longest ${main!.maxWaitS}s: one token`);
  // The event recorder's own bucket backs up: many events wait at once.
  const events = k.series.find((s) => s.name === 'kubelet/n1 kubelet events');
  t.truthy(events);
  const peak = Math.max(...k.points.filter((p) => p.series === 'kubelet/n1 kubelet events').map((p) => p.waiting));
  t.true(peak >= 10, `peak ${peak} events waiting at once`);
  // Waiting never goes negative and ends at zero.
  t.true(k.points.every((p) => p.waiting >= 0));
  const last = k.points.filter((p) => p.series === 'kubelet/n1 kubelet').at(-1)!;
  t.is(last.waiting, 0);
  const { input: quiet } = await c02;
  t.deepEqual(quiet.throttle, [], 'C02 sends a handful of requests: no wait');
});

test('a report run keeps the digest: C22 with the throttle records on per-actor threads = without them in one thread', async (t) => {
  const file = join(EXAMPLES, 'cases/C22-mass-delete-slow-kubelet-qps.yaml');
  const plain = await runPlan(compileScenario(loadScenario(file)), { engine: 'local' });
  const reported = await runPlan(compileScenario(loadScenario(file), { placement: 'per-actor' }), { engine: 'threads', traceFilter: REPORT_TRACE_KINDS });
  t.true(reported.traces.some((r) => r.kind === 'client.throttle'), 'the report run recorded waits');
  t.false(plain.traces.some((r) => r.kind === 'client.throttle'), 'a plain run records none');
  t.is(reported.digest, plain.digest);
  t.is(plain.digest, '377cda9c9111e244');  // was ef9886347f21dd5d before kube-public (one more bootstrap write shifts every resourceVersion)
});

const dir = mkdtempSync(join(tmpdir(), 'podsim-report-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

const ROLLING = join(EXAMPLES, 'rolling-update-traffic.yaml');
const pageData = (html: string) => JSON.parse(/<script type="application\/json" id="podsim-report-data">([^<]*)<\/script>/.exec(html)![1]) as Record<string, any>;

test('rolling-update-traffic report: the traffic section counts what --json counts (by outcome, by cause, by pod, by node), in buckets that add up', async (t) => {
  t.timeout(180_000);
  const html = join(dir, 'rolling.html');
  const json = join(dir, 'rolling.json');
  const r = await cli(['run', ROLLING, '--quiet', '--engine', 'local', '--report', html, '--json', json]);
  t.is(r.code, 0, r.out + r.err);
  const out = JSON.parse(readFileSync(json, 'utf8')) as RunReport;
  const page = readFileSync(html, 'utf8');
  const data = pageData(page);
  const sources = out.traffic!.sources;
  t.deepEqual(sources.map((s) => s.id), ['plain', 'prestop']);
  const plain = sources[0];
  t.true(plain.failed > 0 && sources[1].failed === 0, 'the example fails without preStop only');
  for (const s of sources) {
    const causes = Object.entries(s.byCause).map(([c, n]) => `${c} ${n}`).join(', ');
    t.true(page.includes(`<tr><td>${s.id}</td><td>${s.service}</td><td>new</td><td>node-1, node-2, node-3</td><td>${s.requests}</td><td>${s.byOutcome.served}</td><td>${s.byOutcome.refused}</td><td>${s.byOutcome.reset}</td><td>${s.byOutcome.timedOut}</td><td>${causes}</td></tr>`), `${s.id}'s row: ${causes}`);
    // The over-time bars add up to the --json's outcomes, source by source.
    for (const o of ['served', 'refused', 'reset', 'timedOut'] as const) {
      const drawn = (data['traffic-over-time'].bars as Array<{ source: string; outcome: string; count: number }>).filter((b) => b.source === s.id && b.outcome === o).reduce((a, b) => a + b.count, 0);
      t.is(drawn, s.byOutcome[o], `${s.id} ${o}`);
    }
  }
  t.true(plain.byCause.REFUSED_POD! > 0 && plain.byCause.TIMEOUT_DEAD_IP! > 0, JSON.stringify(plain.byCause));
  const bars = (id: string) => Object.fromEntries((data[id].bars as Array<{ row: string; failed: number }>).map((b) => [b.row, b.failed]));
  t.deepEqual(bars('traffic-failures-by-pod'), plain.byPod);
  t.deepEqual(bars('traffic-failures-by-node'), plain.byNode);
  t.regex(page, /buckets of 500ms \(240 buckets\)/, '120 s of traffic in 0.5 s buckets (the smallest that keeps it to 300)');
  // The expect: traffic rows, as in the checks table.
  t.regex(page, /<table class="checks" id="traffic-checks">.*<span class="verdict ok">pass<\/span><\/td><td>traffic: prestop failed ≤ 0<\/td>/);
});

test('rolling-update-traffic report: each pod\'s exposure window runs from its SIGTERM (close-listener-after 0s) to the last node\'s kube-proxy sync that dropped it, on the kill path\'s time axis', async (t) => {
  t.timeout(180_000);
  const { input, res, report } = await reportOf(ROLLING);
  const x = input.traffic!;
  t.is(x.cutShort, undefined);
  const uidOf = new Map<string, string>();
  for (const r of res.traces) if (r.kind === 'cri.network') uidOf.set((r.data as { pod: string }).pod, (r.data as { podUid: string }).podUid);
  const sigterm = (uid: string) => res.traces.find((r) => r.kind === 'cri.signal' && (r.data as { podUid: string; signal: string }).podUid === uid && (r.data as { signal: string }).signal === 'SIGTERM')?.t;
  // Each node's removal, read off the proxy.sync records directly: the sync after which the pod is no longer a target.
  const removals = (uid: string) => {
    const out: Record<string, number> = {};
    const member = new Map<string, boolean>();
    for (const r of res.traces) {
      if (r.kind !== 'proxy.sync') continue;
      const d = r.data as { node: string; services?: Record<string, { targets?: [string, string][]; add?: [string, string][]; remove?: [string, string][] } | null> };
      for (const [svc, v] of Object.entries(d.services ?? {})) {
        const key = `${d.node}|${svc}`;
        const was = member.get(key) ?? false;
        let now = was;
        if (v === null) now = false;
        else if (v.targets) now = v.targets.some((x) => x[1] === uid);
        else {
          if (v.remove?.some((x) => x[1] === uid)) now = false;
          if (v.add?.some((x) => x[1] === uid)) now = true;
        }
        if (was && !now) out[d.node] = r.t;
        if (!was && now) delete out[d.node];
        member.set(key, now);
      }
    }
    return out;
  };
  const g = ganttChart(input.killPaths!, report.virtualSeconds * S);
  const e = exposureChart(x.exposure);
  t.is(e.rows.length, 20, 'every deleted pod of both Deployments left the rules');
  let exposed = 0;
  for (const pod of e.rows) {
    const uid = uidOf.get(pod)!;
    const closeS = sigterm(uid)! / S;
    const removed = removals(uid);
    t.deepEqual(Object.keys(removed).sort(), ['node-1', 'node-2', 'node-3'], pod);
    const lastS = Math.max(...Object.values(removed)) / S;
    t.is(e.closes.find((c) => c.pod === pod)!.tS, closeS, `${pod}: listener closed at SIGTERM`);
    t.deepEqual(e.removals.filter((r) => r.pod === pod).map((r) => [r.node, r.tS]).sort(), Object.entries(removed).map(([n, us]) => [n, us / S]).sort(), `${pod}: a tick per node's removal`);
    const w = e.windows.find((x) => x.pod === pod);
    if (closeS < lastS) {
      exposed++;
      t.deepEqual([w?.beginS, w?.endS], [closeS, lastS], `${pod}: window = listener close → last removal`);
    } else t.is(w, undefined, `${pod}: no window (its rules were gone before SIGTERM)`);
    if (pod.startsWith('web-prestop-')) t.is(w, undefined, `${pod}: preStop sleep 5 outlasts the rules`);
  }
  t.true(exposed >= 5, `${exposed} pods exposed`);
  // The page puts both Gantts on one axis.
  const data = pageData(renderReportHtml(input));
  t.deepEqual(data['traffic-exposure'].xDomain, data['kill-path'].xDomain);
  const [lo, hi] = data['kill-path'].xDomain as [number, number];
  t.true(lo <= Math.min(...g.marks.map((m) => m.tS), ...e.closes.map((c) => c.tS)) && hi >= Math.max(...g.spans.map((s) => s.endS), ...e.removals.map((r) => r.tS)), `${lo}..${hi}`);
});

test('an interrupted traffic run: the page says the traffic was cut short, and every traffic expectation is unchecked (prestop\'s "failed ≤ 0" held so far, still not a pass)', async (t) => {
  t.timeout(180_000);
  const plan = compileScenario(loadScenario(ROLLING));
  const stop = new AbortController();
  // Ctrl-C a few virtual seconds into the rolling update (it starts at about 12 s).
  const res = await runPlan(plan, { engine: 'local', traceFilter: REPORT_TRACE_KINDS, signal: stop.signal, onSegment: (s) => s.virtualUs >= 16 * S && stop.abort() });
  t.is(res.end, 'interrupted');
  const { report, model } = judge(plan, res);
  t.false(report.ok);
  t.regex(report.traffic!.cutShort!, /^the run was interrupted at virtual /);
  t.true(report.traffic!.total.requests > 0, 'requests were sent before the interrupt');
  // The --json's expectations are not met (never ok over cut-short traffic), and say why.
  for (const e of report.expectations.filter((x) => x.kind === 'traffic')) {
    t.false(e.ok, e.expected);
    t.regex(e.actual, /^not judged: the traffic was cut short \(the run was interrupted at virtual .*\); (failed) \d+ of \d+ requests so far$/);
  }
  const input = runReportInput(report, model, res.traces);
  const traffic = input.checks.filter((c) => c.name.startsWith('traffic: '));
  t.deepEqual(traffic.map((c) => [c.name, c.ok]), [['traffic: plain failed ≥ 1', 'unchecked'], ['traffic: prestop failed ≤ 0', 'unchecked']]);
  const html = renderReportHtml(input);
  t.regex(html, /id="traffic-cut-short"><span class="verdict unchecked">unchecked<\/span> The traffic was cut short: the run was interrupted at virtual /);
  t.notRegex(/<table class="checks" id="traffic-checks">.*?<\/table>/.exec(html)![0], /verdict ok/);
});

test('a traffic run cut short at its virtual-time bound: the traffic checks are unchecked in the checks table too (not "fail", not "pass"), and the verdict is FAIL', async (t) => {
  t.timeout(180_000);
  // The bound at 20 s virtual: the rolling update (from about 12 s) is cut off mid-way.
  const plan = { ...compileScenario(loadScenario(ROLLING)), maxVirtualUs: 20 * S };
  const res = await runPlan(plan, { engine: 'local', traceFilter: REPORT_TRACE_KINDS });
  t.is(res.end, 'bound');
  const { report, model } = judge(plan, res);
  t.false(report.ok);
  t.is(report.traffic!.cutShort, 'the run reached its bound of 20s virtual time before its timeline finished');
  const input = runReportInput(report, model, res.traces);
  t.deepEqual(input.checks.filter((c) => c.name.startsWith('traffic: ')).map((c) => c.ok), ['unchecked', 'unchecked']);
  t.is(input.header.verdict, 'FAIL');
  t.regex(renderReportHtml(input), /The traffic was cut short: the run reached its bound of 20s virtual time/);
});

test('a traffic source whose `since` step never ran sends no request (it used to send from t = 0), so its bounds are not judged', async (t) => {
  t.timeout(180_000);
  const plan = compileScenario(loadScenario(ROLLING));
  const res = await runPlan(plan, { engine: 'local' });
  const model = new TraceModel(res.traces);
  const r = evaluateTraffic(res.traces, model, plan.traffic!, { seed: plan.seed, namespace: plan.namespace, nodes: plan.nodes, stepStartUs: {}, endUs: res.virtualUs });
  t.deepEqual(r.sources.map((s) => s.requests), [0, 0]);
  t.deepEqual(trafficExpectations(r, [{ source: 'prestop', failed: { max: 0 } }]).map((e) => [e.ok, e.actual]), [[false, 'no request was sent by source prestop during the run, so nothing was checked']]);
});

test('a run without traffic has no traffic section', async (t) => {
  const { input } = await c02;
  t.is(input.traffic, undefined);
  t.notRegex(renderReportHtml(input), /id="traffic|data-chart="traffic/);
});

test('run --report /no/dir/r.html is refused before the run (exit 2, names the flag), as --json is', async (t) => {
  const r = await cli(['run', join(EXAMPLES, 'cases/C02-prestop-time-added-to-grace.yaml'), '--report', '/no/dir/r.html']);
  t.is(r.code, 2);
  t.regex(r.err, /^\/no\/dir\/r\.html: --report: directory \/no\/dir does not exist$/m);
  t.notRegex(r.out, /^seed /m, 'the run did not start');
  const same = await cli(['run', join(EXAMPLES, 'cases/C02-prestop-time-added-to-grace.yaml'), '--json', join(dir, 'x.html'), '--report', join(dir, 'x.html')]);
  t.is(same.code, 2);
  t.regex(same.err, /--report: --json writes the same file/);
  const pods = await cli(['run', join(EXAMPLES, 'cases/C02-prestop-time-added-to-grace.yaml'), '--report-pods', 'a']);
  t.is(pods.code, 2);
  t.regex(pods.err, /--report-pods: needs --report/);
});

test('--report-pods naming no deleted pod is said on stderr, not only inside the page; the report is still written', async (t) => {
  const out = join(dir, 'unknown-pods.html');
  const r = await cli(['run', join(EXAMPLES, 'cases/C02-prestop-time-added-to-grace.yaml'), '--quiet', '--engine', 'local', '--report', out, '--report-pods', 'nosuchpod']);
  t.is(r.code, 0, r.out + r.err);
  t.regex(r.err, /--report-pods: no deleted pod is named nosuchpod/);
  t.true(existsSync(out));
});

test('a failing run still writes its report: FAIL in the header, the failed expectation in the checks table', async (t) => {
  const text = readFileSync(join(EXAMPLES, 'cases/C02-prestop-time-added-to-grace.yaml'), 'utf8').replace('{ pod: a, code: 137 }', '{ pod: a, code: 143 }');
  const file = join(dir, 'c02-wrong.yaml');
  (await import('node:fs')).writeFileSync(file, text);
  const out = join(dir, 'fail.html');
  const r = await cli(['run', file, '--quiet', '--engine', 'local', '--report', out]);
  t.is(r.code, 1, r.out + r.err);
  t.true(existsSync(out));
  const html = readFileSync(out, 'utf8');
  t.regex(html, /id="verdict">FAIL</);
  t.regex(html, /<tr data-ok="false"><td><span class="verdict bad">fail<\/span><\/td><td>expectation<\/td><td>exitCode: a exits 143/);
  t.regex(r.out, /^report written to .*fail\.html/m);
});

test('explore --report --shrink: failing seeds by first violated invariant, each with its replay command, the first one shrunk', async (t) => {
  const file = join(EXAMPLES, 'explore-planted-bug.yaml');
  const refused = await cli(['explore', file, '--seeds', '8..9', '--shrink']);
  t.is(refused.code, 2);
  t.regex(refused.err, /--shrink needs --report/);
  const out = join(dir, 'explore.html');
  const r = await cli(['explore', file, '--seeds', '8..9', '--workers', '2', '--no-progress', '--report', out, '--shrink']);
  t.is(r.code, 1, r.out + r.err);
  const html = readFileSync(out, 'utf8');
  t.regex(html, /id="verdict">FAIL</);
  t.regex(html, /data-chart="explore-outcomes"/);
  t.regex(html, /data-chart="explore-violations"/);
  const data = JSON.parse(/<script type="application\/json" id="podsim-report-data">([^<]*)<\/script>/.exec(html)![1]) as {
    'explore-outcomes': { outcomes: Array<{ outcome: string; seeds: number }>; byViolation: Array<{ violation: string; seeds: number; example: number }> };
  };
  t.deepEqual(data['explore-outcomes'].byViolation, [{ violation: 'no-removal-while-running', seeds: 2, example: 8 }]);
  for (const seed of [8, 9]) t.true(html.includes(`<code>pnpm podsim replay ${file} --seed ${seed}</code>`), `seed ${seed}'s replay command`);
  // One shrink per violated invariant: seed 8's scenario, not seed 9's.
  const shrunk = [...html.matchAll(/<summary>shrunk scenario \((\d+) steps\)<\/summary><pre>([^<]*)<\/pre>/g)];
  t.is(shrunk.length, 1);
  t.regex(shrunk[0][2], /^# Shrunk by: pnpm podsim replay .*explore-planted-bug\.yaml --seed 8 --shrink\n# Violates no-removal-while-running/);
  t.true(Number(shrunk[0][1]) < 15, 'fewer steps than the 15 of the file');
});
