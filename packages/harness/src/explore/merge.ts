/**
 * `podsim explore merge RESULT...`: the shards of one sweep (shard.ts), read back from files,
 * directories or a log stream (`kubectl logs -l job-name=… --prefix`: each line may carry a
 * `[pod/…/container] ` prefix; a shard's result is the one line that holds its JSON), merged into
 * the summary one machine prints for the same seeds. Shards must be of the same sweep (podsim
 * version and build, scenario content, faults level, seed range, shard count, stop conditions),
 * else the merge is refused (exit 2). Missing shards, shards seen twice, and a seed whose digest
 * differs between two copies of its shard (nondeterminism) are reported and fail the verdict.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { ScenarioError, type ScenarioIssue } from '../scenario/source.js';
import { groupFailures, type ExploreGroup, type ExploreStopReason } from './explore.js';
import { SHARD_FORMAT, podsimBuild, shardSeedCount, type FailingSeed, type SeedOutcome, type ShardResult } from './shard.js';

/** The `format` of `explore merge --json`. */
export const MERGED_FORMAT = 'podsim-explore-merged/1';

const zFirst = z.object({ invariant: z.string(), t: z.number(), message: z.string() });
const zShard = z.object({
  format: z.literal(SHARD_FORMAT),
  podsim: z.object({ version: z.string(), kubernetes: z.string(), build: z.string() }),
  scenario: z.object({ file: z.string(), sha256: z.string() }),
  level: z.number(),
  seeds: z.object({ from: z.number().int(), to: z.number().int() }),
  shard: z.object({ index: z.number().int().nonnegative(), count: z.number().int().positive() }),
  stop: z.object({ forSeconds: z.number().optional(), untilFailures: z.number().int().optional() }),
  stopped: z.enum(['done', 'for', 'until-failures', 'limit', 'signal']),
  workers: z.number().int(),
  wallSeconds: z.number(),
  cpuSeconds: z.number(),
  seedsRun: z.number().int(),
  failing: z.number().int(),
  results: z.array(
    z.object({
      seed: z.number().int(),
      ok: z.boolean(),
      traceDigest: z.string(),
      wallSeconds: z.number(),
      virtualSeconds: z.number(),
      events: z.number(),
      faultCount: z.number().int(),
      violated: z.array(z.string()),
      first: zFirst.optional(),
      error: z.string().optional(),
    }),
  ),
  failures: z.array(
    z.object({
      seed: z.number().int(),
      invariant: z.string(),
      t: z.number(),
      message: z.string(),
      replay: z.string(),
      violations: z.array(zFirst),
      violationCount: z.number().int(),
      faults: z.array(z.object({ id: z.string(), atUs: z.number(), summary: z.string() })),
    }),
  ),
});

/** A shard's result and where it was read (`file` or `file:line` of a stream). */
export interface ReadShard {
  readonly result: ShardResult;
  readonly from: string;
}

/** What reading the inputs gave: the results, and warnings about lines and files that held none or a broken one. */
export interface ReadResults {
  readonly shards: readonly ReadShard[];
  readonly warnings: readonly string[];
}

const MARK = '{"format":"podsim-explore-shard/';

/**
 * The shard results in `text` (from `name`): every line holding `{"format":"podsim-explore-shard/…`
 * after an optional prefix, or the whole text as one JSON document (a pretty-printed result).
 * A line that does not parse (a pod killed while writing) is a warning; a result of another
 * format version or shape is an error (thrown as ScenarioError, exit 2).
 */
export function parseShardText(name: string, text: string, warnings: string[]): ReadShard[] {
  const out: ReadShard[] = [];
  const issues: ScenarioIssue[] = [];
  const take = (value: unknown, where: string, line: number) => {
    const format = (value as { format?: unknown } | null)?.format;
    if (format !== SHARD_FORMAT) {
      issues.push({ file: name, line, column: line > 0 ? 1 : 0, field: '', message: `a shard result of format ${JSON.stringify(format)}: this podsim reads ${SHARD_FORMAT} (merge with the podsim that wrote it)` });
      return;
    }
    const r = zShard.safeParse(value);
    if (!r.success) {
      const i = r.error.issues[0];
      issues.push({ file: name, line, column: line > 0 ? 1 : 0, field: i.path.join('.'), message: `not a well-formed shard result: ${i.message}` });
      return;
    }
    out.push({ result: r.data as ShardResult, from: where });
  };
  const lines = text.split('\n');
  lines.forEach((l, i) => {
    const at = l.indexOf(MARK);
    if (at < 0) return;
    const json = l.slice(at).trimEnd();
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      warnings.push(`${name}:${i + 1}: a shard result that does not parse (cut short: ${json.length} characters); skipped`);
      return;
    }
    take(value, lines.length > 2 ? `${name}:${i + 1}` : name, i + 1);
  });
  if (out.length === 0 && issues.length === 0 && text.trimStart().startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (value !== undefined && typeof (value as { format?: unknown }).format === 'string' && String((value as { format: string }).format).startsWith('podsim-explore-shard/')) take(value, name, 0);
  }
  if (issues.length > 0) throw new ScenarioError(issues);
  return out;
}

