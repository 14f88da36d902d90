/**
 * The Endpoints controller: kubernetes v1.22 `pkg/controller/endpoint/endpoints_controller.go`.
 * Service add/update/delete enqueue the Service; pod add/update/delete enqueue every Service
 * whose selector matches (`GetServicesToUpdateOnPodChange`) after `endpointUpdatesBatchPeriod`
 * (default 0); `--concurrent-endpoint-syncs` 5 workers. `syncService` lists the selected pods,
 * drops those `ShouldPodBeInEndpoints` rejects (terminal, no IP, or terminating unless the
 * Service tolerates unready endpoints — so a deleted pod leaves `Endpoints` at once), puts Ready
 * (or tolerated) pods in `addresses` and the rest in `notReadyAddresses`, repacks per port set,
 * truncates to `maxCapacity` 1000 (ready first, annotation `over-capacity: truncated`) and
 * creates or PUTs the Endpoints unless nothing changed (targetRef resourceVersions ignored).
 * A failed write records a Warning `FailedToCreateEndpoint` / `FailedToUpdateEndpoint` event and
 * is retried rate-limited. Simplifications: no `last-change-trigger-time` annotation (a DELETE is
 * no trigger anyway); IPv4 only.
 */
import type { ApiResult, EndpointAddress, EndpointPort, EndpointSubset, Endpoints, ObjectReference, Pod, Service } from '@podsim/api';
import { ANNOTATION_OVER_CAPACITY, LABEL_HEADLESS_SERVICE } from '@podsim/api';
import type { ApiClient } from '../client.js';
import { ControllerEventRecorder } from '../events.js';
import { type Sync, call, isNotFound, isOk, statusOf, syncErrorOf } from '../coroutine.js';
import type { ControllerEnv } from '../env.js';
import type { Informer } from '../informer.js';
import { keyOf, mapsEqual, objectKey, splitKey } from '../objects.js';
import { isPodReady } from '../podutil.js';
import { type SyncResult, Workers } from '../workqueue.js';
import { addServiceAndPodTriggers, compareStrings, findPort, podIPv4, servicePods, shouldPodBeInEndpoints, shouldSetHostname, tolerateUnready } from './endpointUtil.js';

/** `--concurrent-endpoint-syncs` default. */
export const CONCURRENT_ENDPOINT_SYNCS = 5;
/** `maxCapacity`: most addresses one Endpoints object keeps (1.22+, PR #103520). */
export const ENDPOINTS_MAX_CAPACITY = 1000;

export interface EndpointsControllerOptions {
  readonly workers?: number;
  /** `--endpoint-updates-batch-period`, virtual µs (default 0). */
  readonly batchPeriodUs?: number;
}

/** `podToEndpointAddressForService`: IP, nodeName, targetRef (+ hostname when ShouldSetHostname). */
function podToAddress(pod: Pod, svc: Service, ip: string): EndpointAddress {
  const a: EndpointAddress = {
    ip,
    ...(pod.spec.nodeName ? { nodeName: pod.spec.nodeName } : {}),
    targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid, resourceVersion: pod.metadata.resourceVersion },
  };
  if (shouldSetHostname(pod, svc)) a.hostname = pod.spec.hostname;
  return a;
}

/** A port set's identity within one sync (JSON of plain fields in a fixed order). */
function portsKey(ports: readonly EndpointPort[]): string {
  return JSON.stringify(ports.map((p) => [p.name ?? null, p.port, p.protocol ?? null, p.appProtocol ?? null]));
}

/** What one pod adds to a Service's Endpoints: an address, ready or not, per port set. */
interface PodContribution {
  readonly ports: EndpointPort[];
  /** {@link portsKey} of `ports`. */
  readonly key: string;
  readonly addr: EndpointAddress;
  /** The address's identity within a port set: `ip|pod UID`. */
  readonly addrKey: string;
  readonly ready: boolean;
}

