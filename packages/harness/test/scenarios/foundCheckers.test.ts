/**
 * The scenarios fault exploration found for the checkers (issue #27 items 2, 3 and 6; their
 * headers say what each one showed and how it was fixed), pinned as regression tests: each file
 * in packages/harness/test/found runs through the CLI entry (`podsim run FILE`, placement single)
 * and must PASS with every expectation it declares met — the counts are pinned so that a file
 * whose expectations stop being read cannot pass vacuously — and no invariant violated but the
 * ones it allows, which must then actually occur. Each file must also still show the situation
 * its header describes (a change elsewhere may shift the run): the tests below check it in the
 * trace rather than pinning a digest.
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
}

const FOUND: readonly Found[] = [
  // #27 item 2: the runtime's SIGKILL 1 s after StopContainer(1) of a crashed kubelet.
  { file: 'checker-no-early-sigkill-crashed-kubelet.yaml', expectations: 4 },
  // #27 item 3: the final DELETE's reply lost to a kubelet crash / a 504; matched by its UID precondition.
  { file: 'checker-final-delete-own-uid-crash.yaml', expectations: 2 },
  { file: 'checker-final-delete-own-uid-504.yaml', expectations: 2 },
  // #27 item 6: v1.22.8 leaks the container (kubernetes#113145); liveness allowed.
  { file: 'faithful-force-deleted-kill-error-never-retried.yaml', expectations: 4, allowed: 1 },
  // 2026-12-02 differential breaker: a liveness kill after a kubelet restart was blamed on the restart.
  { file: 'checker-restart-then-liveness-kill.yaml', expectations: 2 },
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
  });
}

async function modelOf(name: string) {
  const file = join(DIR, name);
  return (await runText(file.replace(/\.yaml$/, ''), readFileSync(file, 'utf8'))).model;
}

test('found/checker-no-early-sigkill-crashed-kubelet.yaml still shows a kill whose kubelet crashed before StopContainer returned: B grace 30, StopContainer(1), SIGKILL 1 s after SIGTERM', async (t) => {
  t.timeout(120_000);
  const model = await modelOf('checker-no-early-sigkill-crashed-kubelet.yaml');
  const unended = model.spansOf('kubelet.killContainer').filter((s) => s.end === undefined);
  const hit = unended.find((s) => {
    const p = model.processById.get(String(s.data.containerId));
    const term = p?.signals.find((x) => x.signal === 'SIGTERM' && x.t >= s.begin);
    const kill = p?.signals.find((x) => x.signal === 'SIGKILL');
    return s.data.gracePeriod === 30 && term?.timeout === 1 && kill !== undefined && kill.t - term.t === S;
  });
  t.truthy(hit, `killContainer spans without an E record: ${unended.map((s) => `${String(s.data.container)} grace ${String(s.data.gracePeriod)} @${s.begin}`).join(', ')}`);
  t.true((model.crashes.get(hit!.actor) ?? []).some((c) => c > hit!.begin), 'its kubelet crashed after the span began');
});

/**
 * Final DELETEs of the kubelet whose reply it never recorded as a success, each with the pod it
 * removed (the UID precondition the apiserver traced), and whether a later pod of the same name
 * was removed by the same kubelet with a successful record — what the old checker matched.
 */
function lostFinalDeletes(model: Awaited<ReturnType<typeof modelOf>>) {
  const finals = model.requests.filter((r) => r.verb === 'delete' && r.client.startsWith('kubelet/') && r.gracePeriodSeconds === 0 && r.code < 300);
  return finals.flatMap((r) => {
    const removed = model.writes.find((w) => w.event === 'DELETED' && w.t === r.t && w.name === r.name);
    if (!removed || r.preconditionUid !== removed.uid) return [];
    const records = model.finalDeletes.filter((f) => f.actor === r.client && f.podUid === removed.uid);
    if (records.some((f) => f.code !== undefined && f.code < 300)) return [];
    const later = model.finalDeletes.find((f) => f.actor === r.client && f.t > r.t && f.pod === `${removed.namespace}/${removed.name}` && f.podUid !== removed.uid && f.code !== undefined && f.code < 300);
    return [{ uid: removed.uid, t: r.t, codes: records.map((f) => f.code), later }];
  });
}

test('the apiserver traces the UID precondition of every kubelet final DELETE: the UID it removed', async (t) => {
  t.timeout(120_000);
  const model = await modelOf('checker-final-delete-own-uid-504.yaml');
  const finals = model.requests.filter((r) => r.verb === 'delete' && r.client.startsWith('kubelet/') && r.gracePeriodSeconds === 0 && r.code < 300);
  t.true(finals.length >= 10, `${finals.length} final DELETEs`);
  for (const r of finals) {
    const removed = model.writes.find((w) => w.event === 'DELETED' && w.t === r.t && w.name === r.name);
    t.truthy(removed, `${r.name} @${r.t}`);
    t.is(r.preconditionUid, removed!.uid, `${r.client}'s DELETE of ${r.name} @${r.t}`);
  }
});

test('found/checker-final-delete-own-uid-504.yaml still shows a final DELETE whose reply was lost (504) and a later pod of that name deleted by the same kubelet', async (t) => {
  t.timeout(120_000);
  const lost = lostFinalDeletes(await modelOf('checker-final-delete-own-uid-504.yaml'));
  t.true(lost.some((l) => l.codes.includes(504) && l.later !== undefined), JSON.stringify(lost));
});

test('found/checker-final-delete-own-uid-crash.yaml still shows a final DELETE whose reply never arrived (no record: the kubelet crashed) and a later pod of that name deleted by the same kubelet', async (t) => {
  t.timeout(120_000);
  const model = await modelOf('checker-final-delete-own-uid-crash.yaml');
  const lost = lostFinalDeletes(model).filter((l) => l.codes.length === 0 && l.later !== undefined);
  t.true(lost.length > 0, JSON.stringify(lostFinalDeletes(model)));
  t.true([...model.crashes.keys()].some((a) => a.startsWith('kubelet/')), 'a kubelet crashed');
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
