/**
 * Stack traces on user mistakes about sizes and addresses (issue #23 item 3):
 * - a cluster of 3,073 nodes failed (`run`, `serve --nodes 4000`, `bench storm --nodes 3100`):
 *   node pod CIDRs were `10.<244 + i/256>.<i%256>.0/24`, so node 3,073 got `10.256.0.0/24` and its
 *   runtime threw. Node CIDRs now come from the cluster CIDR 10.224.0.0/11 as
 *   kube-controller-manager's node IPAM allocates them (8,192 /24 subnets);
 * - `bench storm --nodes 1000000000` ran out of memory after 47 s; sizes are now bounded by the
 *   node CIDRs and by what fits in this machine's memory, exit 2 at once;
 * - `serve --host 999.1.1.1` was looked up as a host name: a stack trace (ENOTFOUND).
 */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCidr, validateRuntimeConfig } from '@podsim/runtime';
import { main } from '../../src/cli.js';
import { CLUSTER_CIDR, MAX_NODE_CIDRS, nodePodCidr } from '../../src/nodeCidrs.js';
import { benchSizeProblem } from '../../src/bench/benchCli.js';
import { servePlan } from '../../src/serve/servePlan.js';
import { stormPlan } from '../../src/bench/stormPlan.js';
import { loadScenarioText } from '../../src/scenario/load.js';
import { compileScenario } from '../../src/scenario/compile.js';
import { ScenarioError, formatIssue } from '../../src/scenario/source.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const nodesScenario = (n: number, tail = '') => ['kind: Scenario', 'cluster:', '  nodes:', ...Array.from({ length: n }, (_, i) => `    - { name: node-${i + 1} }`), 'steps:', ...(tail ? [tail] : ['  - sleep: 1s']), ''].join('\n');

/** Every runtime's config is valid and no two nodes share a pod CIDR. */
function checkRuntimes(t: import('ava').ExecutionContext, actors: ReadonlyArray<{ id: string; config: unknown }>, nodes: number): void {
  const runtimes = actors.filter((a) => a.id.startsWith('runtime/'));
  t.is(runtimes.length, nodes);
  const cidrs = new Set<string>();
  for (const a of runtimes) {
    const errs = validateRuntimeConfig(a.config as never);
    if (errs.length) return t.fail(`${a.id}: ${errs.join('; ')}`);
    cidrs.add((a.config as { podCidr: string }).podCidr);
  }
  t.is(cidrs.size, nodes, 'one pod CIDR per node');
}

test('node pod CIDRs: consecutive /24s of the cluster CIDR 10.224.0.0/11, 8,192 of them', (t) => {
  t.is(CLUSTER_CIDR, '10.224.0.0/11');
  t.is(MAX_NODE_CIDRS, 8192);
  t.is(nodePodCidr(0), '10.224.0.0/24');
  t.is(nodePodCidr(1), '10.224.1.0/24');
  t.is(nodePodCidr(256), '10.225.0.0/24');
  t.is(nodePodCidr(3072), '10.236.0.0/24', 'node 3,073 (was 10.256.0.0/24)');
  t.is(nodePodCidr(8191), '10.255.255.0/24');
  t.truthy(parseCidr(nodePodCidr(8191)));
  t.throws(() => nodePodCidr(8192), { message: /no remaining CIDRs left to allocate in the cluster CIDR 10\.224\.0\.0\/11/ });
});

test('bug: a 3,073-node scenario failed (runtime/node-3073: podCidr "10.256.0.0/24") — now it runs, a pod on node-3073 gets ready', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'podsim-3073-'));
  const file = join(dir, 'n3073.yaml');
  const text = nodesScenario(3073, '  - apply: all\n  - wait: { for: ready, name: last, timeout: 1m }') + 'expect:\n  counts: { podsAtEnd: 1, runningAtEnd: 1 }\n---\napiVersion: v1\nkind: Pod\nmetadata: { name: last }\nspec:\n  nodeName: node-3073\n  containers: [{ name: app, image: nginx }]\n';
  writeFileSync(file, text);
  checkRuntimes(t, compileScenario(loadScenarioText(file, text)).actors, 3073);
  const r = await cli(['run', file, '--engine', 'local', '--quiet']);
  rmSync(dir, { recursive: true, force: true });
  t.is(r.code, 0, r.out + r.err);
  t.regex(r.out, /^expectations: 2\/2 passed; invariants: \d+ checked, 0 violations$/m);
  t.regex(r.out, /^PASS$/m);
});

