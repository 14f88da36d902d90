/**
 * `podsim explore`: a seed sweep (FoundationDB / TigerBeetle VOPR style). Every seed runs the
 * scenario with the faults it draws (a fault phase until `explore.healAfter`, then a healing
 * phase) on a {@link SeedPool}; failing seeds are grouped by the first invariant they violated,
 * each with the command that replays it. Seeds are handed to the pool a few at a time (at most
 * twice its threads in flight), so a time-boxed sweep (`--for`) or one that stops after K
 * failures (`--until-failures`) starts no seed after it is told to stop; the seeds in flight
 * then finish and are counted.
 */
import type { SeedPool } from './pool.js';
import type { SeedResult } from './runSeed.js';
import type { ExploreSpec } from '../scenario/schema.js';

/**
 * Why a sweep ended: every seed ran, its `--for` time was up, `--until-failures` was reached, it
 * hit the seed cap, or it was told to stop (SIGTERM: a Job's pod deleted or past its deadline).
 */
export type ExploreStopReason = 'done' | 'for' | 'until-failures' | 'limit' | 'signal';

export interface ExploreOptions {
  readonly file: string;
  /** The seeds, in the order they are started (may be open-ended: see `maxSeeds`). */
  readonly seeds: Iterable<number>;
  readonly level: number;
  /** The default explore section of a file without one (explore/defaultExplore.ts). */
  readonly explore?: ExploreSpec;
  /** Called after every finished seed (progress bar). */
  readonly onSeed?: (r: SeedResult, done: number, failures: number) => void;
  /** Start no seed after this many wall milliseconds from the start (`--for`). */
  readonly forMs?: number;
  /** Start no seed once this many have failed (`--until-failures`). */
  readonly untilFailures?: number;
  /** Start at most this many seeds (the bound of an open-ended sequence). */
  readonly maxSeeds?: number;
  /** Start no seed once this is aborted (SIGTERM). */
  readonly signal?: AbortSignal;
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
  /** Why the sweep ended (`done` unless `--for`, `--until-failures` or the seed cap stopped it). */
  readonly stopped: ExploreStopReason;
  /** Per seed, in seed order: ok, first violation, digest, faults drawn. */
  readonly results: readonly SeedResult[];
}

/** The command that replays one seed of a sweep. */
export function exploreReplayCommand(file: string, seed: number, level: number): string {
  return `pnpm podsim replay ${file} --seed ${seed}${level !== 1 ? ` --faults ${level}` : ''}`;
}

/** What a seed result must carry to be grouped (a full {@link SeedResult} or a shard's outcome). */
export interface GroupableResult {
  readonly seed: number;
  readonly ok: boolean;
  readonly first?: { readonly invariant: string; readonly t: number; readonly message: string };
}

/**
 * The failing seeds of `results` grouped by first violated invariant: the largest group first
 * (ties by invariant name), seeds in the order of `results`. `explore merge` groups the shards'
 * outcomes with the same function, so a merged sweep lists what one machine would.
 */
export function groupFailures(results: readonly GroupableResult[], file: string, level: number): ExploreGroup[] {
  const byInvariant = new Map<string, ExploreGroup['seeds'][number][]>();
  for (const r of results) {
    if (r.ok || !r.first) continue;
    const list = byInvariant.get(r.first.invariant) ?? [];
    list.push({ seed: r.seed, t: r.first.t, message: r.first.message, replay: exploreReplayCommand(file, r.seed, level) });
    byInvariant.set(r.first.invariant, list);
  }
  return [...byInvariant].map(([invariant, seeds]) => ({ invariant, seeds })).sort((a, b) => b.seeds.length - a.seeds.length || (a.invariant < b.invariant ? -1 : 1));
}

/** Runs the seeds on the pool until they are done or a stop condition holds; resolves when the seeds in flight have finished. */
export async function explore(pool: SeedPool, o: ExploreOptions): Promise<ExploreSummary> {
  const started = performance.now();
  const results: SeedResult[] = [];
  let failures = 0;
  let issued = 0;
  let stopped: ExploreStopReason = 'done';
  const next = o.seeds[Symbol.iterator]();
  // Twice the pool's threads keeps every thread busy while a result travels back.
  const inFlightMax = pool.workers * 2;
  await new Promise<void>((resolve, reject) => {
    let inFlight = 0;
    let over = false;
    const pump = (): void => {
      while (!over && inFlight < inFlightMax) {
        if (o.signal?.aborted) stopped = 'signal';
        else if (o.untilFailures !== undefined && failures >= o.untilFailures) stopped = 'until-failures';
        else if (o.forMs !== undefined && performance.now() - started >= o.forMs) stopped = 'for';
        if (stopped !== 'done') {
          over = true;
          break;
        }
        const n = next.next();
        if (n.done) {
          over = true;
          break;
        }
        if (o.maxSeeds !== undefined && issued >= o.maxSeeds) {
          stopped = 'limit';
          over = true;
          break;
        }
        issued++;
        inFlight++;
        pool.run({ file: o.file, seed: n.value, level: o.level, ...(o.explore ? { explore: o.explore } : {}) }).then((r) => {
          inFlight--;
          results.push(r);
          if (!r.ok) failures++;
          o.onSeed?.(r, results.length, failures);
          pump();
        }, reject);
      }
      if (inFlight === 0) resolve();
    };
    pump();
  });
  const wallSeconds = (performance.now() - started) / 1000;
  results.sort((a, b) => a.seed - b.seed);
  return {
    file: o.file,
    level: o.level,
    workers: pool.workers,
    seeds: results.length,
    failing: failures,
    wallSeconds,
    seedsPerSecond: results.length / wallSeconds,
    groups: groupFailures(results, o.file, o.level),
    stopped,
    results,
  };
}
