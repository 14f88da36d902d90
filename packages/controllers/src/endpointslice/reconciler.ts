/**
 * The EndpointSlice reconciler as a pure function: kubernetes v1.22
 * `pkg/controller/endpointslice/reconciler.go` (`reconcile`, `reconcileByPortMapping`,
 * `finalize`, `getSliceToFill`) and `utils.go` (`podToEndpoint`, `newEndpointSlice`,
 * `getEndpointPorts`). With the `EndpointSliceTerminatingCondition` gate as 1.22.8 ships it (beta,
 * **on**), a terminating pod stays in its slice with `ready=false, serving=<PodReady>,
 * terminating=true` until the pod object is gone or terminal. Endpoints are grouped by port
 * mapping, existing slices are walked first (stale endpoints dropped, changed ones replaced),
 * the rest fill updated slices (fullest first), then the unchanged slice that fits best, then new
 * slices of at most `maxEndpointsPerSlice`; never rebalanced. A Service without endpoints keeps
 * one placeholder slice; creates that coincide with deletes become updates.
 * Deterministic where upstream pops from a Go map: desired endpoints in pod-name order.
 * Not modelled: zones (no node informer; topology hints are alpha/off), IPv6 and FQDN slices.
 */
import type { EndpointSlice, Pod, Service, SliceEndpoint, SliceEndpointPort } from '@podsim/api';
import { ENDPOINTSLICE_CONTROLLER_NAME, LABEL_HEADLESS_SERVICE, LABEL_MANAGED_BY, LABEL_SERVICE_NAME } from '@podsim/api';
import { isPodReady } from '../podutil.js';
import { compareStrings, findPort, podIPv4, shouldPodBeInEndpoints, shouldSetHostname } from '../endpoint/endpointUtil.js';

/** `--max-endpoints-per-slice` default. */
export const MAX_ENDPOINTS_PER_SLICE = 100;

/** Feature gates of the reconciler (1.22.8 defaults: EndpointSliceTerminatingCondition beta, on). */
export interface ReconcilerGates {
  readonly endpointSliceTerminatingCondition?: boolean;
}

/** `podToEndpoint`: ready = publishNotReadyAddresses ∨ (serving ∧ ¬terminating). */
export function podToEndpoint(pod: Pod, svc: Service, ip: string, gates: ReconcilerGates = {}): SliceEndpoint {
  const serving = isPodReady(pod);
  const terminating = !!pod.metadata.deletionTimestamp;
  // For compatibility, a terminating pod is never ready unless the Service publishes not-ready addresses.
  const ready = svc.spec?.publishNotReadyAddresses === true || (serving && !terminating);
  const gate = gates.endpointSliceTerminatingCondition ?? true;
  const ep: SliceEndpoint = {
    addresses: [ip],
    conditions: gate ? { ready, serving, terminating } : { ready },
    targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid, resourceVersion: pod.metadata.resourceVersion },
  };
  if (pod.spec.nodeName) ep.nodeName = pod.spec.nodeName;
  if (shouldSetHostname(pod, svc)) ep.hostname = pod.spec.hostname;
  return ep;
}

/** `getEndpointPorts`: the slice ports of a pod (Service ports whose target the pod has). */
export function getEndpointPorts(svc: Service, pod: Pod): SliceEndpointPort[] {
  const out: SliceEndpointPort[] = [];
  for (const sp of svc.spec?.ports ?? []) {
    const port = findPort(pod, sp);
    if (port === undefined) continue;
    out.push({ name: sp.name ?? '', port, protocol: sp.protocol ?? 'TCP', ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) });
  }
  return out;
}

/** `endpointutil.NewPortMapKey`: ports compared as a set (sorted, plain fields in a fixed order). */
function portMapKey(ports: readonly SliceEndpointPort[] | undefined): string {
  const sorted = [...(ports ?? [])].sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '') || (a.port ?? 0) - (b.port ?? 0));
  return JSON.stringify(sorted.map((p) => [p.name ?? null, p.port ?? null, p.protocol ?? null, p.appProtocol ?? null]));
}

/** The hash identity of an endpoint (`endpointHashObj`: addresses, hostname, target ns/name). */
function endpointKey(e: SliceEndpoint): string {
  return `${e.addresses.join(',')}|${e.hostname ?? ''}|${e.targetRef?.namespace ?? ''}/${e.targetRef?.name ?? ''}`;
}

/**
 * `endpointsEqualBeyondHash`: conditions, nodeName, zone, targetRef (resourceVersion ignored),
 * field by field (it runs for every endpoint of every slice on every sync).
 */
