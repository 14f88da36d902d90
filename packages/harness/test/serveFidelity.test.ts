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
import { kubectlClient, until } from './support/kubectl.js';

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
  // node-2's StopPodSandbox fails for the first 900 virtual seconds (18 s of wall time at 50x):
  // a pod deleted there is retried by the pod worker, which the Events test reads.
  writeFileSync(
    scenario,
    [
      'kind: Scenario',
      'cluster:',
      '  seed: 1',
      '  nodes: [{name: node-1}, {name: node-2}]',
      'steps:',
      '  - fault: { kind: runtimeError, node: node-2, call: StopPodSandbox, for: 900s }',
      '  - sleep: 1s',
      '',
    ].join('\n'),
  );
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

// ---- item 4: Events as a cluster writes them ------------------------------------------------

interface EventJson {
  metadata: { name: string };
  involvedObject: { kind: string; name: string };
  reason: string;
  message: string;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  source: { component: string; host?: string };
}

async function eventsOf(k: ReturnType<typeof client>, selector: string): Promise<EventJson[]> {
  const r = await k.run(['get', 'events', '--field-selector', selector, '-o', 'json']);
  if (r.code !== 0) throw new Error(r.stderr);
  return (JSON.parse(r.stdout) as { items: EventJson[] }).items;
}

