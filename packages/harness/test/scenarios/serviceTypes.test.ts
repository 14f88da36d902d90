/**
 * Service types and affinity end to end (issue #18): a rolling update behind an
 * `externalTrafficPolicy: Local` NodePort Service seen through one node's node port (requests
 * there are dropped exactly while that node's kube-proxy has no local Ready endpoint; the other
 * node and an ETP Cluster Service lose none), `sessionAffinity: ClientIP` (each client keeps
 * one pod until that pod leaves the rules), and the scenario errors for misused fields.
 */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT_BAD_INPUT, main } from '../../src/cli.js';
import { proxyViews } from '../../src/traffic/proxyViews.js';
import { runText, S, stepTimes, why } from './helpers.js';

/** One replica of the app pinned to `node` (label part=`part`); `strategy` is spliced in after `replicas`. */
const pinned = (part: string, node: string, strategy: string) => `---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web-${part} }
spec:
  replicas: 1${strategy}
  selector: { matchLabels: { app: web, part: ${part} } }
  template:
    metadata:
      labels: { app: web, part: ${part} }
      annotations: { podsim.dev/startup: 3s, podsim.dev/on-sigterm: "exit:100ms:0", podsim.dev/service-time: 5ms }
    spec:
      nodeName: ${node}
      containers:
        - name: app
          image: example/web:1
          readinessProbe: { httpGet: { port: 8080 }, periodSeconds: 1 }
`;

const ETP_LOCAL = `kind: Scenario
cluster:
  seed: 3
  nodes: [{ name: node-a }, { name: node-b }]
traffic:
  - { id: via-a, service: web, nodePort: true, toNodes: [node-a], rate: 50, since: roll }
  - { id: via-b, service: web, nodePort: true, toNodes: [node-b], rate: 50, since: roll }
  - { id: cluster-a, service: web-cluster, nodePort: true, toNodes: [node-a], rate: 50, since: roll }
steps:
  - apply: all
  - wait: { for: ready, selector: app=web, count: 2, timeout: 2m }
  - sleep: 5s
  - id: roll
    setImage: { name: web-a, container: app, image: example/web:2 }
  - sleep: 40s
expect:
  invariants: clean
${pinned('a', 'node-a', '\n  strategy: { type: RollingUpdate, rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } }')}${pinned('b', 'node-b', '')}---
apiVersion: v1
kind: Service
metadata: { name: web }
spec:
  type: NodePort
  externalTrafficPolicy: Local
  selector: { app: web }
  ports: [{ port: 80, targetPort: 8080 }]
---
apiVersion: v1
kind: Service
metadata: { name: web-cluster }
spec:
  type: NodePort
  selector: { app: web }
  ports: [{ port: 80, targetPort: 8080 }]
`;

test('ETP Local rolling update through node-a\'s node port: drops (timeouts) only while node-a has no local Ready endpoint; node-b and ETP Cluster lose nothing; same digest on nodes:2', async (t) => {
  t.timeout(180_000);
  const { report, model } = await runText('etp-local', ETP_LOCAL);
  t.true(report.ok, why(report));
  const [viaA, viaB, clusterA] = report.traffic!.sources;
  t.deepEqual(Object.keys(viaA.byCause), ['DROP_NO_LOCAL'], JSON.stringify(viaA.byCause));
  t.deepEqual(viaA.byNode, { 'node-a': viaA.failed });
  t.is(viaB.failed, 0, JSON.stringify(viaB.byCause));
  t.is(clusterA.byCause.DROP_NO_LOCAL, undefined, JSON.stringify(clusterA.byCause));
  // node-a's XLB chain: empty from the old pod's removal until the new pod joins.
  const points = proxyViews(model.records).get('node-a')!.get('default/web')!;
  const roll = stepTimes(model, 'roll').start;
  const empty = points.find((p) => p.t > roll && p.local?.length === 0)!;
  const back = points.find((p) => p.t > empty.t && (p.local?.length ?? 0) > 0)!;
  t.truthy(empty && back);
  const gap = (back.t - empty.t) / S;
  t.true(gap > 2, `gap ${gap} s (the new pod starts in 3 s)`);
  for (const s of Object.keys(viaA.bySecond).map(Number)) t.true(s >= Math.floor(empty.t / S) && s <= Math.floor(back.t / S), `a failure in second ${s}, outside [${empty.t / S}, ${back.t / S}]`);
  // 50 req/s for the gap, within Poisson noise.
  const expected = 50 * gap;
  t.true(Math.abs(viaA.failed - expected) <= 4 * Math.sqrt(expected) + 3, `${viaA.failed} dropped, ${expected.toFixed(1)} expected`);
  const threads = await runText('etp-local', ETP_LOCAL, { placement: 'nodes:2', engine: 'threads' });
  t.is(threads.report.traceDigest, report.traceDigest);
  t.deepEqual(threads.report.traffic, report.traffic);
});

