/**
 * Odd scenario timelines found by trying to break `podsim run`: each input here once produced a
 * wrong verdict, a stack trace or a hang. Each test runs the input that showed it and checks what
 * a user sees (verdict, timings, violations).
 */
import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileScenario } from '../../src/scenario/compile.js';
import { loadScenario, loadScenarioText } from '../../src/scenario/load.js';
import { runPlan } from '../../src/engine.js';
import { judge } from '../../src/run.js';
import { S, runText, stepTimes, why } from '../scenarios/helpers.js';

test('kubelet restart while a preStop hook runs: the restarted kubelet re-runs the hook, SIGTERM after it is no prestop-before-sigterm violation', async (t) => {
  // Used to fail: "SIGTERM to p/app at 29.001098s while its preStop (from 5.000236s) was still
  // running" — the crashed kubelet's preStop span never ended.
  const { report, model } = await runText(
    'restart-prestop',
    `kind: Scenario
cluster: { nodes: [{ name: n1 }] }
steps:
  - apply: all
  - sleep: 5s
  - id: del
    delete: { name: p }
  - sleep: 1s
  - fault: { kind: kubeletRestart, node: n1, downFor: 3s }
  - sleep: 60s
expect:
  pods: [p]
  signals: [{ pod: p, TERM: 1, KILL: 0 }]
  exitCodes: [{ pod: p, code: 143 }]
---
apiVersion: v1
kind: Pod
metadata: { name: p }
spec:
  nodeName: n1
  containers: [{ name: app, image: nginx, lifecycle: { preStop: { exec: { command: [sleep, '20'] } } } }]
`,
  );
  t.true(report.ok, why(report));
  t.deepEqual(report.violations, []);
  // The new incarnation (up at 9 s) waits the whole 20 s hook again before SIGTERM.
  const del = stepTimes(model, 'del').start;
  const term = model.processes.flatMap((p) => p.signals).find((s) => s.signal === 'SIGTERM');
  t.truthy(term);
  t.true(term!.t - del >= 23 * S && term!.t - del <= 25 * S, `SIGTERM ${(term!.t - del) / S}s after the delete`);
});

/** wait-forever.yaml: a wait that can never be met, with a timeout of 100000 h (years of periodic work). */
const WAIT_FOREVER = `kind: Scenario
cluster: { nodes: [{ name: n1 }] }
steps:
  - apply: all
  - watch: start
  - wait: { for: exists, name: ghost, timeout: 100000h }
---
apiVersion: v1
kind: Pod
metadata: { name: p }
spec:
  nodeName: n1
  containers: [{ name: app, image: nginx }]
`;

test('an interrupted run (Ctrl-C) reports what it produced until then: the rows, the still-running wait, "interrupted"', async (t) => {
  // Used to: Ctrl-C during a long run printed nothing but the seed line — every row was lost.
  const plan = compileScenario(loadScenarioText('wait-forever.yaml', WAIT_FOREVER));
  for (const engine of ['local', 'threads'] as const) {
    const stop = new AbortController();
    // Ctrl-C once the run is under way (the timeline lasts 100000 h: it cannot end first).
    let timer: NodeJS.Timeout | undefined;
    const res = await runPlan(plan, { engine, signal: stop.signal, onRunning: () => (timer = setTimeout(() => stop.abort(), 3_000)) });
    clearTimeout(timer);
    t.is(res.end, 'interrupted', engine);
    t.true(res.virtualUs > 0 && res.virtualUs < 1000 * 3600 * S, `${engine} stopped at ${res.virtualUs} µs`);
    const { report } = judge(plan, res);
    t.false(report.ok);
    t.regex(report.failures[0], /^interrupted \(its AbortSignal\) at virtual .*: what is reported covers the run until then$/);
    t.true(report.failures.some((f) => /wait failed: still running when the run ended/.test(f)), report.failures.join('\n'));
    t.true(report.watch.some((l) => /^p\s+0\/1\s+Pending/.test(l)), `${engine}: the rows printed so far are kept:\n${report.watch.join('\n')}`);
  }
  // With an expect: block, the interruption is one line, not a failure per unmet expectation.
  const withExpect = WAIT_FOREVER.replace('\n---\n', '\nexpect:\n  pods: [p]\n  watch: [{ pod: p, rows: [p 0/1 Pending, p 1/1 Running] }]\n  timings: [{ pod: p, event: gone, within: [0s, 1h] }]\n---\n');
  const stop = new AbortController();
  stop.abort();
  const { report } = judge(compileScenario(loadScenarioText('wait-forever-expect.yaml', withExpect)), await runPlan(compileScenario(loadScenarioText('wait-forever-expect.yaml', withExpect)), { engine: 'local', signal: stop.signal }));
  t.is(report.failures.filter((f) => f.startsWith('expectation ')).length, 0, report.failures.join('\n'));
  t.true(report.failures.includes('expectations not judged: the run was interrupted before its timeline finished (2 of 2 not met so far)'), report.failures.join('\n'));
});

