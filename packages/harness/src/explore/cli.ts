/**
 * `podsim explore` and `podsim replay` (registered on the main `podsim` program, src/cli.ts):
 *   podsim explore FILE [--seeds A..B | --count N] [--workers W] [--faults LEVEL] [--json OUT] [--report OUT.html [--shrink]]
 *                       [--shard I/N | --shards N] [--out DIR] [--for DURATION] [--until-failures K] [--exit-zero]
 *   podsim explore merge RESULT... [--scenario FILE] [--json OUT]
 *   podsim replay FILE --seed N [--faults LEVEL] [--trace OUT.json] [--shrink [--out FILE]] [--json OUT]
 * explore sweeps seeds on a piscina pool with a progress bar on stderr and lists the failing
 * seeds by first violated invariant (one shard of them with `--shard`, shard.ts; `explore merge`
 * puts the shards' results back together, merge.ts); replay reruns one seed exactly (same trace digest), prints
 * the failing pod's timeline, exports the trace, and shrinks the faults and steps (ddmin).
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { checkOutputPaths, output } from '../outputPaths.js';
import { formatDuration, parseDuration } from '../duration.js';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, dirname, extname, join } from 'node:path';
import { SingleBar } from 'cli-progress';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { EngineKind } from '../engine.js';
import { TraceModel } from '../checkers/model.js';
import { loadScenario, type LoadedScenario } from '../scenario/load.js';
import type { ExploreSpec } from '../scenario/schema.js';
import { describeDefaultExplore, exploreReady } from './defaultExplore.js';
import { compileScenario } from '../scenario/compile.js';
import { formatIssue } from '../scenario/source.js';
import { describeFault, durationText } from '../scenario/scheduled.js';
import { toChromeTrace } from '../report/chromeTrace.js';
import { NO_EXPECTATIONS } from '../run.js';
import { FAULT_LEVELS } from './draw.js';
import { SeedPool } from './pool.js';
import { drawnFaults, runSeed, type SeedResult } from './runSeed.js';
import { explore, exploreReplayCommand, type ExploreStopReason, type ExploreSummary } from './explore.js';
import { parseShard, parseShardCount, resolveShard, scenarioSha256, shardFileName, shardResult, shardSeedCount, shardSeeds, type ShardSpec } from './shard.js';
import { mergeNotes, mergeShards, mergeVerdict, readShardResults } from './merge.js';
import { ScenarioError } from '../scenario/source.js';
import { writeReport } from '@podsim/report';
import { exploreReportInput, type ShrunkSeed } from '../report/htmlInput.js';

/** `explore --report --shrink` shrinks at most this many seeds (one per violated invariant): each shrink is dozens of runs. */
export const MAX_SHRUNK_IN_REPORT = 3;
import { shrinkSeed, shrunkScenarioText } from './shrink.js';
import { podOfMessage, podTimeline } from './timeline.js';

export interface ExploreIo {
  out(line: string): void;
  err(line: string): void;
}

/** `--faults`: a multiplier ≥ 0 or none / low / medium / high. */
export function parseFaultLevel(v: string): number {
  if (FAULT_LEVELS[v] !== undefined) return FAULT_LEVELS[v];
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v);
  throw new InvalidArgumentError(`expected a number ≥ 0 or one of ${Object.keys(FAULT_LEVELS).join(', ')}.`);
}

/** `--seeds A..B` (inclusive). */
export function parseSeedRange(v: string): [number, number] {
  const m = /^(\d+)\.\.(\d+)$/.exec(v);
  if (!m || Number(m[1]) > Number(m[2]) || Number(m[2]) > 2 ** 32 - 1) throw new InvalidArgumentError('expected A..B with 0 ≤ A ≤ B < 2^32, e.g. 1..200.');
  // At most MAX_EXPLORE_SEEDS per run is checked once the shard is known (a shard runs 1/N of them).
  return [Number(m[1]), Number(m[2])];
}

