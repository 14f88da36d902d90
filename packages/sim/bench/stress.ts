/**
 * Engine stress runner (not part of the test suite): many short threaded runs of synthetic
 * cluster-shaped workloads (test/support/stressActors.ts: periodic chains, request/reply, multicast,
 * crashes, long idle stretches) and, optionally, the harness's minio example with a shorter
 * timeline, across placements, with seeded scheduling noise at every synchronisation point
 * (Simulation option `chaos`) and CPU-hogging processes running. Every run's digest is checked
 * against LocalSimulation (synthetic) or the `single` placement (minio); any failure or mismatch
 * prints the line that replays it. Exit code 1 if anything failed.
 *
 *   node packages/sim/dist/bench/stress.js [--runs 200] [--minutes 10] [--hogs 3] [--chaos 0.3]
 *     [--placements per-actor,shards:2,shards:3] [--seed 1] [--segments] [--minio 20m] [--minio-every 10]
 *     [--interleave 20]
 *
 * `--interleave K` also runs each workload K times through the in-memory protocol model
 * (test/support/interleave.ts: real hosts in one thread, pre-empted at every synchronisation
 * point by a seeded scheduler), which explores far more orderings per second than threads.
 * `--seed S --runs 1 --chaos L` replays one synthetic run (chaos seed = workload seed).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Placement } from '@podsim/api/protocol/control';
import { Simulation, SimulationError } from '../src/index.js';
import { localDigest, shape, workload, type Workload } from '../test/support/stressWorkload.js';
import { runInterleaved } from '../test/support/interleave.js';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
}
const flag = (name: string) => process.argv.includes(`--${name}`);

const RUNS = Number(arg('runs', '200'));
const MINUTES = Number(arg('minutes', '10'));
const HOGS = Number(arg('hogs', '3'));
const LEVEL = Number(arg('chaos', '0.3'));
const PLACEMENTS = arg('placements', 'per-actor,shards:2,shards:3').split(',') as Placement[];
const SEED0 = Number(arg('seed', '1'));
const SEGMENTS = flag('segments');
const MINIO = arg('minio', '');
const MINIO_EVERY = Number(arg('minio-every', '10'));
const HOST_TIMEOUT_MS = Number(arg('host-timeout', '20000'));
const INTERLEAVE = Number(arg('interleave', '0'));

async function threadedDigest(w: Workload, placement: Placement, chaosSeed: number, segments: boolean): Promise<string> {
  const sim = await Simulation.create({
    seed: w.seed,
    actors: w.actors,
    latency: w.latency,
    faults: w.faults,
    placement,
    traceFilter: 'none',
    hostTimeoutMs: HOST_TIMEOUT_MS,
    reuseThreads: true,
    chaos: LEVEL > 0 ? { seed: chaosSeed, level: LEVEL } : undefined,
  });
  try {
    if (segments) {
      // Pause at a few arbitrary times: exercises the segment opening round and the pause path.
      const r = shape(chaosSeed * 7 + 3);
      let t = 0;
      for (let k = 0; k < 4; k++) {
        t += 1 + Math.floor(r() * (w.untilUs / 4));
        const res = await sim.runUntil(t);
        if (res.reason !== 'target') break;
      }
    }
    await sim.run();
    return await sim.digest();
  } finally {
    await sim.close();
  }
}

/** Runs the CLI on the minio example with a shorter timeline; returns the digest or the failure text. */
function minioDigest(yaml: string, placement: string, chaos: string | undefined): { digest?: string; out: string } {
  const cli = fileURLToPath(new URL('../../../harness/dist/src/cli.js', import.meta.url));
  const env = { ...process.env, PODSIM_SIM_CHAOS: chaos ?? '' };
  const res = spawnSync(process.execPath, [cli, 'run', yaml, '--quiet', '--placement', placement], { env, encoding: 'utf8', timeout: 600_000 });
  const out = `${res.stdout ?? ''}${res.stderr ?? ''}`;
  const m = /trace digest ([0-9a-f]+)/.exec(out);
  return { digest: m && res.status === 0 ? m[1] : undefined, out };
}

