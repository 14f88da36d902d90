/** Manifests as users keep them: a multi-document stream, a `kind: List`, inline `manifests:`, `manifestFiles:`. */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadScenario } from '../src/scenario/load.js';
import { compileScenario } from '../src/scenario/compile.js';
import { ScenarioError, formatIssue } from '../src/scenario/source.js';

const dir = mkdtempSync(join(tmpdir(), 'podsim-load-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));
const pod = (name: string) => `{ apiVersion: v1, kind: Pod, metadata: { name: ${name} }, spec: { containers: [{ name: c, image: nginx }] } }`;

test('manifests from the stream, a List, inline and from files, in that order, with default namespace', (t) => {
  writeFileSync(join(dir, 'more.yaml'), `${pod('from-file')}\n---\napiVersion: v1\nkind: List\nitems:\n  - ${pod('file-list')}\n`);
  const file = join(dir, 'ok.yaml');
  writeFileSync(
    file,
    `kind: Scenario
cluster: { namespace: team-a, nodes: [{ name: n1 }] }
manifests:
  - ${pod('inline')}
manifestFiles: [more.yaml]
steps:
  - apply: all
---
${pod('doc')}
---
apiVersion: v1
kind: List
items:
  - ${pod('listed')}
  - { apiVersion: v1, kind: Node, metadata: { name: extra } }
`,
  );
  const plan = compileScenario(loadScenario(file));
  const step = plan.driver.steps[0];
  t.is(step.kind, 'apply');
  const objs = step.kind === 'apply' ? step.objects : [];
  t.deepEqual(
    objs.map((o) => `${o.kind}/${o.metadata.name}@${o.metadata.namespace ?? '-'}`),
    ['Pod/doc@team-a', 'Pod/listed@team-a', 'Node/extra@-', 'Pod/inline@team-a', 'Pod/from-file@team-a', 'Pod/file-list@team-a'],
  );
});

test('a problem inside a manifest file names that file and its line', (t) => {
  writeFileSync(join(dir, 'bad.yaml'), `# a comment\n${pod('fine')}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: { name: d }\nspec:\n  replicas: two\n`);
  const file = join(dir, 'refs-bad.yaml');
  writeFileSync(file, `kind: Scenario\ncluster: { nodes: [{ name: n1 }] }\nmanifestFiles: [bad.yaml]\nsteps: [{ sleep: 1s }]\n`);
  const e = t.throws(() => loadScenario(file), { instanceOf: ScenarioError });
  const lines = e!.issues.map(formatIssue);
  t.true(lines.some((l) => /\/bad\.yaml:8:\d+: Deployment\/d spec\.replicas: expected number/.test(l)), lines.join('\n'));
  t.true(lines.some((l) => /\/bad\.yaml:\d+:\d+: Deployment\/d spec\.selector: missing required field/.test(l)), lines.join('\n'));
});