function positiveInt(v: string): number {
  if (!/^[1-9]\d*$/.test(v)) throw new InvalidArgumentError('expected a positive integer.');
  return Number(v);
}

/**
 * The most seeds one `explore` runs: every seed is queued on the pool at once and its result
 * kept, so `--count 100000000` ran out of memory (and `--seeds 0..4294967295` threw a RangeError)
 * before the first seed. 100,000 seeds is hours of work; split larger hunts into ranges.
 */
export const MAX_EXPLORE_SEEDS = 100_000;
/** The most worker threads `--workers` may ask for (each one is a whole simulation's worth of memory). */
export const MAX_WORKERS = 256;

function seedCount(v: string): number {
  const n = positiveInt(v);
  if (n > 2 ** 32 - 1) throw new InvalidArgumentError('expected at most 4294967295.');
  return n;
}

/** `--for`: a wall-clock duration (`10m`, `90s`, `1h30m`), more than 0 and at most 7 days; in wall ms. */
export function parseForDuration(v: string): number {
  const us = parseDuration(v);
  if (us === undefined || us <= 0 || us > 7 * 86400 * 1e6) throw new InvalidArgumentError('expected a wall-clock duration such as 10m, 90s or 1h30m (more than 0, at most 7d).');
  return us / 1000;
}

function workerCount(v: string): number {
  if (!/^[1-9]\d*$/.test(v) || Number(v) > MAX_WORKERS) throw new InvalidArgumentError(`expected an integer from 1 to ${MAX_WORKERS}.`);
  return Number(v);
}

function seedArg(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) > 2 ** 32 - 1) throw new InvalidArgumentError('expected an integer from 0 to 4294967295.');
  return Number(v);
}

const sec = (us: number) => durationText(Math.round(us));
const clip = (s: string, n = 200) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * The sweep's summary lines: totals, then failing seeds grouped by first violated invariant, then
 * `notes` (an early stop, missing shards), then the verdict. `explore merge` prints the same lines
 * with its own `first` line (shards instead of workers) and verdict.
 */
export function formatExploreSummary(s: Pick<ExploreSummary, 'seeds' | 'wallSeconds' | 'workers' | 'seedsPerSecond' | 'failing' | 'groups'>, o: { first?: string; notes?: readonly string[]; verdict?: string } = {}): string[] {
  const out = [o.first ?? `${s.seeds} seeds in ${s.wallSeconds.toFixed(1)}s wall on ${s.workers} worker${s.workers === 1 ? '' : 's'} (${s.seedsPerSecond.toFixed(2)} seeds/s): ${s.failing} failing`];
  for (const g of s.groups) {
    out.push('', `${g.invariant}: ${g.seeds.length} seed${g.seeds.length === 1 ? '' : 's'}`);
    for (const x of g.seeds) {
      out.push(`  seed ${x.seed} at ${sec(x.t)}: ${clip(x.message)}`);
      out.push(`    ${x.replay}`);
    }
  }
  if (o.notes?.length) out.push('', ...o.notes);
  out.push(o.verdict ?? (s.failing === 0 ? 'PASS' : 'FAIL'));
  return out;
}

const wallText = (ms: number) => formatDuration(Math.round(ms * 1000));

/**
 * The line that says a sweep stopped before its last seed: why (per reason, with how many shards
 * when merged), and how many of the range's seeds ran. Undefined when nothing stopped early.
 */
