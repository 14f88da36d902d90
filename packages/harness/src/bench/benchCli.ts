/**
 * `podsim bench storm | churn | scale`: the command-line side of the benchmarks (figures in
 * `runBench.ts`, clusters in `stormPlan.ts`). Each run prints a human table, or with `--json` ONE
 * JSON line on stdout; a progress bar (cli-progress) goes to stderr once a run has taken more
 * than a few seconds. `scale` runs the storm at several sizes, each run in a child process of its
 * own (peak RSS is per process), sizes interleaved and repeated (`scaleSummary.ts`), and prints
 * how the per-pod wall cost grows, with its spread, and the memory per added pod.
 */
import { spawn } from 'node:child_process';
import { loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { SingleBar } from 'cli-progress';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { writeReport } from '@podsim/report';
import { runBenchPlan, type BenchFigures, type BenchProgress, type BenchRunOptions } from './runBench.js';
import { benchReportInput } from '../report/htmlInput.js';
import { checkOutputPaths, output } from '../outputPaths.js';
import { scaleOrder, summarizeScale } from './scaleSummary.js';
import { BENCH_NETWORK_US, churnPlan, stormPlan, type BenchPlan } from './stormPlan.js';
import { CLUSTER_CIDR, MAX_NODE_CIDRS } from '../nodeCidrs.js';

export interface BenchIo {
  out(line: string): void;
  err(line: string): void;
}

const positiveInt = (name: string) => (v: string) => {
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new InvalidArgumentError(`${name}: expected a positive integer.`);
  return Number(v);
};
const positiveNumber = (name: string) => (v: string) => {
  if (!/^\d+(\.\d+)?$/.test(v) || !(Number(v) > 0)) throw new InvalidArgumentError(`${name}: expected a positive number.`);
  return Number(v);
};
/**
 * `--network-us`: up to 1 s one way (a satellite link). Beyond that the bench measured nothing:
 * 100 s made the driver's own watch time out (an ActorThrew engine failure, 0 pods created).
 */
function networkUs(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 1_000_000) throw new InvalidArgumentError('--network-us: expected an integer from 1 to 1000000 (µs, one way).');
  return Number(v);
}
function parseSeed(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) > 2 ** 32 - 1) throw new InvalidArgumentError('expected an integer from 0 to 4294967295.');
  return Number(v);
}
function parsePlacement(v: string): string {
  if (!/^(single|per-actor|(shards|nodes):[1-9]\d*)$/.test(v)) throw new InvalidArgumentError('expected single, per-actor, shards:N or nodes:N.');
  return v;
}
function parseSizes(v: string): number[] {
  const sizes = v.split(',').map((s) => s.trim());
  if (sizes.length === 0 || sizes.some((s) => !/^\d+k?$/.test(s))) throw new InvalidArgumentError('expected a comma-separated list of pod counts (1000,10k,…).');
  const pods = sizes.map((s) => (s.endsWith('k') ? Number(s.slice(0, -1)) * 1000 : Number(s)));
  if (pods.some((p) => p < 1)) throw new InvalidArgumentError('expected pod counts of at least 1.');
  return pods;
}

/**
 * Peak RSS of a bench run, estimated from docs/benchmarks.md's storms (68 KB per pod at 100k pods,
 * 55 KB at 150k, 114 KB at 10k once the ~300 MB of threads and code are taken out; re-measured on
 * 5fe1a0c as the slope between the 2k and 10k storms: 65.8 KB per added pod, "Memory per pod"):
 * 300 MB plus 70 KB per pod. A size whose estimate exceeds the machine's memory is refused up front — a storm
 * of 10^11 pods used to grow until V8 ran out of memory 47 s later, with a stack trace.
 */
export const BENCH_BASE_BYTES = 300 * 2 ** 20;
export const BENCH_BYTES_PER_POD = 70 * 2 ** 10;

