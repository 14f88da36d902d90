/**
 * Output paths are checked before anything runs (issue #23 item 2): `run --json /no/dir/x.json`
 * ran the whole scenario (13 minutes for a large one) and then printed a stack trace (ENOENT);
 * `run --json scenario.yaml` overwrote the scenario with the report. Every output flag of run,
 * explore, replay and serve now gets exit 2 and a message naming the path and the flag, before
 * the run starts; the inputs are left as they were.
 */
import test from 'ava';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli.js';

const EXAMPLES = fileURLToPath(new URL('../../../../../examples/', import.meta.url));

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Exit 2, the message, nothing run (no seed line), no stack trace. */
function refused(t: import('ava').ExecutionContext, r: { code: number; out: string; err: string }, message: RegExp): void {
  t.is(r.code, 2, r.out + r.err);
  t.regex(r.err, message);
  t.notRegex(r.err, /\n\s+at |internal error/, 'no stack trace');
  t.notRegex(r.out, /^seed /m, 'the run did not start');
}

const dir = mkdtempSync(join(tmpdir(), 'podsim-outputs-'));
const scenario = join(dir, 'minio.yaml');
copyFileSync(join(EXAMPLES, 'minio-recreate.yaml'), scenario);
const original = readFileSync(scenario, 'utf8');
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

test('bug: run --json /no/dir/x.json ran the scenario, then a stack trace — now exit 2 before it starts', async (t) => {
  refused(t, await cli(['run', scenario, '--json', '/no/dir/x.json']), /^\/no\/dir\/x\.json: --json: directory \/no\/dir does not exist$/m);
  refused(t, await cli(['run', scenario, '--trace', '/no/dir/t.json']), /^\/no\/dir\/t\.json: --trace: directory \/no\/dir does not exist$/m);
});

test('bug: run --json scenario.yaml overwrote the scenario — now refused, the file unchanged', async (t) => {
  refused(t, await cli(['run', scenario, '--json', scenario]), /minio\.yaml: --json: is an input of this run: refusing to overwrite it/);
  refused(t, await cli(['run', scenario, '--trace', join(dir, '.', 'minio.yaml')]), /--trace: is an input of this run/);
  t.is(readFileSync(scenario, 'utf8'), original);
});

test('a manifestFiles entry is an input too', async (t) => {
  const manifest = join(dir, 'app.yaml');
  writeFileSync(manifest, 'apiVersion: v1\nkind: Pod\nmetadata: { name: p }\nspec:\n  containers: [{ name: a, image: nginx }]\n');
  const file = join(dir, 'with-files.yaml');
  writeFileSync(file, 'kind: Scenario\ncluster:\n  nodes: [{ name: node-1 }]\nmanifestFiles: [app.yaml]\nsteps:\n  - apply: all\n');
  refused(t, await cli(['run', file, '--json', manifest]), /app\.yaml: --json: is an input of this run/);
  t.regex(readFileSync(manifest, 'utf8'), /kind: Pod/);
});

test('an output that is a directory, or two outputs on one path, are refused', async (t) => {
  refused(t, await cli(['run', scenario, '--json', dir]), /--json: is a directory: give a file name/);
  const same = join(dir, 'out.json');
  refused(t, await cli(['run', scenario, '--json', same, '--trace', same]), /out\.json: --trace: --json writes the same file/);
  t.false(existsSync(same));
});

test('explore --json, replay --trace / --json / --out and serve --kubeconfig are checked the same way', async (t) => {
  const planted = join(EXAMPLES, 'explore-planted-bug.yaml');
  refused(t, await cli(['explore', planted, '--count', '1', '--json', '/no/dir/e.json']), /\/no\/dir\/e\.json: --json: directory \/no\/dir does not exist/);
  refused(t, await cli(['explore', planted, '--count', '1', '--json', planted]), /--json: is an input of this run/);
  refused(t, await cli(['replay', planted, '--seed', '6', '--trace', '/no/dir/r.json']), /--trace: directory \/no\/dir does not exist/);
  refused(t, await cli(['replay', planted, '--seed', '6', '--shrink', '--out', '/no/dir/s.yaml']), /--out: directory \/no\/dir does not exist/);
  // serve: this one was a stack trace after the cluster had started.
  refused(t, await cli(['serve', '--kubeconfig', '/nonexistent/kc']), /^\/nonexistent\/kc: --kubeconfig: directory \/nonexistent does not exist$/m);
  refused(t, await cli(['serve', '--scenario', scenario, '--kubeconfig', scenario]), /--kubeconfig: is an input of this run/);
  t.is(readFileSync(scenario, 'utf8'), original);
});

test('a writable output still gets written (the check refuses only what cannot be)', async (t) => {
  const json = join(dir, 'ok.json');
  const r = await cli(['run', scenario, '--quiet', '--engine', 'local', '--json', json]);
  t.is(r.code, 0, r.out + r.err);
  t.regex(readFileSync(json, 'utf8'), /"traceDigest"/);
});

test('an existing output file is replaced with a warning on the command\'s stderr, naming the flag and path', async (t) => {
  const json = join(dir, 'exists.json');
  writeFileSync(json, 'old\n');
  const r = await cli(['run', scenario, '--quiet', '--engine', 'local', '--json', json]);
  t.is(r.code, 0, r.out + r.err);
  t.regex(r.err, new RegExp(`^podsim: warning: --json ${json.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} exists and will be replaced$`, 'm'));
  t.regex(readFileSync(json, 'utf8'), /"traceDigest"/);
});