/**
 * Reads RESULT arguments: a file (it must hold at least one result), a directory (its regular
 * files, not recursively, in name order; files without a result are skipped with a warning), or
 * `-` (standard input, read by `stdin`). Unreadable paths throw ScenarioError (exit 2).
 */
export function readShardResults(args: readonly string[], stdin: () => string): ReadResults {
  const shards: ReadShard[] = [];
  const warnings: string[] = [];
  const fail = (file: string, message: string): never => {
    throw new ScenarioError([{ file, line: 0, column: 0, field: '', message }]);
  };
  for (const a of args) {
    if (a === '-') {
      const got = parseShardText('<stdin>', stdin(), warnings);
      if (got.length === 0) fail('<stdin>', 'no shard result in standard input (expected the output of podsim explore --shard, e.g. kubectl logs -l job-name=… --prefix)');
      shards.push(...got);
      continue;
    }
    let st;
    try {
      st = statSync(a);
    } catch (e) {
      fail(a, `cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    }
    if (st!.isDirectory()) {
      const before = shards.length;
      for (const name of readdirSync(a).sort()) {
        const p = join(a, name);
        if (!statSync(p).isFile()) continue;
        const got = parseShardText(p, readFileSync(p, 'utf8'), warnings);
        if (got.length === 0) warnings.push(`${p}: no shard result in it; skipped`);
        shards.push(...got);
      }
      if (shards.length === before) fail(a, 'no shard result in this directory');
      continue;
    }
    const warned = warnings.length;
    const got = parseShardText(a, readFileSync(a, 'utf8'), warnings);
    // A file whose only result was cut short was a shard's: its warning says so, and the shard counts as missing.
    if (got.length === 0 && warnings.length === warned) fail(a, 'no shard result in this file (expected the output of podsim explore --shard I/N or a file it wrote in --out DIR)');
    shards.push(...got);
  }
  return { shards, warnings };
}

/** A seed whose copies (the same shard read twice) disagree. */
export interface SeedConflict {
  readonly seed: number;
  readonly outcomes: ReadonlyArray<{ readonly from: string; readonly ok: boolean; readonly traceDigest: string }>;
}

/**
 * The merged sweep (`explore merge --json`): an `ExploreSummary` of the seeds run (groups,
 * results in seed order) plus the shards' identity and completeness, the shape an HTML report
 * takes like a single machine's summary.
 */
export interface MergedSweep {
  readonly format: typeof MERGED_FORMAT;
  readonly podsim: ShardResult['podsim'];
  readonly scenario: ShardResult['scenario'];
  readonly file: string;
  readonly level: number;
  readonly seedRange: ShardResult['seeds'];
  readonly stop: ShardResult['stop'];
  /** Sum of the shards' threads. */
  readonly workers: number;
  readonly seeds: number;
  readonly failing: number;
  /** The longest shard's wall seconds (the sweep's length when every shard ran at once). */
  readonly wallSeconds: number;
  /** The sum of the shards' seeds per second (throughput when they ran at once). */
  readonly seedsPerSecond: number;
  /** The shards' CPU seconds, summed (each shard's first copy). */
  readonly cpuSeconds: number;
  readonly groups: readonly ExploreGroup[];
  /** As a single sweep's: `done`, or the first reason a shard stopped early (all of them in `shards.stopped`). */
  readonly stopped: ExploreStopReason;
  readonly shards: {
    readonly count: number;
    readonly present: readonly number[];
    readonly missing: readonly number[];
    /** Shards read more than once, with where each copy came from. */
    readonly duplicated: ReadonlyArray<{ readonly index: number; readonly from: readonly string[] }>;
    /** Shards that stopped before their last seed, by reason. */
    readonly stopped: Partial<Record<ExploreStopReason, number>>;
    readonly from: ReadonlyArray<{ readonly index: number; readonly from: string; readonly seedsRun: number; readonly wallSeconds: number; readonly stopped: ExploreStopReason }>;
  };
  /** Seeds of the range that did not run (missing shards, time-boxed shards). */
  readonly notRun: number;
  readonly conflicts: readonly SeedConflict[];
  readonly complete: boolean;
  readonly results: readonly SeedOutcome[];
  readonly failures: readonly FailingSeed[];
}

/** What must agree between the shards of one sweep, as [label, value]. */
function identity(r: ShardResult): Array<[string, string]> {
  return [
    ['podsim version', `${r.podsim.version} (Kubernetes ${r.podsim.kubernetes})`],
    ['podsim build', r.podsim.build],
    ['scenario content (sha256)', r.scenario.sha256],
    ['faults level', String(r.level)],
    ['seed range', `${r.seeds.from}..${r.seeds.to}`],
    ['shard count', String(r.shard.count)],
    ['--for', r.stop.forSeconds === undefined ? 'none' : `${r.stop.forSeconds}s`],
    ['--until-failures', r.stop.untilFailures === undefined ? 'none' : String(r.stop.untilFailures)],
  ];
}

/**
 * Merges the shards of one sweep. Throws ScenarioError (exit 2) when they are of different sweeps
 * (naming both sources and what differs) or when `scenario` is given and its content is not what
 * they ran. `scenario`, when given, also names the file in the replay commands.
 */
export function mergeShards(read: readonly ReadShard[], scenario?: { file: string; sha256: string }): MergedSweep {
  if (read.length === 0) throw new ScenarioError([{ file: '<merge>', line: 0, column: 0, field: '', message: 'no shard results to merge' }]);
  const ref = read[0];
  const refId = identity(ref.result);
  const issues: ScenarioIssue[] = [];
  for (const s of read.slice(1)) {
    const id = identity(s.result);
    const differs = id.map(([label, v], i) => [label, v, refId[i][1]] as const).filter(([, v, w]) => v !== w);
    if (differs.length > 0) {
      issues.push({
        file: s.from,
        line: 0,
        column: 0,
        field: '',
        message: `shard ${s.result.shard.index}/${s.result.shard.count} is of another sweep than ${ref.from} (shard ${ref.result.shard.index}/${ref.result.shard.count}): ${differs.map(([l, v, w]) => `${l} ${v} ≠ ${w}`).join('; ')}; refusing to merge results of different podsim versions, scenarios or sweeps`,
      });
    }
  }
  if (scenario && scenario.sha256 !== ref.result.scenario.sha256) {
    issues.push({ file: scenario.file, line: 0, column: 0, field: '--scenario', message: `its content (sha256 ${scenario.sha256.slice(0, 16)}…) is not the scenario the shards ran (${ref.result.scenario.file}, sha256 ${ref.result.scenario.sha256.slice(0, 16)}…): refusing to name it in the replay commands` });
  }
  if (issues.length > 0) throw new ScenarioError(issues);

  const r0 = ref.result;
  const count = r0.shard.count;
  const byIndex = new Map<number, ReadShard[]>();
  for (const s of read) byIndex.set(s.result.shard.index, [...(byIndex.get(s.result.shard.index) ?? []), s]);
  const present = [...byIndex.keys()].sort((a, b) => a - b);
  const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !byIndex.has(i));
  const duplicated = present.filter((i) => byIndex.get(i)!.length > 1).map((index) => ({ index, from: byIndex.get(index)!.map((s) => s.from) }));

  // The union of every copy's seeds; a seed whose copies disagree is a conflict.
  const outcomes = new Map<number, { o: SeedOutcome; from: string }[]>();
  const failing = new Map<number, FailingSeed>();
  for (const s of read) {
    for (const o of s.result.results) outcomes.set(o.seed, [...(outcomes.get(o.seed) ?? []), { o, from: s.from }]);
    for (const f of s.result.failures) failing.set(f.seed, f);
  }
  const conflicts: SeedConflict[] = [];
  const results: SeedOutcome[] = [];
  for (const seed of [...outcomes.keys()].sort((a, b) => a - b)) {
    const copies = outcomes.get(seed)!;
    results.push(copies[0].o);
    if (copies.some((c) => c.o.traceDigest !== copies[0].o.traceDigest || c.o.ok !== copies[0].o.ok)) {
      conflicts.push({ seed, outcomes: copies.map((c) => ({ from: c.from, ok: c.o.ok, traceDigest: c.o.traceDigest })) });
    }
  }
  const file = scenario?.file ?? r0.scenario.file;
  const groups = groupFailures(results, file, r0.level);
  const replay = new Map(groups.flatMap((g) => g.seeds.map((x) => [x.seed, x.replay] as const)));
  const failures = results.filter((o) => !o.ok && o.first).map((o) => ({ ...failing.get(o.seed)!, replay: replay.get(o.seed)! }));
  // One copy per shard for the totals (the first read).
  const firsts = present.map((i) => byIndex.get(i)![0]);
  const stopped: Partial<Record<ExploreStopReason, number>> = {};
  for (const s of firsts) if (s.result.stopped !== 'done') stopped[s.result.stopped] = (stopped[s.result.stopped] ?? 0) + 1;
  const rangeSeeds = shardSeedCount(r0.seeds.from, r0.seeds.to, undefined);
  const notRun = rangeSeeds - results.length;
  return {
    format: MERGED_FORMAT,
    podsim: r0.podsim,
    scenario: scenario ? { file: scenario.file, sha256: scenario.sha256 } : r0.scenario,
    file,
    level: r0.level,
    seedRange: r0.seeds,
    stop: r0.stop,
    workers: firsts.reduce((n, s) => n + s.result.workers, 0),
    seeds: results.length,
    failing: results.filter((o) => !o.ok).length,
    wallSeconds: Math.max(...firsts.map((s) => s.result.wallSeconds)),
    seedsPerSecond: firsts.reduce((n, s) => n + (s.result.wallSeconds > 0 ? s.result.seedsRun / s.result.wallSeconds : 0), 0),
    cpuSeconds: firsts.reduce((n, s) => n + s.result.cpuSeconds, 0),
    groups,
    stopped: (Object.keys(stopped)[0] as ExploreStopReason | undefined) ?? 'done',
    shards: {
      count,
      present,
      missing,
      duplicated,
      stopped,
      from: read.map((s) => ({ index: s.result.shard.index, from: s.from, seedsRun: s.result.seedsRun, wallSeconds: s.result.wallSeconds, stopped: s.result.stopped })),
    },
    notRun,
    conflicts,
    complete: missing.length === 0 && conflicts.length === 0,
    results,
    failures,
  };
}

const list = (xs: readonly number[], max = 20) => (xs.length > max ? `${xs.slice(0, max).join(', ')}, … (${xs.length} in all)` : xs.join(', '));

/**
 * The lines `explore merge` prints before the failing seeds: the sweep, then what keeps it from
 * being whole (missing and duplicated shards, conflicts) and a note when this podsim's build is
 * not the one that ran the shards (a replay here may not reproduce them).
 */
export function mergeNotes(m: MergedSweep): { head: string[]; notes: string[] } {
  const head = [
    `explore merge: ${m.shards.present.length} of ${m.shards.count} shard${m.shards.count === 1 ? '' : 's'} of ${m.file}: seeds ${m.seedRange.from}..${m.seedRange.to}, faults level ${m.level}, podsim ${m.podsim.version} build ${m.podsim.build}, scenario sha256 ${m.scenario.sha256.slice(0, 16)}…`,
  ];
  if (m.podsim.build !== podsimBuild()) head.push(`note: this podsim is build ${podsimBuild()}, not the shards' ${m.podsim.build}: replaying a seed here may not reproduce its result; replay with the podsim that ran them`);
  const notes: string[] = [];
  if (m.shards.missing.length > 0) notes.push(`missing shard${m.shards.missing.length === 1 ? '' : 's'}: ${list(m.shards.missing)} of 0..${m.shards.count - 1} (their seeds did not run: collect their results, or rerun them with --shard I/${m.shards.count})`);
  for (const d of m.shards.duplicated) notes.push(`shard ${d.index} was read ${d.from.length} times (${d.from.join(', ')}): its seeds are counted once`);
  for (const c of m.conflicts) notes.push(`seed ${c.seed} differs between copies of its shard: ${c.outcomes.map((o) => `${o.ok ? 'ok' : 'failing'} digest ${o.traceDigest} in ${o.from}`).join(' vs ')} (the same seed must give the same trace)`);
  return { head, notes };
}

/** The verdict line and exit code of a merge: PASS (0) only when every shard is there and no seed failed or conflicted. */
export function mergeVerdict(m: MergedSweep): { line: string; code: number } {
  if (m.failing > 0 || m.conflicts.length > 0) return { line: 'FAIL', code: 1 };
  if (m.shards.missing.length > 0) return { line: `INCOMPLETE: ${m.shards.missing.length} of ${m.shards.count} shards missing; the ${m.seeds} seeds read passed`, code: 1 };
  return { line: 'PASS', code: 0 };
}
