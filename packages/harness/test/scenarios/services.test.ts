/**
 * Services end to end (issue #18): case E06 (/work/shared/cases/E06-…) — a readiness failure
 * during termination is not posted in 1.22.8, so the pod leaves Endpoints at DELETE, stays in its
 * EndpointSlice as ready=false, serving=true, terminating=true until its container exits, and
 * every node's kube-proxy drops it at DELETE; and the spec §12 checkers (trafficInvariants.ts)
 * shown able to fail on traces that break them.
 */
import test from 'ava';
import type { TraceRecord } from '@podsim/api';
import { TraceModel } from '../../src/checkers/model.js';
import { TRAFFIC_INVARIANTS } from '../../src/checkers/trafficInvariants.js';
import { proxyViews } from '../../src/traffic/proxyViews.js';
import { runText, S, stepTimes, why } from './helpers.js';

const E06 = `kind: Scenario
cluster:
  nodes: [{ name: node-a }, { name: node-b }]
steps:
  - apply: all
  - wait: { for: ready, name: drainer, timeout: 1m }
  - sleep: 5s
  - id: del
    delete: { kind: pod, name: drainer, wait: false }
  - sleep: 40s
expect:
  invariants: clean
---
apiVersion: v1
kind: Pod
metadata:
  name: drainer
  labels: { app: s }
  annotations: { podsim.dev/on-sigterm: "exit:20s:0", podsim.dev/ready-after-sigterm: "false" }
spec:
  terminationGracePeriodSeconds: 30
  containers:
    - name: app
      image: drainer:1
      readinessProbe: { exec: { command: [cat, /tmp/ready] }, periodSeconds: 2, failureThreshold: 1 }
---
apiVersion: v1
kind: Service
metadata: { name: s }
spec:
  selector: { app: s }
  ports: [{ port: 80 }]
`;

type SliceEp = [string, boolean | null, boolean | null, boolean | null];

test('E06: Endpoints drops the pod at DELETE; its slice keeps ready=false serving=true terminating=true until the exit; kube-proxy drops it everywhere within ε_p', async (t) => {
  const { report, model } = await runText('e06', E06);
  t.true(report.ok, why(report));
  const del = stepTimes(model, 'del').start;
  const writes = model.records.filter((r) => r.kind === 'api.write');
  const uid = model.writes.find((w) => w.resource === 'pods' && w.name === 'drainer')!.uid;
  const exit = model.processesOf(uid)[0].exitedAt!;
  t.true(exit > del + 19 * S, `exit ${exit / S}`);
  // Endpoints: the first write after DELETE no longer lists the pod, within ε_c = 0.3 s.
  const ep = writes.filter((r) => (r.data as { resource: string }).resource === 'endpoints' && r.t >= del);
  t.true(ep.length > 0 && ep[0].t - del <= 0.3 * S);
  t.deepEqual([(ep[0].data as { addresses: string[] }).addresses, (ep[0].data as { notReadyAddresses: string[] }).notReadyAddresses], [[], []]);
  // EndpointSlice: terminating conditions from DELETE until the kubelet's post-exit status PATCH.
  const slices = writes.filter((r) => (r.data as { resource: string }).resource === 'endpointslices' && r.t >= del);
  const conds = slices.map((r) => ({ t: r.t, ep: ((r.data as { endpoints: SliceEp[] }).endpoints ?? []).find((e) => e[0] === uid) }));
  t.true(conds[0].t - del <= 0.3 * S);
  t.deepEqual(conds[0].ep?.slice(1), [false, true, true]);
  const servingOff = conds.find((c) => c.ep && c.ep[2] === false);
  t.truthy(servingOff, 'serving flips false once the container exited');
  t.true(servingOff!.t >= exit, `serving=false at ${servingOff!.t / S} s, before the exit at ${exit / S} s: a readiness failure was posted while terminating`);
  t.is(conds.at(-1)!.ep, undefined, 'the endpoint leaves the slice once the pod is DELETED');
  // kube-proxy on both nodes: out of the rules within ε_p = 1.5 s of the DELETE.
  for (const node of ['node-a', 'node-b']) {
    const out = proxyViews(model.records)
      .get(node)
      ?.get('default/s')
      ?.find((p) => p.t > del && p.targets !== null && p.targets.every((x) => x[1] !== uid));
    t.truthy(out, node);
    t.true(out!.t - del <= 1.5 * S, `${node}: ${(out!.t - del) / S} s`);
  }
});

const rec = (t: number, actor: string, kind: string, data: Record<string, unknown>, seq = 0): TraceRecord => ({ t, actor, seq, kind, msg: kind, data });
const check = (id: string, records: TraceRecord[]) => TRAFFIC_INVARIANTS.find((i) => i.id === id)!.check(new TraceModel(records), { epochUnixSeconds: 0 });

