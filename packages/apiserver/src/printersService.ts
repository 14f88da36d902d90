/**
 * Server-side printing of the Service resources: kubernetes `pkg/printers/internalversion/
 * printers.go` printService (`makePortString`, `getServiceExternalIP`), printEndpoints
 * (`formatEndpoints`: the first 3 `ip:port`, then `+ N more...`) and printEndpointSlice
 * (`formatDiscoveryPorts`, `formatDiscoveryEndpoints`, `listWithMoreString`), with their column
 * definitions (v1.22 line). Kept beside printers.ts so the Service work merges on its own.
 */
import type { Clock, EndpointSlice, Endpoints, Service, TableColumnDefinition, VirtualTime } from '@podsim/api';
import type { PrintedRow } from './printers.js';

const DOC_NAME =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: http://kubernetes.io/docs/user-guide/identifiers#names';
const DOC_CREATION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

function col(name: string, type: string, description: string, priority = 0, format = ''): TableColumnDefinition {
  return { name, type, format, description, priority };
}

/** `serviceColumnDefinitions`. */
export const SERVICE_COLUMNS: readonly TableColumnDefinition[] = [
  col('Name', 'string', DOC_NAME, 0, 'name'),
  col('Type', 'string', 'The type of the service.'),
  col('Cluster-IP', 'string', 'The IP address of the service.'),
  col('External-IP', 'string', 'The external IP address of the service.'),
  col('Port(s)', 'string', 'The ports of the service.'),
  col('Age', 'string', DOC_CREATION),
  col('Selector', 'string', 'Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/', 1),
];

/** `endpointColumnDefinitions`. */
export const ENDPOINTS_COLUMNS: readonly TableColumnDefinition[] = [
  col('Name', 'string', DOC_NAME, 0, 'name'),
  col('Endpoints', 'string', 'Endpoints of the service.'),
  col('Age', 'string', DOC_CREATION),
];

/** `endpointSliceColumnDefinitions`. */
export const ENDPOINTSLICE_COLUMNS: readonly TableColumnDefinition[] = [
  col('Name', 'string', DOC_NAME, 0, 'name'),
  col('AddressType', 'string', 'addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name.'),
  col('Ports', 'string', 'ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates "all ports". Each slice may include a maximum of 100 ports.'),
  col('Endpoints', 'string', 'endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.'),
  col('Age', 'string', DOC_CREATION),
];

/** `labels.FormatLabels`: sorted `k=v,…`, `<none>` when empty. */
function formatLabels(m: Readonly<Record<string, string>> | undefined): string {
  const keys = Object.keys(m ?? {}).sort();
  return keys.length === 0 ? '<none>' : keys.map((k) => `${k}=${m![k]}`).join(',');
}

/** `makePortString`: `port[:nodePort]/protocol`, comma-separated. */
function makePortString(svc: Service): string {
  const ports = svc.spec?.ports ?? [];
  if (ports.length === 0) return '<none>';
  return ports.map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`).join(',');
}

/** `getServiceExternalIP`. */
function externalIP(svc: Service): string {
  const spec = svc.spec ?? {};
  const ext = spec.externalIPs ?? [];
  switch (spec.type ?? 'ClusterIP') {
    case 'ClusterIP':
    case 'NodePort':
      return ext.length > 0 ? ext.join(',') : '<none>';
    case 'LoadBalancer': {
      const lb = (svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || '').filter((s) => s !== '');
      const all = [...lb, ...ext];
      return all.length > 0 ? all.join(',') : '<pending>';
    }
    case 'ExternalName':
      return spec.externalName ?? '';
  }
  return '<unknown>';
}

/** `printService`: NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE [SELECTOR]. */
export function printService(svc: Service, nowUs: VirtualTime, clock: Clock, age: (ts: string | undefined) => string): PrintedRow {
  void nowUs;
  void clock;
  const ip = svc.spec?.clusterIPs?.[0] ?? svc.spec?.clusterIP ?? '<none>';
  return { cells: [svc.metadata.name ?? '', svc.spec?.type ?? '', ip || '<none>', externalIP(svc), makePortString(svc), age(svc.metadata.creationTimestamp), formatLabels(svc.spec?.selector)] };
}

/** `formatEndpoints` with no port filter. */
export function formatEndpoints(ep: Endpoints): string {
  const subsets = ep.subsets ?? [];
  if (subsets.length === 0) return '<none>';
  const list: string[] = [];
  const max = 3;
  let more = false;
  let count = 0;
  const push = (s: string) => {
    if (list.length === max) more = true;
    if (!more) list.push(s);
    count++;
  };
  for (const ss of subsets) {
    const addrs = ss.addresses ?? [];
    if ((ss.ports ?? []).length === 0) for (const a of addrs) push(a.ip);
    else for (const p of ss.ports!) for (const a of addrs) push(`${a.ip}:${p.port}`);
  }
  const ret = list.join(',');
  return more ? `${ret} + ${count - max} more...` : ret;
}

/** `printEndpoints`: NAME ENDPOINTS AGE. */
export function printEndpoints(ep: Endpoints, age: (ts: string | undefined) => string): PrintedRow {
  return { cells: [ep.metadata.name ?? '', formatEndpoints(ep), age(ep.metadata.creationTimestamp)] };
}

function listWithMoreString(list: string[], more: boolean, count: number, max: number): string {
  const ret = list.join(',');
  if (more) return `${ret} + ${count - max} more...`;
  return ret === '' ? '<unset>' : ret;
}

/** `printEndpointSlice`: NAME ADDRESSTYPE PORTS ENDPOINTS AGE. */
export function printEndpointSlice(s: EndpointSlice, age: (ts: string | undefined) => string): PrintedRow {
  const max = 3;
  const ports: string[] = [];
  let pc = 0;
  for (const p of s.ports ?? []) {
    if (ports.length < max) ports.push(p.port !== undefined ? String(p.port) : p.name !== undefined ? p.name : '*');
    pc++;
  }
  const addrs: string[] = [];
  let ac = 0;
  for (const e of s.endpoints ?? []) {
    for (const a of e.addresses ?? []) {
      if (addrs.length < max) addrs.push(a);
      ac++;
    }
  }
  return { cells: [s.metadata.name ?? '', s.addressType, listWithMoreString(ports, pc > max, pc, max), listWithMoreString(addrs, ac > max, ac, max), age(s.metadata.creationTimestamp)] };
}
