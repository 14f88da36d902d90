/**
 * Exploration as a standing check (issue #27 item 9): every shipped example and case explored at
 * each fault level over a fixed seed range — a file without an `explore:` section with the
 * default one (`defaultExplore.ts`) — all on one seed pool. A failing seed is explained only by
 * a {@link KNOWN_FAILURES} entry for its file and first violated invariant, which cites why it
 * fails; every other failure is unexplained and comes with the commands that replay and shrink
 * it. The CI test (`test/exploreStanding.test.ts`) runs a bounded sweep, `pnpm explore:soak`
 * (`soak.ts`) a long one.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadScenario } from '../scenario/load.js';
import type { ExploreSpec } from '../scenario/schema.js';
import { durationText } from '../scenario/scheduled.js';
import { defaultExploreSpec } from './defaultExplore.js';
import { FAULT_LEVELS } from './draw.js';
import { explore, exploreReplayCommand } from './explore.js';
import type { SeedPool } from './pool.js';

/** A failure the sweep expects, with the reason (an upstream issue, a planted bug, an open podsim issue). */
export interface KnownFailure {
  readonly file: string;
  /** The first violated invariant it shows as. */
  readonly invariant: string;
  readonly reason: string;
}

/**
 * Failures the standing exploration accepts. Entries citing issue #27 items 1, 4 and 5 are the
 * fault-model defects fixed on another branch: remove them once it is merged.
 */
export const KNOWN_FAILURES: readonly KnownFailure[] = [
  {
    file: 'examples/explore-planted-bug.yaml',
    invariant: 'final-delete-own-uid',
    reason: 'the planted kubelet bug skipUidPrecondition: the file exists to be found by explore (explore.test.ts)',
  },
  {
    file: 'examples/explore-planted-bug.yaml',
    invariant: 'no-removal-while-running',
    reason: 'the planted kubelet bug skipUidPrecondition: the file exists to be found by explore (explore.test.ts)',
  },
  {
    file: 'examples/cases/C06-spec-grace-zero-instant-api-removal.yaml',
    invariant: 'liveness',
    reason:
      'faithful v1.22.8: a force-deleted pod whose StopContainer fails is never retried and its container runs on, kubernetes/kubernetes#113145 (fixed in 1.27); test/found/faithful-force-deleted-kill-error-never-retried.yaml',
  },
];

/**
 * Examples too large to explore seed by seed: examples/mass-delete-300-nodes.yaml (300 nodes, 20k
 * pods, ~15 min of wall time a run) would take the standing exploration hours.
 */
export const TOO_LARGE_TO_EXPLORE: readonly string[] = ['examples/mass-delete-300-nodes.yaml'];

/** Files the standing exploration covers: every example and case, in name order, but those too large. */
export function standingFiles(root = '.'): string[] {
  const list = (dir: string) =>
    readdirSync(join(root, dir))
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .map((f) => `${dir}/${f}`);
  return [...list('examples'), ...list('examples/cases')].filter((f) => !TOO_LARGE_TO_EXPLORE.includes(f));
}

export interface StandingOptions {
  readonly files: readonly string[];
  /** Fault levels to explore each file at (`--faults`). */
  readonly levels: readonly number[];
  /** Seeds per file and level: 1..n, or per file (files not listed get `seeds`). */
  readonly seeds: number;
  readonly seedsPerFile?: Readonly<Record<string, number>>;
  /** Levels per file (files not listed get `levels`). */
  readonly levelsPerFile?: Readonly<Record<string, readonly number[]>>;
  readonly known?: readonly KnownFailure[];
  /** After each file and level is done. */
  readonly onDone?: (line: string) => void;
}

export interface StandingFailure {
  readonly file: string;
  readonly level: number;
  readonly seed: number;
  readonly invariant: string;
  readonly t: number;
  readonly message: string;
  /** The known entry that explains it, if any. */
  readonly known?: KnownFailure;
  /** Replay and shrink commands. */
  readonly replay: string;
  readonly shrink: string;
}