/** A pod that turns terminating at 1 s and is DELETED at 3 s, behind Service default/s. */
function base(): TraceRecord[] {
  const pod = (t: number, event: string, extra: Record<string, unknown> = {}) => rec(t, 'apiserver', 'api.write', { event, resource: 'pods', namespace: 'default', name: 'p', uid: 'u1', rv: String(t), ...extra });
  return [rec(0, 'apiserver', 'api.write', { event: 'ADDED', resource: 'services', namespace: 'default', name: 's', uid: 's1', rv: '1' }), pod(1, 'ADDED'), pod(S, 'MODIFIED', { deletionTimestamp: 'x' }), pod(3 * S, 'DELETED', { deletionTimestamp: 'x' })];
}

test('checkers fail on traces that break them (and hold on the fixed ones)', (t) => {
  const ep = (tt: number, addresses: string[]) => rec(tt, 'apiserver', 'api.write', { event: 'MODIFIED', resource: 'endpoints', namespace: 'default', name: 's', uid: 'e1', rv: String(tt), addresses, notReadyAddresses: [] });
  t.is(check('endpoints-exclude-terminating', [...base(), ep(10 * S, ['u1'])]).length, 1);
  t.is(check('endpoints-exclude-terminating', [...base(), ep(10 * S, [])]).length, 0);
  const slice = (tt: number, eps: SliceEp[]) => rec(tt, 'apiserver', 'api.write', { event: 'MODIFIED', resource: 'endpointslices', namespace: 'default', name: 's-1', uid: 'sl', rv: String(tt), service: 's', managedBy: 'endpointslice-controller.k8s.io', endpoints: eps });
  t.is(check('slice-terminating-not-ready', [...base(), slice(2 * S, [['u1', true, true, true]])]).length, 1);
  t.is(check('slice-terminating-not-ready', [...base(), slice(2 * S, [['u1', false, true, true]])]).length, 0);
  t.is(check('slice-drops-deleted-pods', [...base(), slice(10 * S, [['u1', false, false, true]])]).length, 1);
  t.is(check('slice-drops-deleted-pods', [...base(), slice(10 * S, [])]).length, 0);
  const sync = (tt: number, targets: [string, string][], seq = 0) => rec(tt, 'kube-proxy/n1', 'proxy.sync', { node: 'n1', startUs: tt - 1000, minSyncPeriodUs: S, burstSyncs: 2, services: { 'default/s': { clusterIP: '10.96.0.1', targets, reject: targets.length === 0 } } }, seq);
  const ready = slice(0.5 * S, [['u1', true, true, false]]);
  const notReady = slice(S, [['u1', false, true, true]]);
  t.is(check('proxy-routes-ready-only', [...base(), ready, notReady, sync(10 * S, [['10.224.0.2', 'u1']])]).length, 1);
  t.is(check('proxy-routes-ready-only', [...base(), ready, notReady, sync(10 * S, [])]).length, 0);
  t.is(check('proxy-sync-rate', [sync(S, [], 0), sync(S + 10, [], 1), sync(S + 20, [], 2)]).length, 1);
  t.is(check('proxy-sync-rate', [sync(S, [], 0), sync(S + 10, [], 1), sync(2 * S + 20, [], 2)]).length, 0);
});

test('bad Services, traffic and app annotations are named with file, line and field', async (t) => {
  const { loadScenarioText } = await import('../../src/scenario/load.js');
  const { compileScenario } = await import('../../src/scenario/compile.js');
  const { ScenarioError, formatIssue } = await import('../../src/scenario/source.js');
  const text = `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
traffic:
  - { service: webb, rate: 10, fromNodes: [node-9] }
steps:
  - apply: all
expect:
  traffic: { source: nope, failed: { max: 0 } }
---
apiVersion: v1
kind: Service
metadata: { name: web }
spec: { selector: { app: web }, ports: [{ port: 70000 }] }
---
apiVersion: v1
kind: Pod
metadata: { name: web, annotations: { podsim.dev/close-listener-after: soon } }
spec: { containers: [{ name: c, image: nginx }] }
`;
  const err = t.throws(() => compileScenario(loadScenarioText('bad.yaml', text)));
  t.true(err instanceof ScenarioError);
  const lines = (err as InstanceType<typeof ScenarioError>).issues.map(formatIssue).join('\n');
  t.regex(lines, /bad\.yaml:14:\d+: Service\/web spec\.ports\[0\]\.port: Too big/);
  t.regex(lines, /bad\.yaml:18:\d+: Pod\/web metadata\.annotations\["podsim\.dev\/close-listener-after"\]: .*invalid value "soon"/);
  const fixed = text.replace('port: 70000', 'port: 80').replace('close-listener-after: soon', 'close-listener-after: 1s');
  const err2 = t.throws(() => compileScenario(loadScenarioText('bad.yaml', fixed)));
  const l2 = (err2 as InstanceType<typeof ScenarioError>).issues.map(formatIssue).join('\n');
  t.regex(l2, /bad\.yaml:5:\d+: traffic\[0\]\.service: no Service "webb" .*did you mean "web"/);
  t.regex(l2, /bad\.yaml:5:\d+: traffic\[0\]\.fromNodes\[0\]: no node "node-9"/);
  t.regex(l2, /bad\.yaml:9:\d+: expect\.traffic\.source: no traffic source "nope"/);
});