export function stopNote(stopped: Partial<Record<ExploreStopReason, number>>, stop: { forSeconds?: number; untilFailures?: number }, ran: number, range: { from: number; to: number }, shard?: ShardSpec, merged = false): string | undefined {
  const why: Record<ExploreStopReason, string> = {
    done: '',
    for: `--for ${stop.forSeconds !== undefined ? wallText(stop.forSeconds * 1000) : ''} was up`,
    'until-failures': `--until-failures ${stop.untilFailures ?? ''} reached`,
    limit: `the cap of ${MAX_EXPLORE_SEEDS} seeds per run`,
    signal: 'SIGTERM or Ctrl-C',
  };
  const parts = (Object.keys(stopped) as ExploreStopReason[]).filter((k) => k !== 'done' && (stopped[k] ?? 0) > 0).map((k) => (merged ? `${stopped[k]} shard${stopped[k] === 1 ? '' : 's'}: ${why[k]}` : why[k]));
  if (parts.length === 0) return undefined;
  const inShard = shard ? ` in shard ${shard.index}/${shard.count}` : '';
  if (range.to === 2 ** 32 - 1) return `stopped early (${parts.join('; ')}): ${ran} seeds ran (open-ended from seed ${range.from}${inShard})`;
  return `stopped early (${parts.join('; ')}): ${ran} of the ${shardSeedCount(range.from, range.to, shard)} seeds of ${range.from}..${range.to}${inShard} ran`;
}

/** A progress bar on stderr (only on a terminal): seeds done, failures, seeds per second. */
function progress(total: number, enabled: boolean): { update(done: number, failures: number): void; stop(): void } {
  if (!enabled) return { update() {}, stop() {} };
  const started = performance.now();
  const bar = new SingleBar({
    stream: process.stderr,
    format: 'explore |{bar}| {value}/{total} seeds | {failures} failing | {rate} seeds/s | eta {eta}s',
    hideCursor: true,
    clearOnComplete: true,
    fps: 5,
  });
  bar.start(total, 0, { failures: 0, rate: '0.00' });
  return {
    update(done, failures) {
      bar.update(done, { failures, rate: (done / ((performance.now() - started) / 1000)).toFixed(2) });
    },
    stop() {
      bar.stop();
    },
  };
}

/**
 * The verdict of a replayed seed. With `expect:` judged (no `explore:` section) it is `podsim
 * run`'s: steps, expectations and invariants. Under drawn faults only the invariants and liveness
 * are judged, and the line says so and how to check the expectations.
 */
function printSeed(r: SeedResult, io: ExploreIo, sc: { explores: boolean; expects: boolean; run: string }): boolean {
  io.out(`virtual ${r.virtualSeconds.toFixed(3)}s in ${r.wallSeconds.toFixed(2)}s wall (${r.events} events), trace digest ${r.traceDigest || '-'}`);
  const x = r.expectations;
  if (x) {
    io.out(`expectations: ${x.passed}/${x.total} passed`);
    for (const f of x.failures) io.out(`  ${f}`);
  }
  const ok = r.ok && (x === undefined || x.failures.length === 0);
  if (ok) {
    // As `podsim run`: a fault-free replay of a file that declares no expectation is no PASS of them.
    io.out(sc.explores ? 'PASS: every invariant held and the cluster healed' : x !== undefined && x.total === 0 ? NO_EXPECTATIONS : 'PASS: every step, expectation and invariant held');
  } else if (!r.ok) {
    io.out(`FAIL: ${r.first!.invariant} at ${sec(r.first!.t)}: ${r.first!.message}`);
    const more = r.violations.length - (r.first!.invariant === 'engine' || r.first!.invariant === 'timeline' ? 0 : 1);
    if (more > 0) io.out(`  (+${more} more violation${more === 1 ? '' : 's'}: ${[...new Set(r.violations.map((v) => v.invariant))].join(', ')})`);
  } else {
    io.out(`FAIL: ${x!.failures.length} of the timeline's steps and expectations failed (above); every invariant held`);
  }
  if (sc.explores && sc.expects) {
    io.out(`(replay judges the invariants and liveness under the drawn faults; the scenario's expect: describes the run without them: ${sc.run})`);
  }
  return ok;
}