test('a Deployment writes ScalingReplicaSet, its ReplicaSet SuccessfulCreate / SuccessfulDelete, the scheduler Scheduled; names are <object>.<hex unix ns>', async (t) => {
  const k = client(t);
  const d = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'evweb' },
    spec: { replicas: 2, selector: { matchLabels: { app: 'evweb' } }, template: { metadata: { labels: { app: 'evweb' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.21' }] } } },
  };
  t.is((await k.run(['apply', '-f', manifest('evweb.json', d)])).code, 0);
  await until('two Scheduled events', async () => (await eventsOf(k, 'reason=Scheduled')).filter((e) => e.involvedObject.name.startsWith('evweb-')).length === 2);
  const rsName = (await k.run(['get', 'rs', '-l', 'app=evweb', '-o', 'jsonpath={.items[0].metadata.name}'])).stdout.trim();
  t.regex(rsName, /^evweb-[a-z0-9]+$/);

  const scaling = await eventsOf(k, 'involvedObject.kind=Deployment,involvedObject.name=evweb');
  t.deepEqual(
    scaling.map((e) => [e.reason, e.message, e.source.component]),
    [['ScalingReplicaSet', `Scaled up replica set ${rsName} to 2`, 'deployment-controller']],
  );
  const created = await eventsOf(k, `involvedObject.kind=ReplicaSet,involvedObject.name=${rsName}`);
  const pods = (await k.run(['get', 'pods', '-l', 'app=evweb', '-o', 'jsonpath={.items[*].metadata.name}'])).stdout.trim().split(' ').sort();
  t.deepEqual(created.map((e) => `${e.reason} ${e.message} ${e.source.component}`).sort(), pods.map((p) => `SuccessfulCreate Created pod: ${p} replicaset-controller`));
  for (const p of pods) {
    const [sched] = await eventsOf(k, `involvedObject.name=${p},reason=Scheduled`);
    t.regex(sched.message, new RegExp(`^Successfully assigned default/${p} to node-[12]$`));
    t.is(sched.source.component, 'default-scheduler');
  }
  // client-go's makeEvent name: the creation time in hex Unix nanoseconds, so names sort in time order.
  for (const e of [...scaling, ...created]) {
    const m = /^(.+)\.([0-9a-f]+)$/.exec(e.metadata.name);
    t.truthy(m, e.metadata.name);
    t.is(m![1], e.involvedObject.name);
    const seconds = Number(BigInt(`0x${m![2]}`) / 1_000_000_000n);
    t.is(seconds, Math.floor(Date.parse(e.firstTimestamp) / 1000), e.metadata.name);
  }

  t.is((await k.run(['scale', 'deployment', 'evweb', '--replicas=1'])).code, 0);
  await until('the scale-down events', async () => (await eventsOf(k, `involvedObject.name=${rsName},reason=SuccessfulDelete`)).length === 1);
  const [down] = await eventsOf(k, `involvedObject.name=${rsName},reason=SuccessfulDelete`);
  t.regex(down.message, new RegExp(`^Deleted pod: ${rsName}-[a-z0-9]{5}$`));
  const scaledDown = await eventsOf(k, 'involvedObject.kind=Deployment,involvedObject.name=evweb,reason=ScalingReplicaSet');
  t.deepEqual(scaledDown.map((e) => e.message).sort(), [`Scaled down replica set ${rsName} to 1`, `Scaled up replica set ${rsName} to 2`]);
  // kubectl describe lists them under Events.
  const describe = await k.run(['describe', 'deployment', 'evweb']);
  t.regex(describe.stdout, new RegExp(`Normal\\s+ScalingReplicaSet\\s+\\S+\\s+deployment-controller\\s+Scaled down replica set ${rsName} to 1`));
});

test('FailedScheduling with the scheduler\'s fit-error message; repeats are one Event whose count rises', async (t) => {
  const k = client(t);
  const big = pod('too-big');
  (big.spec.containers[0] as Record<string, unknown>).resources = { requests: { cpu: '1000' } };
  t.is((await k.run(['create', '-f', manifest('too-big.json', big)])).code, 0);
  // The unschedulable queue is flushed every 60 s (1.2 s of wall time at 50x).
  await until('a repeated FailedScheduling', async () => (await eventsOf(k, 'involvedObject.name=too-big,reason=FailedScheduling'))[0]?.count >= 2, 60_000);
  const evs = await eventsOf(k, 'involvedObject.name=too-big,reason=FailedScheduling');
  t.is(evs.length, 1, 'aggregated into one Event');
  t.is(evs[0].message, '0/2 nodes are available: 2 Insufficient cpu.');
  t.is(evs[0].source.component, 'default-scheduler');
  t.true(Date.parse(evs[0].lastTimestamp) > Date.parse(evs[0].firstTimestamp));
  const describe = await k.run(['describe', 'pod', 'too-big']);
  t.regex(describe.stdout, /Warning\s+FailedScheduling\s+\S+ \(x\d+ over \S+\)\s+default-scheduler\s+0\/2 nodes are available: 2 Insufficient cpu\./);
});

test('a StopPodSandbox failure retried by the pod worker is one FailedKillPod Event with a rising count, not one per retry', async (t) => {
  const k = client(t);
  const p = pod('stuck');
  (p.spec as Record<string, unknown>).nodeName = 'node-2';
  t.is((await k.run(['create', '-f', manifest('stuck.json', p)])).code, 0);
  t.is((await k.run(['wait', '--for=condition=Ready', 'pod/stuck', '--timeout=60s'])).code, 0);
  t.is((await k.run(['delete', 'pod', 'stuck', '--wait=false'])).code, 0);
  // The pod worker retries syncTerminatingPod after 10–15 s (0.2–0.3 s of wall time).
  await until('three kill attempts', async () => (await eventsOf(k, 'involvedObject.name=stuck,reason=FailedKillPod'))[0]?.count >= 3, 60_000);
  const evs = await eventsOf(k, 'involvedObject.name=stuck,reason=FailedKillPod');
  t.is(evs.length, 1);
  t.regex(evs[0].message, /^error killing pod: /);
  t.is(evs[0].source.host, 'node-2');
  t.regex(evs[0].metadata.name, /^stuck\.[0-9a-f]+$/);
});

// ---- item 5: kubectl set image on a pod -------------------------------------------------------

test('kubectl set image pod/x: the kubelet kills the container ("definition changed") and starts the new image, RESTARTS 1', async (t) => {
  const k = client(t);
  const p = pod('setimg');
  (p.spec as Record<string, unknown>).nodeName = 'node-1';
  t.is((await k.run(['create', '-f', manifest('setimg.json', p)])).code, 0);
  t.is((await k.run(['wait', '--for=condition=Ready', 'pod/setimg', '--timeout=60s'])).code, 0);
  const set = await k.run(['set', 'image', 'pod/setimg', 'c=nginx:1.23']);
  t.is(set.code, 0, set.stderr);
  t.is(set.stdout.trim(), 'pod/setimg image updated');
  const status = async () =>
    JSON.parse((await k.run(['get', 'pod', 'setimg', '-o', 'jsonpath={.status.containerStatuses[0]}'])).stdout || '{}') as { restartCount?: number; image?: string; ready?: boolean };
  await until('the container to run nginx:1.23 after one restart', async () => {
    const s = await status();
    return s.restartCount === 1 && s.image === 'nginx:1.23' && s.ready === true;
  }, 60_000);
  const [killing] = await eventsOf(k, 'involvedObject.name=setimg,reason=Killing');
  t.is(killing.message, 'Container c definition changed, will be restarted');
  const get = await k.run(['get', 'pod', 'setimg']);
  t.regex(get.stdout, /setimg\s+1\/1\s+Running\s+1 \(\S+ ago\)/);
});

// ---- item 1: unknown fields (fieldValidation) --------------------------------------------------

test('a manifest typo is refused (Strict, kubectl\'s default), warned about (--validate=warn) or dropped (--validate=false) — never stored', async (t) => {
  const k = client(t);
  const typo = (name: string) => {
    const p = pod(name);
    (p.spec as Record<string, unknown>).terminationGracePeriodSecond = 5;
    (p.spec.containers[0] as Record<string, unknown>).imagePullPolicyy = 'Always';
    return manifest(`${name}.json`, p);
  };
  const file = typo('typo');
  const strict = await k.run(['create', '-f', file]);
  t.is(strict.code, 1);
  t.is(
    strict.stderr.trim(),
    `Error from server (BadRequest): error when creating "${file}": Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.containers[0].imagePullPolicyy", unknown field "spec.terminationGracePeriodSecond"`,
  );
  t.is((await k.run(['get', 'pod', 'typo'])).code, 1, 'nothing was created');

  const warn = await k.run(['create', '-f', typo('typo-warn'), '--validate=warn']);
  t.is(warn.code, 0, warn.stderr);
  t.regex(warn.stderr, /Warning: unknown field "spec.terminationGracePeriodSecond"/);

  const ignore = await k.run(['create', '-f', typo('typo-ignore'), '--validate=false']);
  t.is(ignore.code, 0, ignore.stderr);
  const stored = JSON.parse((await k.run(['get', 'pod', 'typo-ignore', '-o', 'json'])).stdout) as { spec: Record<string, unknown> & { containers: Record<string, unknown>[] } };
  t.false('terminationGracePeriodSecond' in stored.spec, 'the typo is not stored');
  t.false('imagePullPolicyy' in stored.spec.containers[0]);
  t.is(stored.spec.terminationGracePeriodSeconds, 30);

  // kubectl apply (client-side: a strategic merge patch once the object exists) is checked too.
  const applied = await k.run(['apply', '-f', manifest('typo-apply.json', pod('typo-ignore', { labels: { a: 'b' } }))]);
  t.is(applied.code, 0, applied.stderr);
  const p2 = pod('typo-ignore', { labels: { a: 'c' } });
  (p2.spec as Record<string, unknown>).terminationGracePeriodSecond = 5;
  const bad = await k.run(['apply', '-f', manifest('typo-apply2.json', p2)]);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /strict decoding error: unknown field "spec.terminationGracePeriodSecond"/);
});

test('kubectl explain reads the OpenAPI v3 schemas generated from podsim\'s type table: a field\'s type and description, --recursive', async (t) => {
  const k = client(t);
  const field = await k.run(['explain', 'pod.spec.terminationGracePeriodSeconds']);
  t.is(field.code, 0, field.stderr);
  t.regex(field.stdout, /^KIND:\s+Pod\nVERSION:\s+v1\n\nFIELD: terminationGracePeriodSeconds <integer>\n/);
  t.regex(field.stdout, /DESCRIPTION:\n\s+Seconds the pod gets to stop gracefully once it is deleted/);
  const rec = await k.run(['explain', 'deployment.spec', '--recursive']);
  t.is(rec.code, 0, rec.stderr);
  t.regex(rec.stdout, /GROUP:\s+apps\nKIND:\s+Deployment/);
  t.regex(rec.stdout, /\n {2}replicas\t<integer>\n/);
  t.regex(rec.stdout, /\n {6}terminationGracePeriodSeconds\t<integer>\n/);
  // Every served kind of every group version has its schema, found by group-version-kind.
  for (const [path, kinds] of [
    ['api/v1', ['Pod', 'Node', 'Namespace', 'Event']],
    ['apis/apps/v1', ['Deployment', 'ReplicaSet']],
    ['apis/policy/v1', ['PodDisruptionBudget']],
  ] as const) {
    const doc = (await (await fetch(`${server.url}/openapi/v3/${path}`)).json()) as { components: { schemas: Record<string, { 'x-kubernetes-group-version-kind'?: { kind: string }[] }> } };
    const found = Object.values(doc.components.schemas).flatMap((s) => (s['x-kubernetes-group-version-kind'] ?? []).map((g) => g.kind));
    for (const kind of kinds) t.true(found.includes(kind), `${path} ${kind}`);
  }
});

// ---- item 3: server-side apply field ownership -------------------------------------------------

test('server-side apply records managedFields per manager; a second manager changing an owned field conflicts unless --force-conflicts', async (t) => {
  const k = client(t);
  const d = (replicas: number) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'ssa' },
    spec: { replicas, selector: { matchLabels: { app: 'ssa' } }, template: { metadata: { labels: { app: 'ssa' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.21' }] } } },
  });
  const alice = await k.run(['apply', '--server-side', '--field-manager=alice', '-f', manifest('ssa-2.json', d(2))]);
  t.is(alice.code, 0, alice.stderr);
  t.is(alice.stdout.trim(), 'deployment.apps/ssa serverside-applied');
  const managed = async () =>
    (JSON.parse((await k.run(['get', 'deployment', 'ssa', '-o', 'json', '--show-managed-fields'])).stdout) as { metadata: { managedFields?: { manager: string; operation: string; fieldsV1: Record<string, unknown> }[] } }).metadata.managedFields ?? [];
  const first = await managed();
  t.deepEqual(first.map((m) => [m.manager, m.operation]), [['alice', 'Apply']]);
  t.like(first[0].fieldsV1, { 'f:spec': { 'f:replicas': {}, 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {} } } } } } });
  // kubectl hides managedFields unless asked.
  t.notRegex((await k.run(['get', 'deployment', 'ssa', '-o', 'yaml'])).stdout, /managedFields/);

  const bob = await k.run(['apply', '--server-side', '--field-manager=bob', '-f', manifest('ssa-3.json', d(3))]);
  t.is(bob.code, 1);
  t.regex(bob.stderr, /Apply failed with 1 conflict: conflict with "alice": \.spec\.replicas/);
  // The same value is shared ownership, not a conflict.
  t.is((await k.run(['apply', '--server-side', '--field-manager=carol', '-f', manifest('ssa-2b.json', d(2))])).code, 0);
  const forced = await k.run(['apply', '--server-side', '--field-manager=bob', '--force-conflicts', '-f', manifest('ssa-3.json', d(3))]);
  t.is(forced.code, 0, forced.stderr);
  t.is((await k.run(['get', 'deployment', 'ssa', '-o', 'jsonpath={.spec.replicas}'])).stdout, '3');
  const after = await managed();
  const owns = (m: string) => 'f:replicas' in ((after.find((e) => e.manager === m)?.fieldsV1['f:spec'] ?? {}) as Record<string, unknown>);
  t.true(owns('bob'));
  t.false(owns('alice'), 'the forced apply took .spec.replicas from alice');
});

test('item 7: kube-public exists at start, json-patch errors use json-patch v4\'s wording, kubectl cluster-info works', async (t) => {
  const k = client(t);
  const ns = await k.run(['get', 'ns', '-o', 'jsonpath={.items[*].metadata.name}']);
  t.is(ns.code, 0, ns.stderr);
  t.deepEqual(ns.stdout.trim().split(' ').sort(), ['default', 'kube-node-lease', 'kube-public', 'kube-system']);
  t.is((await k.run(['apply', '-f', manifest('jp.json', pod('jp', { labels: { app: 'jp' } }))])).code, 0);
  const bad = await k.run(['patch', 'pod', 'jp', '--type=json', '-p', '[{"op":"replace","path":"/metadata/labels/zz","value":"v"}]']);
  t.is(bad.code, 1);
  t.is(bad.stderr.trim(), 'The request is invalid: replace operation does not apply: doc is missing key: /metadata/labels/zz: missing value');
  const info = await k.run(['cluster-info']);
  t.is(info.code, 0, info.stderr);
  t.regex(info.stdout, new RegExp(`^Kubernetes control plane is running at ${server.url.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`, 'm'));
});
