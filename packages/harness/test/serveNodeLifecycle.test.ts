/**
 * The real `kubectl` against `podsim serve` for node loss (issue #15; spec node-lifecycle §1,
 * §2.2, §5.5): the kubelets' Leases in kube-node-lease, a powered-off node shown `NotReady` with
 * the unreachable taints and its Lease in `kubectl describe node`, and `kubectl taint …
 * :NoExecute` evicting a pod that does not tolerate the taint. Fresh discovery cache per test.
 * Without a kubectl on PATH (or in $KUBECTL) these tests fail: .ci/run installs one.
 */
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { servePlan } from '../src/serve/servePlan.js';
import { writeKubeconfig } from '../src/serve/kubeconfig.js';
import { kubectlClient, until } from './support/kubectl.js';

/** Virtual seconds per wall second: node-2 goes NotReady ≈ 45 s virtual after the start (≈ 1 s wall). */
const SPEED = 40;

let dir = '';
let server: RunningServer;
let kubeconfig: string;

const kubectl = (t: ExecutionContext) => kubectlClient(t, kubeconfig, dir);

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'podsim-nodelife-'));
  const scenario = join(dir, 'cluster.yaml');
  writeFileSync(
    scenario,
    ['kind: Scenario', 'cluster:', '  seed: 1', '  nodes: [{name: node-1}, {name: node-2}]', 'steps:', '  - sleep: 1s', 'faults:', '  - { at: 5s, kind: nodeDown, node: node-2 }', ''].join('\n'),
  );
  server = await startServer(servePlan({ scenario, epochUnixSeconds: Math.floor(Date.now() / 1000) }), { speed: SPEED });
  kubeconfig = writeKubeconfig(server.url, join(dir, 'kubeconfig'));
});

test.after.always(async () => {
  await server?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

test.serial('kubectl get leases -n kube-node-lease lists one Lease per kubelet, held by its node', async (t) => {
  const k = kubectl(t);
  const r = await k.run(['get', 'leases', '-n', 'kube-node-lease']);
  t.is(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  t.regex(lines[0], /^NAME\s+HOLDER\s+AGE$/);
  t.regex(r.stdout, /^node-1\s+node-1\s+\S+$/m);
  t.regex(r.stdout, /^node-2\s+node-2\s+\S+$/m);
});

test.serial('a powered-off node: kubectl get nodes shows NotReady, describe node shows the unreachable taints and its Lease', async (t) => {
  const k = kubectl(t);
  await until(
    'node-2 NotReady with the NoExecute taint',
    async () => {
      const r = await k.run(['get', 'node', 'node-2', '-o', 'jsonpath={.spec.taints[*].effect}']);
      return r.stdout.includes('NoExecute');
    },
    60_000,
  );
  const nodes = await k.run(['get', 'nodes', '--no-headers']);
  t.regex(nodes.stdout, /^node-1\s+Ready\s/m);
  t.regex(nodes.stdout, /^node-2\s+NotReady\s/m);
  const d = await k.run(['describe', 'node', 'node-2']);
  t.is(d.code, 0, d.stderr);
  t.regex(d.stdout, /Taints:\s+node\.kubernetes\.io\/unreachable:NoExecute\n\s+node\.kubernetes\.io\/unreachable:NoSchedule/);
  t.regex(d.stdout, /Lease:\s*\n\s+HolderIdentity:\s+node-2/);
  t.regex(d.stdout, /Ready\s+Unknown\s.*NodeStatusUnknown\s+Kubelet stopped posting node status\./);
});

test.serial('kubectl taint nodes node-1 maint=true:NoExecute evicts a pod that does not tolerate it; a tolerating one stays', async (t) => {
  const k = kubectl(t);
  const manifest = join(dir, 'pods.yaml');
  const pod = (name: string, tolerations: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata: { name: ${name} }\nspec:\n  nodeName: node-1\n  terminationGracePeriodSeconds: 5\n${tolerations}  containers: [{ name: app, image: nginx }]\n`;
  writeFileSync(manifest, [pod('plain', ''), pod('tolerant', '  tolerations: [{ key: maint, operator: Exists, effect: NoExecute }]\n')].join('---\n'));
  const applied = await k.run(['apply', '-f', manifest]);
  t.is(applied.code, 0, applied.stderr);
  const ready = await k.run(['wait', '--for=condition=Ready', 'pod/plain', 'pod/tolerant', '--timeout=60s']);
  t.is(ready.code, 0, ready.stderr);
  const taint = await k.run(['taint', 'nodes', 'node-1', 'maint=true:NoExecute']);
  t.is(taint.code, 0, taint.stderr);
  t.is(taint.stdout.trim(), 'node/node-1 tainted');
  await until(
    'plain gone',
    async () => (await k.run(['get', 'pod', 'plain', '--ignore-not-found', '-o', 'name'])).stdout.trim() === '',
    60_000,
  );
  const left = await k.run(['get', 'pods', '-o', 'name']);
  t.is(left.stdout.trim(), 'pod/tolerant');
  const ev = await k.run(['get', 'events', '--field-selector', 'reason=TaintManagerEviction', '-o', 'jsonpath={range .items[*]}{.message}{"\\n"}{end}']);
  t.regex(ev.stdout, /Marking for deletion Pod default\/plain/);
});