export function registerExploreCommands(program: Command, io: ExploreIo, done: (code: number) => void): void {
  const exploreCmd = program
    .command('explore')
    // `explore merge --json OUT` is merge's own flag, not explore's (which has one too).
    .enablePositionalOptions()
    .description("run a scenario once per seed with the faults each seed draws from the scenario's explore section; list the failing seeds")
    .argument('<file>', 'scenario file (YAML); without an explore: section a default one is used (faults within the span of its steps)')
    .option('--seeds <a..b>', 'seeds to run, inclusive (default 1..100; with --for, from 1 on)', parseSeedRange)
    .option('--count <n>', 'run seeds 1..n', seedCount)
    .option('--workers <w>', `parallel simulations (default: the number of cores; never more than the seeds; at most ${MAX_WORKERS})`, workerCount)
    .option('--faults <level>', 'scale every fault rate: a number or none | low | medium | high', parseFaultLevel, 1)
    .option('--json <out>', 'write every seed result as JSON to this file')
    .option('--shard <i/n>', 'run only shard I of N (0 ≤ I < N): the seeds with seed mod N = I', parseShard)
    .option('--shards <n>', 'the number of shards when JOB_COMPLETION_INDEX (an Indexed Job) names this one (default: PODSIM_SHARDS)', parseShardCount)
    .option('--out <dir>', 'write the shard result (JSON) to DIR/explore-shard-I-of-N.json; never overwrites (a sharded run without it prints the result on stdout)')
    .option('--for <duration>', 'start no seed after this much wall time (e.g. 10m; per shard); the seeds in flight finish', parseForDuration)
    .option('--until-failures <k>', 'start no seed once K seeds have failed (per shard)', positiveInt)
    .option('--exit-zero', 'exit 0 even when seeds fail (for a Job: the shard completes and explore merge gives the verdict); bad input is still exit 2')
    .option('--no-progress', 'no progress bar on stderr')
    .option('--report <out>', 'also write an HTML report: seeds per outcome, failing seeds by first violated invariant, their replay commands')
    .option('--shrink', `with --report: shrink the first failing seed of each violated invariant (at most ${MAX_SHRUNK_IN_REPORT}) and show its shrunk scenario`)
    .action(
      async (
        file: string,
        o: { seeds?: [number, number]; count?: number; workers?: number; faults: number; json?: string; shard?: ShardSpec; shards?: number; out?: string; for?: number; untilFailures?: number; exitZero?: boolean; progress: boolean; report?: string; shrink?: boolean },
      ) => {
        if (o.seeds && o.count !== undefined) {
          io.err('podsim explore: give --seeds or --count, not both');
          return done(2);
        }
        if (o.shrink && !o.report) {
          io.err('podsim explore: --shrink needs --report (the shrunk scenarios are shown in it; podsim replay --shrink writes one to a file)');
          return done(2);
        }
        const sharding = resolveShard(o, process.env);
        if (sharding.error) {
          io.err(`podsim explore: ${sharding.error}`);
          return done(2);
        }
        const shard = sharding.shard;
        const [a, b] = o.seeds ?? (o.count !== undefined ? [1, o.count] : o.for !== undefined ? [1, 2 ** 32 - 1] : [1, 100]);
        const count = shardSeedCount(a, b, shard);
        if (count === 0) {
          io.err(`podsim explore: shard ${shard!.index}/${shard!.count} has no seed in ${a}..${b} (it runs the seeds with seed mod ${shard!.count} = ${shard!.index})`);
          return done(2);
        }
        // Every result is kept until the end, so a run is bounded; a time-boxed one stops at the cap.
        if (count > MAX_EXPLORE_SEEDS && o.for === undefined) {
          const flag = o.seeds ? `--seeds ${a}..${b}` : `--count ${o.count}`;
          io.err(`podsim explore: ${flag}: expected at most ${MAX_EXPLORE_SEEDS} seeds per run${shard ? ` (shard ${shard.index}/${shard.count} has ${count})` : ''}; split a larger hunt into shards (--shard I/N) or ranges`);
          return done(2);
        }
        const plain = loadScenario(file);
        const inputs = plain.inputFiles ?? [file];
        const outFile = o.out !== undefined ? join(o.out, shardFileName(shard ?? { index: 0, count: 1 })) : undefined;
        if (o.out !== undefined && existsSync(o.out) && !statSync(o.out).isDirectory()) throw new ScenarioError([{ file: o.out, line: 0, column: 0, field: '--out', message: 'is not a directory: --out names the directory the shard result goes in' }]);
        checkOutputPaths([output('--json', o.json), output('--out', outFile), output('--report', o.report)], inputs, (l) => io.err(l));
        // A shard's result is written once: a second run into the same folder is refused before it starts.
        if (outFile !== undefined && existsSync(outFile)) throw new ScenarioError([{ file: outFile, line: 0, column: 0, field: '--out', message: 'already exists: refusing to overwrite a shard result (remove it, or give another --out)' }]);
        const plan = compileScenario(plain);
        for (const w of plan.warnings) io.err(formatIssue(w));
        const { sc, defaulted } = await exploreReady(plain, o.faults);
        if (defaulted) io.err(describeDefaultExplore(file, defaulted, sec));
        else if (!plain.doc.explore) io.err(`${file}: warning: no explore: section and --faults none, so every seed runs without faults (and without the liveness check)`);
        // A shard without --out prints its result on stdout (kubectl logs collects it), so its summary goes to stderr.
        const jsonOnStdout = shard !== undefined && o.out === undefined;
        const say = jsonOnStdout ? io.err : io.out;
        // More threads than seeds would only idle (and --workers 100000 started 100000 of them).
        const pool = new SeedPool(Math.min(o.workers ?? availableParallelism(), Math.min(count, MAX_EXPLORE_SEEDS)));
        const what = shard ? `shard ${shard.index}/${shard.count} of seeds ${a}..${b} (${count > MAX_EXPLORE_SEEDS ? 'open-ended' : `${count} seeds`})` : `seeds ${a}..${b}`;
        const limits = [o.for !== undefined ? `for ${wallText(o.for)}` : '', o.untilFailures !== undefined ? `until ${o.untilFailures} failing` : ''].filter((x) => x !== '');
        // SIGTERM (a Job's pod deleted, or past activeDeadlineSeconds) or Ctrl-C: start no more
        // seeds, let those in flight finish and write the result (stopped: signal) within the
        // grace period; a second signal quits at once.
        const interrupt = new AbortController();
        const onSignal = () => {
          if (interrupt.signal.aborted) process.exit(130);
          interrupt.abort();
          io.err('podsim explore: stopping: no new seeds; the seeds in flight finish, then the result is written (again to quit at once)');
        };
        process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
        try {
          say(`explore ${file}: ${what}, faults level ${o.faults}, ${pool.workers} worker${pool.workers === 1 ? '' : 's'}${limits.length ? `, ${limits.join(', ')}` : ''}`);
          const bar = progress(Math.min(count, MAX_EXPLORE_SEEDS), o.progress && process.stderr.isTTY === true);
          const cpu0 = process.cpuUsage();
          const s = await explore(pool, {
            signal: interrupt.signal,
            file,
            seeds: shardSeeds(a, b, shard),
            level: o.faults,
            maxSeeds: MAX_EXPLORE_SEEDS,
            ...(o.for !== undefined ? { forMs: o.for } : {}),
            ...(o.untilFailures !== undefined ? { untilFailures: o.untilFailures } : {}),
            ...(defaulted ? { explore: defaulted } : {}),
            onSeed: (_r, n, f) => bar.update(n, f),
          });
          bar.stop();
          const stop = { ...(o.for !== undefined ? { forSeconds: o.for / 1000 } : {}), ...(o.untilFailures !== undefined ? { untilFailures: o.untilFailures } : {}) };
          const note = stopNote(s.stopped === 'done' ? {} : { [s.stopped]: 1 }, stop, s.seeds, { from: a, to: b }, shard);
          // The summary goes to stdout once the bar (on stderr) is cleared.
          // A sweep cut short by a signal did not run its seeds: it is not a PASS of them (its
          // result is partial; the exit code is 143).
          const verdict = s.stopped === 'signal' ? `STOPPED: ${s.failing === 0 ? 'no failing seed among those that ran' : `${s.failing} failing`}; the sweep is incomplete` : undefined;
          for (const l of formatExploreSummary(s, { notes: note ? [note] : [], ...(verdict ? { verdict } : {}) })) say(l);
          if (o.json) writeFileSync(o.json, `${JSON.stringify(s, null, 2)}\n`);
          if (shard !== undefined || outFile !== undefined) {
            const cpu = process.cpuUsage(cpu0);
            const r = shardResult(s, { inputFiles: inputs, seeds: { from: a, to: b }, shard: shard ?? { index: 0, count: 1 }, stop, cpuSeconds: (cpu.user + cpu.system) / 1e6 });
            // One line: a log stream (kubectl logs --prefix) carries it whole, and merge finds it by its first characters.
            const line = JSON.stringify(r);
            if (outFile !== undefined) {
              writeFileSync(outFile, `${line}\n`, { flag: 'wx' });
              say(`shard result written to ${outFile}`);
            } else io.out(line);
          }
          if (o.report) {
            const shrunk = new Map<number, ShrunkSeed>();
            for (const g of o.shrink ? s.groups.slice(0, MAX_SHRUNK_IN_REPORT) : []) {
              const seed = g.seeds[0].seed;
              const r = await shrinkSeed(pool, sc, seed, o.faults, (what) => io.err(`shrink seed ${seed} (${g.invariant}): ${what} …`), defaulted);
              if ('passes' in r) continue;
              const kept = drawnFaults(sc, seed, o.faults).filter((f) => r.faults.kept.includes(f.id));
              const shrunkFile = join(dirname(file), `${basename(file, extname(file))}-seed${seed}-shrunk.yaml`);
              const command = `${exploreReplayCommand(file, seed, o.faults)} --shrink`;
              shrunk.set(seed, { seed, steps: r.steps.kept.length, text: shrunkScenarioText(sc, { seed, invariant: r.invariant, faults: kept, keepSteps: r.steps.kept, outFile: shrunkFile, command }) });
            }
            const command = `pnpm podsim explore ${file} --seeds ${a}..${b}${o.faults !== 1 ? ` --faults ${o.faults}` : ''}${shard ? ` --shard ${shard.index}/${shard.count}` : ''}`;
            const bytes = writeReport(o.report, exploreReportInput(s, { requested: Math.min(count, MAX_EXPLORE_SEEDS), command, shrunk }));
            say(`report written to ${o.report} (${(bytes / 1e6).toFixed(1)} MB; open it in a browser)`);
          }
          // A shard stopped by a signal did not finish: 143 (128 + SIGTERM) even with --exit-zero, so
          // that a Job counts it failed and reruns the index (merge counts the copies once).
          done(s.stopped === 'signal' ? 143 : s.failing === 0 || o.exitZero ? 0 : 1);
        } finally {
          process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
          await pool.close();
        }
      },
    );

  exploreCmd
    .command('merge')
    .description('merge the results of the shards of one explore (files, directories, or - for a stream such as kubectl logs --prefix) into the summary one machine prints')
    .argument('<results...>', 'shard results: files, directories of them, or - (standard input)')
    .option('--scenario <file>', 'the scenario file here: checked against the one the shards ran (sha256), and named in the replay commands')
    .option('--json <out>', 'write the merged sweep as JSON to this file')
    .action((results: string[], o: { scenario?: string; json?: string }) => {
      const scenario = o.scenario !== undefined ? loadScenario(o.scenario) : undefined;
      checkOutputPaths([output('--json', o.json)], [...results.filter((r) => r !== '-'), ...(scenario?.inputFiles ?? [])], (l) => io.err(l));
      const read = readShardResults(results, () => readFileSync(0, 'utf8'));
      for (const w of read.warnings) io.err(`podsim explore merge: warning: ${w}`);
      const m = mergeShards(read.shards, scenario && o.scenario !== undefined ? { file: o.scenario, sha256: scenarioSha256(scenario.inputFiles ?? [o.scenario]) } : undefined);
      const { head, notes } = mergeNotes(m);
      const stop = stopNote(m.shards.stopped, m.stop, m.seeds, m.seedRange, undefined, true);
      const verdict = mergeVerdict(m);
      for (const l of head) io.out(l);
      const first = `${m.seeds} seeds in ${m.shards.present.length} shard${m.shards.present.length === 1 ? '' : 's'} (longest ${m.wallSeconds.toFixed(1)}s wall, ${m.workers} worker${m.workers === 1 ? '' : 's'} in all, ${m.seedsPerSecond.toFixed(2)} seeds/s together): ${m.failing} failing`;
      for (const l of formatExploreSummary(m, { first, notes: [...notes, ...(stop ? [stop] : [])], verdict: verdict.line })) io.out(l);
      if (o.json) writeFileSync(o.json, `${JSON.stringify(m, null, 2)}\n`);
      done(verdict.code);
    });

  program
    .command('replay')
    .description('rerun one seed of explore exactly (same trace digest); print the failing pod\'s timeline; optionally shrink it')
    .argument('<file>', 'scenario file (YAML)')
    .requiredOption('--seed <n>', 'the seed to replay', seedArg)
    .option('--faults <level>', 'the fault level explore ran with', parseFaultLevel, 1)
    .option('--trace <out>', 'write the run as a Chrome trace (Perfetto, chrome://tracing)')
    .option('--shrink', 'remove faults, then steps, while the same invariant still fails; write the result as a scenario file')
    .option('--out <file>', 'where --shrink writes the scenario (default: a temporary folder)')
    .option('--workers <w>', `parallel simulations while shrinking (default: the number of cores; at most ${MAX_WORKERS})`, workerCount)
    .option('--json <out>', 'write the seed result as JSON to this file')
    .addOption(new Option('--engine <kind>', 'threads (worker threads) or local (one thread, no workers)').choices(['threads', 'local']).default('local'))
    .action(async (file: string, o: { seed: number; faults: number; trace?: string; shrink?: boolean; out?: string; workers?: number; json?: string; engine: EngineKind }) => {
      const plain = loadScenario(file);
      checkOutputPaths([output('--trace', o.trace), output('--json', o.json), o.shrink ? output('--out', o.out) : undefined], plain.inputFiles ?? [file], (l) => io.err(l));
      const plan = compileScenario(plain);
      for (const w of plan.warnings) io.err(formatIssue(w));
      const { sc, defaulted } = await exploreReady(plain, o.faults);
      if (defaulted) io.err(describeDefaultExplore(file, defaulted, sec));
      const drawn = drawnFaults(sc, o.seed, o.faults);
      io.out(`seed ${o.seed} (faults level ${o.faults}) ${file}`);
      io.out(`faults drawn: ${drawn.length}`);
      for (const f of drawn) io.out(`  ${sec(f.atUs).padStart(14)}  ${f.id}  ${describeFault(f.fault)}`);
      const r = await runSeed({ file, seed: o.seed, level: o.faults, traces: true, engine: o.engine, expectations: true, ...(defaulted ? { explore: defaulted } : {}) });
      if (r.error) {
        io.err(r.error);
        return done(2);
      }
      const ok = printSeed(r, io, { explores: sc.doc.explore !== undefined, expects: sc.doc.expect !== undefined, run: `pnpm podsim run ${file} --seed ${o.seed}` });
      const model = new TraceModel(r.traces ?? []);
      if (r.first) {
        const pod = podOfMessage(model, r.first.message);
        if (pod) {
          io.out('');
          for (const l of podTimeline(model, pod, drawn)) io.out(l);
        }
      }
      if (o.trace) {
        writeFileSync(o.trace, JSON.stringify(toChromeTrace(r.traces ?? [], { file, seed: o.seed, faultLevel: o.faults, traceDigest: r.traceDigest })));
        io.out(`trace written to ${o.trace} (open it in https://ui.perfetto.dev or chrome://tracing)`);
      }
      const { traces: _t, ...result } = r;
      if (o.json) writeFileSync(o.json, `${JSON.stringify(result, null, 2)}\n`);
      let code = ok ? 0 : 1;
      // Shrinking looks for a smaller run that violates the same invariant.
      if (o.shrink && r.ok) io.out('shrink: every invariant held, nothing to shrink');
      else if (o.shrink) code = await shrink(sc, defaulted, o, io, code);
      done(code);
    });
}

