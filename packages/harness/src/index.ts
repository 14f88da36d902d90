/**
 * `@podsim/harness`: podsim as a library — the stable, documented surface (README "Using podsim
 * from TypeScript"). Everything else the harness modules export is in
 * `@podsim/harness/internal`, for podsim's own tests and tools, and may change with the code.
 *
 * - Load: {@link loadScenario} (a file) and {@link loadScenarioObject} (built in code) validate a
 *   scenario; bad input throws {@link ScenarioError}, whose `issues` name file, line and field
 *   (format one with {@link formatIssue}).
 * - Run: {@link runScenario} / {@link runScenarioFile} run it as `podsim run` does and resolve to
 *   a {@link RunReport}; {@link runBenchStorm} is `podsim bench storm`; {@link exploreSeeds} is
 *   `podsim explore`.
 * - Your own actors: list them in the scenario's `cluster.actors` (see
 *   `@podsim/controllers`' `shellActor` for the helpers podsim's controllers are built on).
 *
 * Units: virtual time in the report is virtual seconds where a field says `Seconds`, virtual
 * microseconds where it says `Us`; wall time is always named `wall`.
 */
export { loadScenario, type LoadedScenario } from './scenario/load.js';
export { ScenarioError, formatIssue, type ScenarioIssue } from './scenario/source.js';
export {
  loadScenarioObject,
  runScenario,
  runBenchStorm,
  exploreSeeds,
  type ScenarioObject,
  type ScenarioInput,
  type LoadObjectOptions,
  type BenchStormOptions,
  type ExploreSeedsOptions,
} from './library.js';
export { runScenarioFile, replayCommand, NO_EXPECTATIONS, type RunOptions, type RunReport, type StepResult } from './run.js';
export type { ExpectationResult } from './expect/evaluate.js';
export { INVARIANT_IDS, type Violation } from './checkers/invariants.js';
export { formatPodTable, type PodSummary } from './report/report.js';
export type { DeletionSummary, EndReason } from './report/summary.js';
export type { BenchFigures } from './bench/runBench.js';
export type { ExploreSummary, ExploreGroup } from './explore/explore.js';
export type { SeedResult } from './explore/runSeed.js';
export type { EngineKind } from './engine.js';
