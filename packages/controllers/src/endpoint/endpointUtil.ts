/**
 * What the Endpoints and EndpointSlice controllers share: kubernetes v1.22
 * `pkg/controller/util/endpoint/controller_utils.go` (`ShouldPodBeInEndpoints`,
 * `ShouldSetHostname`, `podEndpointsChanged`, `GetServicesToUpdateOnPodChange` and the
 * `ServiceSelectorCache` role: the Services whose selector matches a pod) and
 * `pkg/api/v1/pod/util.go` `FindPort`. Pure functions over plain objects.
 */
import type { Pod, Service, ServicePort } from '@podsim/api';
import { ANNOTATION_TOLERATE_UNREADY } from '@podsim/api';
import { isPodReady } from '../podutil.js';
import type { Informer } from '../informer.js';
import { objectKey } from '../objects.js';

/** `ShouldPodBeInEndpoints(pod, includeTerminating)`: not terminal, has an IP, and (unless included) not terminating. */
export function shouldPodBeInEndpoints(pod: Pod, includeTerminating: boolean): boolean {
  const phase = pod.status?.phase;
  // A pod that will never run again (terminal phase) is never an endpoint.
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  if (!pod.status?.podIP && !(pod.status?.podIPs ?? []).length) return false;
  if (!includeTerminating && pod.metadata.deletionTimestamp) return false;
  return true;
}

/** The pod's IPv4 address (its first IP). */
export function podIPv4(pod: Pod): string | undefined {
  const ips = pod.status?.podIPs?.map((p) => p.ip) ?? (pod.status?.podIP ? [pod.status.podIP] : []);
  return ips.find((ip) => !ip.includes(':'));
}

/** `ShouldSetHostname`: the pod's hostname is published when its subdomain is the Service's name. */
export function shouldSetHostname(pod: Pod, svc: Service): boolean {
  return !!pod.spec.hostname && pod.spec.subdomain === svc.metadata.name && svc.metadata.namespace === pod.metadata.namespace;
}

/**
 * `tolerateUnreadyEndpoints`: `spec.publishNotReadyAddresses`, overridden by the deprecated
 * `service.alpha.kubernetes.io/tolerate-unready-endpoints` annotation when it parses as a bool.
 */
export function tolerateUnready(svc: Service): boolean {
  const a = svc.metadata.annotations?.[ANNOTATION_TOLERATE_UNREADY];
  if (a !== undefined) {
    const b = parseGoBool(a);
    if (b !== undefined) return b;
  }
  return svc.spec?.publishNotReadyAddresses === true;
}

/** `strconv.ParseBool`. */
function parseGoBool(s: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(s)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return false;
  return undefined;
}

/**
 * `podutil.FindPort`: the container port a Service port targets — a number as is, a name looked
 * up among the pod's container ports with the same protocol; undefined when the name is not found.
 */
export function findPort(pod: Pod, sp: ServicePort): number | undefined {
  const tp = sp.targetPort ?? sp.port;
  if (typeof tp === 'number') return tp;
  if (/^\d+$/.test(tp)) return Number(tp);
  for (const c of pod.spec.containers) {
    for (const p of c.ports ?? []) if (p.name === tp && (p.protocol ?? 'TCP') === (sp.protocol ?? 'TCP')) return p.containerPort;
  }
  return undefined;
}

/** The Service's selector when it has one (a Service without a selector has user-managed endpoints). */
function serviceSelector(s: Service): Readonly<Record<string, string>> | undefined {
  const sel = s.spec?.selector;
  return sel && Object.keys(sel).length > 0 ? sel : undefined;
}

/** `labels.SelectorFromSet(selector).Matches(labels)`: every key of the selector, equal. */
function selects(sel: Readonly<Record<string, string>>, pod: Pod): boolean {
  const labels = pod.metadata.labels ?? {};
  return Object.entries(sel).every(([k, v]) => labels[k] === v);
}

/** The Services of the pod's namespace whose (non-empty) selector matches its labels (`GetPodServiceMemberships`). */
export function podServiceMemberships(services: Iterable<Service>, pod: Pod): Set<string> {
  const out = new Set<string>();
  for (const s of services) {
    if (s.metadata.namespace !== pod.metadata.namespace) continue;
    const sel = serviceSelector(s);
    if (sel && selects(sel, pod)) out.add(`${s.metadata.namespace}/${s.metadata.name}`);
  }
  return out;
}

/**
 * The pods of the Service's namespace its selector matches (the `podLister.Pods(ns).List(selector)`
 * both endpoint controllers start a sync with), or undefined when it has no selector (its
 * endpoints are the user's).
 */
