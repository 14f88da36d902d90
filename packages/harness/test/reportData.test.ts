/**
 * The data the HTML report's charts get (issue #21), from scenarios with known timings: C02's
 * kill path (the preStop hook ends before SIGTERM, and SIGKILL follows 30 s later: "preStop time
 * added to the grace"), the pods-by-state counts, the deletion latency marks, the kubelet's
 * token-bucket waits of a mass delete (C22), and the CLI contract: `--report` is refused before
 * the run on a bad path and written when the run fails.
 */
import test from 'ava';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ganttChart, latencyChart, podStateChart, throttleChart } from '@podsim/report';
import { compileScenario } from '../src/scenario/compile.js';
import { loadScenario, loadScenarioText } from '../src/scenario/load.js';
import { runPlan } from '../src/engine.js';
import { judge } from '../src/run.js';
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
