/**
 * `podsim run` as a library: load and compile a scenario, run it on the engine, then judge it
 * from outside — the driver's step results, the `expect:` block, and every invariant checker
 * over the merged trace. The report carries everything the CLI prints and `--json` writes,
 * including the exact command that replays the run.
 */
import { US_PER_SECOND, type RunFailure } from '@podsim/api';
import { TraceModel } from './checkers/model.js';
import { ALL_INVARIANTS, checkInvariants, type Violation } from './checkers/invariants.js';
import { evaluateExpectations, type ExpectationResult } from './expect/evaluate.js';
import { runPlan, type EngineOptions, type EngineResult } from './engine.js';
import { compileScenario, type PlanOptions, type RunPlan } from './scenario/compile.js';
import { loadScenario } from './scenario/load.js';
import { formatIssue } from './scenario/source.js';
import { podSummaries, watchLines, type PodSummary } from './report/report.js';
import { LIVENESS, checkLiveness } from './explore/liveness.js';
import { describe } from './driver/driver.js';
import type { DriverStep } from './driver/steps.js';
import { formatDuration } from './duration.js';
import { deletionSummaries, type DeletionSummary } from './report/summary.js';
import type { ClientLimits } from './scenario/clientLimits.js';
import { evaluateTraffic, trafficExpectations, type TrafficReport } from './traffic/evaluate.js';

export interface RunOptions extends PlanOptions, EngineOptions {}

/** One timeline step as it went. */
export interface StepResult {
  /** Position in the expanded timeline (0-based; a `repeat` counts each copy). */
  readonly index: number;
  /** Line of the step in the scenario file (1-based). */
  readonly line?: number;
  readonly id?: string;
  readonly kind: string;
  readonly summary: string;
  readonly startUs: number;
  readonly endUs?: number;
  readonly ok: boolean;
  readonly error?: string;
  /** What kubectl printed for the step (`pod "p" deleted`, the force-delete warning …), in order. */
  readonly output?: readonly string[];
  /** The scenario marked the step `expectFailure: true`: `ok` means it failed, as it should. */
  readonly expectFailure?: boolean;
  /** With `expectFailure`: how it failed (what `error` would have said). */
  readonly expectedError?: string;
}

export interface RunReport {
  readonly file: string;
  readonly name: string;
  readonly seed: number;
  readonly placement: string;
  readonly traceDigest: string;
  readonly wallSeconds: number;
  readonly virtualSeconds: number;
  readonly events: number;
  readonly hostCount: number;
  readonly end: string;
  readonly failure?: RunFailure;
  /** True when every step, expectation and invariant held and the timeline finished. */
  readonly ok: boolean;
  /** The `kubectl get pods -w` lines, as printed. */
  readonly watch: readonly string[];
  readonly steps: readonly StepResult[];
  readonly expectations: readonly ExpectationResult[];
  readonly invariantsChecked: readonly string[];
  /** Violations that fail the run. */
  readonly violations: readonly Violation[];
  /** Violations the scenario declared acceptable (`expect.invariants.allow`). */
  readonly allowedViolations: readonly Violation[];
  readonly pods: readonly PodSummary[];
  /** Per step that deleted pods: how many, when they were gone, how they ended (report/summary.ts). */
  readonly summary: readonly DeletionSummary[];
  /** The API clients' rate limits the run used (the header's `client qps/burst` line). */
  readonly clientLimits: ClientLimits;
  /** Human-readable reasons the run failed (empty when ok). */
  readonly failures: readonly string[];
  /** The command that replays exactly this run; for a scenario built in code, the `runScenario` call with its seed and placement. */
  readonly replay: string;
  readonly warnings: readonly string[];
  /** Request outcomes of the scenario's `traffic:` (issue #18), when it has one. */
  readonly traffic?: TrafficReport;
}

/**
 * The verdict line of a run that held but whose file declares no expectation (`expect:` absent,
 * or only `invariants:`): printed instead of `PASS` (the exit code is 0 all the same).
 */
export const NO_EXPECTATIONS = 'no expectations: every step and invariant held, nothing else was checked';

/** The command line that reruns a scenario with the same seed and placement. */
export function replayCommand(file: string, seed: number, placement: string): string {
  return `pnpm podsim run ${file} --seed ${seed} --placement ${placement}`;
}

/** How a failed step reads in a report: `step at line 12 (del) wait failed: timed out after 5s …`. */
export function stepFailure(s: StepResult): string {
  return `${stepName(s)}${s.id ? ` (${s.id})` : ''} ${s.kind} failed: ${s.error ?? 'not finished'}`;
}

