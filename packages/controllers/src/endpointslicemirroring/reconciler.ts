/**
 * The EndpointSliceMirroring reconciler as a pure function: kubernetes v1.22
 * `pkg/controller/endpointslicemirroring/reconciler.go` (`reconcile`, `reconcileByPortMapping`,
 * `finalize`'s `recycleSlices`), `reconciler_helpers.go` (`desiredCalc.initPorts` / `addAddress`),
 * `endpointset.go` (endpoints identified by addresses + hostname) and `utils.go`
 * (`newEndpointSlice`, `addressToEndpoint`, `epPortsToEpsPorts`). Each subset of a user-managed
 * Endpoints object is mirrored 1:1: its `addresses` as `ready: true`, then its
 * `notReadyAddresses` as `ready: false` (the 1.22 behaviour since PR #102683; no serving or
 * terminating condition is invented), at most `maxEndpointsPerSubset` (1000) per subset, an
 * address that is not an IP skipped; subsets with the same ports and address type share one
 * slice; existing mirrored slices of a port mapping beyond the first are deleted, the first is
 * rewritten (PUT) only if an endpoint was added, removed or changed; creates that coincide with
 * deletes become updates. Slices are labelled with the Endpoints' labels plus
 * `kubernetes.io/service-name` and `endpointslice.kubernetes.io/managed-by:
 * endpointslicemirroring-controller.k8s.io`, owned by the Endpoints (a controller reference).
 * Deterministic where upstream iterates Go maps: desired endpoints in address order, existing
 * slices by name. Simplifications: IPv6 addresses are not re-stringified into canonical form;
 * Endpoints annotations are not copied (that and its comparison came after 1.22).
 */
import { isIP } from 'node:net';
import type { EndpointAddress, EndpointPort, EndpointSlice, Endpoints, SliceEndpoint, SliceEndpointPort } from '@podsim/api';
import { ENDPOINTSLICEMIRRORING_CONTROLLER_NAME, LABEL_MANAGED_BY, LABEL_SERVICE_NAME } from '@podsim/api';
import { endpointsEqualBeyondHash } from '../endpointslice/reconciler.js';

/** `--mirroring-max-endpoints-per-subset` default. */
export const MIRRORING_MAX_ENDPOINTS_PER_SUBSET = 1000;

type AddressType = 'IPv4' | 'IPv6';

/** What one reconcile asks the API for, and what it skipped (for the controller's events). */
export interface MirrorResult {
  readonly create: EndpointSlice[];
  readonly update: EndpointSlice[];
  readonly delete: EndpointSlice[];
  /** Addresses that are not IPs (event `InvalidIPAddress`). */
  readonly invalidAddresses: number;
  /** Addresses not mirrored, invalid ones included (event `TooManyAddressesToMirror` when more than the invalid ones). */
  readonly addressesSkipped: number;
}

/** `epPortsToEpsPorts`: Endpoints ports as slice ports (name "" and protocol TCP when unset, as defaulted). */
export function epPortsToEpsPorts(ports: readonly EndpointPort[] | undefined): SliceEndpointPort[] {
  return (ports ?? []).map((p) => ({ name: p.name ?? '', port: p.port, protocol: p.protocol ?? 'TCP', ...(p.appProtocol !== undefined ? { appProtocol: p.appProtocol } : {}) }));
}

/** `newAddrTypePortMapKey`: address type + the ports as a set. */
function portMapKey(ports: readonly SliceEndpointPort[] | undefined, addressType: string): string {
  const sorted = [...(ports ?? [])].sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '') || (a.port ?? 0) - (b.port ?? 0));
  return `${addressType}|${JSON.stringify(sorted.map((p) => [p.name ?? null, p.port ?? null, p.protocol ?? null, p.appProtocol ?? null]))}`;
}

/** `hashEndpoint`: addresses (sorted) and hostname; conditions, nodeName and targetRef may change in place. */
function endpointKey(e: SliceEndpoint): string {
  return `${[...e.addresses].sort().join(',')}|${e.hostname ?? ''}`;
}

/** `addressToEndpoint`: undefined when the address is not an IP (`net.ParseIP` returns nil). */
export function addressToEndpoint(a: EndpointAddress, ready: boolean): { ep: SliceEndpoint; addressType: AddressType } | undefined {
  const family = isIP(a.ip);
  if (family === 0) return undefined;
  const ep: SliceEndpoint = { addresses: [a.ip], conditions: { ready } };
  if (a.targetRef) ep.targetRef = a.targetRef;
  if (a.nodeName) ep.nodeName = a.nodeName;
  if (a.hostname) ep.hostname = a.hostname;
  return { ep, addressType: family === 4 ? 'IPv4' : 'IPv6' };
}

/** `getEndpointSlicePrefix`: `<name>-` (EndpointSlice names are DNS subdomains, ≤ 253). */
function slicePrefix(name: string): string {
  return name.length + 1 <= 253 - 5 ? `${name}-` : name;
}