/**
 * Why a bench of `nodes` nodes and (at most) `pods` pods at once cannot run here, or undefined if
 * it can. `bytesPerPod` is the estimate per pod (default {@link BENCH_BYTES_PER_POD}; the
 * `--estimate-kb-per-pod` flag, for a build whose storms measured less: a 500k-pod size in
 * `bench scale` fits 24 GiB only below ~49 KB per pod).
 */
export function benchSizeProblem(nodes: number, pods: number, memoryBytes = totalmem(), bytesPerPod = BENCH_BYTES_PER_POD): string | undefined {
  if (nodes > MAX_NODE_CIDRS) return `${int(nodes)} nodes: at most ${int(MAX_NODE_CIDRS)} (the node pod CIDRs the cluster CIDR ${CLUSTER_CIDR} holds)`;
  const need = BENCH_BASE_BYTES + pods * bytesPerPod;
  if (need > memoryBytes) {
    const max = Math.floor((memoryBytes - BENCH_BASE_BYTES) / bytesPerPod);
    const source = bytesPerPod === BENCH_BYTES_PER_POD ? 'docs/benchmarks.md; --estimate-kb-per-pod to use a figure you measured' : '--estimate-kb-per-pod';
    return `${int(pods)} pods would need about ${gib(need)} of memory (${+(bytesPerPod / 1024).toFixed(1)} KB per pod, ${source}) and this machine has ${gib(memoryBytes)}: at most ${int(Math.max(0, max))} pods here`;
  }
  return undefined;
}

const gib = (b: number) => (b >= 2 ** 40 ? `${(b / 2 ** 40).toFixed(1)} TiB` : `${(b / 2 ** 30).toFixed(1)} GiB`);

/** A cli-progress bar on stderr that appears only once the run has lasted `afterMs`. */
export function progressBar(afterMs = 3_000): BenchProgress {
  const started = performance.now();
  let bar: SingleBar | undefined;
  let phase = '';
  let total = 0;
  let value = 0;
  let virtual = 0;
  const payload = () => ({ phase: phase.padEnd(6), virtual: virtual.toFixed(0) });
  return {
    phase(name, t) {
      phase = name;
      total = t;
      value = 0;
      if (bar) bar.start(total, 0, payload());
    },
    update(v, virtualSeconds) {
      value = v;
      virtual = virtualSeconds;
      if (!bar && performance.now() - started > afterMs) {
        bar = new SingleBar({
          stream: process.stderr,
          format: '{phase} |{bar}| {value}/{total} pods | virtual {virtual}s | wall {duration}s',
          hideCursor: true,
          clearOnComplete: true,
          fps: 5,
        });
        bar.start(total, value, payload());
      }
      bar?.update(value, payload());
    },
    stop() {
      bar?.stop();
      bar = undefined;
    },
  };
}

const f1 = (x: number) => x.toFixed(1);
const f3 = (x: number) => x.toFixed(3);
const int = (x: number) => Math.round(x).toLocaleString('en-US');
const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;