export function endpointsEqualBeyondHash(a: SliceEndpoint, b: SliceEndpoint): boolean {
  const ca = a.conditions ?? {};
  const cb = b.conditions ?? {};
  if (ca.ready !== cb.ready || ca.serving !== cb.serving || ca.terminating !== cb.terminating) return false;
  if ((a.nodeName ?? '') !== (b.nodeName ?? '') || (a.zone ?? '') !== (b.zone ?? '')) return false;
  const ta = a.targetRef;
  const tb = b.targetRef;
  if (!ta || !tb) return ta === tb;
  return ta.kind === tb.kind && ta.namespace === tb.namespace && ta.name === tb.name && ta.uid === tb.uid && ta.apiVersion === tb.apiVersion && ta.fieldPath === tb.fieldPath;
}

/** `ownedBy`: the slice's controller owner reference is the Service. */
export function ownedBy(slice: EndpointSlice, svc: Service): boolean {
  return (slice.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.kind === 'Service' && r.uid === svc.metadata.uid);
}

/** `newEndpointSlice`: generateName `<svc>-`, owned by the Service, labelled service-name + managed-by + the Service's labels. */
export function newEndpointSlice(svc: Service, ports: SliceEndpointPort[]): EndpointSlice {
  const labels: Record<string, string> = { ...(svc.metadata.labels ?? {}), [LABEL_SERVICE_NAME]: svc.metadata.name ?? '', [LABEL_MANAGED_BY]: ENDPOINTSLICE_CONTROLLER_NAME };
  if (svc.spec?.clusterIP === 'None') labels[LABEL_HEADLESS_SERVICE] = '';
  // getEndpointSlicePrefix: the Service name truncated so the generated name stays ≤ 63.
  const prefix = (svc.metadata.name ?? '').slice(0, 57);
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      generateName: `${prefix}-`,
      namespace: svc.metadata.namespace,
      labels,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: svc.metadata.name ?? '', uid: svc.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    addressType: 'IPv4',
    endpoints: [],
    ports,
  };
}

export interface ReconcileResult {
  readonly create: EndpointSlice[];
  readonly update: EndpointSlice[];
  readonly delete: EndpointSlice[];
}

function isPlaceholder(s: EndpointSlice): boolean {
  return (s.endpoints ?? []).length === 0 && (s.ports ?? []).length === 0;
}

/** One pod's desired endpoint: its ports, their {@link portMapKey}, the endpoint and its {@link endpointKey}. */
interface DesiredEndpoint {
  readonly ports: SliceEndpointPort[];
  readonly portKey: string;
  readonly ep: SliceEndpoint;
  readonly key: string;
}

/**
 * Per pod object (one version: informer objects are replaced, never mutated), the inputs it was
 * computed for and its desired endpoint (undefined: not an endpoint). A sync of a Service with
 * 1,000 pods after one pod changed recomputes only that pod's. A hit returns what a miss would compute.
 */
const DESIRED = new WeakMap<Pod, { svc: Service; includeTerminating: boolean; gate: boolean; out: DesiredEndpoint | undefined }>();

function desiredEndpoint(pod: Pod, svc: Service, includeTerminating: boolean, gate: boolean): DesiredEndpoint | undefined {
  const hit = DESIRED.get(pod);
  if (hit && hit.svc === svc && hit.includeTerminating === includeTerminating && hit.gate === gate) return hit.out;
  let out: DesiredEndpoint | undefined;
  const ip = shouldPodBeInEndpoints(pod, includeTerminating) ? podIPv4(pod) : undefined;
  if (ip) {
    const ports = getEndpointPorts(svc, pod);
    const ep = podToEndpoint(pod, svc, ip, { endpointSliceTerminatingCondition: gate });
    out = { ports, portKey: portMapKey(ports), ep, key: endpointKey(ep) };
  }
  DESIRED.set(pod, { svc, includeTerminating, gate, out });
  return out;
}

/**
 * `reconcile(service, pods, existingSlices, triggerTime)` for the IPv4 address type: the slices
 * to create (no name: generateName), update (named) and delete.
 */
