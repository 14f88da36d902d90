/**
 * `podsim explore` and `podsim replay` (registered on the main `podsim` program, src/cli.ts):
 *   podsim explore FILE [--seeds A..B | --count N] [--workers W] [--faults LEVEL] [--json OUT] [--report OUT.html [--shrink]]
 *   podsim replay FILE --seed N [--faults LEVEL] [--trace OUT.json] [--shrink [--out FILE]] [--json OUT]
 * explore sweeps seeds on a piscina pool with a progress bar on stderr and lists the failing
 * seeds by first violated invariant; replay reruns one seed exactly (same trace digest), prints
 * the failing pod's timeline, exports the trace, and shrinks the faults and steps (ddmin).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { checkOutputPaths, output } from '../outputPaths.js';
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
import { explore, exploreReplayCommand, type ExploreSummary } from './explore.js';
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
  if (Number(m[2]) - Number(m[1]) + 1 > MAX_EXPLORE_SEEDS) {
    throw new InvalidArgumentError(`expected at most ${MAX_EXPLORE_SEEDS} seeds per run (split a larger hunt into several ranges).`);
  }
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
  if (n > MAX_EXPLORE_SEEDS) throw new InvalidArgumentError(`expected at most ${MAX_EXPLORE_SEEDS} seeds per run (split a larger hunt into --seeds ranges).`);
  return n;
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

/** The sweep's summary lines: totals, then failing seeds grouped by first violated invariant. */
export function formatExploreSummary(s: ExploreSummary): string[] {
  const out = [`${s.seeds} seeds in ${s.wallSeconds.toFixed(1)}s wall on ${s.workers} worker${s.workers === 1 ? '' : 's'} (${s.seedsPerSecond.toFixed(2)} seeds/s): ${s.failing} failing`];
  for (const g of s.groups) {
    out.push('', `${g.invariant}: ${g.seeds.length} seed${g.seeds.length === 1 ? '' : 's'}`);
    for (const x of g.seeds) {
      out.push(`  seed ${x.seed} at ${sec(x.t)}: ${clip(x.message)}`);
      out.push(`    ${x.replay}`);
    }
  }
  out.push(s.failing === 0 ? 'PASS' : 'FAIL');
  return out;
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
  program
    .command('explore')
    .description("run a scenario once per seed with the faults each seed draws from the scenario's explore section; list the failing seeds")
    .argument('<file>', 'scenario file (YAML); without an explore: section a default one is used (faults within the span of its steps)')
    .option('--seeds <a..b>', 'seeds to run, inclusive (default 1..100)', parseSeedRange)
    .option('--count <n>', `run seeds 1..n (n ≤ ${MAX_EXPLORE_SEEDS})`, seedCount)
    .option('--workers <w>', `parallel simulations (default: the number of cores; never more than the seeds; at most ${MAX_WORKERS})`, workerCount)
    .option('--faults <level>', 'scale every fault rate: a number or none | low | medium | high', parseFaultLevel, 1)
    .option('--json <out>', 'write every seed result as JSON to this file')
    .option('--no-progress', 'no progress bar on stderr')
    .option('--report <out>', 'also write an HTML report: seeds per outcome, failing seeds by first violated invariant, their replay commands')
    .option('--shrink', `with --report: shrink the first failing seed of each violated invariant (at most ${MAX_SHRUNK_IN_REPORT}) and show its shrunk scenario`)
    .action(async (file: string, o: { seeds?: [number, number]; count?: number; workers?: number; faults: number; json?: string; progress: boolean; report?: string; shrink?: boolean }) => {
      if (o.seeds && o.count !== undefined) {
        io.err('podsim explore: give --seeds or --count, not both');
        return done(2);
      }
      if (o.shrink && !o.report) {
        io.err('podsim explore: --shrink needs --report (the shrunk scenarios are shown in it; podsim replay --shrink writes one to a file)');
        return done(2);
      }
      const plain = loadScenario(file);
      checkOutputPaths([output('--json', o.json), output('--report', o.report)], plain.inputFiles ?? [file]);
      const plan = compileScenario(plain);
      for (const w of plan.warnings) io.err(formatIssue(w));
      const { sc, defaulted } = await exploreReady(plain, o.faults);
      if (defaulted) io.err(describeDefaultExplore(file, defaulted, sec));
      else if (!plain.doc.explore) io.err(`${file}: warning: no explore: section and --faults none, so every seed runs without faults (and without the liveness check)`);
      const [a, b] = o.seeds ?? [1, o.count ?? 100];
      const seeds = Array.from({ length: b - a + 1 }, (_, i) => a + i);
      // More threads than seeds would only idle (and --workers 100000 started 100000 of them).
      const pool = new SeedPool(Math.min(o.workers ?? availableParallelism(), seeds.length));
      io.out(`explore ${file}: seeds ${a}..${b}, faults level ${o.faults}, ${pool.workers} worker${pool.workers === 1 ? '' : 's'}`);
      const bar = progress(seeds.length, o.progress && process.stderr.isTTY === true);
      try {
        const s = await explore(pool, { file, seeds, level: o.faults, ...(defaulted ? { explore: defaulted } : {}), onSeed: (_r, n, f) => bar.update(n, f) });
        bar.stop();
        // The summary goes to stdout once the bar (on stderr) is cleared.
        for (const l of formatExploreSummary(s)) io.out(l);
        if (o.json) writeFileSync(o.json, `${JSON.stringify(s, null, 2)}\n`);
        if (o.report) {
          const shrunk = new Map<number, ShrunkSeed>();
          for (const g of o.shrink ? s.groups.slice(0, MAX_SHRUNK_IN_REPORT) : []) {
            const seed = g.seeds[0].seed;
            const r = await shrinkSeed(pool, sc, seed, o.faults, (what) => io.err(`shrink seed ${seed} (${g.invariant}): ${what} …`), defaulted);
            if ('passes' in r) continue;
            const kept = drawnFaults(sc, seed, o.faults).filter((f) => r.faults.kept.includes(f.id));
            const outFile = join(dirname(file), `${basename(file, extname(file))}-seed${seed}-shrunk.yaml`);
            const command = `${exploreReplayCommand(file, seed, o.faults)} --shrink`;
            shrunk.set(seed, { seed, steps: r.steps.kept.length, text: shrunkScenarioText(sc, { seed, invariant: r.invariant, faults: kept, keepSteps: r.steps.kept, outFile, command }) });
          }
          const command = `pnpm podsim explore ${file} --seeds ${a}..${b}${o.faults !== 1 ? ` --faults ${o.faults}` : ''}`;
          const bytes = writeReport(o.report, exploreReportInput(s, { requested: seeds.length, command, shrunk }));
          io.out(`report written to ${o.report} (${(bytes / 1e6).toFixed(1)} MB; open it in a browser)`);
        }
        done(s.failing === 0 ? 0 : 1);
      } finally {
        await pool.close();
      }
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
      checkOutputPaths([output('--trace', o.trace), output('--json', o.json), o.shrink ? output('--out', o.out) : undefined], plain.inputFiles ?? [file]);
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
