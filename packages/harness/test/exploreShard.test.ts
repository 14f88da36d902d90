/**
 * `podsim explore --shard` / `explore merge` (issue #22): a sweep split as an Indexed Job splits
 * it — four real processes, each told its shard by `JOB_COMPLETION_INDEX` and `PODSIM_SHARDS` as
 * the Job controller tells its pods — merges back into exactly what one unsharded run prints
 * (same failing seeds, same digests per seed). A missing shard is reported and never a PASS;
 * results of another scenario or podsim build are refused; bad flags are exit 2 without a stack.
 * examples/explore-planted-bug.yaml over seeds 1..12 fails on seeds 8 and 9 (the planted bug).
 */
import test from 'ava';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inShard, shardSeedCount, shardSeeds, type ShardResult } from '../src/explore/shard.js';
import type { MergedSweep } from '../src/explore/merge.js';
import type { ExploreSummary } from '../src/explore/explore.js';

const run = promisify(execFile);
const CLI = 'packages/harness/dist/src/cli.js';
const FILE = 'examples/explore-planted-bug.yaml';
const SEEDS = '1..12';
const dir = mkdtempSync(join(tmpdir(), 'podsim-shard-test-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

/** The podsim CLI as a process (env added to this one's), with `input` on its stdin. */
function podsim(args: string[], env: Record<string, string> = {}, input?: string): { code: number; out: string; err: string } {
  const env0 = { ...process.env };
  delete env0.JOB_COMPLETION_INDEX;
  delete env0.PODSIM_SHARDS;
  const r = spawnSync(process.execPath, [CLI, ...args], { env: { ...env0, ...env }, encoding: 'utf8', timeout: 110_000, ...(input !== undefined ? { input } : {}) });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

/** The lines of a sweep summary after its first line (totals with wall time and workers) up to the verdict. */
const body = (out: string, firstLine: RegExp): string[] => {
  const lines = out.trimEnd().split('\n');
  const i = lines.findIndex((l) => firstLine.test(l));
  return lines.slice(i + 1);
};

// Four shard processes at once, as the Job's pods: two write into --out DIR, two print their
// result on stdout (collected below as a `kubectl logs --prefix` stream), and one unsharded run.
const outDir = join(dir, 'results');
mkdirSync(outDir);
const env0 = { ...process.env };
delete env0.JOB_COMPLETION_INDEX;
delete env0.PODSIM_SHARDS;
let sweeping: ReturnType<typeof startSweep> | undefined;
/** Started by the first test that needs it (once per file). */
const sweep = () => (sweeping ??= startSweep());
const startSweep = () =>
  Promise.all([
    ...[0, 1, 2, 3].map((i) =>
      run(process.execPath, [CLI, 'explore', FILE, '--seeds', SEEDS, '--workers', '1', '--no-progress', '--exit-zero', ...(i < 2 ? ['--out', outDir] : [])], {
        env: { ...env0, JOB_COMPLETION_INDEX: String(i), PODSIM_SHARDS: '4' },
        maxBuffer: 1 << 26,
      }),
    ),
    run(process.execPath, [CLI, 'explore', FILE, '--seeds', SEEDS, '--workers', '2', '--no-progress', '--json', join(dir, 'single.json')], { env: env0 }).catch((e: { code: number; stdout: string }) => ({ stdout: e.stdout, stderr: '', code: e.code })),
  ]);

/** `kubectl logs -l job-name=explore --prefix` of the two stdout shards: every line prefixed, stderr and stdout interleaved. */
async function stream(): Promise<string> {
  const s = await sweep();
  return [2, 3].flatMap((i) => `${s[i].stderr}${s[i].stdout}`.split('\n').filter((l) => l !== '').map((l) => `[pod/explore-${i}-x7k2q/podsim] ${l}`)).join('\n');
}

test('the shards partition the seeds stably: seed mod N = I, whatever the range', (t) => {
  for (const [a, b, n] of [
    [1, 100, 4],
    [7, 7, 3],
    [0, 33, 5],
    [1000, 1999, 7],
  ]) {
    const all = Array.from({ length: n }, (_, i) => [...shardSeeds(a, b, { index: i, count: n })]);
    t.deepEqual(
      all.flat().sort((x, y) => x - y),
      Array.from({ length: b - a + 1 }, (_, i) => a + i),
      `shards of ${a}..${b} / ${n} cover the range once`,
    );
    all.forEach((seeds, i) => {
      t.true(seeds.every((s) => s % n === i && inShard(s, { index: i, count: n })));
      t.is(shardSeedCount(a, b, { index: i, count: n }), seeds.length);
    });
  }
  // The same seed, the same shard, in another range.
  t.true([...shardSeeds(1, 50, { index: 2, count: 4 })].includes(42) && [...shardSeeds(40, 45, { index: 2, count: 4 })].includes(42));
});

test('4 shard processes (JOB_COMPLETION_INDEX 0..3, PODSIM_SHARDS 4) merged print what one unsharded run prints: same failing seeds, same digests', async (t) => {
  t.timeout(240_000);
  const s = await sweep();
  const single = s[4] as { stdout: string; code?: number };
  t.is(single.code, 1, 'the unsharded run fails (seeds 8 and 9)');
  // Each shard ran only its own seeds, and the shard result says which sweep it belongs to.
  for (const i of [0, 1]) t.true(existsSync(join(outDir, `explore-shard-${i}-of-4.json`)));
  const results = [0, 1, 2, 3].map((i) => JSON.parse(i < 2 ? readFileSync(join(outDir, `explore-shard-${i}-of-4.json`), 'utf8') : s[i].stdout) as ShardResult);
  results.forEach((r, i) => {
    t.deepEqual(r.shard, { index: i, count: 4 });
    t.deepEqual(
      r.results.map((x) => x.seed),
      [...shardSeeds(1, 12, { index: i, count: 4 })],
    );
    t.regex(r.podsim.build, /^[0-9a-f]{16}$/);
    t.regex(r.scenario.sha256, /^[0-9a-f]{64}$/);
    t.true(r.cpuSeconds > 0 && r.wallSeconds > 0);
  });
  t.regex(s[2].stderr, /^3 seeds in [\d.]+s wall on 1 worker .*\n(.*\n)*PASS$/m, 'a stdout shard prints its summary on stderr');
  t.is(s[2].stdout.trim().split('\n').length, 1, 'and only its result (one line) on stdout');

  const m = podsim(['explore', 'merge', outDir, '-', '--json', join(dir, 'merged.json')], {}, await stream());
  t.is(m.code, 1, m.out + m.err);
  t.regex(m.out, /^explore merge: 4 of 4 shards of examples\/explore-planted-bug\.yaml: seeds 1\.\.12, faults level 1, podsim 0\.1\.0 build [0-9a-f]{16}/m);
  t.regex(m.out, /^12 seeds in 4 shards \(longest [\d.]+s wall, 4 workers in all, [\d.]+ seeds\/s together\): 2 failing$/m);
  t.regex(single.stdout, /^12 seeds in [\d.]+s wall on 2 workers \([\d.]+ seeds\/s\): 2 failing$/m);
  t.deepEqual(body(m.out, /^12 seeds in 4 shards/), body(single.stdout, /^12 seeds in /));
  t.regex(m.out, /^ {2}seed 8 at /m);
  t.regex(m.out, /^ {2}seed 9 at /m);
  t.regex(m.out, /^FAIL$/m);
  // Same outcome and digest per seed as the unsharded run's --json.
  const one = JSON.parse(readFileSync(join(dir, 'single.json'), 'utf8')) as ExploreSummary;
  const merged = JSON.parse(readFileSync(join(dir, 'merged.json'), 'utf8')) as MergedSweep;
  t.deepEqual(
    merged.results.map((r) => [r.seed, r.ok, r.traceDigest]),
    one.results.map((r) => [r.seed, r.ok, r.traceDigest]),
  );
  t.is(merged.format, 'podsim-explore-merged/1');
  t.true(merged.complete);
  t.deepEqual(
    merged.failures.map((f) => [f.seed, f.replay]),
    [
      [8, `pnpm podsim replay ${FILE} --seed 8`],
      [9, `pnpm podsim replay ${FILE} --seed 9`],
    ],
  );
  t.true(merged.failures.every((f) => f.faults.length > 0 && f.violationCount >= 1));
});

test('a missing shard is reported and the merge is never a PASS; a shard read twice is counted once', async (t) => {
  t.timeout(240_000);
  await sweep();
  // Shards 2 and 3 (seeds 2,6,10 and 3,7,11) all pass; without 0 and 1 the merge is incomplete.
  const m = podsim(['explore', 'merge', '-'], {}, await stream());
  t.is(m.code, 1, m.out + m.err);
  t.regex(m.out, /^explore merge: 2 of 4 shards /m);
  t.regex(m.out, /^missing shards: 0, 1 of 0\.\.3 \(their seeds did not run/m);
  t.regex(m.out, /^INCOMPLETE: 2 of 4 shards missing; the 6 seeds read passed$/m);
  t.notRegex(m.out, /^PASS$/m);
  const d = podsim(['explore', 'merge', outDir, join(outDir, 'explore-shard-1-of-4.json'), '-'], {}, await stream());
  t.is(d.code, 1);
  t.regex(d.out, /^shard 1 was read 2 times \(.*explore-shard-1-of-4\.json, .*explore-shard-1-of-4\.json\): its seeds are counted once$/m);
  t.regex(d.out, /^12 seeds in 4 shards /m);
  // A copy whose seed gave another digest is a determinism failure, not a silent pick.
  const r = JSON.parse(readFileSync(join(outDir, 'explore-shard-0-of-4.json'), 'utf8')) as ShardResult;
  const doctored = join(dir, 'shard0-other-digest.json');
  writeFileSync(doctored, `${JSON.stringify({ ...r, results: r.results.map((x) => (x.seed === 4 ? { ...x, traceDigest: '0000000000000000' } : x)) })}\n`);
  const c = podsim(['explore', 'merge', join(outDir, 'explore-shard-0-of-4.json'), doctored]);
  t.is(c.code, 1);
  t.regex(c.out, /^seed 4 differs between copies of its shard: ok digest [0-9a-f]{16} in .* vs ok digest 0000000000000000 in .*\(the same seed must give the same trace\)$/m);
  // A result cut short (a pod killed while writing) is a warning; its shard then counts as missing.
  const cut = join(dir, 'cut.log');
  writeFileSync(cut, `[pod/a] explore …\n[pod/a] ${JSON.stringify(r).slice(0, 300)}\n`);
  const k = podsim(['explore', 'merge', cut, join(outDir, 'explore-shard-1-of-4.json')]);
  t.regex(k.err, /cut\.log:2: a shard result that does not parse \(cut short/);
  t.regex(k.out, /^missing shards: 0, 2, 3 of 0\.\.3/m);
});

test('merge refuses results of another scenario or podsim build, and a --scenario that is not what the shards ran', async (t) => {
  t.timeout(240_000);
  await sweep();
  const shard1 = join(outDir, 'explore-shard-1-of-4.json');
  // A real shard of another scenario: the same file with one more comment line.
  const other = join(dir, 'other.yaml');
  writeFileSync(other, `# another file\n${readFileSync(FILE, 'utf8')}`);
  const o = podsim(['explore', other, '--seeds', SEEDS, '--shard', '2/4', '--workers', '1', '--no-progress']);
  t.is(o.code, 0, o.err);
  const otherResult = join(dir, 'other-shard2.json');
  writeFileSync(otherResult, o.out);
  const m = podsim(['explore', 'merge', shard1, otherResult]);
  t.is(m.code, 2, m.out + m.err);
  t.regex(m.err, /other-shard2\.json: shard 2\/4 is of another sweep than .*explore-shard-1-of-4\.json \(shard 1\/4\): scenario content \(sha256\) [0-9a-f]{64} ≠ [0-9a-f]{64}; refusing to merge/);
  t.notRegex(m.err, /\n\s+at /);
  t.is(m.out, '');
  // Another podsim build (or version) is refused the same way.
  const r = JSON.parse(readFileSync(join(outDir, 'explore-shard-0-of-4.json'), 'utf8')) as ShardResult;
  const older = join(dir, 'older.json');
  writeFileSync(older, `${JSON.stringify({ ...r, podsim: { ...r.podsim, version: '0.0.9', build: 'ffffffffffffffff' } })}\n`);
  const v = podsim(['explore', 'merge', shard1, older]);
  t.is(v.code, 2);
  t.regex(v.err, /podsim version 0\.0\.9 \(Kubernetes v1\.22\.8\) ≠ 0\.1\.0 \(Kubernetes v1\.22\.8\); podsim build ffffffffffffffff ≠ [0-9a-f]{16}; refusing/);
  // --scenario must be the content the shards ran; then it names the replay commands.
  const s = podsim(['explore', 'merge', shard1, '--scenario', other]);
  t.is(s.code, 2);
  t.regex(s.err, /other\.yaml: --scenario: its content \(sha256 [0-9a-f]{16}…\) is not the scenario the shards ran \(examples\/explore-planted-bug\.yaml/);
  const copy = join(dir, 'same-content.yaml');
  writeFileSync(copy, readFileSync(FILE));
  const ok = podsim(['explore', 'merge', shard1, '--scenario', copy]);
  t.regex(ok.out, new RegExp(`^ {4}pnpm podsim replay ${copy.replace(/[.]/g, '\\.')} --seed 9$`, 'm'));
  // A result format this podsim does not read.
  const future = join(dir, 'future.json');
  writeFileSync(future, `${JSON.stringify({ ...r, format: 'podsim-explore-shard/2' })}\n`);
  const f = podsim(['explore', 'merge', future]);
  t.is(f.code, 2);
  t.regex(f.err, /future\.json:1:1: a shard result of format "podsim-explore-shard\/2": this podsim reads podsim-explore-shard\/1/);
});

test('--out never overwrites a shard result and must be a directory', async (t) => {
  t.timeout(240_000);
  await sweep();
  const file = join(outDir, 'explore-shard-0-of-4.json');
  const before = readFileSync(file, 'utf8');
  const r = podsim(['explore', FILE, '--seeds', SEEDS, '--shard', '0/4', '--out', outDir, '--no-progress']);
  t.is(r.code, 2, r.out + r.err);
  t.regex(r.err, /explore-shard-0-of-4\.json: --out: already exists: refusing to overwrite a shard result/);
  t.is(readFileSync(file, 'utf8'), before);
  const n = podsim(['explore', FILE, '--seeds', SEEDS, '--shard', '0/4', '--out', file, '--no-progress']);
  t.is(n.code, 2);
  t.regex(n.err, /--out: is not a directory/);
  const missing = podsim(['explore', FILE, '--seeds', SEEDS, '--shard', '0/4', '--out', join(dir, 'nope'), '--no-progress']);
  t.is(missing.code, 2);
  t.regex(missing.err, /--out: directory .*nope does not exist/);
});

for (const [what, args, env, message] of [
  ['--shard 4/4', ['--shard', '4/4'], {}, /--shard.*expected I\/N with 0 ≤ I < N ≤ 10000/],
  ['--shard 0/0', ['--shard', '0/0'], {}, /--shard.*expected I\/N/],
  ['--shard two', ['--shard', 'two'], {}, /--shard.*expected I\/N/],
  ['--shards 4 without JOB_COMPLETION_INDEX', ['--shards', '4'], {}, /--shards N needs JOB_COMPLETION_INDEX/],
  ['JOB_COMPLETION_INDEX without a shard count', [], { JOB_COMPLETION_INDEX: '1' }, /JOB_COMPLETION_INDEX=1 is set but not the number of shards: give --shards N or set PODSIM_SHARDS/],
  ['JOB_COMPLETION_INDEX 4 of PODSIM_SHARDS 4', [], { JOB_COMPLETION_INDEX: '4', PODSIM_SHARDS: '4' }, /JOB_COMPLETION_INDEX=4: expected an integer from 0 to 3 \(PODSIM_SHARDS=4\)/],
  ['PODSIM_SHARDS=many', [], { JOB_COMPLETION_INDEX: '0', PODSIM_SHARDS: 'many' }, /PODSIM_SHARDS=many: expected an integer from 1 to 10000/],
  ['--shard and --shards disagree', ['--shard', '1/4', '--shards', '3'], {}, /--shard 1\/4 and --shards 3 disagree/],
  ['--shard and JOB_COMPLETION_INDEX disagree', ['--shard', '1/4'], { JOB_COMPLETION_INDEX: '2', PODSIM_SHARDS: '4' }, /--shard 1\/4 and JOB_COMPLETION_INDEX=2 disagree/],
  ['a shard without a seed of the range', ['--seeds', '1..2', '--shard', '3/4'], {}, /shard 3\/4 has no seed in 1\.\.2/],
  ['--for 0', ['--for', '0'], {}, /--for.*expected a wall-clock duration/],
  ['--for soon', ['--for', 'soon'], {}, /--for.*expected a wall-clock duration/],
  ['--until-failures 0', ['--until-failures', '0'], {}, /--until-failures.*expected a positive integer/],
  ['--seeds 1..200000 unsharded', ['--seeds', '1..200000'], {}, /--seeds 1\.\.200000: expected at most 100000 seeds per run; split/],
] as const) {
  test(`explore ${what} is exit 2 with a message, no stack trace`, (t) => {
    const r = podsim(['explore', FILE, ...args, '--no-progress'], env);
    t.is(r.code, 2, r.out + r.err);
    t.regex(r.err, message);
    t.notRegex(r.err, /\n\s+at /);
  });
}

test('merge of no result, or of a file that holds none, is exit 2', (t) => {
  const none = podsim(['explore', 'merge']);
  t.is(none.code, 2);
  t.regex(none.err, /missing required argument 'results'/);
  const yaml = podsim(['explore', 'merge', FILE]);
  t.is(yaml.code, 2);
  t.regex(yaml.err, /explore-planted-bug\.yaml: no shard result in this file/);
  const gone = podsim(['explore', 'merge', join(dir, 'no-such.json')]);
  t.is(gone.code, 2);
  t.regex(gone.err, /no-such\.json: cannot read: ENOENT/);
});

test('a 1,000,000-seed range splits into shards of at most 100,000 seeds', (t) => {
  // Checked before anything runs: 1..1000000 / 10 shards is 100,000 seeds each (shard 9 included).
  t.is(shardSeedCount(1, 1_000_000, { index: 9, count: 10 }), 100_000);
  const r = podsim(['explore', FILE, '--seeds', '1..1000000', '--shard', '0/9', '--no-progress']);
  t.is(r.code, 2);
  t.regex(r.err, /--seeds 1\.\.1000000: expected at most 100000 seeds per run \(shard 0\/9 has 111111\)/);
});

test('--until-failures and --for stop starting seeds; the result says why and how many ran', (t) => {
  t.timeout(120_000);
  const u = podsim(['explore', FILE, '--seeds', '1..40', '--workers', '1', '--until-failures', '1', '--no-progress', '--shard', '0/1']);
  t.is(u.code, 1, u.err);
  const ur = JSON.parse(u.out) as ShardResult;
  t.is(ur.stopped, 'until-failures');
  t.deepEqual(ur.stop, { untilFailures: 1 });
  // One worker, two seeds in flight: after seed 8 fails, at most the seed already started finishes.
  t.true(ur.seedsRun >= 8 && ur.seedsRun <= 10, `${ur.seedsRun} seeds ran`);
  t.regex(u.err, /^stopped early \(--until-failures 1 reached\): (8|9|10) of the 40 seeds of 1\.\.40 in shard 0\/1 ran$/m);
  const f = podsim(['explore', FILE, '--for', '1ms', '--workers', '1', '--no-progress', '--exit-zero']);
  t.is(f.code, 0, f.err);
  t.regex(f.out, /^explore examples\/explore-planted-bug\.yaml: seeds 1\.\.4294967295, faults level 1, 1 worker, for 1ms$/m);
  t.regex(f.out, /^stopped early \(--for 1ms was up\): [12] seeds ran \(open-ended from seed 1\)$/m);
});

// Serial: the other tests' spawnSync calls block this process's event loop, which must read the
// child's stderr and send the signal on time.
test.serial('SIGTERM (a deleted pod) starts no more seeds, writes the result so far and exits 143 so that the Job reruns the index', async (t) => {
  t.timeout(120_000);
  const p = spawn(process.execPath, [CLI, 'explore', FILE, '--for', '10m', '--workers', '1', '--no-progress', '--exit-zero'], {
    env: { ...env0, JOB_COMPLETION_INDEX: '1', PODSIM_SHARDS: '3' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // A failed or timed-out test must not leave a 10-minute sweep behind.
  t.teardown(() => {
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  });
  let out = '';
  let err = '';
  p.stdout.on('data', (d: Buffer) => (out += d.toString()));
  // Once the sweep has started (its header line), the kubelet's SIGTERM.
  let sent = false;
  p.stderr.on('data', (d: Buffer) => {
    err += d.toString();
    if (!sent && /^explore /m.test(err)) {
      sent = true;
      p.kill('SIGTERM');
    }
  });
  const code = await new Promise<number | null>((resolve) => p.on('close', resolve));
  t.is(code, 143, err);
  t.regex(err, /podsim explore: stopping: no new seeds/);
  const r = JSON.parse(out) as ShardResult;
  t.is(r.stopped, 'signal');
  t.true(r.seedsRun >= 1 && r.seedsRun <= 2, `${r.seedsRun} seeds (those in flight) ran`);
  t.true(r.results.every((x) => x.seed % 3 === 1));
  t.regex(err, /^stopped early \(SIGTERM or Ctrl-C\): [12] seeds ran \(open-ended from seed 1 in shard 1\/3\)$/m);
  // A sweep cut short is no PASS of its seeds (the fresh-user trial saw PASS here).
  t.regex(err, /^STOPPED: no failing seed among those that ran; the sweep is incomplete$/m);
  t.notRegex(err, /^PASS$/m);
});