const AFFINITY = `kind: Scenario
cluster:
  seed: 5
  nodes: [{ name: node-1 }, { name: node-2 }]
traffic:
  # From 2 s after all three are Ready (every node synced them): clients that start while one pod is
  # Ready all stick to that one, as the recent tables would.
  - { id: sticky, service: web, fromNodes: [node-1], clients: 12, rate: 60, since: warm, start: 2s }
  - { id: spread, service: web-plain, fromNodes: [node-1], clients: 12, rate: 60, since: warm, start: 2s }
steps:
  - apply: all
  - wait: { for: ready, selector: app=web, count: 3, timeout: 2m }
  - id: warm
    sleep: 5s
  - id: del
    delete: { kind: pod, selector: app=web, count: 1 }
  - sleep: 30s
expect:
  invariants: clean
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 3
  selector: { matchLabels: { app: web } }
  template:
    metadata:
      labels: { app: web }
      annotations: { podsim.dev/startup: 2s, podsim.dev/on-sigterm: "exit:100ms:0", podsim.dev/service-time: 5ms }
    spec:
      containers:
        - name: app
          image: example/web:1
          readinessProbe: { httpGet: { port: 8080 }, periodSeconds: 1 }
---
apiVersion: v1
kind: Service
metadata: { name: web }
spec:
  sessionAffinity: ClientIP
  selector: { app: web }
  ports: [{ port: 80, targetPort: 8080 }]
---
apiVersion: v1
kind: Service
metadata: { name: web-plain }
spec:
  selector: { app: web }
  ports: [{ port: 80, targetPort: 8080 }]
`;

test('ClientIP affinity: each client is served by one pod until that pod is deleted, then by one other; without affinity every client sees every pod', async (t) => {
  t.timeout(180_000);
  const { report, model } = await runText('affinity', AFFINITY);
  t.true(report.ok, why(report));
  const [sticky, spread] = report.traffic!.sources;
  const deleted = model.writes.find((w) => w.resource === 'pods' && w.event === 'MODIFIED' && w.t >= stepTimes(model, 'del').start)!.name;
  const per = Object.entries(sticky.servedByClient!);
  t.is(per.length, 12);
  const moved = per.filter(([, m]) => Object.keys(m).length > 1);
  t.true(moved.length > 0, `no client was on ${deleted}: ${JSON.stringify(sticky.servedByClient)}`);
  for (const [c, m] of per) {
    const pods = Object.keys(m);
    if (pods.length > 1) t.true(pods.length === 2 && pods.includes(deleted), `${c}: ${JSON.stringify(m)}`);
    else t.not(pods[0], undefined);
  }
  // The clients that never touched the deleted pod stayed on one pod for all 40 s.
  t.true(per.filter(([, m]) => !(deleted in m)).every(([, m]) => Object.keys(m).length === 1));
  t.true(Object.values(spread.servedByClient!).every((m) => Object.keys(m).length >= 3), JSON.stringify(spread.servedByClient));
});

