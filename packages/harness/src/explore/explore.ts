/**
 * `podsim explore`: a seed sweep (FoundationDB / TigerBeetle VOPR style). Every seed runs the
 * scenario with the faults it draws (a fault phase until `explore.healAfter`, then a healing
 * phase) on a {@link SeedPool}; failing seeds are grouped by the first invariant they violated,
 * each with the command that replays it.
 */
import type { SeedPool } from './pool.js';
import type { SeedResult } from './runSeed.js';
import type { ExploreSpec } from '../scenario/schema.js';

export interface ExploreOptions {
  readonly file: string;
  readonly seeds: readonly number[];
  readonly level: number;
  /** The default explore section of a file without one (explore/defaultExplore.ts). */
  readonly explore?: ExploreSpec;
  /** Called after every finished seed (progress bar). */
  readonly onSeed?: (r: SeedResult, done: number, failures: number) => void;
}

export interface ExploreGroup {
  /** The first violated invariant (`liveness`, `engine`, `timeline` or a §14 checker id). */
  readonly invariant: string;
  readonly seeds: ReadonlyArray<{ readonly seed: number; readonly t: number; readonly message: string; readonly replay: string }>;
}

export interface ExploreSummary {
  readonly file: string;
  readonly level: number;
  readonly workers: number;
  readonly seeds: number;
  readonly failing: number;
  readonly wallSeconds: number;
  readonly seedsPerSecond: number;
  readonly groups: readonly ExploreGroup[];
  /** Per seed: ok, first violation, digest, faults drawn. */
  readonly results: readonly SeedResult[];
}

/** The command that replays one seed of a sweep. */
export function exploreReplayCommand(file: string, seed: number, level: number): string {
  return `pnpm podsim replay ${file} --seed ${seed}${level !== 1 ? ` --faults ${level}` : ''}`;
}

/** Runs every seed on the pool; resolves when all are done. */
export async function explore(pool: SeedPool, o: ExploreOptions): Promise<ExploreSummary> {
  const started = performance.now();
  let done = 0;
  let failures = 0;
  const results = await Promise.all(
    o.seeds.map(async (seed) => {
      const r = await pool.run({ file: o.file, seed, level: o.level, ...(o.explore ? { explore: o.explore } : {}) });
      done++;
      if (!r.ok) failures++;
      o.onSeed?.(r, done, failures);
      return r;
    }),
  );
  const wallSeconds = (performance.now() - started) / 1000;
  const byInvariant = new Map<string, ExploreGroup['seeds'][number][]>();
  for (const r of results) {
    if (r.ok || !r.first) continue;
    const list = byInvariant.get(r.first.invariant) ?? [];
    list.push({ seed: r.seed, t: r.first.t, message: r.first.message, replay: exploreReplayCommand(o.file, r.seed, o.level) });
    byInvariant.set(r.first.invariant, list);
  }
  const groups = [...byInvariant].map(([invariant, seeds]) => ({ invariant, seeds })).sort((a, b) => b.seeds.length - a.seeds.length || (a.invariant < b.invariant ? -1 : 1));
  return {
    file: o.file,
    level: o.level,
    workers: pool.workers,
    seeds: results.length,
    failing: failures,
    wallSeconds,
    seedsPerSecond: results.length / wallSeconds,
    groups,
    results,
  };
}
