/**
 * `kubectl delete namespace` against `podsim serve` with the real kubectl: `default` is 403
 * Forbidden as kubectl prints it; a deleted namespace shows Terminating in `kubectl get ns`
 * (NAME STATUS AGE), refuses new content (403), loses its pods, and is then NotFound.
 * Fresh discovery cache per test (KUBECACHEDIR). Without a kubectl on PATH (or in $KUBECTL)
 * these tests fail: .ci/run installs one.
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

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'podsim-ns-'));
  server = await startServer(servePlan({ nodes: 1, epochUnixSeconds: Math.floor(Date.now() / 1000) }), { speed: SPEED });
  kubeconfig = writeKubeconfig(server.url, join(dir, 'kubeconfig'));
});

test.after.always(async () => {
  await server?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

test.serial('kubectl delete ns default is Forbidden', async (t) => {
  const k = kubectl(t);
  const r = await k.run(['delete', 'namespace', 'default']);
  t.is(r.code, 1);
  t.is(r.stderr.trim(), 'Error from server (Forbidden): namespaces "default" is forbidden: this namespace may not be deleted');
  const ns = await k.run(['get', 'ns', 'default', '--no-headers']);
  t.regex(ns.stdout, /^default\s+Active\s/);
});

test.serial('kubectl delete ns demo --wait=false: Terminating in kubectl get ns, creates refused, pods deleted, then NotFound', async (t) => {
  const k = kubectl(t);
  t.is((await k.run(['create', 'namespace', 'demo'])).code, 0);
  const dep = await k.run(['create', 'deployment', 'web', '--image=nginx', '--replicas=2', '-n', 'demo']);
  t.is(dep.code, 0, dep.stderr);
  const ready = await k.run(['wait', '--for=condition=Ready', 'pod', '-l', 'app=web', '-n', 'demo', '--timeout=60s']);
  t.is(ready.code, 0, ready.stderr);
  // A pod held by a finalizer keeps the namespace Terminating until the test lets it go (C10), so
  // the Terminating checks below do not race the wall clock (serve runs at 20x; under load the
  // namespace used to be gone before `kubectl get ns` ran).
  t.is((await k.run(['run', 'hold', '--image=nginx', '-n', 'demo'])).code, 0);
  const fin = await k.run(['patch', 'pod', 'hold', '-n', 'demo', '--type=merge', '-p', '{"metadata":{"finalizers":["example.com/hold"]}}']);
  t.is(fin.code, 0, fin.stderr);

  const del = await k.run(['delete', 'ns', 'demo', '--wait=false']);
  t.is(del.code, 0, del.stderr);
  t.is(del.stdout.trim(), 'namespace "demo" deleted');
  // The namespace controller waits 5 virtual seconds (namespaceDeletionGracePeriod) before emptying it.
  const get = await k.run(['get', 'ns', 'demo']);
  t.is(get.code, 0, get.stderr);
  const lines = get.stdout.trim().split('\n');
  t.regex(lines[0], /^NAME\s+STATUS\s+AGE$/);
  t.regex(lines[1], /^demo\s+Terminating\s+\d+s$/);
  const late = await k.run(['create', 'deployment', 'late', '--image=nginx', '-n', 'demo']);
  t.is(late.code, 1);
  t.is(late.stderr.trim(), 'error: failed to create deployment: deployments.apps "late" is forbidden: unable to create new content in namespace demo because it is being terminated');

  // The namespace controller deletes the pods; the held one stays (Terminating) and so does the namespace.
  await until('the held pod to be Terminating', async () => (await k.run(['get', 'pod', 'hold', '-n', 'demo', '-o', 'jsonpath={.metadata.deletionTimestamp}'])).stdout.trim() !== '', 30_000);
  t.regex((await k.run(['get', 'ns', 'demo', '--no-headers'])).stdout, /^demo\s+Terminating\s/);
  const release = await k.run(['patch', 'pod', 'hold', '-n', 'demo', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
  t.is(release.code, 0, release.stderr);
  await until('namespace demo to be gone', async () => (await k.run(['get', 'ns', 'demo'])).code === 1, 30_000);
  const gone = await k.run(['get', 'ns', 'demo']);
  t.is(gone.stderr.trim(), 'Error from server (NotFound): namespaces "demo" not found');
  const pods = await k.run(['get', 'pods', '-n', 'demo', '-o', 'name']);
  t.is(pods.stdout.trim(), '', 'the namespace went only after its pods');
});
