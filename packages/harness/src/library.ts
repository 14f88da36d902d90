/**
 * podsim as a library: the calls the public entry (`@podsim/harness`, src/index.ts) offers on
 * top of what the CLI does. Each is what a `podsim` command does, minus printing:
 *
 * - {@link loadScenarioObject}: a scenario built in code (the same document a file holds),
 *   validated exactly as a file is;
 * - {@link runScenario}: `podsim run` (a file path, a loaded scenario, or a scenario object);
 * - {@link runBenchStorm}: `podsim bench storm`;
 * - {@link exploreSeeds}: `podsim explore` over a seed range on a worker pool.
 *
 * Errors: bad input throws {@link ScenarioError} (its `issues` name file, line and field) before
 * any actor starts; a failed run is not an exception: the report's `ok` is false and `failures`
 * says why (with `replay`, the command that reruns it).
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { stringify } from 'yaml';
import { runBenchPlan, type BenchFigures } from './bench/runBench.js';
import { stormPlan } from './bench/stormPlan.js';
import { exploreReady } from './explore/defaultExplore.js';
import { explore, type ExploreSummary } from './explore/explore.js';
import { SeedPool } from './explore/pool.js';
import { runCompiled, type RunOptions, type RunReport } from './run.js';
import { compileScenario } from './scenario/compile.js';
import { loadScenario, loadScenarioText, type LoadedScenario } from './scenario/load.js';
import { SourceDoc } from './scenario/source.js';

/**
 * A scenario built in code: the `kind: Scenario` document of a scenario file as an object
 * (`cluster`, `steps`, `expect`, `explore`, …; durations as strings such as `'30s'` or numbers of
 * seconds), with its Kubernetes manifests inline under `manifests`. The shape is checked at run
 * time with the same schema as a file (the type is deliberately loose: YAML-shaped input).
 */
export interface ScenarioObject {
  readonly kind?: 'Scenario';
  readonly name?: string;
  readonly cluster?: Record<string, unknown>;
  readonly manifests?: readonly Record<string, unknown>[];
  readonly steps?: readonly Record<string, unknown>[];
  readonly expect?: Record<string, unknown>;
  readonly [field: string]: unknown;
}

export interface LoadObjectOptions {
  /**
   * Where the scenario "lives": the name its error messages carry and the base for relative
   * paths in it (`manifestFiles`, `cluster.actors[].module`). Default `<scenario object>` in the
   * current directory.
   */
  readonly file?: string;
}

/**
 * Validates a scenario built in code. Throws {@link ScenarioError} as {@link loadScenario} does;
 * an issue's line/column point into the YAML rendering of the object (its `field` path is the
 * reliable part).
 */
export function loadScenarioObject(scenario: ScenarioObject, opts: LoadObjectOptions = {}): LoadedScenario {
  const file = opts.file ?? resolve('<scenario object>');
  const text = stringify({ kind: 'Scenario', ...scenario }, { lineWidth: 0 });
  const loaded = loadScenarioText(file, text);
  // With opts.file the caller names a path; the object may not be written there (yet).
  return existsSync(file) ? loaded : { ...loaded, fromObject: true };
}

/** A scenario file path, a loaded scenario, or a scenario object. */
export type ScenarioInput = string | LoadedScenario | ScenarioObject;

function isLoaded(x: ScenarioInput): x is LoadedScenario {
  return typeof x === 'object' && (x as LoadedScenario).src instanceof SourceDoc;
}

/**
 * Runs a scenario as `podsim run` does and returns its typed report (rows, steps, per-pod
 * timings, expectations, invariants, digest, figures, replay command; for a scenario object the
 * replay is `runScenario(<the same object>, { seed, placement })`, or, when its `file` option
 * names an existing file, the CLI command for that file). Times in the report:
 * virtual seconds where named so; `pods[].*Us` in virtual µs. Throws ScenarioError for bad input.
 */
export async function runScenario(input: ScenarioInput, opts: RunOptions = {}): Promise<RunReport> {
  const sc = typeof input === 'string' ? loadScenario(input) : isLoaded(input) ? input : loadScenarioObject(input);
  return runCompiled(compileScenario(sc, opts), opts);
}

export interface BenchStormOptions {
  readonly nodes: number;
  readonly podsPerNode: number;
  /** Containers per pod (default 1). */
  readonly containers?: number;
  readonly seed?: number;
  /** Engine placement (default `single`). */
  readonly placement?: string;
}

/**
 * `podsim bench storm`: create `nodes × podsPerNode` pods, delete them all at once, check every
 * invariant; returns the figures of the `--json` line (wall seconds unless named virtual). The
 * raw transport measurement is skipped (the CLI's `transport ceiling` figures are absent).
 */
export async function runBenchStorm(o: BenchStormOptions): Promise<BenchFigures> {
  const plan = stormPlan({ nodes: o.nodes, podsPerNode: o.podsPerNode, containers: o.containers ?? 1, seed: o.seed ?? 1, placement: o.placement ?? 'single' });
  return runBenchPlan(plan, { skipRaw: true });
}

export interface ExploreSeedsOptions {
  /** The scenario file (explore runs files: each worker thread loads it). */
  readonly file: string;
  /** First and last seed, inclusive. */
  readonly seeds: readonly [number, number];
  /** Fault level (0 = none, 1 = the file's rates; default 1). */
  readonly level?: number;
  /** Worker threads (default: the machine's parallelism, at most one per seed). */
  readonly workers?: number;
}

/**
 * `podsim explore`: runs every seed with the faults it draws; failing seeds come grouped by the
 * first violated invariant with their replay commands. A file without an `explore:` section gets
 * the default one, as on the CLI.
 */
export async function exploreSeeds(o: ExploreSeedsOptions): Promise<ExploreSummary> {
  const level = o.level ?? 1;
  const { defaulted } = await exploreReady(loadScenario(o.file), level);
  const [a, b] = o.seeds;
  const seeds = Array.from({ length: Math.max(0, b - a + 1) }, (_, i) => a + i);
  const pool = new SeedPool(Math.max(1, Math.min(o.workers ?? availableParallelism(), seeds.length)));
  try {
    return await explore(pool, { file: o.file, seeds, level, ...(defaulted ? { explore: defaulted } : {}) });
  } finally {
    await pool.close();
  }
}
