/**
 * The real `kubectl` against `podsim serve` (spec/kubectl-rest.md): apply the minio Deployment of
 * the reference case, get / watch / delete / scale / wait / describe it, and read kubectl's own
 * output — including the (READY, STATUS) sequence of the reference `kubectl get pods -w` trace
 * (README, examples/minio-recreate.yaml). Each test uses a fresh discovery cache (KUBECACHEDIR).
 * Without a kubectl on PATH (or in $KUBECTL) these tests fail: .ci/run installs one.
 */
import test, { type ExecutionContext } from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { servePlan } from '../src/serve/servePlan.js';
import { writeKubeconfig } from '../src/serve/kubeconfig.js';
import { MINIO_REFERENCE_ROWS } from './scenarios/helpers.js';
import { KUBECTL, kubectlClient, until, type KubectlRun } from './support/kubectl.js';

const SPEED = 50;

let dir = '';
let server: RunningServer;
let kubeconfig: string;
let minioFile: string;
/** kubectl before 1.22 (Debian's kubernetes-client 1.20) validates against /openapi/v2 only. */
let validateFlags: string[] = [];
let legacyKubectl = false;

/** A kubectl bound to a fresh cache directory. */
const client = (t: ExecutionContext) => kubectlClient(t, kubeconfig, dir);

