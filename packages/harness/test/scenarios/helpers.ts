/** Shared helpers for scenario tests: run scenario text end to end and judge it. */
import { parseAllDocuments } from 'yaml';
import { compileScenario, type PlanOptions } from '../../src/scenario/compile.js';
import { loadScenarioText } from '../../src/scenario/load.js';
import { NO_EXPECTATIONS, judge } from '../../src/run.js';
import { runPlan, type EngineKind } from '../../src/engine.js';
import type { TraceModel } from '../../src/checkers/model.js';
import type { RunReport } from '../../src/run.js';
import { EXIT_OK, main } from '../../src/cli.js';
import { readFileSync } from 'node:fs';
import type { ExecutionContext } from 'ava';

export const S = 1_000_000;

// Every scenario test runs in the deep-freeze test mode (packages/sim/src/freeze.ts, issue #19):
// each message body is deep-frozen when sent, so an actor that mutates a shared object throws
// and fails the run. Worker threads and CLI child processes inherit the variable. Set
// PODSIM_FREEZE=0 to run them without it.
process.env.PODSIM_FREEZE ??= '1';

/** Runs a scenario given as text (engine `local` unless told otherwise). */
export async function runText(name: string, text: string, opts: PlanOptions & { engine?: EngineKind } = {}): Promise<{ report: RunReport; model: TraceModel }> {
  const plan = compileScenario(loadScenarioText(`${name}.yaml`, text), opts);
  return judge(plan, await runPlan(plan, { engine: opts.engine ?? 'local' }));
}

/** The pod's API writes (by name), in order. */
export function writesOf(model: TraceModel, name: string) {
  return model.writes.filter((w) => w.resource === 'pods' && w.name === name);
}

/** Start / end time of the step with this id (driver.step records). */
export function stepTimes(model: TraceModel, id: string): { start: number; end: number } {
  const recs = model.driverSteps.filter((r) => (r.data as { id?: string }).id === id);
  const start = recs.find((r) => (r.data as { ph: string }).ph === 'B');
  const end = recs.find((r) => (r.data as { ph: string }).ph === 'E');
  if (!start || !end) throw new Error(`step ${id} did not run`);
  return { start: start.t, end: end.t };
}

/** A readable failure message for a report. */
export function why(r: RunReport): string {
  return r.failures.join('\n') + '\n' + r.watch.join('\n');
}

/**
 * The reference trace of examples/minio-recreate.yaml (README): the (pod, READY, STATUS) rows of
 * `kubectl get pods -w`, pods aliased in order of appearance (`old` is printed first). Both
 * `podsim run` and the real kubectl against `podsim serve` must print exactly these.
 */
export const MINIO_REFERENCE_ROWS = [
  ['old', '1/1', 'Running'],
  ['old', '1/1', 'Terminating'],
  ['new', '0/1', 'Pending'],
  ['new', '0/1', 'Pending'],
  ['new', '0/1', 'ContainerCreating'],
  ['old', '0/1', 'Terminating'],
  ['old', '0/1', 'Terminating'],
  ['old', '0/1', 'Terminating'],
  ['new', '0/1', 'Running'],
  ['new', '1/1', 'Running'],
];

/**
 * How many expectations a scenario file declares, counted from its text (not by the evaluator it
 * checks): one per `watch` block, `timings` / `exitCodes` / `signals` / `replicaSets` / `jobs` / `output`
 * item (and `nodes` / `podReady` / `traffic` items), `grace` field (request, deletionGracePeriodSeconds, killPod, stopContainer) and `counts`
 * field. `invariants:` is not counted: the tally line reports those separately.
 */
export function declaredExpectations(text: string): number {
  const docs = parseAllDocuments(text).map((d) => d.toJS() as Record<string, unknown> | null);
  const sc = docs.find((d) => d?.kind === 'Scenario') ?? docs.find((d) => d !== null && d.kind === undefined);
  const e = (sc?.expect ?? {}) as Record<string, unknown>;
  const items = (v: unknown) => (v === undefined ? 0 : Array.isArray(v) ? v.length : 1);
  const grace = ((e.grace ?? []) as Array<Record<string, unknown>>).reduce(
    (n, g) => n + ['request', 'deletionGracePeriodSeconds', 'killPod', 'stopContainer'].filter((k) => g[k] !== undefined).length,
    0,
  );
  return ['watch', 'timings', 'exitCodes', 'signals', 'replicaSets', 'jobs', 'output', 'nodes', 'podReady', 'traffic'].reduce((n, k) => n + items(e[k]), grace + Object.keys((e.counts ?? {}) as object).length);
}

/** The `expectations: P/T passed` tally of `podsim run` output, or undefined when it is missing. */
export function expectationTally(out: readonly string[]): { passed: number; total: number } | undefined {
  const m = /^expectations: (\d+)\/(\d+) passed; invariants: \d+ checked, 0 violations/m.exec(out.join('\n'));
  return m ? { passed: Number(m[1]), total: Number(m[2]) } : undefined;
}

const cliRuns = new Map<string, Promise<{ code: number; out: string[] }>>();

/** `podsim run FILE --quiet --placement P` through the CLI entry, once per (file, placement) per test file. */
export function podsimRun(file: string, placement: string): Promise<{ code: number; out: string[] }> {
  const key = `${file}|${placement}`;
  let r = cliRuns.get(key);
  if (!r) {
    const out: string[] = [];
    r = main(['run', file, '--quiet', '--placement', placement], { out: (l) => out.push(l), err: (l) => out.push(l) }).then((code) => ({ code, out }));
    cliRuns.set(key, r);
  }
  return r;
}

/** The trace digest a `podsim run` printed. */
export const digestOf = (out: readonly string[]): string | undefined => out.join('\n').match(/trace digest ([0-9a-f]{16})/)?.[1];

/**
 * `podsim run FILE` (placement single, through the CLI entry) exits 0 with every expectation the
 * file declares judged and held — or, for a file that declares none, with the no-expectations
 * verdict when `allowNone` (a bare `(\d+)/\1` tally would accept 0/0).
 */
export async function assertFileHolds(t: ExecutionContext, file: string, allowNone = false): Promise<void> {
  const { code, out } = await podsimRun(file, 'single');
  t.is(code, EXIT_OK, out.join('\n'));
  const declared = declaredExpectations(readFileSync(file, 'utf8'));
  if (declared === 0) {
    t.true(allowNone, `${file} declares no expectation`);
    t.is(out.at(-1), NO_EXPECTATIONS, out.join('\n'));
    return;
  }
  t.is(out.at(-1), 'PASS', out.join('\n'));
  t.deepEqual(expectationTally(out), { passed: declared, total: declared }, out.join('\n'));
}
