/**
 * One shard of a seed sweep, for running `podsim explore` as a Kubernetes Indexed Job (batch/v1
 * `completionMode: Indexed`): the Job controller gives each pod its completion index in
 * `JOB_COMPLETION_INDEX` (upstream v1.22 pkg/controller/job/indexed_job_utils.go
 * `addCompletionIndexEnvVariable`, 0 ≤ index < `completions`), and shard I of N runs exactly the
 * seeds with `seed mod N = I` — a stable partition: a seed lands in the same shard for the same N
 * whatever the range, and an open-ended (`--for`) sweep stays disjoint across shards.
 * A shard's result ({@link ShardResult}) is one JSON document naming the podsim build and the
 * scenario's content (hashes), so `explore merge` (merge.ts) refuses results of different sweeps.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidArgumentError } from 'commander';
import { KUBERNETES_VERSION, PODSIM_VERSION } from '../version.js';
import type { ExploreStopReason, ExploreSummary } from './explore.js';
import type { SeedResult } from './runSeed.js';

/** Shard `index` of `count` (0 ≤ index < count), as `--shard I/N` and `JOB_COMPLETION_INDEX` name it. */
export interface ShardSpec {
  readonly index: number;
  readonly count: number;
}

/** The most shards a sweep may be split into (an Indexed Job allows `completions` up to 10^5; a sweep of 10^4 pods is already a fleet). */
export const MAX_SHARDS = 10_000;

/** `--shard I/N`: 0 ≤ I < N ≤ {@link MAX_SHARDS}. Throws InvalidArgumentError (commander prints it, exit 2). */
export function parseShard(v: string): ShardSpec {
  const m = /^(\d+)\/(\d+)$/.exec(v);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > MAX_SHARDS || Number(m[1]) >= Number(m[2])) {
    throw new InvalidArgumentError(`expected I/N with 0 ≤ I < N ≤ ${MAX_SHARDS} (I counts from 0, as JOB_COMPLETION_INDEX does), e.g. 0/4.`);
  }
  return { index: Number(m[1]), count: Number(m[2]) };
}

/** `--shards N`: 1 ≤ N ≤ {@link MAX_SHARDS}. */
export function parseShardCount(v: string): number {
  if (!/^[1-9]\d*$/.test(v) || Number(v) > MAX_SHARDS) throw new InvalidArgumentError(`expected an integer from 1 to ${MAX_SHARDS}.`);
  return Number(v);
}

/**
 * The shard a run is: `--shard I/N` if given (an error if `JOB_COMPLETION_INDEX` names another
 * index); else, when `JOB_COMPLETION_INDEX` is set (an
 * Indexed Job's pod), that index of `--shards N` or `PODSIM_SHARDS`; else none (the whole
 * range). `{ error }` names the flag or variable at fault (the CLI prints it, exit 2).
 */
export function resolveShard(o: { shard?: ShardSpec; shards?: number }, env: NodeJS.ProcessEnv): { shard?: ShardSpec; error?: string } {
  if (o.shard) {
    if (o.shards !== undefined && o.shards !== o.shard.count) return { error: `--shard ${o.shard.index}/${o.shard.count} and --shards ${o.shards} disagree: give one of them` };
    // Inside an Indexed Job's pod an explicit --shard that names another index would run a
    // shard twice and leave this one out of the merge; say so rather than pick one.
    const index = env.JOB_COMPLETION_INDEX;
    if (index !== undefined && index !== '' && index !== String(o.shard.index)) {
      return { error: `--shard ${o.shard.index}/${o.shard.count} and JOB_COMPLETION_INDEX=${index} disagree: give one of them (unset JOB_COMPLETION_INDEX to run a shard by hand)` };
    }
    return { shard: o.shard };
  }
  const index = env.JOB_COMPLETION_INDEX;
  if (index === undefined || index === '') {
    if (o.shards !== undefined) return { error: '--shards N needs JOB_COMPLETION_INDEX (an Indexed Job sets it in each pod); to run one shard by hand give --shard I/N' };
    return {};
  }
  let count = o.shards;
  const from = o.shards !== undefined ? `--shards ${o.shards}` : `PODSIM_SHARDS=${env.PODSIM_SHARDS ?? ''}`;
  if (count === undefined) {
    const v = env.PODSIM_SHARDS;
    if (v === undefined || v === '') return { error: `JOB_COMPLETION_INDEX=${index} is set but not the number of shards: give --shards N or set PODSIM_SHARDS (the Job's completions)` };
    if (!/^[1-9]\d*$/.test(v) || Number(v) > MAX_SHARDS) return { error: `PODSIM_SHARDS=${v}: expected an integer from 1 to ${MAX_SHARDS} (the Job's completions)` };
    count = Number(v);
  }
  if (!/^\d+$/.test(index) || Number(index) >= count) return { error: `JOB_COMPLETION_INDEX=${index}: expected an integer from 0 to ${count - 1} (${from})` };
  return { shard: { index: Number(index), count } };
}

