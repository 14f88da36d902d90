/**
 * The reported cases (/work/shared/cases, issue #10; the N node-loss cases, issue #15) as CI tests: every scenario file in
 * examples/cases runs through the CLI entry (`podsim run FILE`, placement single, one worker
 * thread each, all files at once) and must exit 0 — every step, expectation and invariant held.
 * One of them also runs on shards:2 and must give the same trace digest (placement never changes
 * a run).
 */
import test from 'ava';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { EXIT_OK } from '../../src/cli.js';
import { assertFileHolds, digestOf, podsimRun } from './helpers.js';

const DIR = 'examples/cases';
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .map((f) => join(DIR, f));
/** The file also run on shards:2 (small: two pods, seconds of virtual time). */
const SHARDED = join(DIR, 'C05-grace-period-zero-without-force-is-one-second.yaml');


test('every reported case has a scenario file', (t) => {
  const ids = new Set(FILES.map((f) => /\/([CN]\d\d)-/.exec(f)?.[1]));
  t.deepEqual([...ids].sort(), ['C01', 'C02', 'C04', 'C05', 'C06', 'C07', 'C08', 'C10', 'C12', 'C14', 'C15', 'C16', 'C18', 'C22', 'C25', 'N01', 'N02', 'N04', 'N06', 'N07']);
});

for (const file of FILES) {
  test(`podsim run ${file} passes`, async (t) => {
    t.timeout(120_000);
    // Every expectation the file declares was judged and held.
    await assertFileHolds(t, file);
  });
}

test(`${SHARDED} gives the same trace digest on shards:2`, async (t) => {
  t.timeout(120_000);
  const [single, sharded] = await Promise.all([podsimRun(SHARDED, 'single'), podsimRun(SHARDED, 'shards:2')]);
  t.is(sharded.code, EXIT_OK, sharded.out.join('\n'));
  t.truthy(digestOf(single.out));
  t.is(digestOf(sharded.out), digestOf(single.out));
  t.regex(sharded.out.join('\n'), /on 2 host threads/);
});
