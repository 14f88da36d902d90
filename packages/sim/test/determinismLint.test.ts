// The determinism lint rule users enable for actors of their own (README "Your own actor in the
// cluster"): an actor reading the wall clock or Math.random is caught.
import test from 'ava';
import { ESLint } from 'eslint';
import { podsimDeterminism } from '@podsim/sim/eslint';

async function lint(code: string): Promise<string[]> {
  const eslint = new ESLint({ overrideConfigFile: true, overrideConfig: podsimDeterminism(['**/*.js']) });
  const [r] = await eslint.lintText(code, { filePath: 'my-operator/actor.js' });
  return r.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

test('an actor reading Date.now(), Math.random() or a real timer is reported', async (t) => {
  const msgs = await lint('export function createActor() { return { start() { const t = Date.now(); setTimeout(() => {}, Math.random()); return t; } }; }\n');
  t.true(msgs.some((m) => m.startsWith('no-restricted-properties') && m.includes('ctx.now')), msgs.join('\n'));
  t.true(msgs.some((m) => m.startsWith('no-restricted-properties') && m.includes('ctx.random')), msgs.join('\n'));
  t.true(msgs.some((m) => m.startsWith('no-restricted-globals') && m.includes('ctx.setTimer')), msgs.join('\n'));
});

test('an actor importing node:crypto or worker_threads is reported; one using only the engine passes', async (t) => {
  t.true((await lint("import { randomUUID } from 'node:crypto';\nexport const id = randomUUID();\n")).some((m) => m.startsWith('no-restricted-imports')));
  t.true((await lint("import { Worker } from 'node:worker_threads';\nexport const W = Worker;\n")).some((m) => m.startsWith('no-restricted-imports')));
  t.deepEqual(await lint('export function createActor() { return { start(ctx) { ctx.setTimer(1000); return ctx.now + ctx.random(); } }; }\n'), []);
});