/** Whether `seed` belongs to `shard` (every seed belongs to the whole range). */
export function inShard(seed: number, shard: ShardSpec | undefined): boolean {
  return shard === undefined || seed % shard.count === shard.index;
}

/** The first seed ≥ `from` of `shard`. */
function firstSeed(from: number, shard: ShardSpec | undefined): number {
  if (!shard) return from;
  return from + ((((shard.index - (from % shard.count)) % shard.count) + shard.count) % shard.count);
}

/** The seeds of `from..to` (inclusive) that belong to `shard`, ascending. */
export function* shardSeeds(from: number, to: number, shard: ShardSpec | undefined): Generator<number> {
  const step = shard?.count ?? 1;
  for (let s = firstSeed(from, shard); s <= to; s += step) yield s;
}

/** How many seeds of `from..to` belong to `shard`. */
export function shardSeedCount(from: number, to: number, shard: ShardSpec | undefined): number {
  const first = firstSeed(from, shard);
  return first > to ? 0 : Math.floor((to - first) / (shard?.count ?? 1)) + 1;
}

/** The `format` of a shard's result; `explore merge` reads no other. */
export const SHARD_FORMAT = 'podsim-explore-shard/1';

let build: string | undefined;

/** Every `.js` file under `dir`, recursively, sorted. */
function jsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...jsFiles(p));
    else if (e.name.endsWith('.js')) out.push(p);
  }
  return out;
}

/**
 * A fingerprint of this podsim build: sha256 (16 hex) of the compiled code of every @podsim
 * package (`dist/src/**.js`, by path within the package). Two machines with the same commit,
 * lockfile and TypeScript produce the same one; any change to the simulated behaviour changes it,
 * which the package version (0.1.0 on every commit) does not. Computed once per process (~1 MB read).
 */
export function podsimBuild(): string {
  if (build !== undefined) return build;
  const h = createHash('sha256');
  const here = dirname(dirname(fileURLToPath(import.meta.url))); // dist/src of the harness
  const roots: Array<[string, string]> = [['@podsim/harness', here]];
  for (const pkg of ['@podsim/api', '@podsim/sim', '@podsim/apiserver', '@podsim/runtime', '@podsim/kubelet', '@podsim/controllers']) {
    roots.push([pkg, dirname(fileURLToPath(import.meta.resolve(pkg)))]);
  }
  for (const [pkg, root] of roots) {
    for (const f of jsFiles(root)) {
      h.update(`${pkg}/${relative(root, f)}\0`);
      h.update(readFileSync(f));
      h.update('\0');
    }
  }
  build = h.digest('hex').slice(0, 16);
  return build;
}

/** sha256 (hex) of a scenario's input files' contents (the scenario, then its `manifestFiles`), not their paths. */
export function scenarioSha256(inputFiles: readonly string[]): string {
  const h = createHash('sha256');
  for (const f of inputFiles) {
    const text = readFileSync(f);
    h.update(`${text.length}\0`);
    h.update(text);
  }
  return h.digest('hex');
}

/** A seed's outcome as a shard reports it: a {@link SeedResult} without its violation list and fault list (their counts remain). */
export interface SeedOutcome extends Pick<SeedResult, 'seed' | 'ok' | 'traceDigest' | 'wallSeconds' | 'virtualSeconds' | 'events' | 'violated' | 'first' | 'error'> {
  /** How many faults the seed drew (`faultCount`, not `faults`: a SeedResult's `faults` is the list, kept for failing seeds in `failures`). */
  readonly faultCount: number;
}

