/**
 * `pnpm bench:shards [--file F] [--seeds A..B] [--configs 1x1,2x1,4x1,1x2] [--rounds R]`: seeds
 * per second of one sweep split into P local shard processes of W worker threads each (`PxW`),
 * as an Indexed Job's pods on one node would run it — every process is `podsim explore
 * --shard i/P --workers W`, timed from the first spawn to the last exit (process start-up
 * included). The configurations alternate within each round; every configuration must give every
 * seed the same digest (checked). Prints one JSON line per configuration and round (the 1-minute
 * load average with it: the machine is shared, and the CPU seconds per seed, which load does not
 * inflate), then one line per file with the per-seed wall cost (median and p90 of the seeds' own
 * wall seconds in their worker threads). Not part of `pnpm test`.
 */
import { spawn } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { ShardResult } from './shard.js';

const CLI = fileURLToPath(new URL('../cli.js', import.meta.url));

function usage(message: string): never {
  process.stderr.write(`bench:shards: ${message}\nusage: pnpm bench:shards [--file F] [--seeds A..B] [--configs 1x1,2x1,4x1,1x2] [--rounds R]\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
let file = 'examples/explore-kubelet-restart.yaml';
let seeds = '1..40';
let configs: Array<{ processes: number; workers: number }> = [
  { processes: 1, workers: 1 },
  { processes: 2, workers: 1 },
  { processes: 4, workers: 1 },
  { processes: 1, workers: 2 },
];
let rounds = 1;
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  const v = args[++i];
  if (v === undefined) usage(`${a}: expected a value`);
  if (a === '--file') file = v;
  else if (a === '--seeds') {
    if (!/^\d+\.\.\d+$/.test(v)) usage(`--seeds: expected A..B, got ${JSON.stringify(v)}`);
    seeds = v;
  } else if (a === '--configs') {
    configs = v.split(',').map((c) => {
      const m = /^([1-9]\d?)x([1-9]\d?)$/.exec(c);
      if (!m) usage(`--configs: ${JSON.stringify(c)} is not PxW (processes x workers), e.g. 4x1`);
      return { processes: Number(m[1]), workers: Number(m[2]) };
    });
  } else if (a === '--rounds') {
    if (!/^[1-9]\d?$/.test(v)) usage('--rounds: expected an integer from 1 to 99');
    rounds = Number(v);
  } else usage(`unknown flag ${a}`);
}

/** One shard process; resolves to its parsed result. */
function shard(index: number, count: number, workers: number): Promise<ShardResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [CLI, 'explore', file, '--seeds', seeds, '--shard', `${index}/${count}`, '--workers', String(workers), '--no-progress', '--exit-zero'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('close', (code) => {
      if (code !== 0) return reject(new Error(`shard ${index}/${count} exited ${code}: ${err}`));
      resolve(JSON.parse(out) as ShardResult);
    });
  });
}

const digests = new Map<number, string>();
const seedWall: number[] = [];
for (let round = 1; round <= rounds; round++) {
  // Alternate the order each round so that a change in the machine's load is spread over them.
  const order = round % 2 === 1 ? configs : [...configs].reverse();
  for (const c of order) {
    const load = loadavg()[0];
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: c.processes }, (_, i) => shard(i, c.processes, c.workers)));
    const wallSeconds = (performance.now() - started) / 1000;
    let n = 0;
    const cpu = results.reduce((x, r) => x + r.cpuSeconds, 0);
    for (const r of results) {
      for (const s of r.results) {
        n++;
        const before = digests.get(s.seed);
        if (before !== undefined && before !== s.traceDigest) throw new Error(`seed ${s.seed}: digest ${s.traceDigest} with ${c.processes}x${c.workers}, ${before} before`);
        digests.set(s.seed, s.traceDigest);
        seedWall.push(s.wallSeconds);
      }
    }
    process.stdout.write(
      `${JSON.stringify({ name: 'explore-shards', file, seeds, round, processes: c.processes, workersPerProcess: c.workers, seedsRun: n, wallSeconds: Number(wallSeconds.toFixed(2)), seedsPerSecond: Number((n / wallSeconds).toFixed(2)), cpuSecondsPerSeed: Number((cpu / n).toFixed(3)), cores: availableParallelism(), loadavg1Before: Number(load.toFixed(1)), loadavg1After: Number(loadavg()[0].toFixed(1)) })}\n`,
    );
  }
}
seedWall.sort((a, b) => a - b);
const q = (p: number) => seedWall[Math.min(seedWall.length - 1, Math.floor(p * seedWall.length))];
process.stdout.write(`${JSON.stringify({ name: 'explore-seed-cost', file, seeds, samples: seedWall.length, medianSeedWallSeconds: Number(q(0.5).toFixed(3)), p90SeedWallSeconds: Number(q(0.9).toFixed(3)), distinctSeeds: digests.size })}\n`);