test('bug: two traffic sources with the same id listed it twice in "no traffic source" (sources: plain, plain); each id once now (found by the bad-input trial)', async (t) => {
  const { loadScenarioText } = await import('../../src/scenario/load.js');
  const { compileScenario } = await import('../../src/scenario/compile.js');
  const { ScenarioError, formatIssue } = await import('../../src/scenario/source.js');
  const text = `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
traffic:
  - { id: plain, service: web, rate: 10 }
  - { id: plain, service: web, rate: 5 }
steps:
  - apply: all
expect:
  traffic: { source: nope, failed: { max: 0 } }
---
apiVersion: v1
kind: Service
metadata: { name: web }
spec: { selector: { app: web }, ports: [{ port: 80 }] }
`;
  const err = t.throws(() => compileScenario(loadScenarioText('dup.yaml', text)));
  t.true(err instanceof ScenarioError);
  const lines = (err as InstanceType<typeof ScenarioError>).issues.map(formatIssue).join('\n');
  t.regex(lines, /dup\.yaml:6:\d+: traffic\[1\]\.id: duplicate traffic source id "plain" \(also traffic\[0\], line 5\)/);
  t.regex(lines, /expect\.traffic\.source: no traffic source "nope" \(sources: plain\)$/m);
});

test('bug: an expectation that nothing could check passed — a traffic bound over a source that sent no request, and expect.nodes / podReady at a time after the run ended; each now fails, saying why (found by the bad-input trial)', async (t) => {
  const { report } = await runText(
    'unchecked-expectations',
    `kind: Scenario
cluster: { seed: 1, nodes: [{ name: n1 }] }
traffic:
  - { id: late, service: web, fromNodes: [n1], rate: 10, start: 1h }
steps:
  - apply: all
  - id: d
    sleep: 10s
expect:
  pods: [a]
  traffic: [{ source: late, failed: { max: 0 } }]
  nodes: [{ node: n1, since: d, at: 10000s, ready: "True" }]
  podReady: [{ pod: a, since: d, at: 9999s, ready: "True" }]
---
apiVersion: v1
kind: Pod
metadata: { name: a, labels: { app: web } }
spec: { containers: [{ name: a, image: nginx:1.21 }] }
---
apiVersion: v1
kind: Service
metadata: { name: web }
spec: { selector: { app: web }, ports: [{ port: 80 }] }
`,
  );
  t.false(report.ok);
  t.deepEqual(
    report.expectations.map((e) => [e.kind, e.ok]),
    [
      ['node', false],
      ['podReady', false],
      ['traffic', false],
    ].sort(),
  );
  t.true(report.expectations.every((e) => /nothing was checked/.test(e.actual)), JSON.stringify(report.expectations));
});

test('bug: traffic sources with a duplicate id, timeout 0s, an expect bound with min > max, and a headless or ExternalName target were accepted (the last ran as NO_RULES); each is now refused at load with file:line', async (t) => {
  const { loadScenarioText } = await import('../../src/scenario/load.js');
  const { compileScenario } = await import('../../src/scenario/compile.js');
  const { ScenarioError, formatIssue } = await import('../../src/scenario/source.js');
  const text = `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
traffic:
  - { id: a, service: web, rate: 10 }
  - { id: a, service: web, rate: 10, timeout: 0s }
  - { service: hl, rate: 10 }
  - { service: ext, rate: 10 }
steps:
  - apply: all
expect:
  traffic: { failed: { min: 5, max: 1 } }
---
apiVersion: v1
kind: Service
metadata: { name: web }
spec: { selector: { app: web }, ports: [{ port: 80 }] }
---
apiVersion: v1
kind: Service
metadata: { name: hl }
spec: { clusterIP: None, selector: { app: web }, ports: [{ port: 80 }] }
---
apiVersion: v1
kind: Service
metadata: { name: ext }
spec: { type: ExternalName, externalName: example.com }
`;
  const err = t.throws(() => compileScenario(loadScenarioText('bad.yaml', text)));
  t.true(err instanceof ScenarioError);
  const lines = (err as InstanceType<typeof ScenarioError>).issues.map(formatIssue).join('\n');
  t.regex(lines, /bad\.yaml:6:\d+: traffic\[1\]\.id: duplicate traffic source id "a" \(also traffic\[0\], line 5\)/);
  t.regex(lines, /bad\.yaml:6:\d+: traffic\[1\]\.timeout: timeout must be positive/);
  t.regex(lines, /bad\.yaml:7:\d+: traffic\[2\]\.service: Service default\/hl is headless/);
  t.regex(lines, /bad\.yaml:8:\d+: traffic\[3\]\.service: Service default\/ext is type ExternalName/);
  t.regex(lines, /bad\.yaml:12:\d+: expect\.traffic\.failed: min 5 is greater than max 1/);
  // The fixed file loads.
  const fixed = text
    .replace('{ id: a, service: web, rate: 10, timeout: 0s }', '{ id: b, service: web, rate: 10, timeout: 1s }')
    .replace('  - { service: hl, rate: 10 }\n  - { service: ext, rate: 10 }\n', '')
    .replace('min: 5, max: 1', 'min: 0, max: 1');
  t.notThrows(() => compileScenario(loadScenarioText('ok.yaml', fixed)));
});