export function reconcileSlices(svc: Service, pods: readonly Pod[], existing: readonly EndpointSlice[], maxEndpointsPerSlice = MAX_ENDPOINTS_PER_SLICE, gates: ReconcilerGates = {}): ReconcileResult {
  const includeTerminating = svc.spec?.publishNotReadyAddresses === true || (gates.endpointSliceTerminatingCondition ?? true);
  // Desired endpoints by port mapping, in pod-name order.
  const desired = new Map<string, { ports: SliceEndpointPort[]; set: Map<string, SliceEndpoint> }>();
  for (const pod of [...pods].sort((a, b) => compareStrings(a.metadata.name ?? '', b.metadata.name ?? ''))) {
    const c = desiredEndpoint(pod, svc, includeTerminating, gates.endpointSliceTerminatingCondition ?? true);
    if (!c) continue;
    let d = desired.get(c.portKey);
    if (!d) desired.set(c.portKey, (d = { ports: c.ports, set: new Map() }));
    d.set.set(c.key, c.ep);
  }
  const toDelete: EndpointSlice[] = [];
  const byPortMap = new Map<string, EndpointSlice[]>();
  for (const s of existing) {
    const k = portMapKey(s.ports);
    if (ownedBy(s, svc) && s.addressType === 'IPv4' && desired.has(k)) {
      const l = byPortMap.get(k) ?? [];
      l.push(s);
      byPortMap.set(k, l);
    } else toDelete.push(s);
  }
  const toCreate: EndpointSlice[] = [];
  const toUpdate: EndpointSlice[] = [];
  for (const [k, d] of desired) {
    const r = reconcileByPortMapping(svc, byPortMap.get(k) ?? [], d.set, d.ports, maxEndpointsPerSlice);
    toCreate.push(...r.create);
    toUpdate.push(...r.update);
    toDelete.push(...r.delete);
  }
  // When no slice would exist, keep (or create) the placeholder.
  if (existing.length === toDelete.length && toCreate.length === 0) {
    const ph = newEndpointSlice(svc, []);
    const i = toDelete.findIndex((s) => isPlaceholder(s) && ownedBy(s, svc));
    if (toDelete.length === 1 && i === 0) toDelete.splice(0, 1);
    else toCreate.push(ph);
  }
  // finalize: a create that coincides with a delete becomes an update of the slice to delete.
  for (let i = 0; i < toDelete.length; ) {
    if (toCreate.length === 0) break;
    const del = toDelete[i];
    if (ownedBy(del, svc) && del.addressType === 'IPv4') {
      const s = toCreate.pop()!;
      const { generateName: _g, ...meta } = s.metadata;
      toUpdate.push({ ...s, metadata: { ...meta, name: del.metadata.name, uid: del.metadata.uid, resourceVersion: del.metadata.resourceVersion, generation: del.metadata.generation } });
      toDelete.splice(i, 1);
    } else i++;
  }
  return { create: toCreate, update: toUpdate, delete: toDelete };
}

function reconcileByPortMapping(
  svc: Service,
  existing: readonly EndpointSlice[],
  desiredSet: Map<string, SliceEndpoint>,
  ports: SliceEndpointPort[],
  max: number,
): ReconcileResult {
  const update = new Map<string, EndpointSlice>();
  const del: EndpointSlice[] = [];
  const unchanged = new Map<string, EndpointSlice>();
  // 1. Walk the existing slices: drop endpoints no longer desired, replace changed ones.
  for (const s of existing) {
    const kept: SliceEndpoint[] = [];
    let changed = false;
    for (const ep of s.endpoints ?? []) {
      const k = endpointKey(ep);
      const want = desiredSet.get(k);
      if (want) {
        if (!endpointsEqualBeyondHash(ep, want)) {
          changed = true;
          kept.push(want);
        } else kept.push(ep);
        desiredSet.delete(k);
      } else changed = true;
    }
    if (changed) {
      if (kept.length === 0) del.push(s);
      else update.set(s.metadata.name ?? '', { ...s, endpoints: kept });
    } else unchanged.set(s.metadata.name ?? '', s);
  }
  const pop = (): SliceEndpoint | undefined => {
    const first = desiredSet.entries().next();
    if (first.done) return undefined;
    desiredSet.delete(first.value[0]);
    return first.value[1];
  };
  // 2. Fill the slices being updated, fullest first.
  if (desiredSet.size > 0 && update.size > 0) {
    const slices = [...update.values()].sort((a, b) => b.endpoints.length - a.endpoints.length);
    for (const s of slices) {
      while (s.endpoints.length < max && desiredSet.size > 0) s.endpoints = [...s.endpoints, pop()!];
    }
  }
  // 3. The rest: one unchanged slice that fits them all (the fullest such), else new slices.
  const create: EndpointSlice[] = [];
  while (desiredSet.size > 0) {
    let fill: EndpointSlice | undefined;
    if (desiredSet.size < max && unchanged.size > 0) {
      let best: EndpointSlice | undefined;
      for (const s of unchanged.values()) {
        const n = s.endpoints.length;
        if (n + desiredSet.size <= max && (!best || n > best.endpoints.length)) best = s;
      }
      if (best) fill = { ...best, endpoints: [...best.endpoints] };
    }
    fill ??= newEndpointSlice(svc, ports);
    while (fill.endpoints.length < max && desiredSet.size > 0) fill.endpoints.push(pop()!);
    if (fill.metadata.name) {
      update.set(fill.metadata.name, fill);
      unchanged.delete(fill.metadata.name);
    } else create.push(fill);
  }
  return { create, update: [...update.values()], delete: del };
}