const dir = mkdtempSync(join(tmpdir(), 'podsim-svctypes-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

async function validate(name: string, text: string) {
  const f = join(dir, name);
  writeFileSync(f, text);
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['validate', f], { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, err: err.join('\n') };
}

test('bad input: ETP Local on a ClusterIP Service is the apiserver\'s 422 text at its line; nodePort traffic to a ClusterIP Service, toNodes without nodePort and fromNodes with it name the field', async (t) => {
  const clusterIP = ETP_LOCAL.replace('  type: NodePort\n  externalTrafficPolicy: Local\n', '  externalTrafficPolicy: Local\n');
  const a = await validate('etp.yaml', clusterIP);
  t.is(a.code, EXIT_BAD_INPUT);
  t.regex(a.err, /etp\.yaml:\d+:\d+: Service\/web spec\.externalTrafficPolicy: Invalid value: "Local": ExternalTrafficPolicy can only be set on NodePort and LoadBalancer service/);
  const plain = ETP_LOCAL.replace('  type: NodePort\n  externalTrafficPolicy: Local\n', '');
  const b = await validate('np.yaml', plain);
  t.is(b.code, EXIT_BAD_INPUT);
  t.regex(b.err, /np\.yaml:6:\d+: traffic\[0\]\.nodePort: Service default\/web is type ClusterIP: it has no node port/);
  t.notRegex(b.err, /traffic\[2\]/, 'web-cluster is a NodePort Service');
  const c = await validate('to.yaml', ETP_LOCAL.replace('{ id: via-a, service: web, nodePort: true,', '{ id: via-a, service: web,'));
  t.is(c.code, EXIT_BAD_INPUT);
  t.regex(c.err, /to\.yaml:6:\d+: traffic\[0\]\.toNodes: toNodes needs nodePort: true/);
  const d = await validate('from.yaml', ETP_LOCAL.replace('toNodes: [node-a], rate: 50, since: roll }', 'toNodes: [node-a], fromNodes: [node-b], rate: 50, since: roll }'));
  t.is(d.code, EXIT_BAD_INPUT);
  t.regex(d.err, /traffic\[0\]\.fromNodes: fromNodes is for clients inside the cluster/);
  const e = await validate('node.yaml', ETP_LOCAL.replace('toNodes: [node-a]', 'toNodes: [node-c]'));
  t.is(e.code, EXIT_BAD_INPUT);
  t.regex(e.err, /traffic\[0\]\.toNodes\[0\]: no node "node-c"/);
});

test('bad input: two Services asking for one node port, allocateLoadBalancerNodePorts on a NodePort Service, a node port twice in one Service and a node listed twice in toNodes are errors at their lines, before the run', async (t) => {
  // The second Service asks for the node port the first holds: at run time its create is a 422.
  const clash = ETP_LOCAL.replace('  externalTrafficPolicy: Local\n  selector: { app: web }\n  ports: [{ port: 80, targetPort: 8080 }]', '  externalTrafficPolicy: Local\n  selector: { app: web }\n  ports: [{ port: 80, targetPort: 8080, nodePort: 30080 }]')
    .replace('metadata: { name: web-cluster }\nspec:\n  type: NodePort\n  selector: { app: web }\n  ports: [{ port: 80, targetPort: 8080 }]', 'metadata: { name: web-cluster }\nspec:\n  type: NodePort\n  selector: { app: web }\n  ports: [{ port: 80, targetPort: 8080, nodePort: 30080 }]');
  t.not(clash, ETP_LOCAL);
  const a = await validate('clash.yaml', clash);
  t.is(a.code, EXIT_BAD_INPUT);
  t.regex(a.err, /clash\.yaml:\d+:\d+: Service\/web-cluster spec\.ports\[0\]\.nodePort: Invalid value: 30080: provided port is already allocated \(Service\/web at \S*clash\.yaml:\d+ asks for it too/);
  t.notRegex(a.err, /Service\/web spec\.ports/, 'the first Service to ask for the port gets it');
  // Different node ports: no clash.
  const apartText = clash.replace(/nodePort: 30080 \}\]\n$/, 'nodePort: 30081 }]\n');
  t.not(apartText, clash);
  const apart = await validate('apart.yaml', apartText);
  t.is(apart.code, 0, apart.err);

  const alb = await validate('alb.yaml', ETP_LOCAL.replace('  type: NodePort\n  externalTrafficPolicy: Local\n', '  type: NodePort\n  allocateLoadBalancerNodePorts: false\n  externalTrafficPolicy: Local\n'));
  t.is(alb.code, EXIT_BAD_INPUT);
  t.regex(alb.err, /alb\.yaml:\d+:\d+: Service\/web spec\.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is 'LoadBalancer'/);

  const twice = await validate('twice.yaml', ETP_LOCAL.replace('  externalTrafficPolicy: Local\n  selector: { app: web }\n  ports: [{ port: 80, targetPort: 8080 }]', '  externalTrafficPolicy: Local\n  selector: { app: web }\n  ports: [{ name: a, port: 80, targetPort: 8080, nodePort: 30090 }, { name: b, port: 81, targetPort: 8080, nodePort: 30090 }]'));
  t.is(twice.code, EXIT_BAD_INPUT);
  t.regex(twice.err, /twice\.yaml:\d+:\d+: Service\/web spec\.ports\[1\]\.nodePort: Duplicate value: 30090/);

  const dup = await validate('dup.yaml', ETP_LOCAL.replace('toNodes: [node-a]', 'toNodes: [node-a, node-a]'));
  t.is(dup.code, EXIT_BAD_INPUT);
  t.regex(dup.err, /dup\.yaml:6:\d+: traffic\[0\]\.toNodes\[1\]: node "node-a" is listed twice \(also toNodes\[0\]\)/);
});
