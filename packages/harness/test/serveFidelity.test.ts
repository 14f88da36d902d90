/**
 * Issue #20: what a kubectl user relies on beyond the happy path, pinned with the real kubectl
 * against `podsim serve` — requests kube-apiserver refuses (400 / 415 / 422 with upstream's
 * messages), Events as a cluster writes them, and more. One server for the file; each test uses
 * its own namespace or object names and a fresh discovery cache.
 */
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { servePlan } from '../src/serve/servePlan.js';
import { writeKubeconfig } from '../src/serve/kubeconfig.js';
import { kubectlClient } from './support/kubectl.js';

const SPEED = 50;

let dir = '';
let server: RunningServer;
let kubeconfig: string;

const client = (t: ExecutionContext) => kubectlClient(t, kubeconfig, dir);

function manifest(name: string, doc: unknown): string {
  const f = join(dir, name);
  writeFileSync(f, JSON.stringify(doc, null, 2));
  return f;
}

const pod = (name: string, meta: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...meta },
  spec: { containers: [{ name: 'c', image: 'nginx:1.21' }] },
});

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'podsim-fidelity-'));
  const scenario = join(dir, 'cluster.yaml');
  writeFileSync(scenario, ['kind: Scenario', 'cluster:', '  seed: 1', '  nodes: [{name: node-1}, {name: node-2}]', 'steps:', '  - sleep: 1s', ''].join('\n'));
  server = await startServer(servePlan({ scenario, epochUnixSeconds: Math.floor(Date.now() / 1000) }), { speed: SPEED });
  kubeconfig = writeKubeconfig(server.url, join(dir, 'kubeconfig'));
});

test.after.always(async () => {
  await server?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

// ---- item 2: requests kube-apiserver rejects -------------------------------------------------

test('a list with ?limit=abc, ?continue=garbage or ?resourceVersion=abc is a 400 with upstream\'s message', async (t) => {
  const k = client(t);
  const cases: Array<[string, string]> = [
    ['/api/v1/namespaces/default/pods?limit=abc', 'strconv.ParseInt: parsing "abc": invalid syntax'],
    ['/api/v1/namespaces/default/pods?limit=500&continue=garbage', "invalid continue token: continue key is not valid: invalid character '\\u0081' looking for beginning of value"],
    ['/api/v1/namespaces/default/pods?continue=not*base64', 'invalid continue token: continue key is not valid: illegal base64 data at input byte 3'],
    ['/api/v1/namespaces/default/pods?limit=500&resourceVersion=abc', 'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'],
    ['/api/v1/pods?watch=true&timeoutSeconds=soon', 'strconv.ParseInt: parsing "soon": invalid syntax'],
  ];
  for (const [path, message] of cases) {
    const r = await k.run(['get', '--raw', path]);
    t.is(r.code, 1, path);
    t.is(r.stderr.trim(), `Error from server (BadRequest): ${message}`, path);
  }
  // A well-formed token podsim never issued (it answers every list in one page): 410 Expired.
  const token = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 5, start: 'x\u0000' })).toString('base64url');
  const expired = await k.run(['get', '--raw', `/api/v1/namespaces/default/pods?continue=${token}`]);
  t.regex(expired.stderr, /^Error from server \(Expired\): The provided continue parameter is too old/);
  // The same lists without the bad parameter work.
  const ok = await k.run(['get', '--raw', '/api/v1/namespaces/default/pods?limit=500&resourceVersion=0']);
  t.is(ok.code, 0, ok.stderr);
});

test('a PATCH without Content-Type is a 415 naming the accepted patch types; a POST without one is read as JSON', async (t) => {
  const url = `${server.url}/api/v1/namespaces/default/pods`;
  const patch = await fetch(`${url}/nope`, { method: 'PATCH', body: '{}', headers: { 'content-type': '' } });
  t.is(patch.status, 415);
  t.like(await patch.json(), {
    reason: 'UnsupportedMediaType',
    message: 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
  });
  const form = await fetch(url, { method: 'POST', body: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  t.is(form.status, 415);
  t.like(await form.json(), { message: 'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf' });
  // NegotiateInputSerializerForMediaType takes the first supported type (JSON) when none is sent.
  const bare = new Request(url, { method: 'POST', body: JSON.stringify(pod('no-content-type')) });
  bare.headers.delete('content-type');
  const created = await fetch(bare);
  t.is(created.status, 201);
});

test('annotations over 256 KiB, a label value over 63 characters and a name over 253 are refused with 422 as upstream', async (t) => {
  const k = client(t);
  const big = manifest('big.json', pod('big', { annotations: { a: 'x'.repeat(200 * 1024), b: 'y'.repeat(60 * 1024) } }));
  const r = await k.run(['create', '-f', big]);
  t.is(r.code, 1);
  t.is(r.stderr.trim(), 'The Pod "big" is invalid: metadata.annotations: Too long: must have at most 262144 bytes');
  // Exactly at the limit (keys count too) is fine.
  const edge = manifest('edge.json', pod('edge', { annotations: { a: 'x'.repeat(200 * 1024), b: 'y'.repeat(56 * 1024 - 2) } }));
  const ok = await k.run(['create', '-f', edge]);
  t.is(ok.code, 0, ok.stderr);
  // The same limit on update (kubectl annotate).
  const more = await k.run(['annotate', 'pod', 'edge', 'c=z']);
  t.is(more.code, 1);
  t.is(more.stderr.trim(), 'The Pod "edge" is invalid: metadata.annotations: Too long: must have at most 262144 bytes');

  // kubectl label checks labels itself; a manifest reaches the server's ValidateLabels.
  const long = 'v'.repeat(64);
  const label = await k.run(['create', '-f', manifest('label.json', pod('label', { labels: { team: long } }))]);
  t.is(label.code, 1);
  t.is(label.stderr.trim(), `The Pod "label" is invalid: metadata.labels: Invalid value: "${long}": must be no more than 63 characters`);
  const key = await k.run(['create', '-f', manifest('key.json', pod('key', { labels: { [`example.com/${'k'.repeat(64)}`]: 'x' } }))]);
  t.is(key.code, 1);
  t.is(key.stderr.trim(), `The Pod "key" is invalid: metadata.labels: Invalid value: "example.com/${'k'.repeat(64)}": name part must be no more than 63 characters`);

  const name = 'n'.repeat(254);
  const named = await k.run(['create', '-f', manifest('long.json', pod(name))]);
  t.is(named.code, 1);
  t.is(named.stderr.trim(), `The Pod "${name}" is invalid: metadata.name: Invalid value: "${name}": must be no more than 253 characters`);
});
