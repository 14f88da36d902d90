/**
 * One seed of `podsim explore` / `podsim replay`: the scenario with the faults its seed draws
 * (optionally only some of them, and only some steps — what shrinking tries), run to the end of
 * the liveness budget and judged by the §14 invariants plus liveness. The scenario's `expect:`
 * block is not judged under drawn faults (it describes the fault-free run); `podsim replay` of a
 * scenario without `explore:` asks for it (`expectations`), as `podsim run` would judge it.
 * This is what one piscina task runs.
 */
import type { TraceRecord } from '@podsim/api';
import { US_PER_SECOND } from '@podsim/api';
import { runPlan, type EngineKind } from '../engine.js';
import { expectationFailure, judge, stepFailure, type RunReport } from '../run.js';
import { compileScenario, type RunPlan } from '../scenario/compile.js';
import { loadScenario, type LoadedScenario } from '../scenario/load.js';
import { describeFault, type ScheduledFault } from '../scenario/scheduled.js';
import { ScenarioError, formatIssue } from '../scenario/source.js';
import type { Violation } from '../checkers/invariants.js';
import type { ExploreSpec } from '../scenario/schema.js';
import { drawFaults, type ExploreTargets } from './draw.js';
import { withExplore } from './defaultExplore.js';
import { expandNodes } from '../scenario/nodePools.js';

/** One seed to run. */
export interface SeedTask {
  readonly file: string;
  readonly seed: number;
  /** Multiplier of every explore rate (`--faults`). */
  readonly level: number;
  /** Keep only the drawn faults with these ids (shrinking); all when omitted. */
  readonly keepFaults?: readonly string[];
  /** Keep only the timeline steps with these indices (shrinking); all when omitted. */
  readonly keepSteps?: readonly number[];
  /** Return the merged trace (replay, trace export). */
  readonly traces?: boolean;
  readonly engine?: EngineKind;
  /**
   * Also judge the timeline's steps and the `expect:` block as `podsim run` does (replay of a
   * scenario without `explore:`, which draws no faults); ignored when the scenario explores.
   */
  readonly expectations?: boolean;
  /**
   * The explore section to use when the file has none (the default one, which the caller
   * computed once: explore/defaultExplore.ts); ignored when the file has its own.
   */
  readonly explore?: ExploreSpec;
}

/** The steps and expectations of a seed judged as `podsim run` judges them. */
export interface SeedExpectations {
  readonly passed: number;
  readonly total: number;
  /** Failed expectations and failed steps, as `podsim run` prints them. */
  readonly failures: readonly string[];
}

/** The first violation that makes a seed fail. `engine` and `timeline` stand for a crashed or unfinished run. */
export interface FirstViolation {
  readonly invariant: string;
  readonly t: number;
  readonly message: string;
}

export interface SeedResult {
  readonly seed: number;
  readonly ok: boolean;
  readonly traceDigest: string;
  readonly wallSeconds: number;
  readonly virtualSeconds: number;
  readonly events: number;
  readonly first?: FirstViolation;
  /** Distinct ids of everything violated (invariants, `liveness`, `engine`, `timeline`). */
  readonly violated: readonly string[];
  readonly violations: readonly Violation[];
  /** The drawn faults the run used, in schedule order. */
  readonly faults: ReadonlyArray<{ readonly id: string; readonly atUs: number; readonly summary: string }>;
  /** With `task.expectations` on a scenario without `explore:`: the steps and `expect:` judged. */
  readonly expectations?: SeedExpectations;
  /** The scenario did not compile (shrinking removed a step something depends on). */
  readonly error?: string;
  readonly traces?: TraceRecord[];
}

/** Actor ids `disconnect` may hit, nodes faults may hit: from the scenario's cluster. */
export function exploreTargets(sc: LoadedScenario): ExploreTargets {
  const nodes = expandNodes(sc.doc.cluster, sc.src, []).map((n) => n.name);
  return { nodes, clients: [...nodes.map((n) => `kubelet/${n}`), 'kube-controller-manager', 'kube-scheduler'] };
}

/** The faults `seed` draws at `level` (none without an `explore:` section). */
export function drawnFaults(sc: LoadedScenario, seed: number, level: number): ScheduledFault[] {
  return sc.doc.explore ? drawFaults(sc.doc.explore, exploreTargets(sc), seed, level) : [];
}