/** `step at line 12` (the file's line), or `step #4` (the expanded timeline's index) without one. */
function stepName(s: { readonly index: number; readonly line?: number }): string {
  return s.line !== undefined ? `step at line ${s.line}` : `step #${s.index}`;
}

/** How a failed expectation reads in a report: `expectation timing failed: expected …; …`. */
export function expectationFailure(e: ExpectationResult): string {
  return `expectation ${e.kind} failed: expected ${e.expected}; ${e.actual}`;
}

/** Loads, runs and judges a scenario file. Throws ScenarioError for bad input. */
export async function runScenarioFile(file: string, opts: RunOptions = {}): Promise<RunReport> {
  const plan = compileScenario(loadScenario(file), opts);
  return runCompiled(plan, opts);
}

/** Runs and judges a compiled plan. */
export async function runCompiled(plan: RunPlan, opts: EngineOptions = {}): Promise<RunReport> {
  return judge(plan, await runPlan(plan, opts)).report;
}

/**
 * Why a run's traffic stopped before its timeline finished (traffic runs until the run ends, so
 * any end but `stopped` cuts it short): `the run was interrupted at virtual 45s`; undefined for
 * a run that finished.
 */
function trafficCutShort(res: EngineResult, plan: RunPlan): string | undefined {
  const at = formatDuration(res.virtualUs);
  switch (res.end) {
    case 'stopped':
      return undefined;
    case 'interrupted':
      return `the run was interrupted at virtual ${at}`;
    case 'failed':
      return `the run failed at virtual ${at}`;
    case 'bound':
      return `the run reached its bound of ${plan.maxVirtualUs / US_PER_SECOND}s virtual time before its timeline finished`;
    case 'quiescent':
      return `the run ran out of events at virtual ${at} before its timeline finished`;
  }
}

/**
 * Judges a finished run: the report, and the trace model it was computed from.
 * `interruptedBy` names what stopped an interrupted run in its failure line (the CLI passes
 * `Ctrl-C` for SIGINT and `SIGTERM`; default: `its AbortSignal`, a library caller's).
 */
export function judge(plan: RunPlan, res: EngineResult, opts: { interruptedBy?: string } = {}): { report: RunReport; model: TraceModel } {
  const model = new TraceModel(res.traces);
  const steps = stepResults(model, plan.driver.steps);
  const expectations = evaluateExpectations(model, plan.expect, plan.stepIds);
  // Client traffic (issue #18): decided per request over the trace, then `expect: traffic:`.
  let traffic: TrafficReport | undefined;
  if (plan.traffic?.length) {
    const stepStartUs: Record<string, number> = {};
    for (const s of steps) if (s.id !== undefined) stepStartUs[s.id] = s.startUs;
    const cutShort = trafficCutShort(res, plan);
    traffic = evaluateTraffic(res.traces, model, plan.traffic, { seed: plan.seed, namespace: plan.namespace, nodes: plan.nodes, stepStartUs, endUs: res.virtualUs, ...(cutShort ? { cutShort } : {}) });
    const te = plan.expect?.traffic;
    for (const r of trafficExpectations(traffic, te === undefined ? [] : Array.isArray(te) ? te : [te])) expectations.push({ kind: 'traffic', ...r });
  }
  const allow = new Set(plan.expect?.invariants && plan.expect.invariants !== 'clean' ? plan.expect.invariants.allow : []);
  // A test's disabled checkers (the checker mutation pass) neither judge nor count as checked.
  const disabled = new Set(plan.disabledInvariants ?? []);
  const all = checkInvariants(model, { epochUnixSeconds: plan.epochUnixSeconds }).filter((v) => !disabled.has(v.invariant));
  // An explored scenario must also heal: deleted pods gone, their containers stopped, in budget.
  if (plan.explore) all.push(...checkLiveness(model, plan.explore.healAfterUs, plan.explore.livenessBudgetUs));
  all.sort((a, b) => a.t - b.t);
  const violations = all.filter((v) => !allow.has(v.invariant));
  // A scenario built in code has no file to name: the replay is the call with the same seed.
  const replay = plan.fromObject ? `runScenario(<the same scenario object>, { seed: ${plan.seed}, placement: '${plan.placement}' })` : replayCommand(plan.file, plan.seed, plan.placement);
  const pods = podSummaries(model);

  const failures: string[] = [];
  if (res.failure) {
    const f = res.failure;
    failures.push(`engine: ${f.kind}${f.actor ? ` in ${f.actor}` : ''}${f.t !== undefined ? ` at t=${f.t / US_PER_SECOND}s` : ''}${f.messageType ? ` handling ${f.messageType}` : ''}: ${f.message}`);
  } else if (res.end === 'interrupted') {
    failures.push(`interrupted (${opts.interruptedBy ?? 'its AbortSignal'}) at virtual ${formatDuration(res.virtualUs)}: what is reported covers the run until then`);
  } else if (res.end !== 'stopped') {
    failures.push(`the timeline did not finish: the run ${res.end === 'bound' ? `reached its bound of ${plan.maxVirtualUs / US_PER_SECOND}s virtual time` : 'ran out of events'} before the driver's last step`);
  }
  const done = new Set(steps.map((s) => s.index));
  if (!res.failure && res.end === 'stopped') {
    for (const s of plan.driver.steps) if (!done.has(s.index)) failures.push(`${stepName(s)} (${s.kind}) never ran`);
  }
  for (const s of steps) if (!s.ok) failures.push(stepFailure(s));
  // An interrupted run never reached most of what `expect:` describes: one line, not one per expectation.
  const unmet = expectations.filter((e) => !e.ok);
  if (res.end === 'interrupted' && unmet.length > 0) failures.push(`expectations not judged: the run was interrupted before its timeline finished (${unmet.length} of ${expectations.length} not met so far)`);
  else for (const e of unmet) failures.push(expectationFailure(e));
  for (const v of violations) failures.push(`invariant ${v.invariant} violated at t=${v.t / US_PER_SECOND}s: ${v.message}`);

  const report: RunReport = {
    file: plan.file,
    name: plan.name,
    seed: plan.seed,
    placement: plan.placement,
    traceDigest: res.digest,
    wallSeconds: res.wallSeconds,
    virtualSeconds: res.virtualUs / US_PER_SECOND,
    events: res.events,
    hostCount: res.hostCount,
    end: res.end,
    ...(res.failure ? { failure: res.failure } : {}),
    ok: failures.length === 0,
    watch: watchLines(model),
    steps,
    expectations,
    invariantsChecked: [...ALL_INVARIANTS.map((i) => i.id).filter((id) => !disabled.has(id)), ...(plan.explore ? [LIVENESS] : [])],
    violations,
    allowedViolations: all.filter((v) => allow.has(v.invariant)),
    pods,
    summary: deletionSummaries(pods, steps),
    clientLimits: plan.clientLimits,
    failures,
    replay,
    warnings: plan.warnings.map(formatIssue),
    ...(traffic ? { traffic } : {}),
  };
  return { report, model };
}

