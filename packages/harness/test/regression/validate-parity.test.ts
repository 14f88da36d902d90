/**
 * `validate` passed what `run` then refused (issue #23 item 4): a name over 253 characters and a
 * second `Pod/web` said `ok` and failed the `apply` step of the run (422); `cpu: lots`,
 * `memory: -16Gi` and a hostPort out of range passed both (podsim's apiserver took them, the
 * real one refuses them). Every manifest now goes through the apiserver's create path (decode,
 * defaults, admission, validation: a dry run) when the file is loaded, so `validate` and `run`
 * both exit 2 with the apiserver's message at the manifest's file:line:column, before anything
 * runs. A negative terminationGracePeriodSeconds is what v1.22.8 accepts (it deletes with 1 s):
 * a warning, not an error.
 */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'podsim-parity-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const HEAD = 'kind: Scenario\ncluster:\n  nodes: [{ name: node-1 }]\nsteps:\n  - apply: all\n  - sleep: 5s\n';
const pod = (name: string, extra = '', container = '') =>
  `---\napiVersion: v1\nkind: Pod\nmetadata: { name: ${name} }\nspec:\n${extra}  containers:\n    - name: app\n      image: nginx\n${container}`;

/** validate and run alike: exit 2, the message at file:line, nothing ran, no stack trace. */
async function refusedByBoth(t: import('ava').ExecutionContext, name: string, text: string, message: RegExp): Promise<void> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, text);
  for (const cmd of ['validate', 'run']) {
    const r = await cli(cmd === 'run' ? ['run', file, '--engine', 'local'] : ['validate', file]);
    t.is(r.code, 2, `${cmd}: ${r.out}\n${r.err}`);
    t.regex(r.err, message, cmd);
    t.notRegex(r.out, /ok \(|^seed /m, `${cmd}: nothing validated or ran`);
    t.notRegex(r.err, /\n\s+at /, 'no stack trace');
  }
}

test('bug: a pod name of 254 characters passed validate and failed the run\'s apply (422) — now both refuse it at its line', async (t) => {
  const long = 'a'.repeat(254);
  await refusedByBoth(t, 'long-name', HEAD + pod(long), new RegExp(`long-name\\.yaml:10:\\d+: Pod/a+ metadata\\.name: Invalid value: "a{254}": must be no more than 253 characters`));
});

test('bug: Pod/web twice passed validate and failed the run\'s second apply — now a duplicate-manifest error naming both lines', async (t) => {
  await refusedByBoth(t, 'dup', HEAD + pod('web') + pod('web', '', '      ports: [{ containerPort: 80 }]\n'), /dup\.yaml:18:\d+: Pod\/web metadata\.name: duplicate manifest: Pod\/web is also defined at .*dup\.yaml:10 /);
});

test('bug: cpu: lots passed validate and run — now the decoder\'s 400 at the quantity', async (t) => {
  await refusedByBoth(
    t,
    'cpu-lots',
    HEAD + pod('web', '', '      resources: { requests: { cpu: lots } }\n'),
    /cpu-lots\.yaml:15:\d+: Pod\/web spec\.containers\[0\]\.resources\.requests\.cpu: Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression/,
  );
});

test('bug: memory: -16Gi and ports out of range passed validate — now the apiserver\'s 422 causes, one per field, in a Deployment\'s template too', async (t) => {
  const deployment = `---\napiVersion: apps/v1\nkind: Deployment\nmetadata: { name: d }\nspec:\n  replicas: 1\n  selector: { matchLabels: { app: d } }\n  template:\n    metadata: { labels: { app: d } }\n    spec:\n      containers:\n        - name: app\n          image: nginx\n          resources: { limits: { memory: -16Gi } }\n`;
  const text = HEAD + pod('web', '', '      ports: [{ containerPort: 70000 }, { containerPort: 80, hostPort: 65536 }]\n') + deployment;
  await refusedByBoth(t, 'ranges', text, /ranges\.yaml:15:\d+: Pod\/web spec\.containers\[0\]\.ports\[0\]\.containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive/);
  const r = await cli(['validate', join(dir, 'ranges.yaml')]);
  t.regex(r.err, /ranges\.yaml:15:\d+: Pod\/web spec\.containers\[0\]\.ports\[1\]\.hostPort: Invalid value: 65536: must be between 1 and 65535, inclusive/);
  t.regex(r.err, /ranges\.yaml:29:\d+: Deployment\/d spec\.template\.spec\.containers\[0\]\.resources\.limits\.memory: Invalid value: "-16Gi": must be greater than or equal to 0/);
});

test('terminationGracePeriodSeconds: -3 is accepted as v1.22.8 accepts it, with a warning at its line (validate and run)', async (t) => {
  const file = join(dir, 'negative-grace.yaml');
  writeFileSync(file, HEAD + pod('web', '  terminationGracePeriodSeconds: -3\n'));
  const v = await cli(['validate', file]);
  t.is(v.code, 0, v.err);
  t.regex(v.err, /negative-grace\.yaml:12:\d+: warning: Pod\/web spec\.terminationGracePeriodSeconds: -3 is negative: Kubernetes v1\.22\.8 accepts it and treats it as 1 s on every delete/);
  const r = await cli(['run', file, '--engine', 'local', '--quiet']);
  t.is(r.code, 0, r.out + r.err);
  t.regex(r.err, /warning: Pod\/web spec\.terminationGracePeriodSeconds: -3 is negative/);
});

test('what the apiserver accepts still validates (quantities in every form, a pod in a namespace from the file)', async (t) => {
  const file = join(dir, 'good.yaml');
  const ns = '---\napiVersion: v1\nkind: Namespace\nmetadata: { name: demo }\n';
  writeFileSync(file, HEAD + ns + pod('web', '', '      resources: { requests: { cpu: 250m, memory: 1.5Gi }, limits: { cpu: "1", memory: 2e9 } }\n').replace('metadata: { name: web }', 'metadata: { name: web, namespace: demo }'));
  const v = await cli(['validate', file]);
  t.is(v.code, 0, v.err);
  t.regex(v.out, /good\.yaml: ok/);
});
