/**
 * The reference case, end to end on real worker threads: `podsim run examples/minio-recreate.yaml`
 * through the CLI entry prints the (READY, STATUS) sequence of the issue in the same global order,
 * passes every expectation and invariant, and gives the same trace digest whichever placement
 * hosts the actors (single, per-actor, shards:2).
 */
import test from 'ava';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main, EXIT_OK } from '../../src/cli.js';
import { runScenarioFile, type RunReport } from '../../src/run.js';
import { MINIO_REFERENCE_ROWS, declaredExpectations } from './helpers.js';

const EXAMPLE = 'examples/minio-recreate.yaml';

/** Placement → report, so the digest test reuses the CLI run's single-thread result. */
const reports = new Map<string, RunReport>();

test.serial('podsim run examples/minio-recreate.yaml prints the reference sequence and exits 0', async (t) => {
  t.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'podsim-minio-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const json = join(dir, 'result.json');
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['run', EXAMPLE, '--json', json], { out: (l) => out.push(l), err: (l) => err.push(l) });
  t.is(code, EXIT_OK, [...out, ...err].join('\n'));
  t.is(out[0], `seed 1 (placement single) ${EXAMPLE}`, 'the seed is printed first');

  // The watch lines: header, then one row per event; names differ per run, so alias them in
  // order of appearance (the first pod printed is the old one).
  const header = out.findIndex((l) => /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/.test(l));
  t.true(header > 0, out.join('\n'));
  const rows = out.slice(header + 1, out.indexOf('', header)).map((l) => l.split(/\s{2,}/));
  const alias = new Map<string, string>();
  for (const r of rows) if (!alias.has(r[0])) alias.set(r[0], alias.size === 0 ? 'old' : 'new');
  t.deepEqual(
    rows.map((r) => [alias.get(r[0]), r[1], r[2]]),
    MINIO_REFERENCE_ROWS,
    out.join('\n'),
  );
  // Ages and restarts as a user sees them: the old pod is 42 h old and restarted once ~3 min ago.
  t.regex(rows[0].slice(3).join(' '), /^1 \(2m4\ds ago\) 42h$/);
  t.regex(rows[1].slice(3).join(' '), /^1 \(2m5\ds ago\) 42h$/);
  t.is(rows[2][4], '0s');
  t.regex(rows[8][4], /^1\ds$/);
  t.regex(rows[9][4], /^[23]\ds$/);
  // Columns are aligned as kubectl aligns them: a row's cells start where the widest so far did.
  t.is(out[header + 1].indexOf('1/1'), out[header].indexOf('READY'));

  const result = JSON.parse(readFileSync(json, 'utf8')) as RunReport;
  t.true(result.ok);
  t.is(result.seed, 1);
  t.is(result.placement, 'single');
  t.regex(result.traceDigest, /^[0-9a-f]{16}$/);
  t.true(result.virtualSeconds > 42 * 3600);
  t.true(result.wallSeconds > 0);
  t.deepEqual(result.violations, []);
  // Every expectation the file declares was judged (`>= 5` let one go missing) and held.
  t.is(result.expectations.length, declaredExpectations(readFileSync(EXAMPLE, 'utf8')));
  t.deepEqual(result.expectations.filter((e) => !e.ok), []);
  const old = result.pods[0];
  t.is(old.sigterm, 1);
  t.is(old.sigkill, 0);
  t.true(old.deleteToGoneUs! > 1_000_000 && old.deleteToGoneUs! < 6_000_000, `DELETE → gone ${old.deleteToGoneUs} µs`);
  reports.set('single', result);
});

for (const placement of ['per-actor', 'shards:2']) {
  test.serial(`the same seed gives the same trace digest with --placement ${placement}`, async (t) => {
    t.timeout(300_000);
    const r = await runScenarioFile(EXAMPLE, { placement });
    t.true(r.ok, r.failures.join('\n'));
    const single = reports.get('single') ?? (await runScenarioFile(EXAMPLE, { placement: 'single' }));
    t.is(r.traceDigest, single.traceDigest);
    t.deepEqual(r.watch.map((l) => l.split(/\s+/).slice(0, 3)), single.watch.map((l) => l.split(/\s+/).slice(0, 3)));
    t.is(r.hostCount > 1, true);
  });
}