/**
 * Pairs the driver's `driver.step` begin/end records. A sleep's records are both written when it
 * starts (it only moves the timeline's clock), so its end is when that clock said the next step
 * was due: its start plus its duration, or the next step's start if that came sooner (a sleep
 * after a round trip ends `duration` after the previous step's scheduled start). Summaries print
 * durations as a scenario writes them (`42h`).
 */
function stepResults(m: TraceModel, planned: readonly DriverStep[]): StepResult[] {
  const out: StepResult[] = [];
  const open = new Map<number, { index: number; line?: number; id?: string; kind: string; summary: string; startUs: number }>();
  for (const r of m.driverSteps) {
    const d = (r.data ?? {}) as { index: number; id?: string; step: string; ph: string; span: number; ok?: boolean; error?: string; output?: unknown[] };
    const plan = planned[d.index] as DriverStep | undefined;
    const summary = plan ? describe(plan, formatDuration) : r.msg.replace(/^#\d+ \S+ /, '');
    if (d.ph === 'B') open.set(d.span, { index: d.index, ...(plan?.line !== undefined ? { line: plan.line } : {}), ...(d.id ? { id: d.id } : {}), kind: d.step, summary, startUs: r.t });
    else {
      const b = open.get(d.span);
      if (!b) continue;
      open.delete(d.span);
      const output = d.output?.length ? { output: d.output.map(String) } : {};
      if (plan?.expectFailure) {
        // `expectFailure: true`: failing is the expected outcome; succeeding is the failure.
        const failed = d.ok !== true;
        out.push({ ...b, endUs: r.t, ok: failed, expectFailure: true, ...(failed ? { expectedError: d.error ?? 'failed' } : { error: 'succeeded, but the scenario says expectFailure: true' }), ...output });
      } else out.push({ ...b, endUs: r.t, ok: d.ok === true, ...(d.error !== undefined ? { error: d.error } : {}), ...output });
    }
  }
  for (const b of open.values()) out.push({ ...b, ok: false, error: 'still running when the run ended' });
  out.sort((a, b) => a.index - b.index);
  return out.map((s, i) => {
    const plan = planned[s.index] as DriverStep | undefined;
    if (plan?.kind !== 'sleep' || s.endUs === undefined) return s;
    const next = out[i + 1]?.index === s.index + 1 ? out[i + 1].startUs : Infinity;
    return { ...s, endUs: Math.max(s.endUs, Math.min(s.startUs + plan.durationUs, next)) };
  });
}
