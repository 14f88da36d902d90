#!/usr/bin/env node
/**
 * The `podsim` command line (`pnpm podsim …` = `node packages/harness/dist/src/cli.js …`).
 *   podsim run FILE [--seed N] [--placement P] [--json OUT] [--quiet] [--trace OUT.json] [--report OUT.html [--report-pods a,b]]
 *   podsim validate FILE
 *   podsim explore FILE [--seeds A..B | --count N] [--workers W] [--faults LEVEL] [--json OUT] (src/explore/cli.ts)
 *   podsim explore FILE … --shard I/N | --shards N [--out DIR] [--for D] [--until-failures K]; podsim explore merge RESULT...
 *   podsim replay FILE --seed N [--faults LEVEL] [--trace OUT.json] [--shrink [--out FILE]]
 *   podsim serve [--port P] [--host H] [--scenario FILE] [--nodes N] [--speed X] [--seed S] [--kubeconfig OUT]
 *   podsim bench storm|churn|scale [...] (src/bench/benchCli.ts)
 * Exit codes: 0 every step, expectation and invariant held; 1 something failed (the failed
 * check and the replay command are printed); 2 bad input (file, flags) — a message naming the
 * file, line and field, never a stack trace.
 */
import type { TrafficReport } from './traffic/evaluate.js';
import { writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { US_PER_SECOND } from '@podsim/api';
import { formatDuration } from './duration.js';
import { compileScenario } from './scenario/compile.js';
import { loadScenario } from './scenario/load.js';
import { ScenarioError, formatIssue } from './scenario/source.js';
import type { RunReport } from './run.js';
import { DEFAULT_ROWS, deletedPodLines } from './report/summary.js';
import { runProgress } from './report/progress.js';
import { formatClientLimits } from './scenario/clientLimits.js';
import type { EngineKind } from './engine.js';
import { parseDuration } from './duration.js';
import { runServe } from './serve/command.js';
import { registerBenchCommands } from './bench/benchCli.js';
import { registerExploreCommands } from './explore/cli.js';
import { toChromeTrace } from './report/chromeTrace.js';
import { runPlan } from './engine.js';
import { NO_EXPECTATIONS, judge } from './run.js';
import { versionLine } from './version.js';
import { checkOutputPaths, output } from './outputPaths.js';
import { writeReport } from '@podsim/report';
import { REPORT_TRACE_KINDS, runReportInput } from './report/htmlInput.js';

/** Exit codes of the CLI. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_BAD_INPUT = 2;

/** Where the CLI writes; tests pass collectors. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

const stdio: CliIo = {
  out: (l) => process.stdout.write(`${l}\n`),
  err: (l) => process.stderr.write(`${l}\n`),
};

function parseSeed(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) > 2 ** 32 - 1) throw new InvalidArgumentError('expected an integer from 0 to 4294967295.');
  return Number(v);
}

function parsePort(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) > 65535) throw new InvalidArgumentError('expected a port number from 0 to 65535.');
  return Number(v);
}

function parseNodes(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 5000) throw new InvalidArgumentError('expected an integer from 1 to 5000.');
  return Number(v);
}

/** A listen address: an IPv4 / IPv6 address or a host name (`999.1.1.1` is neither: it was looked up as a name). */
function parseHost(v: string): string {
  const dotted = /^[\d.]+$/.test(v);
  if (isIP(v) !== 0 || (!dotted && /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(v))) return v;
  throw new InvalidArgumentError(dotted ? 'not an IPv4 address (four numbers from 0 to 255, e.g. 127.0.0.1 or 0.0.0.0).' : 'expected an IP address or a host name.');
}

function parseSpeed(v: string): number {
  const n = Number(v);
  if (!/^\d+(\.\d+)?$/.test(v) || !(n > 0) || n > 10_000) throw new InvalidArgumentError('expected a number > 0 (virtual seconds per wall second), at most 10000.');
  return n;
}

/** The longest `serve --warp`: a year of virtual time (an idle 2-node cluster runs about a virtual day per 3–5 s of wall time, so a year is ~20 min before the server listens). */
export const MAX_WARP_US = 8760 * 3600 * 1_000_000;

function parseWarp(v: string): number {
  const us = parseDuration(v);
  if (us === undefined) throw new InvalidArgumentError('expected a duration such as 42h, 10m or 90s.');
  if (us > MAX_WARP_US) throw new InvalidArgumentError('expected at most 8760h (a year): every virtual second of the warp is simulated, about a virtual day per 3-5 s of wall time.');
  return us;
}

function parseRows(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) > 1_000_000) throw new InvalidArgumentError('expected a number of rows from 0 to 1000000.');
  return Number(v);
}

