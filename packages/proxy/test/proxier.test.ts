/**
 * The proxier's EndpointSlice intake (pkg/proxy/endpoints.go `EndpointSliceUpdate`): a single-stack
 * IPv4 proxier takes IPv4 slices only, so an IPv6 slice the mirroring controller made from a
 * user's Endpoints never becomes a ClusterIP target (it used to: its address was routed as if IPv4).
 */
import test from 'ava';
import type { EndpointSlice, Service } from '@podsim/api';
import { Proxier } from '../src/proxier.js';

const svc: Service = { metadata: { name: 'ext', namespace: 'default' }, spec: { clusterIP: '10.96.0.20', ports: [{ port: 80 }] } };
const slice = (name: string, addressType: EndpointSlice['addressType'], ip: string): EndpointSlice => ({
  metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': 'ext' } },
  addressType,
  endpoints: [{ addresses: [ip], conditions: { ready: true } }],
  ports: [{ port: 8080 }],
});

test('an IPv6 slice is ignored by the IPv4 proxier; the IPv4 slice of the same Service is routed', (t) => {
  const p = new Proxier('node-a');
  p.onService('default/ext', svc);
  t.false(p.onSlice(slice('ext-v6', 'IPv6', 'fd00::5'), false));
  t.true(p.onSlice(slice('ext-v4', 'IPv4', '10.224.0.2'), false));
  p.syncProxyRules();
  t.deepEqual(p.view('default/ext')?.targets, [{ ip: '10.224.0.2', podUid: '' }]);
});