/** `newEndpointSlice`: labelled and owned as the controller's, named (update) or generateName'd (create). */
export function newMirroredSlice(endpoints: Endpoints, ports: SliceEndpointPort[], addressType: AddressType, sliceName: string | undefined): EndpointSlice {
  const name = endpoints.metadata.name ?? '';
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      ...(sliceName ? { name: sliceName } : { generateName: slicePrefix(name) }),
      namespace: endpoints.metadata.namespace,
      labels: { ...(endpoints.metadata.labels ?? {}), [LABEL_SERVICE_NAME]: name, [LABEL_MANAGED_BY]: ENDPOINTSLICEMIRRORING_CONTROLLER_NAME },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Endpoints', name, uid: endpoints.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    addressType,
    endpoints: [],
    ports,
  };
}

interface Desired {
  readonly ports: SliceEndpointPort[];
  readonly addressType: AddressType;
  readonly set: Map<string, SliceEndpoint>;
}

/**
 * `reconcile(endpoints, existingSlices)`: the mirrored slices to create (generateName), update
 * (named, PUT) and delete, for the Endpoints object `endpoints` and the slices this controller
 * already mirrored for it.
 */
export function reconcileMirroredSlices(endpoints: Endpoints, existing: readonly EndpointSlice[], maxEndpointsPerSubset = MIRRORING_MAX_ENDPOINTS_PER_SUBSET): MirrorResult {
  const desired = new Map<string, Desired>();
  let invalidAddresses = 0;
  let addressesSkipped = 0;
  for (const subset of endpoints.subsets ?? []) {
    const ports = epPortsToEpsPorts(subset.ports);
    const total = (subset.addresses ?? []).length + (subset.notReadyAddresses ?? []).length;
    let added = 0;
    const add = (list: readonly EndpointAddress[] | undefined, ready: boolean) => {
      for (const a of list ?? []) {
        // At most maxEndpointsPerSubset per subset: one subset maps to one slice.
        if (added >= maxEndpointsPerSubset) break;
        const r = addressToEndpoint(a, ready);
        if (!r) {
          invalidAddresses++;
          continue;
        }
        const key = portMapKey(ports, r.addressType);
        let d = desired.get(key);
        if (!d) desired.set(key, (d = { ports, addressType: r.addressType, set: new Map() }));
        d.set.set(endpointKey(r.ep), r.ep);
        added++;
      }
    };
    add(subset.addresses, true);
    add(subset.notReadyAddresses, false);
    addressesSkipped += total - added;
  }

  const existingByKey = new Map<string, EndpointSlice[]>();
  for (const s of [...existing].sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1))) {
    const k = portMapKey(s.ports, s.addressType);
    const l = existingByKey.get(k);
    if (l) l.push(s);
    else existingByKey.set(k, [s]);
  }
  const toCreate: EndpointSlice[] = [];
  const toUpdate: EndpointSlice[] = [];
  const toDelete: EndpointSlice[] = [];
  for (const [key, d] of desired) {
    const slices = existingByKey.get(key) ?? [];
    if (slices.length > 0) {
      // Keep the first slice of this port mapping; the others go.
      toDelete.push(...slices.slice(1));
      if (!changed(slices[0], d.set)) continue;
    }
    const s = newMirroredSlice(endpoints, d.ports, d.addressType, slices[0]?.metadata.name);
    s.endpoints = [...d.set.values()].sort((a, b) => (a.addresses[0] < b.addresses[0] ? -1 : a.addresses[0] > b.addresses[0] ? 1 : 0)).slice(0, maxEndpointsPerSubset);
    (s.metadata.name ? toUpdate : toCreate).push(s);
  }
  // Port mappings no longer desired: their slices are deleted.
  for (const [key, slices] of existingByKey) if (!desired.has(key)) toDelete.push(...slices);
  recycleSlices(toCreate, toUpdate, toDelete);
  return { create: toCreate, update: toUpdate, delete: toDelete, invalidAddresses, addressesSkipped };
}

/** `totalChanges` ≠ 0: an endpoint of `slice` not desired or different, or a desired one missing. */
function changed(slice: EndpointSlice, set: ReadonlyMap<string, SliceEndpoint>): boolean {
  let matches = 0;
  for (const e of slice.endpoints ?? []) {
    const want = set.get(endpointKey(e));
    if (!want || !endpointsEqualBeyondHash(want, e)) return true;
    matches++;
  }
  return matches !== set.size;
}

/** `recycleSlices`: a create and a delete of the same address type become one update of the deleted slice. */
function recycleSlices(create: EndpointSlice[], update: EndpointSlice[], del: EndpointSlice[]): void {
  for (let i = del.length - 1; i >= 0; i--) {
    const j = create.findIndex((c) => c.addressType === del[i].addressType);
    if (j < 0) continue;
    const [c] = create.splice(j, 1);
    const { generateName: _g, ...meta } = c.metadata;
    update.push({ ...c, metadata: { ...meta, name: del[i].metadata.name } });
    del.splice(i, 1);
  }
}