/** One pod p labelled app=web, and the ClusterIP Service web in front of it (manifests to append to a scenario). */
const WEB_POD = `---
apiVersion: v1
kind: Pod
metadata: { name: p, labels: { app: web } }
spec:
  containers: [{ name: app, image: x:1 }]
`;
const WEB_SERVICE = `---
apiVersion: v1
kind: Service
metadata: { name: web }
spec: { selector: { app: web }, ports: [{ port: 80 }] }
`;

test('bug: a traffic source whose stop lay past the run\'s end sent 1 s of its 10 s and its bound passed; it is now cut short and not judged (found by the bad-input trial)', async (t) => {
  const { report } = await runText(
    'stop-past-end',
    `kind: Scenario
cluster:
  nodes: [{ name: w1 }]
traffic:
  - { id: t, service: web, fromNodes: [w1], rate: 5, since: later, stop: 10s }
steps:
  - apply: all
  - sleep: 5s
  - id: later
    sleep: 1s
expect:
  traffic:
    - { source: t, failed: { max: 0 } }
${WEB_POD}${WEB_SERVICE}`,
  );
  const src = report.traffic!.sources[0];
  t.regex(src.cutShort ?? '', /^the run ended at virtual .*, before the source's stop at /);
  const e = report.expectations.find((x) => x.kind === 'traffic')!;
  t.false(e.ok);
  t.regex(e.actual ?? '', /not judged: the traffic was cut short/);
});

test('bug: a traffic source of 100,000 req/s for 3000 s (300 M requests) crashed V8 after 14 s and 2.2 GB; it is now not simulated, says why, and is never judged (found by the bad-input trial)', async (t) => {
  const { report } = await runText(
    'too-much-traffic',
    `kind: Scenario
cluster:
  nodes: [{ name: w1 }]
traffic:
  - { id: t, service: web, fromNodes: [w1], rate: 100000 }
steps:
  - apply: all
  - sleep: 3000s
expect:
  traffic:
    - { source: t, failed: { max: 0 } }
${WEB_POD}${WEB_SERVICE}`,
  );
  const src = report.traffic!.sources[0];
  t.is(src.requests, 0);
  t.regex(src.cutShort ?? '', /^it would send about 300,000,000 requests \(rate × duration\), more than the 20,000,000 podsim decides per source/);
  t.false(report.ok);
  t.regex(report.expectations.find((x) => x.kind === 'traffic')!.actual ?? '', /not judged: the traffic was cut short/);
});

test('bug: nodePort traffic to a LoadBalancer with allocateLoadBalancerNodePorts: false was refused even when the Service asks for its node port; upstream keeps a requested port (initNodePorts), so it is served (found by the bad-input trial)', async (t) => {
  const text = (ports: string) => `kind: Scenario
cluster:
  nodes: [{ name: w1 }]
traffic:
  - { id: ext, service: a, nodePort: true, toNodes: [w1], rate: 5, start: 10s }
steps:
  - apply: all
  - sleep: 20s
---
apiVersion: v1
kind: Service
metadata: { name: a }
spec: { type: LoadBalancer, allocateLoadBalancerNodePorts: false, selector: { app: web }, ports: [${ports}] }
${WEB_POD}`;
  const { report } = await runText('lb-requested-node-port', text('{ port: 80, nodePort: 30123 }'));
  const src = report.traffic!.sources[0];
  t.true(src.requests > 0 && src.served === src.requests, JSON.stringify(src.byCause));
  const { loadScenarioText } = await import('../../src/scenario/load.js');
  const { compileScenario } = await import('../../src/scenario/compile.js');
  const e = t.throws(() => compileScenario(loadScenarioText('lb.yaml', text('{ port: 80 }'))));
  t.regex(e!.message + JSON.stringify((e as { issues?: unknown }).issues ?? ''), /allocateLoadBalancerNodePorts: false: it has no node port/);
});