export function servicePods(svc: Service, pods: Iterable<Pod>): Pod[] | undefined {
  const sel = serviceSelector(svc);
  if (!sel) return undefined;
  const out: Pod[] = [];
  for (const p of pods) if (p.metadata.namespace === svc.metadata.namespace && selects(sel, p)) out.push(p);
  return out;
}

function podIPsKey(p: Pod): string {
  return (p.status?.podIPs ?? []).map((x) => x.ip).join(',') || (p.status?.podIP ?? '');
}

/**
 * `podEndpointsChanged`: a change the endpoints care about — the deletionTimestamp, the Ready
 * condition, the IPs, hostname/subdomain, or (`labelsChanged`) the labels.
 */
export function podEndpointsChanged(oldPod: Pod, newPod: Pod): { labelsChanged: boolean; changed: boolean } {
  const ol = JSON.stringify(Object.entries(oldPod.metadata.labels ?? {}).sort());
  const nl = JSON.stringify(Object.entries(newPod.metadata.labels ?? {}).sort());
  const labelsChanged = ol !== nl || oldPod.spec.hostname !== newPod.spec.hostname || oldPod.spec.subdomain !== newPod.spec.subdomain;
  // A pod's deletionTimestamp changing is an endpoint change (the pod leaves the Endpoints).
  if (!!oldPod.metadata.deletionTimestamp !== !!newPod.metadata.deletionTimestamp) return { labelsChanged, changed: true };
  if (isPodReady(oldPod) !== isPodReady(newPod)) return { labelsChanged, changed: true };
  if (podIPsKey(oldPod) !== podIPsKey(newPod)) return { labelsChanged, changed: true };
  if (oldPod.status?.phase !== newPod.status?.phase && (newPod.status?.phase === 'Succeeded' || newPod.status?.phase === 'Failed')) return { labelsChanged, changed: true };
  return { labelsChanged, changed: false };
}

/** `GetServicesToUpdateOnPodChange`: the Service keys to resync after a pod update. */
export function servicesToUpdateOnPodChange(services: Iterable<Service>, oldPod: Pod, newPod: Pod): Set<string> {
  // Periodic resyncs send equal resourceVersions: nothing changed.
  if (oldPod.metadata.resourceVersion === newPod.metadata.resourceVersion) return new Set();
  const { labelsChanged, changed } = podEndpointsChanged(oldPod, newPod);
  if (!labelsChanged && !changed) return new Set();
  const list = [...services];
  const now = podServiceMemberships(list, newPod);
  if (!labelsChanged) return now;
  const before = podServiceMemberships(list, oldPod);
  if (changed) return new Set([...now, ...before]);
  // Only labels changed: the Services the pod joined or left.
  const diff = new Set<string>();
  for (const k of now) if (!before.has(k)) diff.add(k);
  for (const k of before) if (!now.has(k)) diff.add(k);
  return diff;
}

/**
 * The Service and pod event handlers the Endpoints and EndpointSlice controllers share (both
 * `NewController`s in 1.22: a Service add/update/delete enqueues its key at once; a pod
 * add/update/delete enqueues the Services it belongs to after `batchPeriodUs`, the
 * `--endpoint(slice)-updates-batch-period`). Without Services no pod change matters, so a storm
 * of pod events costs nothing here.
 */
export function addServiceAndPodTriggers(
  services: Informer<Service>,
  pods: Informer<Pod>,
  queue: { add(key: string): void; addAfter(key: string, delayUs: number): void },
  batchPeriodUs: number,
): void {
  const enqueue = (s: Service) => queue.add(objectKey(s));
  services.addEventHandler({ onAdd: enqueue, onUpdate: (_o, s) => enqueue(s), onDelete: enqueue });
  const batch = (keys: Iterable<string>) => {
    for (const k of keys) queue.addAfter(k, batchPeriodUs);
  };
  pods.addEventHandler({
    onAdd: (p) => services.size > 0 && batch(podServiceMemberships(services.values(), p)),
    onUpdate: (o, p) => services.size > 0 && batch(servicesToUpdateOnPodChange(services.values(), o, p)),
    onDelete: (p) => services.size > 0 && batch(podServiceMemberships(services.values(), p)),
  });
}

/**
 * Orders strings by UTF-16 code units. For IPv4 addresses and DNS-1123 names (lowercase letters,
 * digits, `-`, `.`) this is the order `localeCompare` gives, at a fraction of its cost (the
 * endpoint controllers sort every selected pod on every sync).
 */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