/** Pod names in the default namespace, via `kubectl get pods -o name`. */
async function podNames(k: ReturnType<typeof client>, selector = 'app=minio'): Promise<string[]> {
  const r = await k.run(['get', 'pods', '-l', selector, '-o', 'name']);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => l.replace(/^pod\//, ''));
}

test.before(async () => {
  const probe = spawnSync(KUBECTL, ['version', '--client', '-o', 'json'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `kubectl is required for these tests and could not be run (${KUBECTL}: ${probe.error?.message ?? probe.stderr}). ` +
        'Install one (Debian: apt-get install kubernetes-client; .ci/run does this) or point $KUBECTL at it.',
    );
  }
  const client = (JSON.parse(probe.stdout) as { clientVersion: { minor: string; gitVersion: string } }).clientVersion;
  // The gcloud dispatcher runs kubectl 1.32 (our /version says minor 32); a real kubectl older
  // than 1.22 has no OpenAPI v3 support, so it needs --validate=false for create/apply.
  legacyKubectl = !client.gitVersion.includes('dispatcher') && Number.parseInt(client.minor, 10) < 22;
  if (legacyKubectl) validateFlags = ['--validate=false'];

  dir = mkdtempSync(join(tmpdir(), 'podsim-kubectl-'));
  // The reference case's cluster: one node whose registry takes 17 s per pull of minio.
  const scenario = join(dir, 'cluster.yaml');
  writeFileSync(
    scenario,
    [
      'kind: Scenario',
      'cluster:',
      '  seed: 1',
      '  nodes: [{name: node-1}]',
      'steps:',
      '  - fault: { kind: runtimeDelay, node: node-1, call: PullImage, delay: 17s }',
      '  - sleep: 1s',
      '',
    ].join('\n'),
  );
  // The Deployment of examples/minio-recreate.yaml, as a plain manifest.
  const docs = parseAllDocuments(readFileSync('examples/minio-recreate.yaml', 'utf8'));
  const deployment = docs.map((d) => d.toJS() as { kind?: string }).find((d) => d.kind === 'Deployment');
  minioFile = join(dir, 'minio.yaml');
  writeFileSync(minioFile, JSON.stringify(deployment, null, 2));

  server = await startServer(servePlan({ scenario, epochUnixSeconds: Math.floor(Date.now() / 1000) }), { speed: SPEED });
  kubeconfig = writeKubeconfig(server.url, join(dir, 'kubeconfig'));
});

test.after.always(async () => {
  await server?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

test.serial('kubectl apply -f the minio Deployment; get pods, -o wide, -o yaml, -o json', async (t) => {
  const k = client(t);
  const applied = await k.run(['apply', '-f', minioFile, ...validateFlags]);
  t.is(applied.code, 0, applied.stderr);
  t.is(applied.stdout.trim(), 'deployment.apps/minio created');
  // Pull (17 s) + readiness probe (10 s initial delay): ~0.6 s of wall time at 50x.
  const ready = await k.run(['wait', '--for=condition=Ready', 'pod', '-l', 'app=minio', '--timeout=60s']);
  t.is(ready.code, 0, ready.stderr);
  t.regex(ready.stdout, /^pod\/minio-[a-z0-9]+-[a-z0-9]{5} condition met$/m);

  const get = await k.run(['get', 'pods']);
  t.is(get.code, 0, get.stderr);
  const [header, row] = get.stdout.trim().split('\n');
  t.deepEqual(header.split(/\s+/), ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
  t.deepEqual(row.split(/\s+/).slice(1, 4), ['1/1', 'Running', '0']);

  const wide = await k.run(['get', 'pods', '-o', 'wide']);
  const [wh, wr] = wide.stdout.trim().split('\n');
  t.deepEqual(wh.split(/\s{2,}/), ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES']);
  // node-1's pod CIDR is the first /24 of the cluster CIDR 10.224.0.0/11 (src/nodeCidrs.ts).
  t.regex(wr, /\s10\.224\.0\.\d+\s+node-1\s+<none>\s+<none>$/);

  const yaml = await k.run(['get', 'pods', '-o', 'yaml']);
  const list = parseYaml(yaml.stdout) as { kind: string; items: { kind: string; metadata: { labels: Record<string, string> }; status: { phase: string } }[] };
  t.is(list.kind, 'List');
  t.is(list.items.length, 1);
  t.like(list.items[0], { kind: 'Pod', metadata: { labels: { app: 'minio' } }, status: { phase: 'Running' } });

  const json = await k.run(['get', 'deployment', 'minio', '-o', 'json']);
  const d = JSON.parse(json.stdout) as { kind: string; spec: { replicas: number; strategy: { type: string } }; status: { readyReplicas: number } };
  t.like(d, { kind: 'Deployment', spec: { replicas: 1, strategy: { type: 'Recreate' } }, status: { readyReplicas: 1 } });

  // Applying the same manifest again changes nothing (strategic merge patch round trip).
  const again = await k.run(['apply', '-f', minioFile, ...validateFlags]);
  t.is(again.stdout.trim(), 'deployment.apps/minio unchanged', again.stderr);
  // Server-side apply of the same manifest (PATCH application/apply-patch+yaml).
  const ssa = await k.run(['apply', '--server-side', '-f', minioFile, ...validateFlags]);
  t.is(ssa.stdout.trim(), 'deployment.apps/minio serverside-applied', ssa.stderr);
});

test.serial('kubectl get pods -w while kubectl delete pod runs prints the reference (READY, STATUS) sequence', async (t) => {
  const k = client(t);
  const [old] = await podNames(k);
  t.truthy(old);
  const watch = k.background(['get', 'pods', '-w']);
  try {
    await until('the watch to print the pod', () => watch.out().includes(old));
    const del = await k.run(['delete', 'pod', old]);
    t.is(del.code, 0, del.stderr);
    t.is(del.stdout.trim(), `pod "${old}" deleted`);
    // The replacement becomes ready after its 17 s pull and the 10 s readiness delay.
    await until('the replacement to be ready', () => /\s1\/1\s+Running/.test(watch.out().split('\n').filter((l) => !l.startsWith(old)).join('\n')));
  } finally {
    watch.proc.kill('SIGTERM');
  }
  const lines = watch.out().trim().split('\n');
  t.deepEqual(lines[0].split(/\s+/).slice(0, 5), ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
  const rows = lines.slice(1).map((l) => l.trim().split(/\s+/));
  const rows3 = rows.map(([name, ready, status]) => [name === old ? 'old' : 'new', ready, status]);
  t.deepEqual(rows3, MINIO_REFERENCE_ROWS, lines.join('\n'));
});

test.serial('kubectl scale deployment minio --replicas=3', async (t) => {
  const k = client(t);
  const r = await k.run(['scale', 'deployment', 'minio', '--replicas=3']);
  t.is(r.code, 0, r.stderr);
  t.is(r.stdout.trim(), 'deployment.apps/minio scaled');
  const rollout = await k.run(['rollout', 'status', 'deployment/minio', '--timeout=60s']);
  t.is(rollout.code, 0, rollout.stderr);
  t.regex(rollout.stdout, /deployment "minio" successfully rolled out/);
  const get = await k.run(['get', 'deploy', 'minio']);
  t.regex(get.stdout, /^minio\s+3\/3\s+3\s+3\s/m);
  t.is((await podNames(k)).length, 3);
});

test.serial('kubectl delete --grace-period=5, --now, --force --grace-period=0', async (t) => {
  const k = client(t);
  const [a, b, c] = await podNames(k);
  t.truthy(c, 'three pods from the scale test');

  // --grace-period=5: the pod turns Terminating with deletionGracePeriodSeconds 5 (seen by a
  // `get -w -o json` running alongside), and the default --wait returns once it is gone.
  const watch = k.background(['get', 'pod', a, '-w', '-o', 'json']);
  let graceful: KubectlRun;
  try {
    await until('the watch to print the pod', () => watch.out().includes(`"name": "${a}"`));
    graceful = await k.run(['delete', 'pod', a, '--grace-period=5']);
  } finally {
    watch.proc.kill('SIGTERM');
  }
  t.is(graceful.code, 0, graceful.stderr);
  t.is(graceful.stdout.trim(), `pod "${a}" deleted`);
  t.regex(watch.out(), /"deletionGracePeriodSeconds": 5,/);
  t.regex((await k.run(['get', 'pod', a])).stderr, /Error from server \(NotFound\): pods "[^"]+" not found/);

  // --now is grace 1.
  const now = await k.run(['delete', 'pod', b, '--now']);
  t.is(now.code, 0, now.stderr);
  t.is(now.stdout.trim(), `pod "${b}" deleted`);
  t.is((await k.run(['get', 'pod', b])).code, 1);

  // --force --grace-period=0: the warning, "force deleted", gone at once.
  const force = await k.run(['delete', 'pod', c, '--force', '--grace-period=0']);
  t.is(force.code, 0, force.stderr);
  t.regex(force.stderr, /Immediate deletion does not wait for confirmation that the running resource has been terminated/i);
  t.is(force.stdout.trim(), `pod "${c}" force deleted`);
  t.regex((await k.run(['get', 'pod', c])).stderr, /NotFound/);

  // The ReplicaSet replaces all three.
  await until('3 replacement pods', async () => (await podNames(k)).filter((n) => ![a, b, c].includes(n)).length === 3);
});

test.serial('kubectl wait --for=delete returns when the pod is gone (a pod that ignores SIGTERM, grace 60 s)', async (t) => {
  const k = client(t);
  const file = join(dir, 'stubborn.yaml');
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'stubborn', labels: { app: 'stubborn' }, annotations: { 'podsim.dev/on-sigterm': 'ignore' } },
      spec: { terminationGracePeriodSeconds: 60, containers: [{ name: 'c', image: 'busybox:1.36', command: ['sleep', '3600'] }] },
    }),
  );
  t.is((await k.run(['apply', '-f', file, ...validateFlags])).stdout.trim(), 'pod/stubborn created');
  t.is((await k.run(['wait', '--for=condition=Ready', 'pod/stubborn', '--timeout=60s'])).code, 0);
  const del = await k.run(['delete', 'pod', 'stubborn', '--wait=false']);
  t.is(del.stdout.trim(), 'pod "stubborn" deleted', del.stderr);
  // 60 virtual seconds (SIGKILL at the end of the grace period) are 1.2 s of wall time at 50x.
  const get = await k.run(['get', 'pod', 'stubborn']);
  t.regex(get.stdout, /^stubborn\s+1\/1\s+Terminating\s/m);
  const waited = await k.run(['wait', '--for=delete', 'pod/stubborn', '--timeout=30s']);
  t.is(waited.code, 0, waited.stderr);
  t.is(waited.stdout.trim(), 'pod/stubborn condition met');
  // For a pod that does not exist, wait succeeds at once and prints nothing (kubectl ≥ 1.22;
  // 1.20 reports "no matching resources found" instead).
  const none = await k.run(['wait', '--for=delete', 'pod/stubborn', '--timeout=5s']);
  if (legacyKubectl) t.regex(none.stderr, /no matching resources found/);
  else {
    t.is(none.code, 0, none.stderr);
    t.is(none.stdout, '');
  }
});

test.serial('kubectl describe pod shows the pod, its node and its kubelet events', async (t) => {
  const k = client(t);
  const [p] = await podNames(k);
  const r = await k.run(['describe', 'pod', p]);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, new RegExp(`^Name:\\s+${p}$`, 'm'));
  t.regex(r.stdout, /^Namespace:\s+default$/m);
  t.regex(r.stdout, /^Node:\s+node-1\/10\.0\.0\.1$/m);
  t.regex(r.stdout, /^Controlled By:\s+ReplicaSet\/minio-[a-z0-9]+$/m);
  t.regex(r.stdout, /^Events:/m);
  t.regex(r.stdout, /Normal\s+Pulling\s+.*kubelet\s+Pulling image "minio\/minio:latest"/);
});

test.serial('errors print as kubectl prints them: 404 NotFound, 409 AlreadyExists, 409 Conflict', async (t) => {
  const k = client(t);
  const nf = await k.run(['get', 'pod', 'nope']);
  t.is(nf.code, 1);
  t.is(nf.stderr.trim(), 'Error from server (NotFound): pods "nope" not found');
  const del = await k.run(['delete', 'pod', 'nope']);
  t.is(del.code, 1);
  t.is(del.stderr.trim(), 'Error from server (NotFound): pods "nope" not found');
  const dup = await k.run(['create', '-f', minioFile, ...validateFlags]);
  t.is(dup.code, 1);
  t.is(dup.stderr.trim(), `Error from server (AlreadyExists): error when creating "${minioFile}": deployments.apps "minio" already exists`);
  // kubectl replace with a stale resourceVersion (someone labelled the pod since): 409 Conflict.
  const [p] = await podNames(k);
  const file = join(dir, 'stale.json');
  writeFileSync(file, (await k.run(['get', 'pod', p, '-o', 'json'])).stdout);
  t.is((await k.run(['label', 'pod', p, 'touched=yes'])).stdout.trim(), `pod/${p} labeled`);
  const stale = await k.run(['replace', '-f', file, ...validateFlags]);
  t.is(stale.code, 1);
  t.is(
    stale.stderr.trim(),
    `Error from server (Conflict): error when replacing "${file}": Operation cannot be fulfilled on pods "${p}": the object has been modified; please apply your changes to the latest version and try again`,
  );
  const unknown = await k.run(['get', 'foos']);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /the server doesn't have a resource type "foos"/);
});

test.serial('podsim serve (the CLI) prints the kubeconfig, serves kubectl, and stops cleanly on SIGTERM', async (t) => {
  const kc = join(dir, 'cli-kubeconfig');
  const p = spawn(process.execPath, ['packages/harness/dist/src/cli.js', 'serve', '--nodes', '1', '--speed', '20', '--kubeconfig', kc], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  p.stdout.on('data', (c: Buffer) => (out += c.toString()));
  p.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => p.on('close', resolve));
  try {
    await until('the server to be ready', () => out.includes('Ctrl-C stops the server.'), 60_000);
    t.true(out.includes(`export KUBECONFIG=${kc}`), out);
    t.regex(out, /listening on http:\/\/127\.0\.0\.1:\d+/);
    const cache = mkdtempSync(join(dir, 'cache-'));
    const nodes = spawnSync(KUBECTL, ['get', 'nodes'], { env: { ...process.env, KUBECONFIG: kc, KUBECACHEDIR: cache, HOME: cache }, encoding: 'utf8', timeout: 30_000 });
    t.is(nodes.status, 0, nodes.stderr);
    t.regex(nodes.stdout, /^node-1\s+Ready\s+<none>\s+\S+\s+v1\.22\.8$/m);
  } finally {
    p.kill('SIGTERM');
  }
  t.is(await exited, 0, err);
  t.regex(out, /podsim serve: stopped \(SIGTERM\)/);
});
