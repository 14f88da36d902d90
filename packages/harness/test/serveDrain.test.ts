/**
 * The real `kubectl` sends protobuf bodies from its typed clients: `kubectl create namespace`,
 * `kubectl create deployment` and `kubectl drain` (cordon, then one policy/v1 Eviction per pod).
 * Two nodes; draining node-1 evicts its pods (Terminating with the drain's grace, then gone), the
 * ReplicaSet's replacements land on node-2; draining node-2 as well leaves the replacements
 * Pending until `kubectl uncordon node-1`. Fresh discovery cache per test (KUBECACHEDIR).
 * Without a kubectl on PATH (or in $KUBECTL) these tests fail: .ci/run installs one.
 */
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { servePlan } from '../src/serve/servePlan.js';
import { writeKubeconfig } from '../src/serve/kubeconfig.js';
import { kubectlClient, until } from './support/kubectl.js';

const SPEED = 20;

let dir = '';
let server: RunningServer;
let kubeconfig: string;

const kubectl = (t: ExecutionContext) => kubectlClient(t, kubeconfig, dir);

/** `name node phase` of each pod of app=web in demo. */
async function pods(k: ReturnType<typeof kubectl>): Promise<{ name: string; node: string; phase: string }[]> {
  const r = await k.run(['get', 'pods', '-n', 'demo', '-l', 'app=web', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName} {.status.phase}{"\\n"}{end}']);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [name, node, phase] = l.split(' ');
      return { name, node, phase };
    });
}

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'podsim-drain-'));
  server = await startServer(servePlan({ nodes: 2, epochUnixSeconds: Math.floor(Date.now() / 1000) }), { speed: SPEED });
  kubeconfig = writeKubeconfig(server.url, join(dir, 'kubeconfig'));
});

test.after.always(async () => {
  await server?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

test.serial('kubectl create namespace / create deployment (protobuf bodies), then drain node-1: evicted pods terminate with the drain grace, replacements run on node-2', async (t) => {
  const k = kubectl(t);
  const ns = await k.run(['create', 'namespace', 'demo']);
  t.is(ns.code, 0, ns.stderr);
  t.is(ns.stdout.trim(), 'namespace/demo created');
  const dep = await k.run(['create', 'deployment', 'web', '--image=nginx', '--replicas=2', '-n', 'demo']);
  t.is(dep.code, 0, dep.stderr);
  t.is(dep.stdout.trim(), 'deployment.apps/web created');
  const ready = await k.run(['wait', '--for=condition=Ready', 'pod', '-l', 'app=web', '-n', 'demo', '--timeout=60s']);
  t.is(ready.code, 0, ready.stderr);
  const before = await pods(k);
  t.is(before.length, 2);
  // The scheduler spreads the two replicas (least allocated): one per node.
  t.deepEqual(before.map((p) => p.node).sort(), ['node-1', 'node-2']);
  const onNode1 = before.filter((p) => p.node === 'node-1').map((p) => p.name);

  const watch = k.background([
    'get', 'pods', '-n', 'demo', '-w', '--output-watch-events',
    '-o', 'jsonpath={.type} {.object.metadata.name} {.object.spec.nodeName} {.object.metadata.deletionGracePeriodSeconds}{"\\n"}',
  ]);
  try {
    await until('the watch to list the pods', () => watch.out().split('\n').filter((l) => l.startsWith('ADDED')).length >= 2);
    const drain = await k.run(['drain', 'node-1', '--ignore-daemonsets', '--grace-period=5', '--timeout=60s']);
    t.is(drain.code, 0, drain.stderr);
    t.regex(drain.stdout, /^node\/node-1 cordoned$/m);
    for (const name of onNode1) t.regex(drain.stdout, new RegExp(`^pod/${name} evicted$`, 'm'));
    t.regex(drain.stdout, /^node\/node-1 drained$/m);
    // kubectl drain returns once the evicted pods are gone: Terminating (grace 5 s) first, then DELETED.
    await until('the DELETED events on the watch', () => onNode1.every((name) => watch.out().includes(`DELETED ${name} `)), 10_000);
    const events = watch.out().split('\n');
    for (const name of onNode1) {
      t.true(events.includes(`MODIFIED ${name} node-1 5`), `Terminating with grace 5: ${events.join(' | ')}`);
      t.true(events.some((e) => e.startsWith(`DELETED ${name} `)), `deleted: ${events.join(' | ')}`);
    }
  } finally {
    watch.proc.kill();
  }
  const node = await k.run(['get', 'node', 'node-1', '--no-headers']);
  t.regex(node.stdout, /^node-1\s+Ready,SchedulingDisabled\s/);
  await until('two running replicas on node-2', async () => {
    const now = await pods(k);
    return now.length === 2 && now.every((p) => p.node === 'node-2' && p.phase === 'Running');
  });
  const after = await pods(k);
  t.false(after.some((p) => onNode1.includes(p.name)), 'the evicted pod is gone, a replacement took its place');
});

test.serial('with both nodes drained the replacements stay Pending; kubectl uncordon node-1 lets them run there', async (t) => {
  const k = kubectl(t);
  const drain = await k.run(['drain', 'node-2', '--ignore-daemonsets', '--grace-period=5', '--timeout=60s']);
  t.is(drain.code, 0, drain.stderr);
  t.regex(drain.stdout, /^node\/node-2 drained$/m);
  await until('two Pending replacements', async () => {
    const now = await pods(k);
    return now.length === 2 && now.every((p) => p.phase === 'Pending' && p.node === '');
  });
  const uncordon = await k.run(['uncordon', 'node-1']);
  t.is(uncordon.code, 0, uncordon.stderr);
  await until('the replacements running on node-1', async () => {
    const now = await pods(k);
    return now.length === 2 && now.every((p) => p.node === 'node-1' && p.phase === 'Running');
  });
  t.pass();
});

test.serial('POST pods/{name}/eviction of a pod that does not exist is 404 NotFound (a Status); GET on it is 405', async (t) => {
  const url = `${server.url}/api/v1/namespaces/demo/pods/nope/eviction`;
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'nope', namespace: 'demo' } }),
  });
  t.is(r.status, 404);
  t.like(await r.json(), { kind: 'Status', reason: 'NotFound', message: 'pods "nope" not found' });
  const get = await fetch(url);
  t.is(get.status, 405);
});
