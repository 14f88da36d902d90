/**
 * The EndpointSliceMirroring reconciler as a pure function (issue #18, item 2 "EndpointSlice
 * mirroring where it applies"; pkg/controller/endpointslicemirroring v1.22): what a user's
 * Endpoints object becomes in mirrored slices, table-driven, and which Endpoints are mirrored.
 */
import test from 'ava';
import type { EndpointSlice, Endpoints, EndpointSubset } from '@podsim/api';
import { ENDPOINTSLICEMIRRORING_CONTROLLER_NAME, LABEL_MANAGED_BY, LABEL_SERVICE_NAME } from '@podsim/api';
import { reconcileMirroredSlices } from '../src/endpointslicemirroring/reconciler.js';
import { shouldMirror } from '../src/endpointslicemirroring/endpointSliceMirroringController.js';

const eps = (subsets: EndpointSubset[], meta: Partial<Endpoints['metadata']> = {}): Endpoints => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name: 'ext', namespace: 'default', uid: 'ep-uid', labels: { team: 'a' }, ...meta },
  subsets,
});
const http = [{ port: 8080, protocol: 'TCP' as const }];

/** A mirrored slice as the API would hold it (named), from a reconcile's create. */
function stored(s: EndpointSlice, name: string): EndpointSlice {
  const { generateName: _g, ...meta } = s.metadata;
  return { ...s, metadata: { ...meta, name, uid: `uid-${name}`, generation: 1 } };
}

/** [ip, ready] of a slice's endpoints. */
const eps2 = (s: EndpointSlice) => s.endpoints.map((e) => [e.addresses[0], e.conditions.ready] as const);

