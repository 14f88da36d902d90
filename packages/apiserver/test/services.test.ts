/**
 * v1 Service, Endpoints and discovery.k8s.io/v1 EndpointSlice through the ApiServer (issue #18):
 * ClusterIP allocation from the service CIDR, SetDefaults_Service, validation errors users meet,
 * ClusterIP immutability, the printers' columns, EndpointSlice generation.
 */
import test from 'ava';
import type { EndpointSlice, Endpoints, Service, Status, Table } from '@podsim/api';
import { inServiceRange } from '../src/registry/serviceStrategy.js';
import { Harness } from './helpers.js';

const svc = (name: string, spec: Partial<Service['spec']> = {}): Service => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }], ...spec } });

test('service create: a ClusterIP from 10.96.0.0/12, distinct per Service, and the v1 defaults', (t) => {
  const h = new Harness();
  const a = h.req({ type: 'ApiCreate', resource: 'services', namespace: 'default', object: svc('a') });
  const b = h.req({ type: 'ApiCreate', resource: 'services', namespace: 'default', object: svc('b') });
  t.is(a.code, 201, JSON.stringify(a.body));
  const sa = a.body as Service;
  const sb = b.body as Service;
  t.true(inServiceRange(sa.spec.clusterIP!), sa.spec.clusterIP);
  t.not(sa.spec.clusterIP, sb.spec.clusterIP);
  t.deepEqual(sa.spec.clusterIPs, [sa.spec.clusterIP]);
  t.is(sa.spec.type, 'ClusterIP');
  t.is(sa.spec.sessionAffinity, 'None');
  t.is(sa.spec.internalTrafficPolicy, 'Cluster');
  t.deepEqual(sa.spec.ports, [{ port: 80, protocol: 'TCP', targetPort: 80 }]);
  t.deepEqual(sa.spec.ipFamilies, ['IPv4']);
});

test('service create: NodePort gets node ports in 30000-32767; LoadBalancer + Local a health check node port', (t) => {
  const h = new Harness();
  const np = h.req({ type: 'ApiCreate', resource: 'services', namespace: 'default', object: svc('np', { type: 'NodePort' }) }).body as Service;
  const p = np.spec.ports![0].nodePort!;
  t.true(p >= 30000 && p <= 32767, String(p));
  t.is(np.spec.externalTrafficPolicy, 'Cluster');
  const lb = h.req({ type: 'ApiCreate', resource: 'services', namespace: 'default', object: svc('lb', { type: 'LoadBalancer', externalTrafficPolicy: 'Local' }) }).body as Service;
  t.truthy(lb.spec.healthCheckNodePort);
  t.not(lb.spec.healthCheckNodePort, lb.spec.ports![0].nodePort);
});

test('service create: a requested nodePort is taken; one already allocated or out of range is 422 as upstream words it; the health check port 500', (t) => {
  const h = new Harness();
  const create = (s: Service) => h.req({ type: 'ApiCreate', resource: 'services', namespace: 'default', object: s });
  const a = create(svc('a', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }));
  t.is(a.code, 201, JSON.stringify(a.body));
  t.is((a.body as Service).spec.ports![0].nodePort, 30080);
  const dup = create(svc('b', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }));
  t.is(dup.code, 422);
  t.is((dup.body as Status).message, 'Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated');
  const out = create(svc('c', { type: 'NodePort', ports: [{ port: 80, nodePort: 29999 }] }));
  t.is(out.code, 422);
  t.regex((out.body as Status).message ?? '', /spec\.ports\[0\]\.nodePort: Invalid value: 29999: provided port is not in the valid range\. The range of valid ports is 30000-32767/);
  const hc = create(svc('d', { type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 30080 }));
  t.is(hc.code, 500);
  t.is((hc.body as Status).message, 'Internal error occurred: failed to allocate requested HealthCheck NodePort 30080: provided port is already allocated');
  // The refused Services hold nothing: a free auto-allocated port never collides with 30080.
  const e = create(svc('e', { type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 30081 }));
  t.is(e.code, 201, JSON.stringify(e.body));
  t.is((e.body as Service).spec.healthCheckNodePort, 30081);
  t.not((e.body as Service).spec.ports![0].nodePort, 30080);
  // Deleting a Service frees its ports.
  t.is(h.req({ type: 'ApiDelete', resource: 'services', namespace: 'default', name: 'a' }).code, 200);
  t.is(create(svc('b', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] })).code, 201);
});

test('service update: NodePort → ClusterIP drops the policy and the node ports stay only while needed; ClusterIP → NodePort allocates', (t) => {
  const h = new Harness();
  const s = h.req({ type: 'ApiCreate', resource: 'services', namespace: 'default', object: svc('a') }).body as Service;
  const up = h.req({ type: 'ApiUpdate', resource: 'services', namespace: 'default', name: 'a', object: { ...s, spec: { ...s.spec, type: 'LoadBalancer', externalTrafficPolicy: 'Local' } } as Service });
  t.is(up.code, 200, JSON.stringify(up.body));
  const lb = up.body as Service;
  t.true(lb.spec.ports![0].nodePort! >= 30000);
  t.true(lb.spec.healthCheckNodePort! >= 30000);
  const change = h.req({ type: 'ApiUpdate', resource: 'services', namespace: 'default', name: 'a', object: { ...lb, spec: { ...lb.spec, healthCheckNodePort: lb.spec.healthCheckNodePort! + 1 } } as Service });
  t.is(change.code, 422);
  t.regex((change.body as Status).message ?? '', /cannot change healthCheckNodePort on loadBalancer service with externalTraffic=Local during update/);
  // The whole object sent back with only the type changed (kubectl edit): the node ports, policy and
  // health check port it still carries are dropped, not a 422.
  const back = h.req({ type: 'ApiUpdate', resource: 'services', namespace: 'default', name: 'a', object: { ...lb, spec: { ...structuredClone(lb.spec), type: 'ClusterIP' } } as Service });
  t.is(back.code, 200, JSON.stringify(back.body));
  t.is((back.body as Service).spec.externalTrafficPolicy, undefined);
  t.is((back.body as Service).spec.healthCheckNodePort, undefined);
  t.is((back.body as Service).spec.ports![0].nodePort, undefined);
  t.is((back.body as Service).spec.allocateLoadBalancerNodePorts, undefined, 'the LoadBalancer default sent back unchanged is dropped with the type');
  // A new node port on a ClusterIP Service is the client's and is refused.
  const np = h.req({ type: 'ApiUpdate', resource: 'services', namespace: 'default', name: 'a', object: { ...(back.body as Service), spec: { ...(back.body as Service).spec, ports: [{ port: 80, protocol: 'TCP', targetPort: 80, nodePort: 30999 }] } } as Service });
  t.is(np.code, 422);
  t.regex((np.body as Status).message ?? '', /spec\.ports\[0\]\.nodePort: Forbidden: may not be used when `type` is 'ClusterIP'/);
});