/** A failing seed with what replaying it needs: the first violation (virtual µs), the replay command, its first violations and drawn faults. */
export interface FailingSeed {
  readonly seed: number;
  readonly invariant: string;
  /** Virtual µs of the first violation. */
  readonly t: number;
  readonly message: string;
  readonly replay: string;
  /** Up to 10 of the seed's violations (`violationCount` says how many there were). */
  readonly violations: ReadonlyArray<{ readonly invariant: string; readonly t: number; readonly message: string }>;
  readonly violationCount: number;
  /** The drawn faults, in schedule order (`atUs` virtual µs). */
  readonly faults: ReadonlyArray<{ readonly id: string; readonly atUs: number; readonly summary: string }>;
}

/**
 * What one shard of `podsim explore` writes (`--out DIR/explore-shard-I-of-N.json`, or one line
 * on stdout): which sweep (podsim build, scenario content, faults level, seed range, shard, stop
 * conditions), how it ended, and every seed's outcome in seed order.
 */
export interface ShardResult {
  readonly format: typeof SHARD_FORMAT;
  readonly podsim: { readonly version: string; readonly kubernetes: string; readonly build: string };
  /** The scenario as the shard was given it, and the sha256 of its input files' contents. */
  readonly scenario: { readonly file: string; readonly sha256: string };
  readonly level: number;
  /** The seed range the sweep draws from (inclusive); a shard runs the seeds ≡ index mod count. */
  readonly seeds: { readonly from: number; readonly to: number };
  readonly shard: ShardSpec;
  /** `--for` (wall seconds) and `--until-failures`, when given. */
  readonly stop: { readonly forSeconds?: number; readonly untilFailures?: number };
  readonly stopped: ExploreStopReason;
  readonly workers: number;
  readonly wallSeconds: number;
  /** CPU seconds (user + system, every thread) of the sweep: with `seedsRun`, what a seed costs whatever the machine's load (sizing). */
  readonly cpuSeconds: number;
  readonly seedsRun: number;
  readonly failing: number;
  /** Every seed run, ascending. */
  readonly results: readonly SeedOutcome[];
  /** The failing seeds, ascending. */
  readonly failures: readonly FailingSeed[];
}

/** The result of a finished shard from its sweep summary. */
export function shardResult(s: ExploreSummary, o: { inputFiles: readonly string[]; seeds: { from: number; to: number }; shard: ShardSpec; stop: ShardResult['stop']; cpuSeconds: number }): ShardResult {
  const results = s.results.map(
    (r): SeedOutcome => ({
      seed: r.seed,
      ok: r.ok,
      traceDigest: r.traceDigest,
      wallSeconds: r.wallSeconds,
      virtualSeconds: r.virtualSeconds,
      events: r.events,
      faultCount: r.faults.length,
      violated: r.violated,
      ...(r.first ? { first: r.first } : {}),
      ...(r.error !== undefined ? { error: r.error } : {}),
    }),
  );
  const replay = new Map(s.groups.flatMap((g) => g.seeds.map((x) => [x.seed, x.replay] as const)));
  const failures = s.results
    .filter((r) => !r.ok && r.first)
    .map(
      (r): FailingSeed => ({
        seed: r.seed,
        invariant: r.first!.invariant,
        t: r.first!.t,
        message: r.first!.message,
        replay: replay.get(r.seed)!,
        violations: r.violations.slice(0, 10).map((v) => ({ invariant: v.invariant, t: v.t, message: v.message })),
        violationCount: r.violations.length,
        faults: r.faults,
      }),
    );
  return {
    format: SHARD_FORMAT,
    podsim: { version: PODSIM_VERSION, kubernetes: KUBERNETES_VERSION, build: podsimBuild() },
    scenario: { file: s.file, sha256: scenarioSha256(o.inputFiles) },
    level: s.level,
    seeds: o.seeds,
    shard: o.shard,
    stop: o.stop,
    stopped: s.stopped,
    workers: s.workers,
    wallSeconds: s.wallSeconds,
    cpuSeconds: o.cpuSeconds,
    seedsRun: s.seeds,
    failing: s.failing,
    results,
    failures,
  };
}

/** `explore-shard-I-of-N.json`: the file a shard writes in `--out DIR`. */
export function shardFileName(shard: ShardSpec): string {
  return `explore-shard-${shard.index}-of-${shard.count}.json`;
}