test('addresses are mirrored ready, notReadyAddresses not ready; labels, owner, ports and name prefix as upstream', (t) => {
  const r = reconcileMirroredSlices(
    eps([{ addresses: [{ ip: '10.0.0.2', nodeName: 'n1', targetRef: { kind: 'Pod', name: 'p', namespace: 'default', uid: 'pu' } }], notReadyAddresses: [{ ip: '10.0.0.3' }], ports: [{ name: 'http', port: 8080 }] }]),
    [],
  );
  t.is(r.create.length, 1);
  t.deepEqual([r.update.length, r.delete.length], [0, 0]);
  const s = r.create[0];
  t.is(s.metadata.generateName, 'ext-');
  t.is(s.addressType, 'IPv4');
  t.deepEqual(s.metadata.labels, { team: 'a', [LABEL_SERVICE_NAME]: 'ext', [LABEL_MANAGED_BY]: ENDPOINTSLICEMIRRORING_CONTROLLER_NAME });
  t.deepEqual(s.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Endpoints', name: 'ext', uid: 'ep-uid', controller: true, blockOwnerDeletion: true }]);
  t.deepEqual(s.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
  t.deepEqual(eps2(s), [
    ['10.0.0.2', true],
    ['10.0.0.3', false],
  ]);
  // No serving / terminating is invented; nodeName and targetRef are carried over.
  t.deepEqual(s.endpoints[0], { addresses: ['10.0.0.2'], conditions: { ready: true }, nodeName: 'n1', targetRef: { kind: 'Pod', name: 'p', namespace: 'default', uid: 'pu' } });
});

const table: { name: string; subsets: EndpointSubset[]; max?: number; slices: [string, string, [string, boolean | undefined][]][]; invalid: number; skipped: number }[] = [
  {
    name: 'two subsets with the same ports share one slice',
    subsets: [
      { addresses: [{ ip: '10.0.0.2' }], ports: http },
      { addresses: [{ ip: '10.0.0.4' }], ports: http },
    ],
    slices: [['IPv4', '8080', [['10.0.0.2', true], ['10.0.0.4', true]]]],
    invalid: 0,
    skipped: 0,
  },
  {
    name: 'different ports make different slices',
    subsets: [
      { addresses: [{ ip: '10.0.0.2' }], ports: http },
      { addresses: [{ ip: '10.0.0.4' }], ports: [{ port: 9090 }] },
    ],
    slices: [
      ['IPv4', '8080', [['10.0.0.2', true]]],
      ['IPv4', '9090', [['10.0.0.4', true]]],
    ],
    invalid: 0,
    skipped: 0,
  },
  {
    name: 'an IPv6 address goes to an IPv6 slice',
    subsets: [{ addresses: [{ ip: '10.0.0.2' }, { ip: 'fd00::5' }], ports: http }],
    slices: [
      ['IPv4', '8080', [['10.0.0.2', true]]],
      ['IPv6', '8080', [['fd00::5', true]]],
    ],
    invalid: 0,
    skipped: 0,
  },
  {
    name: 'an address that is not an IP is skipped and counted',
    subsets: [{ addresses: [{ ip: 'db.example.com' }, { ip: '10.0.0.2' }], notReadyAddresses: [{ ip: '10.0.0.999' }], ports: http }],
    slices: [['IPv4', '8080', [['10.0.0.2', true]]]],
    invalid: 2,
    skipped: 2,
  },
  {
    name: 'at most maxEndpointsPerSubset per subset, ready addresses first',
    subsets: [{ addresses: [{ ip: '10.0.0.2' }, { ip: '10.0.0.3' }], notReadyAddresses: [{ ip: '10.0.0.4' }, { ip: '10.0.0.5' }], ports: http }],
    max: 3,
    slices: [['IPv4', '8080', [['10.0.0.2', true], ['10.0.0.3', true], ['10.0.0.4', false]]]],
    invalid: 0,
    skipped: 1,
  },
  { name: 'no subsets: no slice', subsets: [], slices: [], invalid: 0, skipped: 0 },
];

for (const c of table) {
  test(`table: ${c.name}`, (t) => {
    const r = reconcileMirroredSlices(eps(c.subsets), [], c.max);
    const got = r.create.map((s) => [s.addressType, (s.ports ?? []).map((p) => p.port).join(','), eps2(s)]);
    t.deepEqual(
      got.sort((a, b) => String(a).localeCompare(String(b))),
      c.slices.map(([a, p, e]) => [a, p, e]),
    );
    t.deepEqual([r.invalidAddresses, r.addressesSkipped], [c.invalid, c.skipped]);
  });
}

test('an existing slice that matches is left alone; a changed address rewrites it in place (PUT, same name)', (t) => {
  const ep = eps([{ addresses: [{ ip: '10.0.0.2' }], notReadyAddresses: [{ ip: '10.0.0.3' }], ports: http }]);
  const s = stored(reconcileMirroredSlices(ep, []).create[0], 'ext-abcde');
  const same = reconcileMirroredSlices(ep, [s]);
  t.deepEqual([same.create.length, same.update.length, same.delete.length], [0, 0, 0]);
  // 10.0.0.3 becomes ready: the same slice is updated.
  const moved = reconcileMirroredSlices(eps([{ addresses: [{ ip: '10.0.0.2' }, { ip: '10.0.0.3' }], ports: http }]), [s]);
  t.deepEqual([moved.create.length, moved.update.length, moved.delete.length], [0, 1, 0]);
  t.is(moved.update[0].metadata.name, 'ext-abcde');
  t.deepEqual(eps2(moved.update[0]), [
    ['10.0.0.2', true],
    ['10.0.0.3', true],
  ]);
});

test('a second slice of the same port mapping is deleted; a port change recycles the old slice into an update; emptied Endpoints delete every slice', (t) => {
  const ep = eps([{ addresses: [{ ip: '10.0.0.2' }], ports: http }]);
  const a = stored(reconcileMirroredSlices(ep, []).create[0], 'ext-aaaaa');
  const b = stored(reconcileMirroredSlices(ep, []).create[0], 'ext-bbbbb');
  const dup = reconcileMirroredSlices(ep, [b, a]);
  t.deepEqual(
    dup.delete.map((s) => s.metadata.name),
    ['ext-bbbbb'],
  );
  t.is(dup.update.length, 0);
  // Port 8080 → 9090: the 8080 slice is not desired any more, the 9090 one would be created: one update instead.
  const ported = reconcileMirroredSlices(eps([{ addresses: [{ ip: '10.0.0.2' }], ports: [{ port: 9090 }] }]), [a]);
  t.deepEqual([ported.create.length, ported.delete.length], [0, 0]);
  t.is(ported.update[0].metadata.name, 'ext-aaaaa');
  t.deepEqual(ported.update[0].ports, [{ name: '', port: 9090, protocol: 'TCP' }]);
  const emptied = reconcileMirroredSlices(eps([]), [a]);
  t.deepEqual(
    emptied.delete.map((s) => s.metadata.name),
    ['ext-aaaaa'],
  );
});

test('shouldMirror: not with endpointslice.kubernetes.io/skip-mirror=true or a leader-election annotation', (t) => {
  t.true(shouldMirror(eps([])));
  t.false(shouldMirror(eps([], { labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } })));
  t.true(shouldMirror(eps([], { labels: { 'endpointslice.kubernetes.io/skip-mirror': 'false' } })));
  t.false(shouldMirror(eps([], { annotations: { 'control-plane.alpha.kubernetes.io/leader': '{}' } })));
  t.false(shouldMirror(undefined));
});