/** The human table of one run. */
export function formatFigures(f: BenchFigures, containers: number, setup?: string): string[] {
  const lines = [
    `podsim bench ${f.scenario}: ${int(f.nodes)} nodes, ${int(f.pods)} pods (${containers} container${containers === 1 ? '' : 's'} each), seed ${f.seed}, placement ${f.placement}`,
    ...(setup ? [setup] : []),
    `deletion SLI model: ${f.apiserverModel}`,
    '',
    'PHASE      WALL       VIRTUAL     PODS/WALL-S   PODS/VIRTUAL-S',
    `start-up   ${`${f3(f.startupWallSeconds)}s`.padEnd(10)} -           -             -              (threads, modules, actor start; not in total)`,
    `create     ${`${f3(f.createWallSeconds)}s`.padEnd(10)} ${`${f1(f.virtualSeconds - f.deleteVirtualSeconds)}s`.padEnd(11)} -             -`,
    `delete     ${`${f3(f.deleteWallSeconds)}s`.padEnd(10)} ${`${f1(f.deleteVirtualSeconds)}s`.padEnd(11)} ${int(f.deletionsPerWallSecond).padEnd(13)} ${f1(f.deletionsPerVirtualSecond)}`,
    `total      ${`${f3(f.wallSeconds)}s`.padEnd(10)} ${`${f1(f.virtualSeconds)}s`.padEnd(11)} (${f1(f.timeCompression)} virtual s per wall s; start-up, checks and the raw measurement not included)`,
    `the delete wall includes the harness: ${f3(f.deletePausedWallSeconds)}s with the hosts paused between 1 s segments (metrics, traces), ${f3(f.deleteModelWallSeconds)}s feeding the checkers' model alongside`,
    '',
    `deletion latency, DELETE accepted → DELETED (virtual s): p50 ${f3(f.deleteLatencyP50)}  p90 ${f3(f.deleteLatencyP90)}  p99 ${f3(f.deleteLatencyP99)}  max ${f3(f.deleteLatencyMax)}`,
    `engine: ${int(f.events)} events, ${int(f.messages)} messages (${int(f.messagesPerWallSecond)}/wall-s), ${f1(f.deleteMessagesPerPod)} per pod deleted in the deletion phase, ${int(f.windows)} windows, ${f.hostThreads} host thread${f.hostThreads === 1 ? '' : 's'}`,
    `raw transport (same run): ${int(f.rawTransportMsgsPerSec)} msgs/s → ceiling ${int(f.ceilingDeletionsPerWallSecond)} deletions/wall-s (raw ÷ messages per pod); deletions/wall-s ÷ ceiling ${f3(f.ceilingRatio)}${f.crossThreadRatio !== undefined ? `; cross-thread msgs/wall-s ÷ raw ${f3(f.crossThreadRatio)}` : ''}`,
    `memory: peak RSS ${mib(f.peakRssBytes)} (${int(f.rssBytesPerPod)} bytes per pod, whole process); host threads' heap ${mib(f.hostHeapAtDeleteBytes)} at the delete instant (${int(f.hostHeapBytesPerPod)} bytes per pod), peak ${mib(f.hostHeapPeakBytes)}`,
    `checked: ${int(f.traceRecords)} trace records in ${f3(f.checkWallSeconds)}s wall; invariants: ${f.invariantsChecked} checked, ${f.violations} violation${f.violations === 1 ? '' : 's'}`,
    `deleted ${int(f.deleted)}/${int(f.pods)}, lost ${int(f.lost)}; trace digest ${f.traceDigest || '-'}`,
  ];
  for (const v of f.violationSamples) lines.push(`  ${v}`);
  if (f.failure) lines.push(`engine failure: ${f.failure}`);
  lines.push(f.ok ? 'PASS' : 'FAIL');
  return lines;
}

/** The cluster settings a bench reader should not have to guess (docs/benchmarks.md "What runs"). */
function setupLine(o: CommonFlags): string {
  const cp = o.controlPlaneQps === undefined ? 'unthrottled' : `QPS ${o.controlPlaneQps}`;
  return `cluster: kubelet API QPS 5 / burst 10, kubelet Events ${o.events ? 'on' : 'off'}, controller-manager / scheduler ${cp}, kubelet ↔ apiserver ${o.networkUs / 1000} ms one way`;
}

interface CommonFlags {
  seed: number;
  placement: string;
  containers: number;
  json?: boolean;
  controlPlaneQps?: number;
  events?: boolean;
  rawMessages: number;
  networkUs: number;
  /** KB per pod the up-front memory check assumes (benchSizeProblem). */
  estimateKbPerPod: number;
}