/**
 * Per pod object (one version: informer objects are replaced, never mutated), the Service object
 * and tolerate flag it was computed for and its contributions. A sync of a Service with 1,000
 * pods after one pod changed recomputes only that pod's (the others' objects are the same).
 * Determinism: a hit returns what a miss would compute.
 */
const CONTRIBUTIONS = new WeakMap<Pod, { svc: Service; tolerate: boolean; out: readonly PodContribution[] }>();

/** Steps 3–5 of `syncService` for one pod (ShouldPodBeInEndpoints, podToEndpointAddressForService, FindPort per Service port). */
function podContributions(pod: Pod, svc: Service, tolerate: boolean): readonly PodContribution[] {
  const hit = CONTRIBUTIONS.get(pod);
  if (hit && hit.svc === svc && hit.tolerate === tolerate) return hit.out;
  const out: PodContribution[] = [];
  const ip = shouldPodBeInEndpoints(pod, tolerate) ? podIPv4(pod) : undefined;
  if (ip) {
    const addr = podToAddress(pod, svc, ip);
    const addrKey = `${addr.ip}|${addr.targetRef?.uid ?? ''}`;
    const ready = tolerate || isPodReady(pod);
    const sports = svc.spec?.ports ?? [];
    // Headless Services without ports publish bare addresses.
    if (sports.length === 0) {
      if (svc.spec?.clusterIP === 'None') out.push({ ports: [], key: portsKey([]), addr, addrKey, ready });
    } else {
      for (const sp of sports) {
        const port = findPort(pod, sp);
        if (port === undefined) continue;
        const ports: EndpointPort[] = [{ ...(sp.name ? { name: sp.name } : {}), port, protocol: sp.protocol ?? 'TCP', ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) }];
        out.push({ ports, key: portsKey(ports), addr, addrKey, ready });
      }
    }
  }
  CONTRIBUTIONS.set(pod, { svc, tolerate, out });
  return out;
}

/**
 * The desired subsets of `svc` over the selected `pods` (steps 3–6 of `syncService` and
 * `endpoints.RepackSubsets`): one subset per distinct port set, addresses sorted by IP; an address
 * both ready and not ready is ready. Also the counts before truncation.
 */
export function desiredSubsets(svc: Service, pods: readonly Pod[]): { subsets: EndpointSubset[]; ready: number; notReady: number } {
  const tolerate = tolerateUnready(svc);
  const groups = new Map<string, { ports: EndpointPort[]; ready: Map<string, EndpointAddress>; notReady: Map<string, EndpointAddress> }>();
  for (const pod of pods) {
    for (const c of podContributions(pod, svc, tolerate)) {
      let g = groups.get(c.key);
      if (!g) groups.set(c.key, (g = { ports: c.ports, ready: new Map(), notReady: new Map() }));
      (c.ready ? g.ready : g.notReady).set(c.addrKey, c.addr);
    }
  }
  // RepackSubsets: merge the per-port subsets that share an address set into one multi-port subset.
  const byAddrs = new Map<string, { ports: EndpointPort[]; ready: EndpointAddress[]; notReady: EndpointAddress[] }>();
  let ready = 0;
  let notReady = 0;
  for (const g of groups.values()) {
    for (const k of g.ready.keys()) g.notReady.delete(k);
    const r = [...g.ready.values()].sort((a, b) => compareStrings(a.ip, b.ip));
    const n = [...g.notReady.values()].sort((a, b) => compareStrings(a.ip, b.ip));
    // The address sets' identity (IP + pod UID, ready then not ready) as one string; with one
    // port set (the usual Service) there is nothing to merge, so no key is built.
    const key = groups.size === 1 ? '' : `${r.map((a) => `${a.ip}|${a.targetRef?.uid ?? ''}`).join(',')}#${n.map((a) => `${a.ip}|${a.targetRef?.uid ?? ''}`).join(',')}`;
    const e = byAddrs.get(key);
    if (e) e.ports.push(...g.ports);
    else byAddrs.set(key, { ports: [...g.ports], ready: r, notReady: n });
  }
  const subsets: EndpointSubset[] = [];
  for (const e of byAddrs.values()) {
    ready += e.ready.length;
    notReady += e.notReady.length;
    subsets.push({
      ...(e.ready.length ? { addresses: e.ready } : {}),
      ...(e.notReady.length ? { notReadyAddresses: e.notReady } : {}),
      ...(e.ports.length ? { ports: e.ports.sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '') || a.port - b.port) } : {}),
    });
  }
  return { subsets, ready, notReady };
}

