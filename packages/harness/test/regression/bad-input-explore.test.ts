/**
 * Flags of `podsim explore` / `podsim replay --shrink` that used to crash or hang instead of a
 * clear exit 2: `--seeds 0..4294967295` threw a RangeError with a stack trace, `--count 100000000`
 * ran out of memory before the first seed, `--workers 100000` started 100,000 threads for two seeds.
 */
import test from 'ava';
import { main } from '../../src/cli.js';

const FILE = 'examples/explore-kubelet-restart.yaml';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

for (const [flags, message] of [
  [['--seeds', '0..4294967295'], /--seeds.*at most 100000 seeds per run/],
  [['--count', '100000000'], /--count.*at most 100000 seeds per run/],
  [['--count', '2', '--workers', '100000'], /--workers.*expected an integer from 1 to 256/],
] as const) {
  test(`explore ${flags.join(' ')} is exit 2 with a message, not a crash`, async (t) => {
    const r = await cli(['explore', FILE, ...flags, '--no-progress']);
    t.is(r.code, 2, r.out + r.err);
    t.regex(r.err, message);
    t.notRegex(r.err, /\n\s+at /, 'no stack trace');
  });
}

test('replay --shrink --workers 100000 is exit 2 with a message', async (t) => {
  const r = await cli(['replay', FILE, '--seed', '1', '--shrink', '--workers', '100000']);
  t.is(r.code, 2, r.out + r.err);
  t.regex(r.err, /--workers.*expected an integer from 1 to 256/);
});

test('explore never starts more workers than it has seeds', async (t) => {
  t.timeout(120_000);
  const r = await cli(['explore', FILE, '--count', '1', '--workers', '8', '--no-progress']);
  t.is(r.code, 0, r.out + r.err);
  t.regex(r.out, /seeds 1\.\.1, faults level 1, 1 worker$/m);
  t.regex(r.out, /^1 seeds in [\d.]+s wall on 1 worker /m);
});