function addCommon(c: Command): Command {
  return c
    .option('--containers <c>', 'containers per pod', positiveInt('--containers'), 1)
    .option('--seed <s>', 'run seed', parseSeed, 1)
    .option('--placement <p>', 'single | per-actor | shards:N | nodes:N (each node\'s kubelet + runtime together, control plane on its own thread)', parsePlacement, 'single')
    .option('--control-plane-qps <q>', 'kube-controller-manager / kube-scheduler client QPS (default: unthrottled)', positiveNumber('--control-plane-qps'))
    .option('--events', 'keep kubelet Events on (default off)')
    .option('--network-us <µs>', 'one-way minimum latency kubelet ↔ apiserver, µs, at most 1000000 (control plane ↔ apiserver: half; kubelet ↔ runtime: 100)', networkUs, BENCH_NETWORK_US)
    .option('--raw-messages <n>', 'messages per side in the raw transport measurement', positiveInt('--raw-messages'), 200_000)
    .option('--estimate-kb-per-pod <kb>', "memory per pod the up-front size check assumes, KB (docs/benchmarks.md; lower it to a figure a storm of this build measured)", positiveNumber('--estimate-kb-per-pod'), BENCH_BYTES_PER_POD / 1024)
    .option('--json', 'print ONE JSON line instead of the table');
}