async function shrink(sc: LoadedScenario, defaulted: ExploreSpec | undefined, o: { seed: number; faults: number; out?: string; workers?: number }, io: ExploreIo, code: number): Promise<number> {
  if (code === 0) {
    io.out('shrink: the seed passes, nothing to shrink');
    return code;
  }
  const file = sc.file;
  const pool = new SeedPool(o.workers);
  try {
    io.out('');
    const s = await shrinkSeed(pool, sc, o.seed, o.faults, (what) => io.out(`${what} (ddmin on ${pool.workers} worker${pool.workers === 1 ? '' : 's'}) …`), defaulted);
    if ('passes' in s) {
      io.out('shrink: the seed passes, nothing to shrink');
      return 0;
    }
    const kept = drawnFaults(sc, o.seed, o.faults).filter((f) => s.faults.kept.includes(f.id));
    io.out(`faults: ${s.faults.before} → ${kept.length} in ${s.faults.tests} runs (${s.faults.seconds.toFixed(1)}s wall)`);
    for (const f of kept) io.out(`  ${sec(f.atUs).padStart(14)}  ${f.id}  ${describeFault(f.fault)}`);
    io.out(`steps: ${s.steps.before} → ${s.steps.kept.length} in ${s.steps.tests} runs (${s.steps.seconds.toFixed(1)}s wall)`);
    io.out(`minimal run: ${s.minimal.first ? `${s.minimal.first.invariant} at ${sec(s.minimal.first.t)}: ${clip(s.minimal.first.message)}` : 'passes'}`);
    const out = o.out ?? join(tmpdir(), 'podsim-shrink', `${basename(file, extname(file))}-seed${o.seed}.yaml`);
    // The default folder is podsim's own; a given --out was checked before the replay.
    if (o.out === undefined) mkdirSync(dirname(out), { recursive: true });
    const command = `pnpm podsim replay ${file} --seed ${o.seed}${o.faults !== 1 ? ` --faults ${o.faults}` : ''} --shrink`;
    writeFileSync(out, shrunkScenarioText(sc, { seed: o.seed, invariant: s.invariant, faults: kept, keepSteps: s.steps.kept, outFile: out, command }));
    // The written file must fail the same way with no randomness but the seed's own.
    const check = await pool.run({ file: out, seed: o.seed, level: 1 });
    const same = check.traceDigest === s.minimal.traceDigest;
    io.out(`scenario written to ${out}`);
    io.out(`  pnpm podsim run ${out}  → ${check.violated.includes(s.invariant) ? `violates ${s.invariant}` : 'passes (!)'}, trace digest ${check.traceDigest}${same ? ' (same as the minimal run)' : ` (minimal run: ${s.minimal.traceDigest})`}`);
    return check.violated.includes(s.invariant) ? 1 : code;
  } finally {
    await pool.close();
  }
}
