/**
 * v1 Service, v1 Endpoints and discovery.k8s.io/v1 EndpointSlice registries: kubernetes v1.22
 * `pkg/registry/core/service/{strategy.go,storage/rest.go}` (the ClusterIP allocation of
 * `REST.Create` → `allocClusterIPs` from `--service-cluster-ip-range`, node ports from
 * `--service-node-port-range` 30000-32767, a health check node port for LoadBalancer Services
 * with `externalTrafficPolicy: Local`; ClusterIP and type immutable-ish rules on update),
 * `pkg/apis/core/v1/defaults.go` `SetDefaults_Service`, the main rules of
 * `pkg/apis/core/validation` `ValidateService` / `ValidateEndpoints` and of
 * `pkg/apis/discovery/validation` `ValidateEndpointSlice`, and the endpoints / endpointslice
 * strategies (no status; EndpointSlice generation +1 on change).
 * Simplifications: IPv4 single stack only; the allocators find the used addresses by listing the
 * stored Services (upstream keeps a bitmap repaired by a controller), so a deleted Service's
 * addresses are free at once; allocation order is seeded (`randomScanStrategy`'s random start).
 */
import type { EndpointSlice, Endpoints, KubeObject, Service, ServicePort, Status } from '@podsim/api';
import { validateLabelKey, validateLabelValue } from '@podsim/api';
import { type FieldError, field, newInternalError, newInvalid } from '../errors.js';
import { semanticEqual } from '../objects.js';
import { nameIsDNSLabel, nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from '../validation.js';
import type { RESTStrategy, RequestContext } from './strategy.js';

/** `--service-cluster-ip-range` (kubeadm's default, 10.96.0.0/12). */
export const SERVICE_CLUSTER_IP_RANGE = '10.96.0.0/12';
/** `--service-node-port-range` default. */
export const SERVICE_NODE_PORT_RANGE = { base: 30000, size: 2768 } as const;
/** `SetDefaults_Service`: ClientIP affinity timeout default (3 h). */
export const DEFAULT_CLIENT_IP_SERVICE_AFFINITY_SECONDS = 10800;

const CIDR_BASE = (10 << 24) | (96 << 16);
const CIDR_SIZE = 1 << 20;

function ipv4ToInt(ip: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return ((parts[0] << 24) >>> 0) + (parts[1] << 16) + (parts[2] << 8) + parts[3];
}

function intToIpv4(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** True when `ip` is inside the service CIDR and neither its network nor its broadcast address. */
export function inServiceRange(ip: string): boolean {
  const n = ipv4ToInt(ip);
  return n !== undefined && n > CIDR_BASE && n < CIDR_BASE + CIDR_SIZE - 1;
}

/** A seeded offset in [0, size) (`randomScanStrategy.AllocateBit`'s random start). */
function seededOffset(rctx: RequestContext, size: number): number {
  return Number.parseInt(rctx.newId(9, '0123456789'), 10) % size;
}

/** The first free value at or after a seeded offset, wrapping (`randomScanStrategy`). */
function scanFree(rctx: RequestContext, size: number, used: (i: number) => boolean): number | undefined {
  const start = seededOffset(rctx, size);
  for (let k = 0; k < size; k++) {
    const i = (start + k) % size;
    if (!used(i)) return i;
  }
  return undefined;
}

const needsNodePorts = (s: Service) => s.spec?.type === 'NodePort' || s.spec?.type === 'LoadBalancer';

/** `SetDefaults_Service` (+ the 1.22 `SetDefaults_ServiceSpec` bits): type, affinity, protocols, targetPorts, traffic policies, families. */
export function setDefaultsService(svc: Service): void {
  const spec = (svc.spec ??= {});
  spec.sessionAffinity ??= 'None';
  if (spec.sessionAffinity === 'ClientIP') {
    spec.sessionAffinityConfig ??= {};
    spec.sessionAffinityConfig.clientIP ??= {};
    spec.sessionAffinityConfig.clientIP.timeoutSeconds ??= DEFAULT_CLIENT_IP_SERVICE_AFFINITY_SECONDS;
  }
  spec.type ??= 'ClusterIP';
  for (const p of spec.ports ?? []) {
    p.protocol ??= 'TCP';
    // A zero or absent targetPort defaults to the port.
    if (p.targetPort === undefined || p.targetPort === 0 || p.targetPort === '') p.targetPort = p.port;
  }
  if (needsNodePorts(svc)) spec.externalTrafficPolicy ??= 'Cluster';
  // ServiceInternalTrafficPolicy is beta (on) in 1.22: ClusterIP/NodePort/LoadBalancer default to Cluster.
  if (spec.type !== 'ExternalName') spec.internalTrafficPolicy ??= 'Cluster';
  if (spec.type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
}

/** The `clusterIP`s in use by stored Services other than `self`. */
function usedClusterIPs(services: readonly KubeObject[], self: Service): Set<number> {
  const out = new Set<number>();
  for (const o of services) {
    const s = o as Service;
    if (s.metadata.namespace === self.metadata.namespace && s.metadata.name === self.metadata.name) continue;
    const n = ipv4ToInt(s.spec?.clusterIP ?? '');
    if (n !== undefined) out.add(n);
  }
  return out;
}

/** The node ports (service ports' and health check) held by stored Services other than `self`. */
function usedNodePorts(services: readonly KubeObject[], self: Service): Set<number> {
  const out = new Set<number>();
  for (const o of services) {
    const s = o as Service;
    if (s.metadata.namespace === self.metadata.namespace && s.metadata.name === self.metadata.name) continue;
    for (const p of s.spec?.ports ?? []) if (p.nodePort) out.add(p.nodePort);
    if (s.spec?.healthCheckNodePort) out.add(s.spec.healthCheckNodePort);
  }
  return out;
}

/**
 * `REST.Create`'s ClusterIP allocation (unless `None` or ExternalName; a requested one is kept
 * and checked by validation). Node ports are allocated after validation, by {@link allocateNodePorts}.
 */
export function allocateServiceAddresses(svc: Service, rctx: RequestContext, listServices: () => readonly KubeObject[]): void {
  const spec = svc.spec;
  if (!spec) return;
  if (spec.type !== 'ExternalName' && spec.clusterIP !== 'None') {
    if (!spec.clusterIP) {
      const used = usedClusterIPs(listServices(), svc);
      // Skip the network address (offset 0) and the broadcast address, as the range allocator does.
      const i = scanFree(rctx, CIDR_SIZE - 2, (k) => used.has(CIDR_BASE + 1 + k));
      if (i !== undefined) spec.clusterIP = intToIpv4(CIDR_BASE + 1 + i);
    }
    if (spec.clusterIP) spec.clusterIPs = [spec.clusterIP];
    spec.ipFamilies ??= ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
  } else if (spec.clusterIP === 'None') {
    spec.clusterIPs = ['None'];
    spec.ipFamilies ??= ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
  }
}

/** `portallocator.ErrNotInRange` / `ErrAllocated` as `Allocate` words them; undefined = free. */
function nodePortProblem(port: number, used: ReadonlySet<number>): string | undefined {
  const { base, size } = SERVICE_NODE_PORT_RANGE;
  if (port < base || port >= base + size) return `provided port is not in the valid range. The range of valid ports is ${base}-${base + size - 1}`;
  if (used.has(port)) return 'provided port is already allocated';
  return undefined;
}

/** `apiservice.NeedsHealthCheck`: a LoadBalancer with `externalTrafficPolicy: Local`. */
export const needsHealthCheck = (s: Service) => s.spec?.type === 'LoadBalancer' && s.spec.externalTrafficPolicy === 'Local';

/**
 * The node-port part of v1.22 `pkg/registry/core/service/storage/rest.go` `REST.Create` /
 * `REST.Update`, run once the Service validated: `initNodePorts` / `updateNodePorts` (a requested
 * `nodePort` is taken if free and in `--service-node-port-range`, else 422
 * `spec.ports[i].nodePort: Invalid value: N: provided port is already allocated`; a missing one is
 * allocated from a seeded random start, `randomScanStrategy`; ports with the same port number share
 * one node port; a LoadBalancer with `allocateLoadBalancerNodePorts: false` gets none, the
 * ServiceLBNodePortControl gate being beta/on), then `allocateHealthCheckNodePort` for
 * {@link needsHealthCheck} (a requested one already allocated is a 500 InternalError
 * `failed to allocate requested HealthCheck NodePort N: …`, as upstream wraps it) and, on update,
 * `healthCheckNodePortUpdate` (kept, released when no longer needed, 422 when changed).
 * `old` is undefined on create. Ports of a deleted Service are free at once (no bitmap repair).
 */
export function allocateNodePorts(svc: Service, rctx: RequestContext, old: Service | undefined, listServices: () => readonly KubeObject[]): Status | undefined {
  const spec = svc.spec;
  if (!spec) return undefined;
  const used = usedNodePorts(listServices(), svc);
  const allocate = () => {
    const i = scanFree(rctx, SERVICE_NODE_PORT_RANGE.size, (k) => used.has(SERVICE_NODE_PORT_RANGE.base + k));
    if (i === undefined) return undefined;
    const port = SERVICE_NODE_PORT_RANGE.base + i;
    used.add(port);
    return port;
  };
  const errs: FieldError[] = [];
  if (needsNodePorts(svc) && !(spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts === false)) {
    const byServicePort = new Map<number, number>();
    (spec.ports ?? []).forEach((p, i) => {
      const shared = byServicePort.get(p.port);
      if (p.nodePort) {
        if (shared === p.nodePort) return;
        const problem = nodePortProblem(p.nodePort, used);
        if (problem) errs.push(field.invalid(`spec.ports[${i}].nodePort`, p.nodePort, problem));
        else used.add(p.nodePort);
      } else {
        const port = shared ?? allocate();
        if (port === undefined) errs.push(field.invalid(`spec.ports[${i}].nodePort`, 0, 'range is full'));
        else p.nodePort = port;
      }
      if (p.nodePort) byServicePort.set(p.port, p.nodePort);
    });
  }
  if (errs.length > 0) return newInvalid({ group: '', kind: 'Service' }, svc.metadata.name ?? '', errs);
  const neededHc = old !== undefined && needsHealthCheck(old);
  if (needsHealthCheck(svc)) {
    if (neededHc) {
      const was = old!.spec?.healthCheckNodePort;
      spec.healthCheckNodePort ||= was;
      if (spec.healthCheckNodePort !== was) {
        return newInvalid({ group: '', kind: 'Service' }, svc.metadata.name ?? '', [
          field.invalid('spec.healthCheckNodePort', spec.healthCheckNodePort, 'cannot change healthCheckNodePort on loadBalancer service with externalTraffic=Local during update'),
        ]);
      }
    } else if (spec.healthCheckNodePort) {
      const problem = nodePortProblem(spec.healthCheckNodePort, used);
      if (problem) return newInternalError(`failed to allocate requested HealthCheck NodePort ${spec.healthCheckNodePort}: ${problem}`);
      used.add(spec.healthCheckNodePort);
    } else {
      const port = allocate();
      if (port === undefined) return newInternalError('failed to allocate a nodePort: range is full');
      spec.healthCheckNodePort = port;
    }
  } else if (neededHc) delete spec.healthCheckNodePort;
  return undefined;
}

const PROTOCOLS = ['TCP', 'UDP', 'SCTP'] as const;
const TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'] as const;

function validatePort(p: ServicePort, i: number, multi: boolean, svc: Service): FieldError[] {
  const path = `spec.ports[${i}]`;
  const errs: FieldError[] = [];
  if (multi && !p.name) errs.push(field.required(`${path}.name`));
  if (p.name) for (const m of nameIsDNSLabel(p.name, false)) errs.push(field.invalid(`${path}.name`, p.name, m));
  if (!Number.isInteger(p.port) || p.port < 1 || p.port > 65535) errs.push(field.invalid(`${path}.port`, p.port, 'must be between 1 and 65535, inclusive'));
  if (p.protocol !== undefined && !(PROTOCOLS as readonly string[]).includes(p.protocol)) errs.push(field.notSupported(`${path}.protocol`, p.protocol, PROTOCOLS));
  const tp = p.targetPort;
  if (typeof tp === 'number' && (!Number.isInteger(tp) || tp < 1 || tp > 65535)) errs.push(field.invalid(`${path}.targetPort`, tp, 'must be between 1 and 65535, inclusive'));
  if (typeof tp === 'string' && !/^[a-z0-9]([a-z0-9-]{0,13})$/.test(tp)) errs.push(field.invalid(`${path}.targetPort`, tp, 'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-), at most 15 characters'));
  if (p.nodePort !== undefined && p.nodePort !== 0 && !needsNodePorts(svc)) errs.push(field.forbidden(`${path}.nodePort`, 'may not be used when `type` is \'ClusterIP\''));
  return errs;
}

/** `ValidateService` (the rules podsim's users meet; IPv4 single stack). */
export function validateService(svc: Service): FieldError[] {
  const errs = validateObjectMeta(svc.metadata, true, nameIsDNSLabel);
  const spec = svc.spec ?? {};
  const type = spec.type ?? 'ClusterIP';
  if (!(TYPES as readonly string[]).includes(type)) errs.push(field.notSupported('spec.type', type, TYPES));
  const ports = spec.ports ?? [];
  if (type !== 'ExternalName') {
    if (ports.length === 0 && spec.clusterIP !== 'None') errs.push(field.required('spec.ports'));
    if (spec.clusterIP && spec.clusterIP !== 'None' && !inServiceRange(spec.clusterIP)) {
      errs.push(field.invalid('spec.clusterIPs[0]', spec.clusterIP, `failed to allocate IP ${spec.clusterIP}: provided IP is not in the valid range. The range of valid IPs is ${SERVICE_CLUSTER_IP_RANGE}`));
    }
  } else if (!spec.externalName) errs.push(field.required('spec.externalName'));
  const names = new Set<string>();
  const nodePorts = new Set<string>();
  ports.forEach((p, i) => {
    errs.push(...validatePort(p, i, ports.length > 1, svc));
    if (p.name) {
      if (names.has(p.name)) errs.push(field.duplicate(`spec.ports[${i}].name`, p.name));
      names.add(p.name);
    }
    // The same node port twice for one protocol (one port may serve TCP and UDP).
    if (p.nodePort) {
      const key = `${p.protocol ?? 'TCP'}/${p.nodePort}`;
      if (nodePorts.has(key)) errs.push(field.duplicate(`spec.ports[${i}].nodePort`, p.nodePort));
      nodePorts.add(key);
    }
  });
  for (const [k, v] of Object.entries(spec.selector ?? {})) {
    const ke = validateLabelKey(k);
    if (ke) errs.push(field.invalid('spec.selector', k, ke));
    const ve = validateLabelValue(v);
    if (ve) errs.push(field.invalid('spec.selector', v, ve));
  }
  if (spec.sessionAffinity !== undefined && spec.sessionAffinity !== 'None' && spec.sessionAffinity !== 'ClientIP') errs.push(field.notSupported('spec.sessionAffinity', spec.sessionAffinity, ['ClientIP', 'None']));
  // ValidateService: with affinity None a sessionAffinityConfig is Forbidden.
  if ((spec.sessionAffinity ?? 'None') === 'None' && spec.sessionAffinityConfig != null) errs.push(field.forbidden('spec.sessionAffinityConfig', 'must not be set when session affinity is None'));
  const timeout = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
  if (timeout !== undefined && (timeout <= 0 || timeout > 86400)) errs.push(field.invalid('spec.sessionAffinityConfig.clientIP.timeoutSeconds', timeout, 'must be greater than 0 and less than 86400'));
  // validateServiceExternalTrafficFieldsValue, then ValidateServiceExternalTrafficFieldsCombination
  // (v1.22 words; REST.Create runs it on the allocated Service, the same 422).
  const etp = spec.externalTrafficPolicy as string | undefined;
  if (etp !== undefined && etp !== '' && etp !== 'Cluster' && etp !== 'Local') errs.push(field.invalid('spec.externalTrafficPolicy', etp, 'ExternalTrafficPolicy must be empty, Cluster or Local'));
  if (spec.healthCheckNodePort !== undefined && spec.healthCheckNodePort < 0) errs.push(field.invalid('spec.healthCheckNodePort', spec.healthCheckNodePort, 'HealthCheckNodePort must be not less than 0'));
  if (etp && type !== 'NodePort' && type !== 'LoadBalancer') errs.push(field.invalid('spec.externalTrafficPolicy', etp, 'ExternalTrafficPolicy can only be set on NodePort and LoadBalancer service'));
  if (spec.internalTrafficPolicy !== undefined && spec.internalTrafficPolicy !== 'Cluster' && spec.internalTrafficPolicy !== 'Local') {
    errs.push(field.notSupported('spec.internalTrafficPolicy', spec.internalTrafficPolicy, ['Cluster', 'Local']));
  }
  // ServiceLBNodePortControl (beta, on in 1.22): the field belongs to LoadBalancer Services only.
  if (spec.allocateLoadBalancerNodePorts != null && type !== 'LoadBalancer') errs.push(field.forbidden('spec.allocateLoadBalancerNodePorts', "may only be used when `type` is 'LoadBalancer'"));
  if (spec.healthCheckNodePort && spec.healthCheckNodePort > 0 && !needsHealthCheck(svc)) {
    errs.push(field.invalid('spec.healthCheckNodePort', spec.healthCheckNodePort, 'HealthCheckNodePort can only be set on LoadBalancer service with ExternalTrafficPolicy=Local'));
  }
  return errs;
}

/** `ValidateServiceUpdate`: ClusterIP is immutable once set (except to and from ExternalName). */
export function validateServiceUpdate(n: Service, o: Service): FieldError[] {
  const errs = [...validateObjectMetaUpdate(n.metadata, o.metadata), ...validateService(n)];
  const oldIP = o.spec?.clusterIP;
  if (o.spec?.type !== 'ExternalName' && n.spec?.type !== 'ExternalName' && oldIP && n.spec?.clusterIP !== oldIP) {
    errs.push(field.invalid('spec.clusterIPs[0]', n.spec?.clusterIP ?? '', 'may not change once set'));
  }
  return errs;
}

/** The Service strategy (`svcStrategy`): status kept on update; addresses allocated on create. */
export function serviceStrategy(listServices: () => readonly KubeObject[]): RESTStrategy<Service> {
  return {
    namespaceScoped: true,
    groupKind: { group: '', kind: 'Service' },
    prepareForCreate(svc, rctx) {
      svc.status = { loadBalancer: {} };
      allocateServiceAddresses(svc, rctx, listServices);
    },
    prepareForUpdate(svc, old) {
      svc.status = old.status;
      // `dropTypeDependentFields` (strategy.go): leaving NodePort/LoadBalancer clears the node ports
      // and the policy the client sent back unchanged (they would make the update invalid); leaving
      // ETP Local clears an unchanged health check node port (healthCheckNodePortUpdate frees it).
      // A changed value is the client's own and stays, to be judged by validation.
      if (svc.spec && old.spec && needsNodePorts(old) && !needsNodePorts(svc)) {
        const oldPorts = old.spec.ports ?? [];
        const ports = svc.spec.ports ?? [];
        if (ports.every((p, i) => !p.nodePort || p.nodePort === oldPorts[i]?.nodePort)) for (const p of ports) delete p.nodePort;
        if (svc.spec.externalTrafficPolicy === old.spec.externalTrafficPolicy) delete svc.spec.externalTrafficPolicy;
      }
      if (svc.spec && needsHealthCheck(old) && !needsHealthCheck(svc) && svc.spec.healthCheckNodePort === old.spec?.healthCheckNodePort) delete svc.spec.healthCheckNodePort;
      // Leaving LoadBalancer with allocateLoadBalancerNodePorts sent back unchanged drops it too.
      if (svc.spec && old.spec?.type === 'LoadBalancer' && svc.spec.type !== 'LoadBalancer' && svc.spec.allocateLoadBalancerNodePorts != null && svc.spec.allocateLoadBalancerNodePorts === old.spec.allocateLoadBalancerNodePorts) delete svc.spec.allocateLoadBalancerNodePorts;
      // An update that drops the allocated ClusterIP keeps it (the REST copies it over when unset).
      if (svc.spec && old.spec?.clusterIP && !svc.spec.clusterIP) {
        svc.spec.clusterIP = old.spec.clusterIP;
        svc.spec.clusterIPs = old.spec.clusterIPs;
      }
      if (svc.spec && old.spec) {
        svc.spec.ipFamilies ??= old.spec.ipFamilies;
        svc.spec.ipFamilyPolicy ??= old.spec.ipFamilyPolicy;
        for (const p of svc.spec.ports ?? []) {
          const was = old.spec.ports?.find((q) => q.port === p.port && (q.protocol ?? 'TCP') === (p.protocol ?? 'TCP'));
          if (!p.nodePort && was?.nodePort && needsNodePorts(svc)) p.nodePort = was.nodePort;
        }
      }
    },
    validate: validateService,
    validateUpdate: validateServiceUpdate,
    allocate: (svc, rctx, old) => allocateNodePorts(svc, rctx, old, listServices),
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: true,
  };
}

/** `ValidateEndpoints`: addresses are IPs, ports 1-65535 (0 allowed for none), names unique. */
export function validateEndpoints(ep: Endpoints): FieldError[] {
  const errs = validateObjectMeta(ep.metadata, true, nameIsDNSSubdomain);
  (ep.subsets ?? []).forEach((ss0, i) => {
    const ss = ss0 ?? {};
    for (const [list, addrs] of [['addresses', ss.addresses ?? []], ['notReadyAddresses', ss.notReadyAddresses ?? []]] as const) {
      addrs.forEach((a, j) => {
        // A missing ip (an address `{hostname: a}`, `{ip: null}`, a null element) is IsValidIP("").
        const ip = typeof a?.ip === 'string' ? a.ip : '';
        const at = `subsets[${i}].${list}[${j}].ip`;
        const v4 = ipv4ToInt(ip);
        if (v4 === undefined && !ip.includes(':')) errs.push(field.invalid(at, ip, 'must be a valid IP address'));
        else if (v4 !== undefined) {
          // validateNonSpecialIP (core validation v1.22): an endpoint may not be a special address.
          const special =
            v4 === 0 ? 'may not be unspecified (0.0.0.0)'
            : v4 >>> 24 === 127 ? 'may not be in the loopback range (127.0.0.0/8)'
            : v4 >>> 16 === (169 << 8) + 254 ? 'may not be in the link-local range (169.254.0.0/16)'
            : v4 >>> 8 === (224 << 16) ? 'may not be in the link-local multicast range (224.0.0.0/24)'
            : undefined;
          if (special) errs.push(field.invalid(at, ip, special));
        }
      });
    }
    (ss.ports ?? []).forEach((p, j) => {
      if (!Number.isInteger(p?.port) || p.port < 1 || p.port > 65535) errs.push(field.invalid(`subsets[${i}].ports[${j}].port`, p?.port, 'must be between 1 and 65535, inclusive'));
    });
  });
  return errs;
}

export const endpointsStrategy: RESTStrategy<Endpoints> = {
  namespaceScoped: true,
  groupKind: { group: '', kind: 'Endpoints' },
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: validateEndpoints,
  validateUpdate: (n, o) => [...validateObjectMetaUpdate(n.metadata, o.metadata), ...validateEndpoints(n)],
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
};

/** `maxEndpoints` of `ValidateEndpointSlice`. */
export const MAX_ENDPOINTS_PER_SLICE_API = 1000;

/** `ValidateEndpointSlice`: addressType, ≤ 1000 endpoints each with 1 address, ports ≤ 100. */
export function validateEndpointSlice(s: EndpointSlice): FieldError[] {
  const errs = validateObjectMeta(s.metadata, true, nameIsDNSSubdomain);
  if (!['IPv4', 'IPv6', 'FQDN'].includes(s.addressType)) errs.push(field.notSupported('addressType', s.addressType, ['IPv4', 'IPv6', 'FQDN']));
  const eps = s.endpoints ?? [];
  if (eps.length > MAX_ENDPOINTS_PER_SLICE_API) errs.push({ type: 'FieldValueTooMany', field: 'endpoints', badValue: eps.length, detail: `must have at most ${MAX_ENDPOINTS_PER_SLICE_API} items` } as FieldError);
  eps.forEach((e, i) => {
    if ((e.addresses ?? []).length !== 1) errs.push(field.invalid(`endpoints[${i}].addresses`, e.addresses, 'must contain at least 1 address'));
    if (s.addressType === 'IPv4') for (const a of e.addresses ?? []) if (ipv4ToInt(a) === undefined) errs.push(field.invalid(`endpoints[${i}].addresses`, a, 'must be a valid IPv4 address'));
  });
  if ((s.ports ?? []).length > 100) errs.push({ type: 'FieldValueTooMany', field: 'ports', badValue: s.ports!.length, detail: 'must have at most 100 items' } as FieldError);
  return errs;
}

export const endpointSliceStrategy: RESTStrategy<EndpointSlice> = {
  namespaceScoped: true,
  groupKind: { group: 'discovery.k8s.io', kind: 'EndpointSlice' },
  prepareForCreate(s) {
    s.metadata.generation = 1;
  },
  prepareForUpdate(s, old) {
    // `endpointSliceStrategy.PrepareForUpdate`: any change but metadata bumps the generation.
    const { metadata: _n, ...nRest } = s;
    const { metadata: _o, ...oRest } = old;
    s.metadata.generation = (old.metadata.generation ?? 0) + (semanticEqual(nRest, oRest) ? 0 : 1);
  },
  validate: validateEndpointSlice,
  validateUpdate: (n, o) => {
    const errs = [...validateObjectMetaUpdate(n.metadata, o.metadata), ...validateEndpointSlice(n)];
    if (n.addressType !== o.addressType) errs.push(field.invalid('addressType', n.addressType, 'field is immutable'));
    return errs;
  },
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  defaultGarbageCollectionPolicy: () => 'DeleteDependents',
};