/** Registers `bench storm | churn | scale` on the podsim program. `done(code)` records the exit code. */
export function registerBenchCommands(program: Command, io: BenchIo, done: (code: number) => void): void {
  const bench = program.command('bench').description('benchmarks: deletion throughput and latency at cluster scale');

  /** Runs one plan in this process, prints its figures (the table, or one JSON line with `extra`), exits by its verdict. */
  const runAndReport = async (plan: BenchPlan, o: CommonFlags & { report?: string }, extra: Record<string, number>, command: string) => {
    let judged: Parameters<NonNullable<BenchRunOptions['onJudged']>>[0] | undefined;
    const f = await runBenchPlan(plan, { progress: progressBar(), rawMessages: o.rawMessages, ...(o.report ? { onJudged: (j) => (judged = j) } : {}) });
    if (o.json) io.out(JSON.stringify({ ...f, containers: o.containers, ...extra }));
    else for (const l of formatFigures(f, o.containers, setupLine(o))) io.out(l);
    if (o.report && judged) {
      const t0 = performance.now();
      const bytes = writeReport(o.report, benchReportInput(f, judged, { command, table: formatFigures(f, o.containers, setupLine(o)) }));
      // stderr: `--json` promises ONE line on stdout.
      io.err(`report written to ${o.report} (${(bytes / 1e6).toFixed(1)} MB in ${((performance.now() - t0) / 1000).toFixed(1)}s; open it in a browser)`);
    }
    done(f.ok ? 0 : 1);
  };
  /** `--report`: checked before the run (outputPaths.ts), as run's. */
  const reportOption = (c: Command) => c.option('--report <out>', 'also write an HTML report (pods over time, deletion latency, per-node drain, a sample of kill paths, rate-limit waits)');
  const commandLine = (name: string, o: CommonFlags, own: Array<[string, string | number | undefined]>) =>
    [
      `pnpm podsim bench ${name}`,
      ...own.filter(([, v]) => v !== undefined).map(([k, v]) => `${k} ${v}`),
      `--containers ${o.containers} --seed ${o.seed} --placement ${o.placement}`,
      ...(o.controlPlaneQps !== undefined ? [`--control-plane-qps ${o.controlPlaneQps}`] : []),
      ...(o.events ? ['--events'] : []),
      ...(o.networkUs !== BENCH_NETWORK_US ? [`--network-us ${o.networkUs}`] : []),
    ].join(' ');

  reportOption(addCommon(
    bench
      .command('storm')
      .description('N nodes × P pods created through Deployments, then all deleted at once')
      .option('--nodes <n>', 'nodes', positiveInt('--nodes'), 1000)
      .option('--pods-per-node <p>', 'pods per node', positiveInt('--pods-per-node'), 100),
  )).action(async (o: CommonFlags & { nodes: number; podsPerNode: number; report?: string }) => {
    const problem = benchSizeProblem(o.nodes, o.nodes * o.podsPerNode, totalmem(), o.estimateKbPerPod * 1024);
    if (problem) {
      io.err(`podsim bench storm: ${problem}`);
      return done(2);
    }
    checkOutputPaths([output('--report', o.report)], [], (l) => io.err(l));
    const plan = stormPlan({ nodes: o.nodes, podsPerNode: o.podsPerNode, containers: o.containers, seed: o.seed, placement: o.placement, controlPlaneQps: o.controlPlaneQps, events: o.events, networkUs: o.networkUs });
    await runAndReport(plan, o, { podsPerNode: o.podsPerNode }, commandLine('storm', o, [['--nodes', o.nodes], ['--pods-per-node', o.podsPerNode]]));
  });

  reportOption(addCommon(
    bench
      .command('churn')
      .description('bare pods created at a steady rate, each deleted a fixed time after it is ready')
      .option('--nodes <n>', 'nodes', positiveInt('--nodes'), 100)
      .option('--rate <r>', 'pods created (and deleted) per virtual second', positiveNumber('--rate'), 100)
      .option('--duration <s>', 'virtual seconds of creations', positiveNumber('--duration'), 60)
      .option('--lifetime <s>', 'virtual seconds a pod runs before its DELETE', positiveNumber('--lifetime'), 10),
  )).action(async (o: CommonFlags & { nodes: number; rate: number; duration: number; lifetime: number; report?: string }) => {
    // Pods live `lifetime` seconds (plus their deletion), so about rate × lifetime exist at once.
    const problem = benchSizeProblem(o.nodes, Math.ceil(o.rate * Math.min(o.duration, o.lifetime + 30)), totalmem(), o.estimateKbPerPod * 1024);
    if (problem) {
      io.err(`podsim bench churn: ${problem}`);
      return done(2);
    }
    checkOutputPaths([output('--report', o.report)], [], (l) => io.err(l));
    const plan = churnPlan({
      nodes: o.nodes,
      rate: o.rate,
      durationS: o.duration,
      lifetimeS: o.lifetime,
      containers: o.containers,
      seed: o.seed,
      placement: o.placement,
      controlPlaneQps: o.controlPlaneQps,
      events: o.events,
      networkUs: o.networkUs,
    });
    await runAndReport(plan, o, { rate: o.rate, durationS: o.duration, lifetimeS: o.lifetime }, commandLine('churn', o, [['--nodes', o.nodes], ['--rate', o.rate], ['--duration', o.duration], ['--lifetime', o.lifetime]]));
  });

  addCommon(
    bench
      .command('scale')
      .description('the storm at several sizes (each run in its own process, sizes interleaved and repeated): how the per-pod wall cost grows')
      .addOption(new Option('--sizes <list>', 'pod counts, e.g. 10k,100k,150k,500k (each rounded up to whole nodes; a size the memory check refuses stops the command before any run)').argParser(parseSizes).default([1_000, 10_000, 100_000, 150_000], '1k,10k,100k,150k'))
      .option('--pods-per-node <p>', 'pods per node (nodes = pods / this)', positiveInt('--pods-per-node'), 100)
      .option('--repeat <n>', 'runs per size, interleaved: ascending sizes, then descending, …', positiveInt('--repeat'), 3),
  ).action(async (o: CommonFlags & { sizes: number[]; podsPerNode: number; repeat: number }) => {
    // Each size rounded up to whole nodes, as the storm runs it; a size given twice runs once per round.
    const sizes = [...new Set(o.sizes.map((p) => Math.max(1, Math.ceil(p / o.podsPerNode)) * o.podsPerNode))];
    const order = scaleOrder(sizes, o.repeat);
    for (const pods of sizes) {
      const problem = benchSizeProblem(pods / o.podsPerNode, pods, totalmem(), o.estimateKbPerPod * 1024);
      if (problem) {
        io.err(`podsim bench scale: --sizes ${int(pods)}: ${problem}`);
        return done(2);
      }
    }
    const runs: Array<BenchFigures & { round: number; loadAvgAtStart: number }> = [];
    for (const [i, pods] of order.entries()) {
      const nodes = pods / o.podsPerNode;
      const round = Math.floor(i / sizes.length) + 1;
      if (!o.json) io.err(`storm ${i + 1}/${order.length} (round ${round}): ${nodes} nodes × ${o.podsPerNode} pods …`);
      const args = ['bench', 'storm', '--json', '--nodes', String(nodes), '--pods-per-node', String(o.podsPerNode), '--containers', String(o.containers), '--seed', String(o.seed), '--placement', o.placement];
      if (o.controlPlaneQps !== undefined) args.push('--control-plane-qps', String(o.controlPlaneQps));
      if (o.events) args.push('--events');
      args.push('--network-us', String(o.networkUs));
      args.push('--raw-messages', String(o.rawMessages));
      args.push('--estimate-kb-per-pod', String(o.estimateKbPerPod));
      const loadAvgAtStart = Number(loadavg()[0].toFixed(2));
      const f = await runChild(args);
      runs.push({ ...f, round, loadAvgAtStart });
    }
    const growth = summarizeScale(sizes, runs);
    const ok = runs.every((r) => r.ok);
    if (o.json) {
      io.out(JSON.stringify({ scenario: 'scale', seed: o.seed, placement: o.placement, podsPerNode: o.podsPerNode, containers: o.containers, repeat: o.repeat, order, ok, growth, runs }));
    } else {
      io.out(`podsim bench scale: storm at ${sizes.map(int).join(', ')} pods (${o.podsPerNode} per node), ${o.repeat} run${o.repeat === 1 ? '' : 's'} per size interleaved, seed ${o.seed}, placement ${o.placement}`);
      io.out('µs/POD (DELETE): median of the runs [min–max]; LOAD: 1-minute load average at the runs\' starts; RSS/Δ POD, HEAP/Δ POD: bytes per pod added since the previous size (peak RSS; host threads\' heap at the delete instant)');
      io.out('');
      io.out('PODS      NODES   RUNS  µs/POD (DELETE)           SPREAD  ×FIRST  µs/POD (ALL)  LOAD       RSS/POD      RSS/Δ POD    HEAP/Δ POD');
      for (const g of growth) {
        io.out(
          [
            int(g.pods).padEnd(9),
            int(g.pods / o.podsPerNode).padEnd(7),
            String(g.repeats).padEnd(5),
            `${f1(g.deleteWallUsPerPod)} [${f1(g.deleteWallUsPerPodMin)}–${f1(g.deleteWallUsPerPodMax)}]`.padEnd(25),
            `${(g.spread * 100).toFixed(0)}%`.padEnd(7),
            g.vsFirst.toFixed(2).padEnd(7),
            f1(g.wallUsPerPod).padEnd(13),
            `${g.loadAvg[0].toFixed(1)}–${g.loadAvg[1].toFixed(1)}`.padEnd(10),
            `${int(g.peakRssBytes / g.pods)} B`.padEnd(12),
            (g.rssSlopeBytesPerPod !== undefined ? `${int(g.rssSlopeBytesPerPod)} B` : '-').padEnd(12),
            g.hostHeapSlopeBytesPerPod !== undefined ? `${int(g.hostHeapSlopeBytesPerPod)} B` : '-',
          ].join(' '),
        );
      }
      const lost = runs.reduce((sum, r) => sum + r.lost, 0);
      const violations = runs.reduce((sum, r) => sum + r.violations, 0);
      io.out(`${runs.length} runs: lost ${lost}, violations ${violations}`);
      io.out(ok ? 'PASS' : 'FAIL');
    }
    done(ok ? 0 : 1);
  });
}

/** Runs `podsim <args>` in a child process (its own heap and peak RSS) and parses its JSON line. */
function runChild(args: string[]): Promise<BenchFigures> {
  const cli = fileURLToPath(new URL('../cli.js', import.meta.url));
  return new Promise((resolve, reject) => {
    // stderr is inherited: the child's progress bar draws on this terminal.
    const child = spawn(process.execPath, [...process.execArgv, cli, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line) as BenchFigures);
      else reject(new Error(`podsim ${args.join(' ')} exited ${code} without a JSON line`));
    });
  });
}
