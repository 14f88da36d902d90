// cluster.actors: actors of the user's own, resolved and checked when the scenario compiles.
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadScenarioText } from '../src/scenario/load.js';
import { compileScenario } from '../src/scenario/compile.js';
import { ScenarioError } from '../src/scenario/source.js';
import { runPlan } from '../src/engine.js';

const dir = mkdtempSync(join(tmpdir(), 'podsim-actors-'));
const file = join(dir, 'scenario.yaml');
// An actor that traces once at start and every virtual second (timers from the engine only).
writeFileSync(
  join(dir, 'ticker.js'),
  `export function createActor(id, config) {
  return {
    start(ctx) { ctx.trace('ticker.start', id + ' ' + JSON.stringify(config)); ctx.setTimer(1000000); },
    receive() {},
    onTimer(ctx) { ctx.trace('ticker.tick', 'tick'); ctx.setTimer(1000000); },
  };
}
`,
);

const scenario = (actors: string) => `kind: Scenario
cluster:
  nodes: [{ name: n1 }]
  actors:
${actors}
steps:
  - sleep: 3s
`;

function issuesOf(text: string): string[] {
  try {
    compileScenario(loadScenarioText(file, text));
  } catch (e) {
    if (e instanceof ScenarioError) return e.issues.map((i) => `${i.field}: ${i.message}`);
    throw e;
  }
  return [];
}

test('a relative module resolves next to the scenario and joins the plan as a file URL with its config', (t) => {
  const plan = compileScenario(loadScenarioText(file, scenario('    - { id: ticker, module: ./ticker.js, config: { every: 1s } }')));
  const a = plan.actors.find((x) => x.id === 'ticker');
  t.deepEqual(a, { id: 'ticker', module: pathToFileURL(join(dir, 'ticker.js')).href, config: { every: '1s' } });
});

test('a missing module, a clash with a podsim actor id and a duplicate id are refused, each naming its field', (t) => {
  t.deepEqual(issuesOf(scenario('    - { id: ticker, module: ./missing.js }')), [
    `cluster.actors[0].module: cannot find module "./missing.js" (looked for ${join(dir, 'missing.js')}; a compiled .js file, relative to the scenario file)`,
  ]);
  t.deepEqual(issuesOf(scenario('    - { id: kube-scheduler, module: ./ticker.js }')), ['cluster.actors[0].id: actor id "kube-scheduler" is one of podsim\'s own actors; choose another']);
  t.deepEqual(issuesOf(scenario('    - { id: t, module: ./ticker.js }\n    - { id: t, module: ./ticker.js }')), ['cluster.actors[1].id: actor id "t" is listed twice']);
  t.true(issuesOf(scenario('    - { id: t, module: no-such-package-podsim }'))[0].startsWith('cluster.actors[0].module: cannot resolve module "no-such-package-podsim"'));
  t.true(issuesOf(scenario('    - { id: My_Actor, module: ./ticker.js }'))[0].startsWith('cluster.actors[0].id: expected an actor id'));
});

test('the actor runs in the simulation on engine time: its traces are in the run, the same on every placement', async (t) => {
  const plan = compileScenario(loadScenarioText(file, scenario('    - { id: ticker, module: ./ticker.js, config: { every: 1s } }')));
  const digests = new Set<string>();
  for (const placement of ['single', 'per-actor', 'nodes:2']) {
    const r = await runPlan({ ...plan, placement }, { traceFilter: ['ticker.'] });
    t.is(r.end, 'stopped');
    t.deepEqual(
      r.traces.filter((x) => x.actor === 'ticker').map((x) => `${x.t} ${x.kind}`),
      ['0 ticker.start', '1000000 ticker.tick', '2000000 ticker.tick', '3000000 ticker.tick'].slice(0, r.traces.filter((x) => x.actor === 'ticker').length),
    );
    t.true(r.traces.filter((x) => x.kind === 'ticker.tick').length >= 2, placement);
    digests.add(r.digest);
  }
  t.is(digests.size, 1);
});

test('bug: a module whose createActor returns no actor (42, undefined, an object without receive) ran as a silent no-op; now the run fails naming the actor and what it returned', async (t) => {
  for (const [body, shown] of [['return 42;', '42'], ['return undefined;', 'undefined'], ['return { start() {} };', 'an object without a receive method']] as const) {
    const mod = join(dir, `bad-${shown.length}.js`);
    writeFileSync(mod, `export function createActor() { ${body} }\n`);
    const plan = compileScenario(loadScenarioText(file, scenario(`    - { id: bad, module: ./${mod.split('/').pop()} }`)));
    const r = await runPlan(plan, { engine: 'local' });
    t.truthy(r.failure, shown);
    t.is(r.failure?.actor, 'bad', shown);
    t.true(r.failure?.message.includes(`the actor factory for bad returned ${shown}, not an actor (an object with a receive(ctx, envelope) method)`), r.failure?.message);
  }
});
