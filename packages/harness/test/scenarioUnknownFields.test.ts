/**
 * Issue #20: a typo in a scenario's manifest (`replcas:`, `slector:`) is refused at load with its
 * file:line and field path, exit 2 — as kubectl's Strict field validation refuses it on a
 * cluster, against the same type table (`serve/protobufSchema.ts`) `podsim serve` uses — instead
 * of being silently ignored.
 */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main, EXIT_BAD_INPUT, EXIT_OK } from '../src/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'podsim-unknown-fields-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

function file(name: string, text: string): string {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
}

const HEAD = `kind: Scenario
cluster:
  nodes: [{name: node-1}]
steps:
  - apply: all
  - sleep: 5s
`;

/** Line numbers below refer to this text (line 1 is `kind: Scenario`). */
const TYPOS = `${HEAD}---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replcas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSecond: 3
      containers: [{name: c, image: nginx:1.21, imagePullPolicyy: Always}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: postgres}]}
  volumeClaimTemplates:
    - apiVersion: v1
      kind: PersistentVolumeClaim
      metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], resources: {requets: {storage: 1Gi}}}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  slector: {app: web}
  ports: [{port: 80}]
---
apiVersion: v1
kind: Pod
metadata: {name: solo, lables: {a: b}}
spec:
  containers: [{name: c, image: nginx:1.21}]
`;

test('podsim validate refuses unknown manifest fields with file:line, the field path and a did-you-mean, exit 2', async (t) => {
  const f = file('typos.yaml', TYPOS);
  const r = await cli(['validate', f]);
  t.is(r.code, EXIT_BAD_INPUT, r.err);
  t.deepEqual(r.err.split('\n').filter((l) => l.includes('unknown field')), [
    `${f}:12:3: Deployment/web spec.replcas: unknown field "spec.replcas" (did you mean "replicas"?)`,
    `${f}:17:7: Deployment/web spec.template.spec.terminationGracePeriodSecond: unknown field "spec.template.spec.terminationGracePeriodSecond" (did you mean "terminationGracePeriodSeconds"?)`,
    `${f}:18:49: Deployment/web spec.template.spec.containers[0].imagePullPolicyy: unknown field "spec.template.spec.containers[0].imagePullPolicyy" (did you mean "imagePullPolicy"?)`,
    `${f}:33:56: StatefulSet/db spec.volumeClaimTemplates[0].spec.resources.requets: unknown field "spec.volumeClaimTemplates[0].spec.resources.requets" (did you mean "requests"?)`,
    `${f}:39:3: Service/web spec.slector: unknown field "spec.slector" (did you mean "selector"?)`,
    `${f}:44:24: Pod/solo metadata.lables: unknown field "metadata.lables" (did you mean "labels"?)`,
  ]);
  t.notRegex(r.err, /at .*\.js:\d+/, 'no stack trace');
  // run refuses it the same way, before simulating anything.
  const run = await cli(['run', f]);
  t.is(run.code, EXIT_BAD_INPUT);
  t.regex(run.err, /unknown field "spec.replcas"/);
});

test('the same manifests without the typos load (apiVersion / kind of a claim template are fields of a PVC)', async (t) => {
  const fixed = TYPOS.replace('replcas', 'replicas')
    .replace('terminationGracePeriodSecond:', 'terminationGracePeriodSeconds:')
    .replace('imagePullPolicyy', 'imagePullPolicy')
    .replace('requets', 'requests')
    .replace('slector', 'selector')
    .replace('lables', 'labels');
  const r = await cli(['validate', file('fixed.yaml', fixed)]);
  t.is(r.code, EXIT_OK, r.err);
});

test('bug: a nested List or a typed PodList said "missing required field name" and hid the typos; lists are flattened as kubectl does', async (t) => {
  const text = `kind: Scenario
cluster: {nodes: [{name: w1}]}
steps: [{apply: all}]
---
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: List
    items:
      - { apiVersion: v1, kind: Service, metadata: { name: s }, spec: { slector: { a: b }, ports: [{ port: 80 }] } }
  - apiVersion: v1
    kind: PodList
    items:
      - { apiVersion: v1, kind: Pod, metadata: { name: p }, spec: { containers: [{ name: app, image: nginx, imagee: x }] } }
`;
  const r = await cli(['validate', file('nested-lists.yaml', text)]);
  t.is(r.code, 2, r.err);
  t.regex(r.err, /nested-lists\.yaml:11:\d+: Service\/s .*spec\.slector: unknown field/);
  t.regex(r.err, /nested-lists\.yaml:15:\d+: Pod\/p .*imagee: unknown field/);
  t.notRegex(r.err, /missing required field "name"/);
});