/** `a,b,ns/c`: pod names (`ns/name` outside the default namespace). */
export function parsePodList(v: string): string[] {
  const names = v.split(',').map((n) => n.trim()).filter((n) => n !== '');
  if (names.length === 0 || names.some((n) => !/^([a-z0-9]([-a-z0-9]*[a-z0-9])?\/)?[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/.test(n))) throw new InvalidArgumentError('expected pod names separated by commas (ns/name outside the default namespace).');
  return names;
}

function parsePlacement(v: string): string {
  if (!/^(single|per-actor|(shards|nodes):[1-9]\d*)$/.test(v)) throw new InvalidArgumentError('expected single, per-actor, shards:N or nodes:N.');
  return v;
}

/** Prints a finished run the way a user reads it: the watch rows, the pod table, the tally and the verdict (PASS, FAIL or no expectations). */
export function printReport(r: RunReport, io: CliIo, quiet: boolean, rows = DEFAULT_ROWS): void {
  if (!quiet) {
    for (const l of r.watch) io.out(l);
    if (r.watch.length > 0) io.out('');
  }
  const deleted = deletedPodLines(r, rows, quiet);
  for (const l of deleted) io.out(l);
  if (deleted.length > 0) io.out('');
  io.out(
    `virtual ${formatDuration(r.virtualSeconds * US_PER_SECOND)} in ${r.wallSeconds.toFixed(2)}s wall ` +
      `(${r.events} events on ${r.hostCount} host thread${r.hostCount === 1 ? '' : 's'}), trace digest ${r.traceDigest || '-'}`,
  );
  if (r.traffic) for (const l of trafficLines(r.traffic)) io.out(l);
  const passed = r.expectations.filter((e) => e.ok).length;
  io.out(
    `expectations: ${r.expectations.length === 0 ? 'none' : `${passed}/${r.expectations.length} passed`}; invariants: ${r.invariantsChecked.length} checked, ` +
      `${r.violations.length} violation${r.violations.length === 1 ? '' : 's'}` +
      (r.allowedViolations.length ? ` (+${r.allowedViolations.length} allowed)` : ''),
  );
  if (r.ok) {
    // A file without expectations passes on its steps and invariants alone: say so instead of a
    // PASS a reader takes for "what the file describes happened" (exit code 0 all the same).
    io.out(r.expectations.length === 0 ? NO_EXPECTATIONS : 'PASS');
    return;
  }
  io.out('FAIL');
  for (const f of r.failures) io.out(`  ${f}`);
  io.out(`replay: ${r.replay}`);
}

/** The traffic summary (issue #18): per source requests, failures by cause, and the widest exposure window. */
export function trafficLines(t: TrafficReport): string[] {
  const out: string[] = [];
  for (const s of t.sources) {
    const causes = Object.entries(s.byCause).map(([c, n]) => `${c} ${n}`).join(', ');
    out.push(`traffic ${s.id} → ${s.service} (${s.connection}, ${s.nodePort ? 'node port of ' : ''}${s.fromNodes.length} node${s.fromNodes.length === 1 ? '' : 's'}): ${s.requests} requests, ${s.served} served, ${s.failed} failed${causes ? ` (${causes})` : ''}${s.failureWindow ? `, sent ${s.failureWindow.first.toFixed(3)}s–${s.failureWindow.last.toFixed(3)}s` : ''}${s.cutShort && !t.cutShort ? `; cut short: ${s.cutShort}` : ''}`);
  }
  const worst = [...t.exposure].sort((a, b) => b.windowSeconds - a.windowSeconds)[0];
  if (worst && worst.windowSeconds > 0) out.push(`exposure: widest window ${worst.windowSeconds.toFixed(3)}s (${worst.pod}: ${worst.listenerClosedAt === undefined || (worst.ipGoneAt ?? Infinity) < worst.listenerClosedAt ? 'IP gone' : 'listener closed'} → last node's rule removed), ${t.exposure.filter((e) => e.windowSeconds > 0).length} of ${t.exposure.length} pods exposed`);
  else if (t.exposure.length > 0) {
    // A window ends at a rule removal: a pod that stopped answering and came back (a node that
    // returned within the grace) without being dropped has none, though requests to it failed.
    const unwindowed = t.exposure.filter((e) => e.failedRequests > 0).length;
    out.push(
      unwindowed > 0
        ? `exposure: no window measured (no node's rules dropped a pod after it stopped answering); ${unwindowed} of ${t.exposure.length} pods had failed requests without one, see the failures by pod`
        : `exposure: none (no node routed to any of ${t.exposure.length} pods after it stopped answering)`,
    );
  }
  out.push(`traffic not simulated (no verdict): ${t.unchecked.join(', ')}`);
  out.push('');
  return out;
}

/** Test hooks of {@link main}: wall ms before `run`'s progress shows and between its lines. */
export interface CliHooks {
  readonly progressAfterMs?: number;
  readonly progressEveryMs?: number;
}

/** Runs the CLI with `argv` (without node and script); resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIo = stdio, hooks: CliHooks = {}): Promise<number> {
  let code = EXIT_OK;
  const program = new Command('podsim')
    .description('Simulate how Kubernetes v1.22.8 deletes pods, from a scenario file.')
    .version(versionLine(), '-V, --version', 'print the podsim version and the Kubernetes version it simulates')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showHelpAfterError('(run podsim --help for usage)')
    .allowExcessArguments(false)
    // Options after a command are that command's (`explore merge --json` is merge's, not explore's).
    .enablePositionalOptions();

  program
    .command('run')
    .description('run a scenario and check its expectations and the invariants')
    .argument('<file>', 'scenario file (YAML)')
    .option('--seed <n>', 'run seed (default: the scenario\'s cluster.seed, else 1)', parseSeed)
    .option('--placement <p>', 'single | per-actor | shards:N | nodes:N (default: the scenario\'s, else single)', parsePlacement)
    .option('--json <out>', 'write the result as JSON to this file')
    .option('--quiet', 'leave out the progress, the watch lines and the pod table (the seed, summary, digest, tally and verdict lines remain)')
    .option('--trace <out>', 'write the run as a Chrome trace (Perfetto, chrome://tracing)')
    .addOption(new Option('--engine <kind>', 'threads (worker threads) or local (one thread, no workers)').choices(['threads', 'local']).default('threads'))
    .option('--rows <n>', `deleted pods listed one row each; with more, a summary first (default ${DEFAULT_ROWS})`, parseRows)
    .option('--report <out>', 'write an HTML report (charts of the run; one self-contained file), also when the run fails')
    .option('--report-pods <names>', 'with --report: the pods whose kill paths to draw, comma-separated (default: every deleted pod up to 40, else a sample drawn with the seed)', parsePodList)
    .action(async (file: string, o: { seed?: number; placement?: string; json?: string; quiet?: boolean; trace?: string; engine: EngineKind; rows?: number; report?: string; reportPods?: string[] }) => {
      const sc = loadScenario(file);
      if (o.reportPods && !o.report) throw new ScenarioError([{ file, line: 0, column: 0, field: '--report-pods', message: 'needs --report (it chooses the pods the HTML report draws)' }]);
      // Before anything runs: a run must not end in a failed write, nor overwrite its input.
      checkOutputPaths([output('--json', o.json), output('--trace', o.trace), output('--report', o.report)], sc.inputFiles ?? [file], (l) => io.err(l));
      const plan = compileScenario(sc, { seed: o.seed, placement: o.placement });
      for (const w of plan.warnings) io.err(formatIssue(w));
      // Ctrl-C (or SIGTERM) ends the run at its next pause and reports what happened until then;
      // a second one quits at once. (Without this a long run lost every row it had produced.)
      // The handler stays until the report, --json and --trace are written: a Ctrl-C after the
      // run ended used to meet Node's default action and kill podsim before it wrote them.
      const interrupt = new AbortController();
      let runOver = false;
      let interruptedBy: string | undefined;
      const onSignal = (sig: NodeJS.Signals) => {
        if (interrupt.signal.aborted) process.exit(130);
        interruptedBy = sig === 'SIGINT' ? 'Ctrl-C' : sig;
        interrupt.abort();
        io.err(runOver ? 'podsim run: the run is over; finishing its report (again to quit at once)' : 'podsim run: interrupted; reporting the run so far (again to quit at once)');
      };
      process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
      try {
        io.out(`seed ${plan.seed} (placement ${plan.placement}) ${file}`);
        if (!o.quiet) io.out(formatClientLimits(plan.clientLimits));
        const progress = o.quiet
          ? undefined
          : runProgress(plan.driver.steps.length, {
              write: io.err,
              ...(hooks.progressAfterMs !== undefined ? { showAfterMs: hooks.progressAfterMs } : {}),
              ...(hooks.progressEveryMs !== undefined ? { lineEveryMs: hooks.progressEveryMs } : {}),
            });
        let res;
        try {
          res = await runPlan(plan, {
            engine: o.engine,
            signal: interrupt.signal,
            ...(progress ? { onSegment: progress.onSegment } : {}),
            // The report also draws the client-side rate-limiter waits (not digested: same digest).
            ...(o.report ? { traceFilter: REPORT_TRACE_KINDS } : {}),
          });
        } finally {
          progress?.stop();
        }
        runOver = true;
        const judged = judge(plan, res, interruptedBy ? { interruptedBy } : {});
        const report = judged.report;
        printReport(report, io, o.quiet ?? false, o.rows);
        // The paths were checked before the run; one that broke since (its directory removed,
        // the disk full) is named, and the other outputs are still written.
        let unwritten = 0;
        const write = (flag: string, path: string, f: () => void) => {
          try {
            f();
          } catch (e) {
            unwritten++;
            io.err(`podsim run: cannot write ${flag} ${path}: ${(e as Error).message} (it was writable when the run started)`);
          }
        };
        if (o.report) {
          const out = o.report;
          const onUnknownPods = (names: readonly string[]) => io.err(`podsim run: --report-pods: no deleted pod is named ${names.join(', ')} (the report draws the others)`);
          write('--report', out, () => {
            const bytes = writeReport(out, runReportInput(report, judged.model, res.traces, { ...(o.reportPods ? { pods: o.reportPods, onUnknownPods } : {}) }));
            io.out(`report written to ${out} (${(bytes / 1e6).toFixed(1)} MB; open it in a browser)`);
          });
        }
        if (o.json) {
          const out = o.json;
          write('--json', out, () => writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`));
        }
        if (o.trace) {
          const out = o.trace;
          write('--trace', out, () => {
            writeFileSync(out, JSON.stringify(toChromeTrace(res.traces, { file, seed: plan.seed, placement: plan.placement, traceDigest: report.traceDigest })));
            io.out(`trace written to ${out} (open it in https://ui.perfetto.dev or chrome://tracing)`);
          });
        }
        code = unwritten > 0 ? EXIT_BAD_INPUT : report.ok ? EXIT_OK : EXIT_FAILED;
      } finally {
        process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
      }
    });

  program
    .command('validate')
    .description('check a scenario file without running it')
    .argument('<file>', 'scenario file (YAML)')
    .action((file: string) => {
      const plan = compileScenario(loadScenario(file));
      for (const w of plan.warnings) io.err(formatIssue(w));
      io.out(`${file}: ok (${plan.driver.steps.length} steps, ${plan.nodes.length} node${plan.nodes.length === 1 ? '' : 's'}, ${plan.actors.length} actors)`);
    });

  program
    .command('serve')
    .description('serve the simulated cluster over HTTP so that the real kubectl can talk to it')
    .option('--port <p>', 'port to listen on (0 = any free port)', parsePort, 0)
    .option('--host <h>', 'address to bind (loopback unless told otherwise)', parseHost, '127.0.0.1')
    .option('--scenario <file>', "load this scenario's cluster and manifests (default: a cluster of --nodes nodes)")
    .option('--nodes <n>', 'nodes of the default cluster (default 2)', parseNodes)
    .option('--speed <x>', 'virtual seconds per wall second', parseSpeed, 1)
    .option('--seed <n>', "run seed (default: the scenario's cluster.seed, else 1)", parseSeed)
    .option('--kubeconfig <out>', 'write the kubeconfig here (default: a temporary file)')
    .option('--timeline', "also run the scenario's steps (paced); the cluster keeps running after the last one")
    .option('--warp <duration>', 'fast-forward virtual time by this much before serving (e.g. 42h)', parseWarp)
    .option('--verbose', 'print one line per HTTP request to stderr')
    .action(
      async (o: { port: number; host: string; scenario?: string; nodes?: number; speed: number; seed?: number; kubeconfig?: string; timeline?: boolean; warp?: number; verbose?: boolean }) => {
        if (o.scenario !== undefined && o.nodes !== undefined) {
          io.err('podsim serve: --nodes applies to the default cluster only; a scenario names its nodes in cluster.nodes');
          code = EXIT_BAD_INPUT;
          return;
        }
        if (o.timeline && o.scenario === undefined) {
          io.err('podsim serve: --timeline needs --scenario');
          code = EXIT_BAD_INPUT;
          return;
        }
        // Checked before the cluster starts (a missing directory was a stack trace after it had).
        checkOutputPaths([output('--kubeconfig', o.kubeconfig)], o.scenario !== undefined ? [o.scenario] : [], (l) => io.err(l));
        try {
          code = await runServe({ ...o, warpUs: o.warp }, io);
        } catch (err) {
          const e = err as NodeJS.ErrnoException;
          // ENOTFOUND / EAI_AGAIN: a host name that does not resolve.
          if (e.code !== 'EADDRINUSE' && e.code !== 'EACCES' && e.code !== 'EADDRNOTAVAIL' && e.code !== 'ENOTFOUND' && e.code !== 'EAI_AGAIN') throw err;
          io.err(`podsim serve: cannot listen on ${o.host}:${o.port}: ${e.code}${e.code === 'ENOTFOUND' ? ' (no such host)' : ''}`);
          code = EXIT_BAD_INPUT;
        }
      },
    );

  registerBenchCommands(program, io, (c) => (code = c));
  registerExploreCommands(program, io, (c) => (code = c));

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof ScenarioError) {
      for (const i of err.issues) io.err(formatIssue(i));
      return EXIT_BAD_INPUT;
    }
    if (err instanceof CommanderError) {
      // Asked-for help and version are not errors; everything else commander rejects (unknown
      // command or flag, missing argument, no command at all) is bad input.
      // `podsim help` and `podsim help run` end with 'commander.help' and exit code 0; `podsim`
      // without a command shows the same help as an error (exit code 1 there, 2 here).
      const asked = err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || (err.code === 'commander.help' && err.exitCode === 0);
      return asked ? EXIT_OK : EXIT_BAD_INPUT;
    }
    io.err(`podsim: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return EXIT_FAILED;
  }
}

// Run when executed as the `podsim` script (not when imported by tests).
if (process.argv[1]?.endsWith('/cli.js')) {
  main(process.argv.slice(2)).then((c) => {
    process.exitCode = c;
  });
}