test('a run in interruptible segments that is not interrupted is the same run: same digest and events as in one piece', async (t) => {
  t.timeout(120_000);
  const plan = compileScenario(loadScenario('examples/cases/C01-prestop-hang-ignores-sigterm.yaml'), { placement: 'nodes:2' });
  for (const engine of ['local', 'threads'] as const) {
    const whole = await runPlan(plan, { engine });
    const segmented = await runPlan(plan, { engine, signal: new AbortController().signal });
    t.is(segmented.end, 'stopped');
    t.is(segmented.digest, whole.digest, engine);
    t.is(segmented.traces.length, whole.traces.length, engine);
  }
});

/** `text` written to a fresh temporary directory (removed after the test) as `name`. */
function scenarioInTempDir(t: ExecutionContext, prefix: string, name: string, text: string): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, name);
  writeFileSync(file, text);
  return { dir, file };
}

/** {@link WAIT_FOREVER} with its endless wait replaced by a sleep of `duration`. */
const sleeping = (duration: string) => WAIT_FOREVER.replace('  - wait: { for: exists, name: ghost, timeout: 100000h }', `  - sleep: ${duration}`);

for (const [sig, shown] of [['SIGINT', 'Ctrl-C'], ['SIGTERM', 'SIGTERM']] as const) {
test(`podsim run: ${sig} while a wait can never be met ends the run with its report and exit 1, naming ${shown}`, async (t) => {
  t.timeout(120_000);
  const { file } = scenarioInTempDir(t, 'podsim-interrupt-', 'wait-forever.yaml', WAIT_FOREVER);
  const child = spawn(process.execPath, [fileURLToPath(new URL('../../src/cli.js', import.meta.url)), 'run', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => {
    child.stdout.on('data', (c: Buffer) => {
      const first = out === '';
      out += c.toString();
      if (first) child.kill(sig); // the seed line is out: the run has begun
    });
    child.on('close', (c) => resolve(c));
  });
  t.is(code, 1, out + err);
  t.regex(err, /interrupted; reporting the run so far/);
  t.regex(out, /^virtual .* trace digest [0-9a-f]{16}$/m);
  t.true(out.includes(`interrupted (${shown}) at virtual`), out);
  t.notRegex(err, /\n\s+at /, 'no stack trace');
});
}

test('podsim run: a Ctrl-C after the run ended, while the report is written, still writes --json and --trace', async (t) => {
  // Used to: the SIGINT handler was removed as soon as the run ended, so a Ctrl-C while podsim
  // judged the run and wrote its files met Node's default action: podsim died by SIGINT after
  // printing the tally and before writing --trace (a 30 h run's trace was simply missing).
  t.timeout(120_000);
  const { dir, file } = scenarioInTempDir(t, 'podsim-interrupt-', 'sleep-30h.yaml', sleeping('30h'));
  const [json, trace] = [join(dir, 'out.json'), join(dir, 'trace.json')];
  const child = spawn(process.execPath, [fileURLToPath(new URL('../../src/cli.js', import.meta.url)), 'run', file, '--quiet', '--json', json, '--trace', trace], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => {
    let sent = false;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (!sent && /^virtual /m.test(out)) {
        sent = true; // the run is over and its tally is being printed
        child.kill('SIGINT');
      }
    });
    child.on('close', (c, s) => resolve([c, s]));
  });
  t.is(signal, null, out + err);
  t.is(code, 0, out + err);
  // The file declares no expectation: the verdict says so rather than PASS (issue #25 item 2).
  t.regex(out, /^no expectations: every step and invariant held/m);
  t.regex(out, /trace written to /);
  t.is((JSON.parse(readFileSync(json, 'utf8')) as { ok: boolean }).ok, true);
  t.true(Array.isArray((JSON.parse(readFileSync(trace, 'utf8')) as { traceEvents: unknown[] }).traceEvents));
  t.notRegex(err, /\n\s+at /, 'no stack trace');
});

test('bug: an output directory removed during the run gave "internal error: ENOENT" and a stack trace when the report was written; now each unwritable output is named, the others are written, exit 2 (found by the bad-input trial)', async (t) => {
  t.timeout(120_000);
  const { dir, file } = scenarioInTempDir(t, 'podsim-outgone-', 'sleep-2h.yaml', sleeping('2h'));
  const sub = join(dir, 'sub');
  mkdirSync(sub);
  const [json, trace] = [join(sub, 'out.json'), join(dir, 'trace.json')];
  const child = spawn(process.execPath, [fileURLToPath(new URL('../../src/cli.js', import.meta.url)), 'run', file, '--quiet', '--json', json, '--trace', trace], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  child.stdout.on('data', (c: Buffer) => {
    if (out === '') rmSync(sub, { recursive: true, force: true }); // the run has begun: its --json directory goes
    out += c.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  t.is(code, 2, out + err);
  t.regex(err, /podsim run: cannot write --json .*out\.json: ENOENT: no such file or directory, open .* \(it was writable when the run started\)/);
  t.notRegex(err, /\n\s+at /, 'no stack trace');
  t.true(existsSync(trace), 'the --trace beside it is still written');
  t.regex(out, /trace digest [0-9a-f]{16}/);
});