/**
 * The plan of one seed: drawn faults (filtered), steps (filtered), no `expect:` (kept when
 * `task.expectations` asks for it and the scenario has no `explore:`). Throws ScenarioError.
 */
export function seedPlan(sc: LoadedScenario, task: Omit<SeedTask, 'file'>): RunPlan {
  const keepF = task.keepFaults ? new Set(task.keepFaults) : undefined;
  const drawn = drawnFaults(sc, task.seed, task.level).filter((f) => !keepF || keepF.has(f.id));
  const keepS = task.keepSteps ? new Set(task.keepSteps) : undefined;
  const variant: LoadedScenario = {
    ...sc,
    doc: { ...sc.doc, expect: judgesExpectations(sc, task) ? sc.doc.expect : undefined },
    steps: keepS ? sc.steps.filter((_, i) => keepS.has(i)) : sc.steps,
  };
  return compileScenario(variant, { seed: task.seed, scheduledFaults: drawn });
}

/** Whether a seed run judges steps and `expect:` too: asked for, and no faults are drawn. */
function judgesExpectations(sc: LoadedScenario, task: Pick<SeedTask, 'expectations'>): boolean {
  return task.expectations === true && sc.doc.explore === undefined;
}

/** The verdict of a judged run: ok, the first violation, and every id violated. */
export function verdict(report: RunReport): { ok: boolean; first?: FirstViolation; violated: string[] } {
  const firsts: FirstViolation[] = [];
  if (report.failure) {
    const f = report.failure;
    firsts.push({ invariant: 'engine', t: f.t ?? 0, message: `${f.kind}${f.actor ? ` in ${f.actor}` : ''}: ${f.message}` });
  } else if (report.end !== 'stopped') {
    firsts.push({ invariant: 'timeline', t: report.virtualSeconds * US_PER_SECOND, message: `the run ${report.end === 'bound' ? 'reached its virtual-time bound' : 'ran out of events'} before the timeline finished` });
  }
  firsts.push(...report.violations);
  const violated = [...new Set(firsts.map((v) => v.invariant))];
  return { ok: firsts.length === 0, ...(firsts.length > 0 ? { first: firsts[0] } : {}), violated };
}

const loaded = new Map<string, LoadedScenario>();

/** Runs one seed (engine `local` unless told otherwise). Scenario problems come back as `error`. */
export async function runSeed(task: SeedTask): Promise<SeedResult> {
  let sc = loaded.get(task.file);
  if (!sc) {
    sc = loadScenario(task.file);
    loaded.set(task.file, sc);
  }
  if (task.explore && !sc.doc.explore) sc = withExplore(sc, task.explore);
  let plan: RunPlan;
  try {
    plan = seedPlan(sc, task);
  } catch (err) {
    if (!(err instanceof ScenarioError)) throw err;
    return { seed: task.seed, ok: true, traceDigest: '', wallSeconds: 0, virtualSeconds: 0, events: 0, violated: [], violations: [], faults: [], error: err.issues.map(formatIssue).join('\n') };
  }
  const res = await runPlan(plan, { engine: task.engine ?? 'local' });
  const { report } = judge(plan, res);
  const v = verdict(report);
  const expectations = judgesExpectations(sc, task) ? seedExpectations(report) : undefined;
  const drawnIds = new Set(drawnFaults(sc, task.seed, task.level).map((f) => f.id));
  return {
    seed: task.seed,
    ok: v.ok,
    traceDigest: report.traceDigest,
    wallSeconds: report.wallSeconds,
    virtualSeconds: report.virtualSeconds,
    events: report.events,
    ...(v.first ? { first: v.first } : {}),
    ...(expectations ? { expectations } : {}),
    violated: v.violated,
    violations: report.violations,
    faults: plan.scheduledFaults.filter((f) => drawnIds.has(f.id)).map((f) => ({ id: f.id, atUs: f.atUs, summary: describeFault(f.fault) })),
    ...(task.traces ? { traces: res.traces } : {}),
  };
}

/** The report's steps and expectations, counted and worded as `podsim run` prints them. */
function seedExpectations(report: RunReport): SeedExpectations {
  const failures = [...report.steps.filter((st) => !st.ok).map(stepFailure), ...report.expectations.filter((e) => !e.ok).map(expectationFailure)];
  return { passed: report.expectations.filter((e) => e.ok).length, total: report.expectations.length, failures };
}
