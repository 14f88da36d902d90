/**
 * Regression tests for the kubelet and fault-model defects that fault exploration found (issue
 * #27 items 1, 4, 5): each shrunk scenario in packages/harness/test/found/ (its header tells the
 * story and the fix) runs through the CLI entry (`podsim run FILE`) and must pass — every step,
 * expectation and invariant held, `liveness` included — and give the same trace digest on
 * `single`, `shards:2` and `nodes:2` (placement never changes a run).
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EXIT_OK } from '../../src/cli.js';
import { declaredExpectations, digestOf, expectationTally, podsimRun, runText, S } from './helpers.js';

const DIR = 'packages/harness/test/found';
const FILES = ['kubelet-restart-kills-running-pods.yaml', 'nodedown-overlapping-restart-cri-2m-hang.yaml', 'disconnect-restarted-kubelet-60s-stall.yaml'].map((f) => join(DIR, f));
const PLACEMENTS = ['single', 'shards:2', 'nodes:2'];


for (const file of FILES) {
  test(`podsim run ${file} passes`, async (t) => {
    t.timeout(120_000);
    const { code, out } = await podsimRun(file, 'single');
    t.is(code, EXIT_OK, out.join('\n'));
    t.is(out.at(-1), 'PASS', out.join('\n'));
    // Exactly the expectations the file declares, each passed (a 0/0 tally is no verdict).
    const declared = declaredExpectations(readFileSync(file, 'utf8'));
    t.true(declared > 0, `${file} declares no expectations`);
    t.deepEqual(expectationTally(out), { passed: declared, total: declared }, out.join('\n'));
  });

  test(`${file} gives the same trace digest on ${PLACEMENTS.join(', ')}`, async (t) => {
    t.timeout(180_000);
    const results = await Promise.all(PLACEMENTS.map((p) => podsimRun(file, p)));
    const digests = results.map((r) => digestOf(r.out));
    t.truthy(digests[0], results[0].out.join('\n'));
    t.deepEqual(digests, PLACEMENTS.map(() => digests[0]), results.map((r) => r.out.join('\n')).join('\n---\n'));
  });
}

test('nodedown-overlapping-restart-cri-2m-hang: the kubelet comes back with its node at 20 s, not when the kubeletRestart inside the nodeDown ends (19.549 s)', async (t) => {
  const file = join(DIR, 'nodedown-overlapping-restart-cri-2m-hang.yaml');
  const { report, model } = await runText('nodedown-overlapping-restart-cri-2m-hang', readFileSync(file, 'utf8'));
  t.true(report.ok, report.failures.join('\n'));
  t.deepEqual(model.restarts.get('kubelet/n1'), [20 * S]);
  t.deepEqual(model.restarts.get('runtime/n1'), [20 * S]);
  // p (grace 1, deleted at 2 s while the node was up) is gone right after the node returns.
  const gone = model.writes.find((w) => w.resource === 'pods' && w.name === 'p' && w.event === 'DELETED');
  t.truthy(gone);
  t.true(gone!.t > 20 * S && gone!.t < 22 * S, `p DELETED at ${gone!.t / S}s`);
});

test('disconnect-restarted-kubelet-60s-stall: a kubelet restarted inside a disconnect connects ~1 s after the heal (29.06 s), not after 60 s request timeouts', async (t) => {
  const file = join(DIR, 'disconnect-restarted-kubelet-60s-stall.yaml');
  const { report, model } = await runText('disconnect-restarted-kubelet-60s-stall', readFileSync(file, 'utf8'));
  t.true(report.ok, report.failures.join('\n'));
  const p = model.processes.find((x) => x.pod === 'p')!;
  const term = p.signals.find((s) => s.signal === 'SIGTERM')?.t;
  t.truthy(term);
  t.true(term! > 29 * S && term! < 31 * S, `SIGTERM at ${term! / S}s`);
  // Its registration attempts inside the partition failed at once, once a second.
  const failed = model.records.filter((r) => r.actor === 'kubelet/n1' && r.kind === 'fault.partition' && r.msg === 'no connection, failed ApiCreate to apiserver');
  t.true(failed.length >= 5 && failed.length <= 7, `${failed.length} failed registrations`);
});
