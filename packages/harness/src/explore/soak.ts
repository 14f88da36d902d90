/**
 * `pnpm explore:soak [--seeds N] [--workers W] [--levels a,b,…] [FILTER…]`: the standing
 * exploration (`standing.ts`) over more seeds than CI runs — every example and case, minio
 * included, at levels low, medium and high over seeds 1..N (default 50) — not part of
 * `pnpm test`. Prints one line per file and level on stderr, then each unexplained failure with
 * its replay and shrink commands and the known ones; exit 1 when a failure is unexplained, 2 on
 * bad flags. FILTERs keep the files whose path contains one of them.
 */
import { availableParallelism } from 'node:os';
import { FAULT_LEVELS } from './draw.js';
import { SeedPool } from './pool.js';
import { formatStanding, standingExploration, standingFiles, STANDING_LEVELS } from './standing.js';

function usage(message: string): never {
  process.stderr.write(`explore:soak: ${message}\nusage: pnpm explore:soak [--seeds N] [--workers W] [--levels low,medium,high|numbers] [FILTER…]\n`);
  process.exit(2);
}

const positive = (flag: string, v: string | undefined, max: number): number => {
  if (v === undefined || !/^\d+$/.test(v) || Number(v) < 1 || Number(v) > max) usage(`${flag}: expected an integer from 1 to ${max}, got ${JSON.stringify(v ?? '')}`);
  return Number(v);
};

const args = process.argv.slice(2);
let seeds = 50;
let workers = availableParallelism();
let levels: readonly number[] = STANDING_LEVELS;
const filters: string[] = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--seeds') seeds = positive(a, args[++i], 100_000);
  else if (a === '--workers') workers = positive(a, args[++i], 256);
  else if (a === '--levels') {
    const v = args[++i];
    if (v === undefined) usage('--levels: expected a list such as low,medium,high or 0.5,1,2');
    levels = v.split(',').map((x) => {
      const n = FAULT_LEVELS[x] ?? (/^\d+(\.\d+)?$/.test(x) ? Number(x) : NaN);
      if (!(n > 0)) usage(`--levels: ${JSON.stringify(x)} is not low, medium, high or a positive number`);
      return n;
    });
  } else if (a.startsWith('-')) usage(`unknown flag ${a}`);
  else filters.push(a);
}
const files = standingFiles().filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
if (files.length === 0) usage(`no example or case matches ${filters.join(', ')}`);

const pool = new SeedPool(workers);
process.stderr.write(`explore:soak: ${files.length} files × levels ${levels.join(', ')} × seeds 1..${seeds} on ${pool.workers} workers\n`);
try {
  const r = await standingExploration(pool, { files, levels, seeds, onDone: (l) => process.stderr.write(`${l}\n`) });
  for (const l of formatStanding(r)) process.stdout.write(`${l}\n`);
  process.exitCode = r.unexplained.length > 0 ? 1 : 0;
} finally {
  await pool.close();
}
