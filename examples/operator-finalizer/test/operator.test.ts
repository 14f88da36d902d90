// The operator example, run as a user's project would run it: through the public surface of
// @podsim/harness (a workspace dependency, no relative paths into packages/).
import test from 'ava';
import { fileURLToPath } from 'node:url';
import { runScenario, runScenarioFile } from '@podsim/harness';

const scenario = fileURLToPath(new URL('../../scenario.yaml', import.meta.url));

test('the operator holds the labelled pod Terminating 20 s after its containers stopped, and lets the other go', async (t) => {
  const r = await runScenarioFile(scenario);
  t.deepEqual(r.failures, [], r.failures.join('\n'));
  t.true(r.ok);
  const held = r.pods.find((p) => p.name === 'held')!;
  const free = r.pods.find((p) => p.name === 'free')!;
  t.truthy(held.goneAt, 'held is gone at the end');
  t.truthy(free.goneAt, 'free is gone at the end');
  // free: gone once the kubelet stopped it (exit 1 s after SIGTERM, then the status PATCH and
  // the kubelet's DELETE); held: the 20 s the operator waits from its deletionTimestamp.
  const s = (us: number) => us / 1e6;
  t.true(s(free.goneAt! - free.deletedAt!) >= 1 && s(free.goneAt! - free.deletedAt!) <= 4, `free gone ${s(free.goneAt! - free.deletedAt!)}s after its DELETE`);
  t.true(s(held.goneAt! - held.deletedAt!) >= 20 && s(held.goneAt! - held.deletedAt!) <= 22, `held gone ${s(held.goneAt! - held.deletedAt!)}s after its DELETE`);
  t.true(r.watch.some((l) => /^held\s+0\/1\s+Terminating/.test(l)), 'held shows 0/1 Terminating while the operator holds it');
});

test('the run is deterministic: same seed, same digest, on one thread and on one thread per actor', async (t) => {
  const a = await runScenario(scenario, { placement: 'single' });
  const b = await runScenario(scenario, { placement: 'per-actor' });
  t.is(a.traceDigest, b.traceDigest);
  t.not(a.traceDigest, '');
});

test('without the operator (holdSeconds 0) the labelled pod goes as fast as the other: the operator is what held it', async (t) => {
  const { loadScenario } = await import('@podsim/harness');
  const sc = loadScenario(scenario);
  const doc = structuredClone(sc.doc) as typeof sc.doc;
  doc.cluster.actors![0].config = { holdSeconds: 0 };
  const r = await runScenario({ ...sc, doc });
  const held = r.pods.find((p) => p.name === 'held')!;
  const free = r.pods.find((p) => p.name === 'free')!;
  t.true(Math.abs(held.goneAt! - free.goneAt!) < 2_000_000, `held gone ${held.goneAt}, free gone ${free.goneAt}`);
});
