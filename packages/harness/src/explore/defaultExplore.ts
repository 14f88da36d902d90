/**
 * The explore section `podsim explore` and `podsim replay` use for a scenario that has none
 * (issue #27 item 8), so that any example or case can be explored as it is: the fault window is
 * the span of the timeline's steps as they run without faults (the scenario's own seed, so every
 * explored seed and every replay gets the same window), every fault is over 30 s after it (the
 * longest default `for:`), and each deleted pod must then be gone, its containers stopped,
 * within 2 min. The faults are the realistic mix of the README's explore example. Fault level
 * `none` (0) keeps a scenario without `explore:` as it is: no faults, judged like `podsim run`.
 */
import { US_PER_SECOND } from '@podsim/api';
import { runPlan } from '../engine.js';
import { compileScenario } from '../scenario/compile.js';
import type { LoadedScenario } from '../scenario/load.js';
import type { ExploreFaultSpec, ExploreSpec } from '../scenario/schema.js';
import { ScenarioError } from '../scenario/source.js';

const S = US_PER_SECOND;

/** The default fault mix (rates are Poisson means per run at level 1; durations in µs). */
export const DEFAULT_EXPLORE_FAULTS: readonly ExploreFaultSpec[] = [
  { kind: 'kubeletRestart', rate: 1.5, downFor: [2 * S, 20 * S] },
  { kind: 'runtimeError', rate: 1.5, calls: ['StopContainer', 'StopPodSandbox'], for: [5 * S, 20 * S] },
  { kind: 'runtimeDelay', rate: 1, calls: ['StopPodSandbox'], delay: [1 * S, 5 * S], for: [5 * S, 20 * S] },
  { kind: 'delay', rate: 1.5, delay: [S / 2, 5 * S], for: [5 * S, 20 * S] },
  { kind: 'disconnect', rate: 0.7, for: [5 * S, 30 * S] },
];

/** healAfter − the window's end: every default fault's `for:` / `downFor:` fits in it. */
export const DEFAULT_HEAL_AFTER_WINDOW_US = 30 * S;
export const DEFAULT_LIVENESS_BUDGET_US = 120 * S;

/**
 * The default explore section of `sc` (which has no `explore:`): runs the timeline once without
 * faults, one thread, at the scenario's seed, and takes [0, end of its last step] as the window.
 * Throws ScenarioError when the timeline records no step (nothing to draw faults around).
 */
export async function defaultExploreSpec(sc: LoadedScenario): Promise<ExploreSpec> {
  const plan = compileScenario(sc);
  const res = await runPlan(plan, { engine: 'local' });
  const steps = res.traces.filter((r) => r.kind === 'driver.step');
  if (steps.length === 0) {
    throw new ScenarioError([sc.src.issue(['steps'], 'no explore: section, and the timeline ran no step to draw faults around: add an explore: section (window, healAfter, livenessBudget, faults)')]);
  }
  const end = Math.max(1 * S, steps[steps.length - 1].t);
  return { window: [0, end], healAfter: end + DEFAULT_HEAL_AFTER_WINDOW_US, livenessBudget: DEFAULT_LIVENESS_BUDGET_US, faults: [...DEFAULT_EXPLORE_FAULTS] };
}

/**
 * `sc` ready to explore at fault `level`: as it is when it has an explore: section or the level
 * is 0, else with {@link defaultExploreSpec}. `defaulted` says which.
 */
export async function exploreReady(sc: LoadedScenario, level: number): Promise<{ sc: LoadedScenario; defaulted?: ExploreSpec }> {
  if (sc.doc.explore || level === 0) return { sc };
  const ex = await defaultExploreSpec(sc);
  return { sc: withExplore(sc, ex), defaulted: ex };
}

/** `sc` with `ex` as its explore: section. */
export function withExplore(sc: LoadedScenario, ex: ExploreSpec): LoadedScenario {
  return { ...sc, doc: { ...sc.doc, explore: ex } };
}

/** One line saying which default section is used, and how to choose another. */
export function describeDefaultExplore(file: string, ex: ExploreSpec, fmt: (us: number) => string): string {
  return (
    `${file}: no explore: section, so the default one is used: faults (${ex.faults.map((f) => f.kind).join(', ')}) start within the span of the ` +
    `timeline's steps [${fmt(ex.window[0])}, ${fmt(ex.window[1])}], healAfter ${fmt(ex.healAfter)}, livenessBudget ${fmt(ex.livenessBudget)}; ` +
    'add an explore: section to choose them (README "Exploring seeds"), or --faults none to run the file as it is'
  );
}
