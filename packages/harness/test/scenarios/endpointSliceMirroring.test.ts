/**
 * EndpointSlice mirroring end to end (issue #18; spec endpoints-traffic §5): a Service without a
 * selector and a hand-written Endpoints object get a mirrored EndpointSlice
 * (`managed-by: endpointslicemirroring-controller.k8s.io`), every node's kube-proxy routes to
 * its address and traffic is served; an Endpoints labelled `endpointslice.kubernetes.io/
 * skip-mirror=true` gets no slice, so its Service REJECTs; Endpoints applied later start being
 * served one mirroring write + one kube-proxy sync after they appear.
 */
import test from 'ava';
import { ENDPOINTSLICEMIRRORING_CONTROLLER_NAME } from '@podsim/api';
import { proxyViews } from '../../src/traffic/proxyViews.js';
import { S, runText, stepTimes } from './helpers.js';

const BACKEND_IP = '10.224.0.2';

/** A Service without a selector and its hand-written Endpoints (metadata `extra`) naming the backend. */
const selectorless = (name: string, extra = '') => `---
apiVersion: v1
kind: Service
metadata: { name: ${name} }
spec:
  ports: [{ port: 80, targetPort: 8080 }]
---
apiVersion: v1
kind: Endpoints
metadata: { name: ${name}${extra ? `, ${extra}` : ''} }
subsets:
  - addresses: [{ ip: ${BACKEND_IP} }]
    ports: [{ port: 8080 }]
`;

const SCENARIO = `kind: Scenario
cluster:
  nodes: [{ name: node-a }, { name: node-b }]
traffic:
  - { id: mirrored, service: external, rate: 50, start: 20s }
  - { id: skipped, service: unmirrored, rate: 20, start: 20s }
  - { id: late, service: later, rate: 50, start: 20s }
steps:
  - apply: [Pod/backend, Service/external, Endpoints/external, Service/unmirrored, Endpoints/unmirrored, Service/later]
  - sleep: 40s
  - id: late
    apply: Endpoints/later
  - sleep: 20s
---
apiVersion: v1
kind: Pod
metadata: { name: backend }
spec:
  nodeName: node-a
  containers: [{ name: app, image: web:1 }]
${selectorless('external', 'labels: { team: payments }')}${selectorless('unmirrored', 'labels: { endpointslice.kubernetes.io/skip-mirror: "true" }')}${selectorless('later')}`;

test('a selector-less Service with hand-made Endpoints gets a mirrored slice, kube-proxy routes to it and traffic is served; skip-mirror gets none (REJECT); late Endpoints are served one mirror write + one sync later', async (t) => {
  t.timeout(120_000);
  const { report, model } = await runText('mirroring', SCENARIO);
  t.true(report.ok, report.failures.join('\n'));
  // The Endpoints name the backend pod's IP (host-local IPAM: the first address of node-a's /24).
  const up = model.records.find((r) => r.kind === 'cri.network' && (r.data as { pod: string }).pod === 'backend');
  t.is((up?.data as { ip: string }).ip, BACKEND_IP);
  const sliceWrites = model.records.filter((r) => r.kind === 'api.write' && (r.data as { resource: string }).resource === 'endpointslices');
  const byService = (svc: string) => sliceWrites.filter((r) => (r.data as { service?: string }).service === svc);
  t.true(byService('external').length > 0, 'a slice for external');
  t.is(byService('unmirrored').length, 0, 'no slice for the skip-mirror Endpoints');
  const src = (id: string) => report.traffic!.sources.find((s) => s.id === id)!;
  const mirrored = src('mirrored');
  t.true(mirrored.requests > 1500);
  t.is(mirrored.failed, 0, JSON.stringify(mirrored.byCause));
  const skipped = src('skipped');
  t.true(skipped.requests > 500);
  t.deepEqual(skipped.byCause, { REJECT_NO_ENDPOINTS: skipped.requests });
  // `later`: REJECT until its Endpoints exist, then served; the switch within 1.5 s of the apply.
  const applied = stepTimes(model, 'late').start;
  const late = src('late');
  t.deepEqual(Object.keys(late.byCause), ['REJECT_NO_ENDPOINTS']);
  t.true(late.failureWindow!.last * S >= applied && late.failureWindow!.last * S - applied < 1.5 * S, `last refusal ${late.failureWindow!.last} s, Endpoints applied at ${applied / S} s`);
  for (const node of ['node-a', 'node-b']) {
    const v = proxyViews(model.records).get(node)?.get('default/later')?.find((p) => p.targets !== null && p.targets.length > 0);
    t.deepEqual(v?.targets, [[BACKEND_IP, '']], node);
    t.true(v!.t > applied && v!.t - applied < 1.5 * S, `${node} routed at ${(v!.t - applied) / S} s after the apply`);
  }
  // The mirrored slice is the mirroring controller's, its one endpoint ready with no serving / terminating invented.
  const first = byService('external')[0].data as { managedBy: string; endpoints: unknown[] };
  t.is(first.managedBy, ENDPOINTSLICEMIRRORING_CONTROLLER_NAME);
  t.deepEqual(first.endpoints, [[BACKEND_IP, true, null, null]]);
});