test('service validation: no ports, a port out of range, unnamed multi-ports, a ClusterIP outside the range, allocateLoadBalancerNodePorts off a LoadBalancer, one node port twice → 422', (t) => {
  const h = new Harness();
  const bad = (s: Service, re: RegExp) => {
    const r = h.req({ type: 'ApiCreate', resource: 'services', namespace: 'default', object: s });
    t.is(r.code, 422, JSON.stringify(r.body));
    t.regex((r.body as Status).message ?? '', re);
  };
  bad(svc('noports', { ports: [] }), /spec\.ports: Required value/);
  bad(svc('big', { ports: [{ port: 70000 }] }), /spec\.ports\[0\]\.port: Invalid value: 70000/);
  bad(svc('multi', { ports: [{ port: 80 }, { port: 81 }] }), /spec\.ports\[0\]\.name: Required value/);
  bad(svc('outside', { clusterIP: '192.168.0.1' }), /provided IP is not in the valid range/);
  bad(svc('etp', { externalTrafficPolicy: 'Local' }), /^Service "etp" is invalid: spec\.externalTrafficPolicy: Invalid value: "Local": ExternalTrafficPolicy can only be set on NodePort and LoadBalancer service$/);
  bad(svc('alb', { type: 'NodePort', allocateLoadBalancerNodePorts: false }), /^Service "alb" is invalid: spec\.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is 'LoadBalancer'$/);
  bad(svc('twice', { type: 'NodePort', ports: [{ name: 'a', port: 80, nodePort: 30100 }, { name: 'b', port: 81, nodePort: 30100 }] }), /^Service "twice" is invalid: spec\.ports\[1\]\.nodePort: Duplicate value: 30100$/);
  bad(svc('hc', { type: 'NodePort', healthCheckNodePort: 30500 }), /spec\.healthCheckNodePort: Invalid value: 30500: HealthCheckNodePort can only be set on LoadBalancer service with ExternalTrafficPolicy=Local/);
});

test('service update: the ClusterIP may not change', (t) => {
  const h = new Harness();
  const s = h.req({ type: 'ApiCreate', resource: 'services', namespace: 'default', object: svc('a') }).body as Service;
  const r = h.req({ type: 'ApiUpdate', resource: 'services', namespace: 'default', name: 'a', object: { ...s, spec: { ...s.spec, clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'] } } as Service });
  t.is(r.code, 422);
  t.regex((r.body as Status).message ?? '', /may not change once set/);
});

test('printers: get svc / endpoints / endpointslices columns as kubectl prints them', (t) => {
  const h = new Harness();
  const s = h.req({ type: 'ApiCreate', resource: 'services', namespace: 'default', object: svc('web') }).body as Service;
  const ep: Endpoints = {
    metadata: { name: 'web' },
    subsets: [{ addresses: ['10.244.0.2', '10.244.0.3', '10.244.1.2', '10.244.1.3'].map((ip) => ({ ip })), ports: [{ port: 8080, protocol: 'TCP' }] }],
  };
  t.is(h.req({ type: 'ApiCreate', resource: 'endpoints', namespace: 'default', object: ep }).code, 201);
  const slice: EndpointSlice = { metadata: { name: 'web-abc12' }, addressType: 'IPv4', endpoints: [{ addresses: ['10.244.0.2'], conditions: { ready: true } }], ports: [{ port: 8080, protocol: 'TCP', name: '' }] };
  const sr = h.req({ type: 'ApiCreate', resource: 'endpointslices', namespace: 'default', object: slice });
  t.is(sr.code, 201, JSON.stringify(sr.body));
  t.is((sr.body as EndpointSlice).metadata.generation, 1);
  const row = (resource: 'services' | 'endpoints' | 'endpointslices', wide = false) => {
    const tb = h.req({ type: 'ApiList', resource, namespace: 'default', asTable: true, wide }).body as Table;
    return { cols: tb.columnDefinitions.map((c) => c.name), cells: tb.rows[0].cells };
  };
  const sv = row('services', true);
  t.deepEqual(sv.cols, ['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age', 'Selector']);
  t.deepEqual(sv.cells.filter((_, i) => i !== 5), ['web', 'ClusterIP', s.spec.clusterIP, '<none>', '80/TCP', 'app=web']);
  t.deepEqual(row('endpoints').cells.slice(0, 2), ['web', '10.244.0.2:8080,10.244.0.3:8080,10.244.1.2:8080 + 1 more...']);
  t.deepEqual(row('endpointslices').cells.slice(0, 4), ['web-abc12', 'IPv4', '8080', '10.244.0.2']);
});
