// What a team's test of its own would assert, with podsim as a library.
import test from 'ava';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScenarioError, loadScenarioObject, runBenchStorm, runScenario } from '@podsim/harness';
import { preStopScenario, runPreStopDrill } from '../src/index.js';

test('a preStop sleep of 5 s within a 30 s grace: no pod goes before 5 s, all well within the grace, each SIGTERMed after its hook', async (t) => {
  const { report, lastGoneSeconds } = await runPreStopDrill({ replicas: 5, preStopSeconds: 5, graceSeconds: 30 });
  t.true(report.ok, report.failures.join('\n'));
  t.is(report.pods.length, 5);
  const first = Math.min(...report.pods.map((p) => (p.goneAt! - p.deletedAt!) / 1e6));
  t.true(first >= 5, `first pod gone ${first}s after its DELETE`);
  // The kubelet's status PATCH and DELETE share its 5 QPS / burst 10 client: the last is later.
  t.true(lastGoneSeconds <= 12, `last gone ${lastGoneSeconds}s after the scale-down`);
  t.true(report.pods.every((p) => p.sigterm === 1 && p.sigkill === 0 && p.exitCodes[0] === 143));
});

test('a preStop longer than the grace is cut at the grace; SIGTERM then gets the 2 s minimum, and the app exits on it', async (t) => {
  const { lastGoneSeconds, report } = await runPreStopDrill({ replicas: 2, preStopSeconds: 60, graceSeconds: 10 });
  t.is(report.pods.length, 2);
  t.true(lastGoneSeconds >= 10 && lastGoneSeconds <= 13, `last gone ${lastGoneSeconds}s`);
  t.true(report.pods.every((p) => p.sigterm === 1 && p.exitCodes[0] === 143), JSON.stringify(report.pods));
});

test('a scenario object with a mistake is refused with the field named, before anything runs', (t) => {
  const bad = { ...preStopScenario({ replicas: 1, preStopSeconds: 1, graceSeconds: 5 }), cluster: { nodes: [{ name: 'N_1' }] } };
  const e = t.throws(() => loadScenarioObject(bad), { instanceOf: ScenarioError });
  t.true(e!.issues.some((i) => i.field.startsWith('cluster.nodes[0].name') || i.field.startsWith('cluster.nodes.0.name')), JSON.stringify(e!.issues));
});

test('bug: the replay of a scenario object named a file that does not exist ("pnpm podsim run /…/<scenario object>"); it is now the call with the same seed, which gives the same run', async (t) => {
  const sc = preStopScenario({ replicas: 1, preStopSeconds: 1, graceSeconds: 5 });
  const a = await runScenario(sc, { seed: 7 });
  t.is(a.replay, "runScenario(<the same scenario object>, { seed: 7, placement: 'single' })");
  const b = await runScenario(sc, { seed: 7, placement: 'single' });
  t.is(b.traceDigest, a.traceDigest);
});

test('bench storm from code returns the figures of the --json line', async (t) => {
  const f = await runBenchStorm({ nodes: 2, podsPerNode: 5 });
  t.is(f.pods, 10);
  t.is(f.deleted, 10);
  t.is(f.lost, 0);
  t.true(f.ok);
});

test('this package imports only the public entry @podsim/harness (no subpaths, no relative paths into packages/)', (t) => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  for (const dir of ['src', 'test']) {
    for (const f of readdirSync(join(root, dir)).filter((n) => n.endsWith('.ts'))) {
      const text = readFileSync(join(root, dir, f), 'utf8');
      for (const m of text.matchAll(/from '([^']+)'/g)) {
        const spec = m[1];
        t.false(spec.startsWith('@podsim/') && spec !== '@podsim/harness', `${dir}/${f} imports ${spec}`);
        t.false(spec.includes('packages/'), `${dir}/${f} imports ${spec}`);
      }
    }
  }
});
