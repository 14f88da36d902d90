// Output paths (src/outputPaths.ts), checked before a run starts (found by the bad-input trial:
// `--report /proc/nope.html` ran the whole simulation, printed PASS, then died with a stack trace
// in the write; an existing file was replaced without a word).
import test from 'ava';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { existingOutputs, outputPathIssues } from '../src/outputPaths.js';
import { main } from '../src/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'podsim-outputs-'));

test('a path whose directory passes access(W_OK) but refuses a new file (/proc) is refused up front, and the probe leaves no file behind', (t) => {
  const issues = outputPathIssues([{ flag: '--report', path: '/proc/podsim-nope.html' }], []);
  t.deepEqual(issues.map((i) => `${i.field}: ${i.message}`), ['--report: cannot be created (ENOENT)']);
  const ok = join(dir, 'fresh.html');
  t.deepEqual(outputPathIssues([{ flag: '--report', path: ok }], []), []);
  t.false(existsSync(ok), 'the probe removed its file');
});

test('an existing output file is named as one that will be replaced; a new one is not', (t) => {
  const old = join(dir, 'old.json');
  writeFileSync(old, '{}');
  t.deepEqual(existingOutputs([{ flag: '--json', path: old }, { flag: '--report', path: join(dir, 'new.html') }, undefined]), [{ flag: '--json', path: old }]);
});

test('podsim run --report /proc/… exits 2 before the run, with no stack trace', async (t) => {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['run', 'examples/cases/C05-grace-period-zero-without-force-is-one-second.yaml', '--report', '/proc/podsim-nope.html'], { out: (l) => out.push(l), err: (l) => err.push(l) });
  t.is(code, 2);
  t.deepEqual(out, [], 'nothing ran');
  t.regex(err.join('\n'), /\/proc\/podsim-nope\.html: --report: cannot be created \(ENOENT\)/);
  t.false(/\n\s+at .+:\d+:\d+/.test(err.join('\n')));
});
