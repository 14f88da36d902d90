/**
 * The node-port and affinity part of a node's rules (v1.22 `syncProxyRules`: KUBE-NODEPORTS,
 * KUBE-XLB-…, the `recent` rules), as the pure Proxier computes them, and what `proxy.sync`
 * traces for them. A plain ClusterIP Service's view and trace carry none of the new fields.
 */
import test from 'ava';
import type { EndpointSlice, Service } from '@podsim/api';
import { Proxier, tracedView } from '../src/proxier.js';

const svc = (spec: Partial<Service['spec']> = {}): Service => ({ metadata: { name: 'web', namespace: 'default' }, spec: { clusterIP: '10.96.0.10', ports: [{ port: 80, nodePort: 30080 }], ...spec } });
const slice = (eps: Array<[string, boolean, string]>): EndpointSlice => ({
  metadata: { name: 'web-x', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv4',
  endpoints: eps.map(([ip, ready, node]) => ({ addresses: [ip], conditions: { ready, serving: true, terminating: !ready }, nodeName: node, targetRef: { kind: 'Pod', uid: `uid-${ip}` } })),
});

function viewOf(node: string, s: Service, eps: Array<[string, boolean, string]>) {
  const p = new Proxier(node);
  p.onService('default/web', s);
  p.onSlice(slice(eps), false);
  p.syncProxyRules();
  return { p, v: p.view('default/web')! };
}

const EPS: Array<[string, boolean, string]> = [
  ['10.244.0.2', true, 'node-1'],
  ['10.244.0.3', false, 'node-1'],
  ['10.244.1.2', true, 'node-2'],
];

test('ETP Local: the XLB chain holds the node\'s Ready local endpoints; a node with none has an empty chain (the DROP rule); cluster targets unchanged', (t) => {
  const local = svc({ type: 'NodePort', externalTrafficPolicy: 'Local' });
  const n1 = viewOf('node-1', local, EPS).v;
  t.deepEqual(n1.nodePorts, [30080]);
  t.deepEqual(n1.local, ['10.244.0.2'], 'the not-ready local endpoint is not in the XLB chain');
  t.deepEqual(n1.targets.map((x) => x.ip), ['10.244.0.2', '10.244.1.2']);
  t.false(n1.reject);
  const n3 = viewOf('node-3', local, EPS).v;
  t.deepEqual(n3.local, []);
  t.false(n3.reject, 'other nodes have Ready endpoints: a DROP for node-port traffic, not a REJECT');
});

test('ETP Cluster NodePort: node ports, no XLB chain; a LoadBalancer too; ClusterIP: no node ports even if a nodePort is left in the object', (t) => {
  const c = viewOf('node-1', svc({ type: 'NodePort' }), EPS).v;
  t.deepEqual(c.nodePorts, [30080]);
  t.is(c.local, undefined);
  t.deepEqual(viewOf('node-1', svc({ type: 'LoadBalancer', externalTrafficPolicy: 'Local' }), EPS).v.local, ['10.244.0.2']);
  const plain = viewOf('node-1', svc({ type: 'ClusterIP' }), EPS);
  t.is(plain.v.nodePorts, undefined);
  t.deepEqual(Object.keys(tracedView(undefined, plain.v)).sort(), ['clusterIP', 'reject', 'targets']);
});

test('ClientIP affinity: the view carries the recent timeout (default 10800 s, or sessionAffinityConfig); None carries none', (t) => {
  t.is(viewOf('node-1', svc({ sessionAffinity: 'ClientIP' }), EPS).v.affinitySeconds, 10800);
  t.is(viewOf('node-1', svc({ sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } }), EPS).v.affinitySeconds, 60);
  t.is(viewOf('node-1', svc({ sessionAffinity: 'None' }), EPS).v.affinitySeconds, undefined);
});

test('a local endpoint turning not-ready changes the ETP Local view and is traced with the local list; the rule count grows with the node-port rules', (t) => {
  const s = svc({ type: 'NodePort', externalTrafficPolicy: 'Local', sessionAffinity: 'ClientIP' });
  const { p, v } = viewOf('node-1', s, EPS);
  const before = p.ruleCount;
  p.onSlice(slice([['10.244.0.2', false, 'node-1'], ['10.244.0.3', false, 'node-1'], ['10.244.1.2', true, 'node-2']]), false);
  const changed = p.syncProxyRules();
  const next = changed.get('default/web')!;
  t.deepEqual(next.local, []);
  const traced = tracedView(v, next);
  t.deepEqual({ local: traced.local, nodePorts: traced.nodePorts, affinitySeconds: traced.affinitySeconds }, { local: [], nodePorts: [30080], affinitySeconds: 10800 });
  const plain = new Proxier('node-1');
  plain.onService('default/web', svc({ type: 'ClusterIP', ports: [{ port: 80 }] }));
  plain.onSlice(slice(EPS), false);
  plain.syncProxyRules();
  t.true(before > plain.ruleCount, `${before} vs ${plain.ruleCount}`);
});

test('switching externalTrafficPolicy Cluster → Local (same endpoints) is a rules change: the next sync reports the XLB chain', (t) => {
  const { p } = viewOf('node-1', svc({ type: 'NodePort', externalTrafficPolicy: 'Cluster' }), EPS);
  t.true(p.onService('default/web', svc({ type: 'NodePort', externalTrafficPolicy: 'Local' })));
  const changed = p.syncProxyRules();
  t.deepEqual(changed.get('default/web')?.local, ['10.244.0.2']);
});