/** `truncateEndpoints`: keep ≤ max addresses, ready ones first, proportionally per subset. */
export function truncateSubsets(subsets: EndpointSubset[], ready: number, notReady: number, max = ENDPOINTS_MAX_CAPACITY): { subsets: EndpointSubset[]; truncated: boolean } {
  const total = ready + notReady;
  if (total <= max) return { subsets, truncated: false };
  const canReady = Math.min(ready, max);
  const canNotReady = max - canReady;
  let leftR = canReady;
  let leftN = canNotReady;
  const out = subsets.map((s) => {
    const r = (s.addresses ?? []).slice(0, Math.min(leftR, Math.ceil(((s.addresses ?? []).length / Math.max(1, ready)) * canReady)));
    leftR -= r.length;
    const n = (s.notReadyAddresses ?? []).slice(0, Math.min(leftN, Math.ceil(((s.notReadyAddresses ?? []).length / Math.max(1, notReady)) * canNotReady)));
    leftN -= n.length;
    return { ...(r.length ? { addresses: r } : {}), ...(n.length ? { notReadyAddresses: n } : {}), ...(s.ports ? { ports: s.ports } : {}) };
  });
  return { subsets: out, truncated: true };
}

/** Object references equal apart from their resourceVersion (field by field, no serialising). */
function refsEqualIgnoreResourceVersion(a: ObjectReference | undefined, b: ObjectReference | undefined): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  return a.kind === b.kind && a.namespace === b.namespace && a.name === b.name && a.uid === b.uid && a.apiVersion === b.apiVersion && a.fieldPath === b.fieldPath;
}

function addressListsEqual(a: readonly EndpointAddress[] | undefined, b: readonly EndpointAddress[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) {
    const p = x[i];
    const q = y[i];
    if (p.ip !== q.ip || p.hostname !== q.hostname || p.nodeName !== q.nodeName || !refsEqualIgnoreResourceVersion(p.targetRef, q.targetRef)) return false;
  }
  return true;
}

function portListsEqual(a: readonly EndpointPort[] | undefined, b: readonly EndpointPort[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i].name !== y[i].name || x[i].port !== y[i].port || x[i].protocol !== y[i].protocol || x[i].appProtocol !== y[i].appProtocol) return false;
  return true;
}

/**
 * `EndpointSubsetsEqualIgnoreResourceVersion`: the same subsets in the same order, addresses
 * compared field by field with targetRef resourceVersions ignored. O(addresses), no serialising
 * (this runs on every sync of a Service with 1,000 pods).
 */
export function subsetsEqualIgnoreResourceVersion(a: readonly EndpointSubset[] | undefined, b: readonly EndpointSubset[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) {
    if (!addressListsEqual(x[i].addresses, y[i].addresses) || !addressListsEqual(x[i].notReadyAddresses, y[i].notReadyAddresses) || !portListsEqual(x[i].ports, y[i].ports)) return false;
  }
  return true;
}

export class EndpointsController {
  readonly workers: Workers;
  private readonly batchPeriodUs: number;
  private readonly recorder: ControllerEventRecorder;
  /** Endpoints writes (create + update) done (for tests and metrics). */
  writes = 0;