export interface StandingResult {
  readonly seeds: number;
  readonly wallSeconds: number;
  readonly failures: readonly StandingFailure[];
  readonly unexplained: readonly StandingFailure[];
  /** Known entries no seed of this sweep showed. */
  readonly unused: readonly KnownFailure[];
  /** The default explore sections used, by file. */
  readonly defaults: ReadonlyMap<string, ExploreSpec>;
}

/** Runs the sweep on `pool`: every file at every level over its seeds, all seeds in flight at once. */
export async function standingExploration(pool: SeedPool, o: StandingOptions): Promise<StandingResult> {
  const started = performance.now();
  const known = o.known ?? KNOWN_FAILURES;
  const defaults = new Map<string, ExploreSpec>();
  for (const file of o.files) {
    const sc = loadScenario(file);
    if (!sc.doc.explore) defaults.set(file, await defaultExploreSpec(sc));
  }
  let seeds = 0;
  const runs = o.files.flatMap((file) =>
    (o.levelsPerFile?.[file] ?? o.levels).map(async (level) => {
      const n = o.seedsPerFile?.[file] ?? o.seeds;
      seeds += n;
      const ex = defaults.get(file);
      const s = await explore(pool, { file, level, seeds: Array.from({ length: n }, (_, i) => i + 1), ...(ex ? { explore: ex } : {}) });
      o.onDone?.(`${file} level ${level}: ${s.seeds} seeds, ${s.failing} failing (${s.wallSeconds.toFixed(1)}s)`);
      return s.results.flatMap((r): StandingFailure[] => {
        if (r.ok || !r.first) return [];
        const replay = exploreReplayCommand(file, r.seed, level);
        const k = known.find((x) => x.file === file && x.invariant === r.first!.invariant);
        return [{ file, level, seed: r.seed, invariant: r.first.invariant, t: r.first.t, message: r.first.message, ...(k ? { known: k } : {}), replay, shrink: `${replay} --shrink` }];
      });
    }),
  );
  const failures = (await Promise.all(runs)).flat();
  const used = new Set(failures.map((f) => f.known).filter((k) => k !== undefined));
  return {
    seeds,
    wallSeconds: (performance.now() - started) / 1000,
    failures,
    unexplained: failures.filter((f) => !f.known),
    unused: known.filter((k) => o.files.includes(k.file) && !used.has(k)),
    defaults,
  };
}

/** The levels `low`, `medium`, `high`. */
export const STANDING_LEVELS: readonly number[] = [FAULT_LEVELS.low, FAULT_LEVELS.medium, FAULT_LEVELS.high];

/** Report lines: each unexplained failure with its replay and shrink commands, then the known ones seen and not seen. */
export function formatStanding(r: StandingResult): string[] {
  const out: string[] = [];
  const at = (f: StandingFailure) => `${f.file} --faults ${f.level} seed ${f.seed}: ${f.invariant} at ${durationText(Math.round(f.t))}: ${f.message.length > 200 ? `${f.message.slice(0, 200)}…` : f.message}`;
  for (const f of r.unexplained) out.push(`UNEXPLAINED ${at(f)}`, `    ${f.replay}`, `    ${f.shrink}`);
  const byKnown = new Map<KnownFailure, StandingFailure[]>();
  for (const f of r.failures) if (f.known) byKnown.set(f.known, [...(byKnown.get(f.known) ?? []), f]);
  for (const [k, fs] of byKnown) out.push(`known: ${k.file} ${k.invariant}: ${fs.length} seed${fs.length === 1 ? '' : 's'} (${k.reason})`);
  for (const k of r.unused) out.push(`known but not seen in this sweep: ${k.file} ${k.invariant}`);
  out.push(`${r.seeds} seeds in ${r.wallSeconds.toFixed(1)}s wall: ${r.failures.length} failing, ${r.unexplained.length} unexplained`);
  return out;
}