const hogs: ChildProcess[] = [];
function startHogs(n: number): void {
  for (let i = 0; i < n; i++) hogs.push(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
}
function stopHogs(): void {
  for (const h of hogs) h.kill('SIGKILL');
}
process.on('exit', stopHogs);
process.on('SIGINT', () => process.exit(130));

const failures: string[] = [];
const t0 = performance.now();
startHogs(HOGS);
let runs = 0;
let minioRuns = 0;
let interleavings = 0;
let minioYaml: string | undefined;
let minioSingle: string | undefined;
if (MINIO) {
  const dir = mkdtempSync(join(tmpdir(), 'podsim-stress-'));
  // Removed however the run ends (a failure, an uncaught error, Ctrl-C: each exits through here).
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const example = fileURLToPath(new URL('../../../../examples/minio-recreate.yaml', import.meta.url));
  minioYaml = join(dir, 'minio-short.yaml');
  writeFileSync(minioYaml, readFileSync(example, 'utf8').replace('sleep: 42h', `sleep: ${MINIO}`));
  const s = minioDigest(minioYaml, 'single', undefined);
  if (!s.digest) throw new Error(`minio single failed:\n${s.out}`);
  minioSingle = s.digest;
}
try {
  for (let i = 0; i < RUNS && performance.now() - t0 < MINUTES * 60_000; i++) {
    const seed = SEED0 + i;
    const w = workload(seed);
    const want = localDigest(w);
    for (const p of PLACEMENTS) {
      const segments = SEGMENTS && i % 2 === 1;
      const replay = `node packages/sim/dist/bench/stress.js --seed ${seed} --runs 1 --chaos ${LEVEL} --placements ${p}${segments ? ' --segments' : ''} --hogs ${HOGS}`;
      try {
        const got = await threadedDigest(w, p, seed, segments);
        if (got !== want) failures.push(`digest ${got} ≠ local ${want}: ${replay}`);
      } catch (err) {
        const msg = err instanceof SimulationError ? `${err.failure.kind}: ${err.failure.message}` : String(err);
        failures.push(`${msg}: ${replay}`);
      }
      runs++;
      for (let k = 0; k < INTERLEAVE; k++) {
        const sched = seed * 1_000 + k;
        try {
          const r = await runInterleaved(w, p, sched, { preempt: 0.3, depth: 2 });
          if (r.digest !== want) failures.push(`interleaved digest ${r.digest} ≠ local ${want}: workload ${seed}, ${p}, scheduler ${sched}`);
        } catch (err) {
          failures.push(`interleaved ${String(err)}: workload ${seed}, ${p}, scheduler ${sched}`);
        }
        interleavings++;
      }
    }
    if (minioYaml && i % MINIO_EVERY === 0) {
      for (const p of PLACEMENTS) {
        const chaos = LEVEL > 0 ? `${seed}:${LEVEL}` : undefined;
        const m = minioDigest(minioYaml, p, chaos);
        minioRuns++;
        if (m.digest !== minioSingle) {
          failures.push(`minio (sleep ${MINIO}) ${p} chaos ${chaos ?? 'off'}: ${m.digest ?? 'failed'} ≠ single ${minioSingle}\n${m.out.trim().split('\n').slice(-4).join('\n')}`);
        }
      }
    }
    if (failures.length > 0 && flag('stop-on-failure')) break;
  }
} finally {
  stopHogs();
}
for (const f of failures) console.error(`FAIL ${f}`);
console.log(
  JSON.stringify({
    name: 'engine-stress',
    seed: SEED0,
    runs,
    minioRuns,
    interleavings,
    placements: PLACEMENTS,
    chaos: LEVEL,
    hogs: HOGS,
    failures: failures.length,
    wallSeconds: Math.round((performance.now() - t0) / 1000),
    load: loadavg()[0],
  }),
);
process.exitCode = failures.length > 0 ? 1 : 0;