test('bug: serve --nodes 4000 and bench storm --nodes 3100 built runtimes with invalid pod CIDRs — now each node has its own valid one', (t) => {
  checkRuntimes(t, servePlan({ nodes: 4000, epochUnixSeconds: 1_735_689_600 }).actors, 4000);
  checkRuntimes(t, stormPlan({ nodes: 3100, podsPerNode: 1, containers: 1, seed: 1, placement: 'single' }).actors, 3100);
});

test('more nodes than a scenario may have is a file:line error, not a runtime crash (the 5,000 of Kubernetes v1.22, below the 8,192 pod CIDRs)', (t) => {
  const err = t.throws(() => compileScenario(loadScenarioText('big.yaml', nodesScenario(8193))), { instanceOf: ScenarioError });
  t.regex(err!.issues.map(formatIssue).join('\n'), /^big\.yaml:4:\d+: cluster\.nodes: the cluster has 8193 nodes; podsim runs at most 5000/m);
});

test('bug: bench storm --nodes 1000000000 ran out of memory after 47 s — now exit 2 at once, saying what fits', async (t) => {
  const t0 = performance.now();
  const r = await cli(['bench', 'storm', '--nodes', '1000000000']);
  t.is(r.code, 2, r.out + r.err);
  t.regex(r.err, /podsim bench storm: 1,000,000,000 nodes: at most 8,192/);
  t.notRegex(r.err, /\n\s+at /);
  t.is(r.out, '');
  t.true(performance.now() - t0 < 5_000, 'refused before building anything');
  const pods = await cli(['bench', 'storm', '--nodes', '8000', '--pods-per-node', '100000']);
  t.is(pods.code, 2);
  t.regex(pods.err, /800,000,000 pods would need about [\d.]+ TiB of memory .* at most [\d,]+ pods here/);
  t.is((await cli(['bench', 'scale', '--sizes', '1000,100000000'])).code, 2);
  // The bound is the machine's memory: 10k pods fit in 8 GiB, 200k do not.
  t.is(benchSizeProblem(100, 10_000, 8 * 2 ** 30), undefined);
  t.regex(benchSizeProblem(2000, 200_000, 8 * 2 ** 30) ?? '', /at most 115,448 pods here/);
});

// Issue #19: a 500k-pod size in bench scale. At the default estimate (70 KB per pod) it needs
// about 33.7 GiB and is refused on a 24 GiB machine before anything runs, naming the flag that
// takes a measured figure; at 20 KB per pod (the issue's target) it fits.
test('bench scale --sizes 500k: refused up front at 70 KB per pod on 24 GiB, fits at 20 KB per pod (--estimate-kb-per-pod)', async (t) => {
  const gib24 = 24 * 2 ** 30;
  t.regex(benchSizeProblem(5000, 500_000, gib24) ?? '', /^500,000 pods would need about 33\.7 GiB of memory \(70 KB per pod, docs\/benchmarks\.md; --estimate-kb-per-pod to use a figure you measured\) and this machine has 24\.0 GiB: at most 355,123 pods here$/);
  t.is(benchSizeProblem(5000, 500_000, gib24, 20 * 1024), undefined);
  t.regex(benchSizeProblem(5000, 500_000, gib24, 60 * 1024) ?? '', /\(60 KB per pod, --estimate-kb-per-pod\)/);
  const r = await cli(['bench', 'scale', '--sizes', '10k,500k', '--estimate-kb-per-pod', '1000']);
  t.is(r.code, 2, r.out + r.err);
  t.regex(r.err, /podsim bench scale: --sizes 500,000: 500,000 pods would need about [\d.]+ (GiB|TiB) of memory \(1000 KB per pod, --estimate-kb-per-pod\)/);
  t.is((await cli(['bench', 'scale', '--estimate-kb-per-pod', '0'])).code, 2);
});

test('bug: serve --host 999.1.1.1 was a stack trace (getaddrinfo ENOTFOUND) — now a flag error, exit 2', async (t) => {
  const r = await cli(['serve', '--host', '999.1.1.1']);
  t.is(r.code, 2, r.out + r.err);
  t.regex(r.err, /option '--host <h>' argument '999\.1\.1\.1' is invalid\. not an IPv4 address/);
  t.notRegex(r.err, /\n\s+at |internal error/);
});
