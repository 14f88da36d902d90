/**
 * The scenarios fault exploration found for the checkers (issue #27 items 2, 3 and 6; their
 * headers say what each one showed and how it was fixed), pinned as regression tests: each file
 * in packages/harness/test/found runs through the CLI entry (`podsim run FILE`, placement single)
 * and must PASS with every expectation it declares met — the counts are pinned so that a file
 * whose expectations stop being read cannot pass vacuously — and no invariant violated but the
 * ones it allows, which must then actually occur.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EXIT_OK, main } from '../../src/cli.js';
import { loadScenarioText } from '../../src/scenario/load.js';
import { compileScenario } from '../../src/scenario/compile.js';
import { S, runText } from './helpers.js';

const DIR = 'packages/harness/test/found';

interface Found {
  readonly file: string;
  /** Expectations the file declares (all must pass). */
  readonly expectations: number;
  /** Violations the file allows, which the run must show. */
  readonly allowed?: number;
  /** The trace digest of the shrunk run (the fixes are in checkers and trace data only, so it did not change). */
  readonly digest: string;
}

const FOUND: readonly Found[] = [
  // #27 item 2: the runtime's SIGKILL 1 s after StopContainer(1) of a crashed kubelet.
  { file: 'checker-no-early-sigkill-crashed-kubelet.yaml', expectations: 4, digest: 'ce9720d31449894f' },
  // #27 item 3: the final DELETE's reply lost to a kubelet crash / a 504; matched by its UID precondition.
  { file: 'checker-final-delete-own-uid-crash.yaml', expectations: 2, digest: '68d2745daa97a492' },
  { file: 'checker-final-delete-own-uid-504.yaml', expectations: 2, digest: 'd8635dd7913fed95' },
  // #27 item 6: v1.22.8 leaks the container (kubernetes#113145); liveness allowed.
  { file: 'faithful-force-deleted-kill-error-never-retried.yaml', expectations: 4, allowed: 1, digest: '4e6e6fb679a91de5' },
];

async function podsimRun(file: string): Promise<{ code: number; text: string }> {
  const out: string[] = [];
  const code = await main(['run', file, '--quiet', '--placement', 'single'], { out: (l) => out.push(l), err: (l) => out.push(l) });
  return { code, text: out.join('\n') };
}

for (const f of FOUND) {
  test(`found/${f.file} passes with its ${f.expectations} expectations met`, async (t) => {
    t.timeout(120_000);
    const { code, text } = await podsimRun(join(DIR, f.file));
    t.is(code, EXIT_OK, text);
    t.is(text.split('\n').at(-1), 'PASS', text);
    const m = /expectations: (\d+)\/(\d+) passed; invariants: \d+ checked, 0 violations( \(\+(\d+) allowed\))?/.exec(text);
    t.truthy(m, text);
    t.is(Number(m![1]), f.expectations, text);
    t.is(Number(m![2]), f.expectations, text);
    t.is(Number(m![4] ?? 0), f.allowed ?? 0, `allowed violations that occurred\n${text}`);
    t.regex(text, new RegExp(`trace digest ${f.digest}`), 'the shrunk run is still the one the header describes');
  });
}

test("the apiserver traces the UID precondition of the kubelet's final DELETE (what final-delete-own-uid compares), for a DELETE whose reply was lost", async (t) => {
  t.timeout(120_000);
  const file = join(DIR, 'checker-final-delete-own-uid-504.yaml');
  const { model } = await runText(file.replace(/\.yaml$/, ''), readFileSync(file, 'utf8'));
  const finals = model.requests.filter((r) => r.verb === 'delete' && r.client.startsWith('kubelet/') && r.gracePeriodSeconds === 0 && r.code < 300);
  t.true(finals.length >= 10, `${finals.length} final DELETEs`);
  for (const r of finals) {
    const removed = model.writes.find((w) => w.event === 'DELETED' && w.t === r.t && w.name === r.name);
    t.truthy(removed, `${r.name} @${r.t}`);
    t.is(r.preconditionUid, removed!.uid, `${r.client}'s DELETE of ${r.name} @${r.t}`);
  }
  // The one whose reply was lost: b (efc3ad73) removed @47.7842s, and the kubelet recorded a 504 for it.
  const lost = finals.find((r) => r.name === 'b' && Math.abs(r.t - 47.7842 * S) < 0.001 * S);
  t.truthy(lost);
  t.true(model.finalDeletes.some((f) => f.podUid === lost!.preconditionUid && f.code === 504));
});

test('expect.invariants.allow: [liveness] needs an explore: section (liveness is judged only there): a file:line error without one', (t) => {
  const file = join(DIR, 'faithful-force-deleted-kill-error-never-retried.yaml');
  const text = readFileSync(file, 'utf8');
  t.notThrows(() => compileScenario(loadScenarioText(file, text)));
  const without = text.replace(/^explore:\n(?: {2}.*\n)+/m, '');
  t.false(without.includes('healAfter'));
  const err = t.throws(() => compileScenario(loadScenarioText(file, without)));
  t.regex(err.message, /faithful-force-deleted-kill-error-never-retried\.yaml:\d+:\d+: expect\.invariants\.allow\[0\]: liveness is checked only in a scenario with an explore: section/);
});