  constructor(
    private readonly env: ControllerEnv,
    private readonly services: Informer<Service>,
    private readonly pods: Informer<Pod>,
    private readonly endpoints: Informer<Endpoints>,
    private readonly client: ApiClient,
    opts: EndpointsControllerOptions = {},
  ) {
    this.batchPeriodUs = opts.batchPeriodUs ?? 0;
    this.recorder = new ControllerEventRecorder(env, client, 'endpoint-controller');
    this.workers = new Workers(env, opts.workers ?? CONCURRENT_ENDPOINT_SYNCS, (key) => this.syncService(key), client.sender);
    addServiceAndPodTriggers(services, pods, this.workers.queue, this.batchPeriodUs);
    // A deleted Endpoints object of a live Service is recreated.
    endpoints.addEventHandler({ onDelete: (ep) => this.services.get(objectKey(ep)) && this.workers.queue.add(objectKey(ep)) });
  }

  /** `syncService(key)`. */
  *syncService(key: string): Sync<SyncResult> {
    const { namespace, name } = splitKey(key);
    const svc = this.services.get(key);
    if (!svc) {
      // The Service is gone: delete its Endpoints (a 404 is fine).
      if (!this.endpoints.get(key)) return undefined;
      const res: ApiResult = yield* call({ type: 'ApiDelete', resource: 'endpoints', namespace, name });
      return isOk(res) || isNotFound(res) ? undefined : syncErrorOf(res, `delete Endpoints ${key}`);
    }
    // A Service without a selector has user-managed Endpoints.
    const pods = servicePods(svc, this.pods.values());
    if (!pods) return undefined;
    const d = desiredSubsets(svc, pods);
    const { subsets, truncated } = truncateSubsets(d.subsets, d.ready, d.notReady);
    const current = this.endpoints.get(key);
    const labels: Record<string, string> = { ...(svc.metadata.labels ?? {}) };
    if (svc.spec?.clusterIP === 'None') labels[LABEL_HEADLESS_SERVICE] = '';
    const curLabels = { ...(current?.metadata.labels ?? {}) };
    const overCapacityOk = (current?.metadata.annotations?.[ANNOTATION_OVER_CAPACITY] === 'truncated') === truncated;
    if (current && subsetsEqualIgnoreResourceVersion(current.subsets, subsets) && mapsEqual(curLabels, labels) && overCapacityOk) return undefined;
    const annotations: Record<string, string> = { ...(current?.metadata.annotations ?? {}) };
    delete annotations[ANNOTATION_OVER_CAPACITY];
    if (truncated) annotations[ANNOTATION_OVER_CAPACITY] = 'truncated';
    const obj: Endpoints = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        ...(current?.metadata ?? {}),
        name,
        namespace,
        labels,
        ...(Object.keys(annotations).length ? { annotations } : { annotations: undefined }),
      },
      subsets,
    };
    if (!Object.keys(annotations).length) delete obj.metadata.annotations;
    this.writes++;
    const res: ApiResult = current
      ? yield* call({ type: 'ApiUpdate', resource: 'endpoints', namespace, name, object: obj })
      : yield* call({ type: 'ApiCreate', resource: 'endpoints', namespace, object: { ...obj, metadata: { name, namespace, labels, ...(obj.metadata.annotations ? { annotations: obj.metadata.annotations } : {}) } } });
    if (isOk(res)) return undefined;
    // Creating in a terminating namespace is Forbidden: nothing to retry.
    if (!current && res.code === 403) return undefined;
    // Also for a conflict (the informer behind this controller's own last write), as upstream:
    // the well-known "FailedToUpdateEndpoint … the object has been modified" warning.
    const why = statusOf(res).message ?? `HTTP ${res.code}`;
    if (current) this.recorder.event(obj, 'Warning', 'FailedToUpdateEndpoint', `Failed to update endpoint ${namespace}/${name}: ${why}`);
    else this.recorder.event(obj, 'Warning', 'FailedToCreateEndpoint', `Failed to create endpoint for service ${namespace}/${name}: ${why}`);
    return syncErrorOf(res, `${current ? 'update' : 'create'} Endpoints ${keyOf(namespace, name)}`);
  }
}
