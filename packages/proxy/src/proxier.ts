/**
 * The part of kube-proxy that turns Services and EndpointSlices into a node's rules, as a pure
 * machine: kubernetes v1.22 `pkg/proxy/endpointslicecache.go` (slices merged per Service, each
 * endpoint reduced to addresses, nodeName and ready = condition nil or true / serving / terminating),
 * `pkg/proxy/service.go` + `endpoints.go` (`ServiceChangeTracker`, `EndpointChangeTracker`: a change
 * is pending only if the reduced form differs), `pkg/proxy/topology.go` `FilterEndpoints`
 * (`internalTrafficPolicy: Local` keeps local endpoints only) and the cluster-traffic part of
 * `pkg/proxy/iptables/proxier.go` `syncProxyRules`: new ClusterIP connections are balanced
 * uniformly over the **Ready** endpoints; none Ready → a REJECT rule (1.22.4+, #106373). The
 * applied view ({@link AppliedService}) is what routes a node's new connections.
 * Node ports (`KUBE-NODEPORTS`, on every node): ETP Cluster → the same `KUBE-SVC-…` targets;
 * ETP Local → the `KUBE-XLB-…` chain, this node's **Ready** local endpoints only, none → the
 * `"<svc> has no local endpoints"` rule to `KUBE-MARK-DROP` (the ProxyTerminatingEndpoints gate is
 * alpha/off in 1.22, so no fallback to serving+terminating ones); no Ready endpoint anywhere → REJECT
 * for the node ports too (1.22.4+). `sessionAffinity: ClientIP`: the applied view carries the
 * `recent` timeout (`--rcheck --seconds T --reap`), its rules only for Ready endpoints (1.22.4+,
 * #106373); the `recent` tables themselves are per-node kernel state filled by traffic, kept by
 * the traffic evaluation (harness/src/traffic). IPVS mode reuses the same view: real servers =
 * Ready endpoints (local ones for ETP Local node ports), persistence timeout = the affinity timeout.
 * Not modelled: externalIPs and LoadBalancer ingress IPs (no cloud provider: `<pending>`), the
 * health check server's answers (its 200/503 equals `local` being non-empty), UDP conntrack
 * flushing, headless Services (no rules, as upstream).
 */
import type { EndpointSlice, Service } from '@podsim/api';
import { LABEL_HEADLESS_SERVICE, LABEL_SERVICE_NAME } from '@podsim/api';

/** `v1.DefaultClientIPServiceAffinitySeconds` (3 h). */
export const DEFAULT_STICKY_MAX_AGE_SECONDS = 10800;

/** `service.kubernetes.io/service-proxy-name`: objects with it belong to another proxy. */
export const LABEL_SERVICE_PROXY_NAME = 'service.kubernetes.io/service-proxy-name';

/** One endpoint of a node's view (`BaseEndpointInfo`). */
export interface ProxyEndpoint {
  readonly ip: string;
  /** The pod's UID (targetRef), '' if the slice had none. */
  readonly podUid: string;
  readonly nodeName: string;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
}

/** A Service as its rules see it (`BaseServiceInfo`). */
export interface ProxyServiceInfo {
  readonly clusterIP: string;
  /** `nodePort` 0 when the port has none (ClusterIP Services, `allocateLoadBalancerNodePorts: false`). */
  readonly ports: readonly { readonly port: number; readonly protocol: string; readonly nodePort: number }[];
  readonly internalTrafficPolicy: 'Cluster' | 'Local';
  /** `NodeLocalExternal()`: NodePort/LoadBalancer with `externalTrafficPolicy: Local`. */
  readonly externalTrafficPolicy: 'Cluster' | 'Local';
  readonly sessionAffinity: 'None' | 'ClientIP';
  /** `sessionAffinityConfig.clientIP.timeoutSeconds` (default 10800 s) when ClientIP, else 0. */
  readonly stickyMaxAgeSeconds: number;
}

/** What a node's last sync wrote for one Service: the endpoints its new connections go to. */
export interface AppliedService {
  readonly clusterIP: string;
  /** Ready endpoints after FilterEndpoints (the `KUBE-SVC-…` chain's targets), sorted by IP. */
  readonly targets: readonly { readonly ip: string; readonly podUid: string }[];
  /** No usable endpoint: the REJECT rule is in place (connection refused). */
  readonly reject: boolean;
  /** The Service's node ports (sorted), present only when it has any (`KUBE-NODEPORTS` rules). */
  readonly nodePorts?: readonly number[];
  /**
   * ETP Local only: the IPs of this node's Ready endpoints (the `KUBE-XLB-…` chain's targets, a
   * subset of `targets`); empty = the DROP rule for traffic arriving at this node's node ports.
   */
  readonly local?: readonly string[];
  /** ClientIP affinity: the `recent` match's `--seconds` (absent: no affinity rules). */
  readonly affinitySeconds?: number;
}

function svcKeyOfSlice(s: EndpointSlice): string | undefined {
  const name = s.metadata.labels?.[LABEL_SERVICE_NAME];
  return name ? `${s.metadata.namespace ?? ''}/${name}` : undefined;
}

/** kube-proxy's informers skip headless and foreign-proxy objects (`server.go` label selector). */
export function proxyIgnores(labels: Readonly<Record<string, string>> | undefined): boolean {
  return labels !== undefined && (labels[LABEL_SERVICE_PROXY_NAME] !== undefined || labels[LABEL_HEADLESS_SERVICE] !== undefined);
}

/** `newBaseServiceInfo` for the ClusterIP part; undefined for Services that get no rules. */
export function serviceInfo(svc: Service): ProxyServiceInfo | undefined {
  const ip = svc.spec?.clusterIP;
  if (!ip || ip === 'None' || svc.spec?.type === 'ExternalName' || proxyIgnores(svc.metadata.labels)) return undefined;
  const external = svc.spec?.type === 'NodePort' || svc.spec?.type === 'LoadBalancer';
  const affinity = svc.spec?.sessionAffinity === 'ClientIP';
  return {
    clusterIP: ip,
    ports: (svc.spec?.ports ?? []).map((p) => ({ port: p.port, protocol: p.protocol ?? 'TCP', nodePort: external ? (p.nodePort ?? 0) : 0 })),
    internalTrafficPolicy: svc.spec?.internalTrafficPolicy === 'Local' ? 'Local' : 'Cluster',
    externalTrafficPolicy: external && svc.spec?.externalTrafficPolicy === 'Local' ? 'Local' : 'Cluster',
    sessionAffinity: affinity ? 'ClientIP' : 'None',
    // newBaseServiceInfo: stickyMaxAgeSeconds from the config, the API default when absent.
    stickyMaxAgeSeconds: affinity ? (svc.spec?.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_STICKY_MAX_AGE_SECONDS) : 0,
  };
}

/** The reduced form of one slice (`EndpointSliceCache.newEndpointSliceInfo`), endpoints sorted by IP. */
export function sliceEndpoints(s: EndpointSlice): ProxyEndpoint[] {
  const out: ProxyEndpoint[] = [];
  for (const e of s.endpoints ?? []) {
    const ip = e.addresses?.[0];
    if (!ip) continue;
    const c = e.conditions ?? {};
    out.push({
      ip,
      podUid: e.targetRef?.uid ?? '',
      nodeName: e.nodeName ?? '',
      // A nil ready or serving condition counts as true, a nil terminating as false.
      ready: c.ready !== false,
      serving: c.serving !== false,
      terminating: c.terminating === true,
    });
  }
  return out.sort(compareIp);
}

/**
 * {@link sliceEndpoints} per slice object (one version; watch events are never mutated). Every
 * node's kube-proxy on a host thread receives the same event object, so a slice write is
 * reduced once per thread instead of once per node. A hit returns what a miss would compute.
 */
const REDUCED = new WeakMap<EndpointSlice, readonly ProxyEndpoint[]>();

function reducedSlice(s: EndpointSlice): readonly ProxyEndpoint[] {
  let r = REDUCED.get(s);
  if (!r) REDUCED.set(s, (r = sliceEndpoints(s)));
  return r;
}

/** Orders endpoints by IP (code-unit order: for dotted IPv4 strings the same as `localeCompare`, far cheaper). */
function compareIp(a: { readonly ip: string }, b: { readonly ip: string }): number {
  return a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0;
}

function endpointListsEqual(a: readonly ProxyEndpoint[] | undefined, b: readonly ProxyEndpoint[] | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x.ip !== y.ip || x.podUid !== y.podUid || x.nodeName !== y.nodeName || x.ready !== y.ready || x.serving !== y.serving || x.terminating !== y.terminating) return false;
  }
  return true;
}

function serviceInfosEqual(a: ProxyServiceInfo | undefined, b: ProxyServiceInfo | undefined): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  if (a.clusterIP !== b.clusterIP || a.internalTrafficPolicy !== b.internalTrafficPolicy || a.externalTrafficPolicy !== b.externalTrafficPolicy || a.sessionAffinity !== b.sessionAffinity || a.stickyMaxAgeSeconds !== b.stickyMaxAgeSeconds || a.ports.length !== b.ports.length) return false;
  return a.ports.every((p, i) => p.port === b.ports[i].port && p.protocol === b.ports[i].protocol && p.nodePort === b.ports[i].nodePort);
}

function appliedEqual(a: AppliedService | undefined, b: AppliedService | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.clusterIP !== b.clusterIP || a.reject !== b.reject || a.targets.length !== b.targets.length || a.affinitySeconds !== b.affinitySeconds) return false;
  if (!sameList(a.nodePorts, b.nodePorts) || !sameList(a.local, b.local)) return false;
  return a.targets.every((t, i) => t.ip === b.targets[i].ip && t.podUid === b.targets[i].podUid);
}

function sameList<T>(a: readonly T[] | undefined, b: readonly T[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * A node's proxier state: the informers' view (services, slices by Service), the pending
 * changes, and what the last sync applied.
 */
export class Proxier {
  private readonly services = new Map<string, ProxyServiceInfo>();
  /** Per Service key, per slice name, its reduced endpoints. */
  private readonly slices = new Map<string, Map<string, readonly ProxyEndpoint[]>>();
  /** Service keys whose rules may differ from the applied ones. */
  private readonly dirty = new Set<string>();
  private readonly applied = new Map<string, AppliedService>();
  /** Total rules of the applied ruleset (the sync-duration model's input). */
  ruleCount = 0;

  constructor(readonly nodeName: string) {}

  /** `ServiceChangeTracker.Update` (add/update: `svc`; delete: undefined). True when a sync is needed. */
  onService(key: string, svc: Service | undefined): boolean {
    const info = svc ? serviceInfo(svc) : undefined;
    const old = this.services.get(key);
    if (serviceInfosEqual(old, info)) return false;
    if (info) this.services.set(key, info);
    else this.services.delete(key);
    this.dirty.add(key);
    return true;
  }

  /** `EndpointChangeTracker.EndpointSliceUpdate` (delete: `removed`). True when the reduced form changed. */
  onSlice(slice: EndpointSlice, removed: boolean): boolean {
    const key = svcKeyOfSlice(slice);
    // `EndpointSliceUpdate` skips address types this (single-stack IPv4) proxier does not serve,
    // such as an IPv6 slice the mirroring controller made from a user's Endpoints.
    if (!key || proxyIgnores(slice.metadata.labels) || (slice.addressType !== undefined && slice.addressType !== 'IPv4')) return false;
    let m = this.slices.get(key);
    const name = slice.metadata.name ?? '';
    const next = removed ? undefined : reducedSlice(slice);
    const prev = m?.get(name);
    if (endpointListsEqual(prev, next)) return false;
    if (!m) this.slices.set(key, (m = new Map()));
    if (next) m.set(name, next);
    else m.delete(name);
    if (m.size === 0) this.slices.delete(key);
    this.dirty.add(key);
    return true;
  }

  /** The Service keys with pending changes (what the next {@link syncProxyRules} looks at). */
  dirtyKeys(): ReadonlySet<string> {
    return this.dirty;
  }

  /** Is any change pending? */
  get pending(): boolean {
    return this.dirty.size > 0;
  }

  /** The endpoints of a Service from all its slices, deduplicated by IP (first slice wins), sorted. */
  endpointsOf(key: string): ProxyEndpoint[] {
    const m = this.slices.get(key);
    if (!m) return [];
    // One slice: its endpoints are already sorted by IP (stably), so the first of equal IPs
    // (host-network pods share the node's) is the first of a run.
    if (m.size === 1) return m.values().next().value!.filter((e, i, a) => i === 0 || a[i - 1].ip !== e.ip);
    const byIp = new Map<string, ProxyEndpoint>();
    for (const name of [...m.keys()].sort()) for (const e of m.get(name)!) if (!byIp.has(e.ip)) byIp.set(e.ip, e);
    return [...byIp.values()].sort(compareIp);
  }

  /**
   * `syncProxyRules`: checks out every pending change and computes the new rules of the changed
   * Services. Returns the Services whose applied view changed (undefined = rules removed).
   * The caller makes them effective when the sync's duration has passed (`iptables-restore`).
   */
  syncProxyRules(): Map<string, AppliedService | undefined> {
    const changed = new Map<string, AppliedService | undefined>();
    for (const key of [...this.dirty].sort()) {
      const info = this.services.get(key);
      let next: AppliedService | undefined;
      if (info) {
        const eps = this.endpointsOf(key);
        // FilterEndpoints: internalTrafficPolicy Local keeps the node's own endpoints.
        const usable = eps.filter((e) => e.ready && (info.internalTrafficPolicy === 'Cluster' || e.nodeName === this.nodeName));
        next = externalRules(info, eps, this.nodeName, { clusterIP: info.clusterIP, targets: usable.map((e) => ({ ip: e.ip, podUid: e.podUid })), reject: usable.length === 0 });
      }
      const prev = this.applied.get(key);
      if (!appliedEqual(prev, next)) changed.set(key, next);
      if (next) this.applied.set(key, next);
      else this.applied.delete(key);
    }
    this.dirty.clear();
    let rules = 0;
    for (const [key, a] of this.applied) {
      rules += 4 * (this.services.get(key)?.ports.length ?? 1) + 3 * a.targets.length + (a.reject ? 1 : 0);
      // KUBE-NODEPORTS (mark + jump per node port), the XLB chain (2 + its targets or the DROP),
      // and the `recent --rcheck` rule per Ready endpoint chain (its `--set` rides in the chain).
      if (a.nodePorts) rules += 2 * a.nodePorts.length;
      if (a.local) rules += 2 + Math.max(1, a.local.length);
      if (a.affinitySeconds !== undefined) rules += a.targets.length + (a.local?.length ?? 0);
    }
    this.ruleCount = rules;
    return changed;
  }

  /** The applied view of one Service. */
  view(key: string): AppliedService | undefined {
    return this.applied.get(key);
  }
}

/**
 * The node-port and affinity part of `syncProxyRules` for one Service (v1.22.4+ logic, see the
 * header): adds `nodePorts`, the ETP Local `local` targets (Ready endpoints whose `nodeName` is
 * this node, `IsLocal`) and `affinitySeconds` to the cluster view, each only when it applies, so a
 * plain ClusterIP Service's view (and its trace) is unchanged.
 */
function externalRules(info: ProxyServiceInfo, eps: readonly ProxyEndpoint[], nodeName: string, view: AppliedService): AppliedService {
  const nodePorts = [...new Set(info.ports.map((p) => p.nodePort).filter((n) => n > 0))].sort((a, b) => a - b);
  const withPorts = nodePorts.length > 0;
  if (!withPorts && info.sessionAffinity === 'None') return view;
  return {
    ...view,
    ...(withPorts ? { nodePorts } : {}),
    ...(withPorts && info.externalTrafficPolicy === 'Local' ? { local: eps.filter((e) => e.ready && e.nodeName === nodeName).map((e) => e.ip) } : {}),
    ...(info.sessionAffinity === 'ClientIP' ? { affinitySeconds: info.stickyMaxAgeSeconds } : {}),
  };
}

/** Sync-duration model: `D = base + perRule × rules` virtual µs (iptables-restore rewrites the full tables). */
export function syncDurationUs(rules: number, baseUs: number, perRuleUs: number): number {
  return Math.round(baseUs + perRuleUs * rules);
}

/**
 * How `proxy.sync` traces one Service's new applied view. Without a previous view on this
 * proxier (first sync, or a restarted kube-proxy) the full list: `{clusterIP, targets, reject}`;
 * else the change: `{clusterIP, add, remove, reject, count}` (targets as [IP, pod UID]; `count`
 * the number after it). Tracing the change instead of every target keeps the record of a
 * 1,000-endpoint Service small on each of 100 nodes; {@link applyTargetDelta} rebuilds the list.
 */
export type TracedView = (
  | { readonly clusterIP: string; readonly targets: [string, string][]; readonly reject: boolean }
  | { readonly clusterIP: string; readonly add: [string, string][]; readonly remove: [string, string][]; readonly reject: boolean; readonly count: number }
) &
  TracedExternal;

/** The node-port / affinity fields of a view, traced in full when present (small: a node's local endpoints). */
export interface TracedExternal {
  readonly nodePorts?: readonly number[];
  readonly local?: readonly string[];
  readonly affinitySeconds?: number;
}

function tracedExternal(v: AppliedService): TracedExternal {
  return { ...(v.nodePorts ? { nodePorts: v.nodePorts } : {}), ...(v.local ? { local: v.local } : {}), ...(v.affinitySeconds !== undefined ? { affinitySeconds: v.affinitySeconds } : {}) };
}

export function tracedView(prev: AppliedService | undefined, next: AppliedService): TracedView {
  if (!prev) return { clusterIP: next.clusterIP, targets: next.targets.map((t) => [t.ip, t.podUid]), reject: next.reject, ...tracedExternal(next) };
  // Both lists are sorted by IP and unique by IP ({@link Proxier.endpointsOf}): one merge walk.
  const a = prev.targets;
  const b = next.targets;
  const add: [string, string][] = [];
  const remove: [string, string][] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i].ip < b[j].ip)) {
      remove.push([a[i].ip, a[i].podUid]);
      i++;
    } else if (i >= a.length || b[j].ip < a[i].ip) {
      add.push([b[j].ip, b[j].podUid]);
      j++;
    } else {
      // Same IP: a new pod behind a reused IP is a removal and an addition.
      if (a[i].podUid !== b[j].podUid) {
        remove.push([a[i].ip, a[i].podUid]);
        add.push([b[j].ip, b[j].podUid]);
      }
      i++;
      j++;
    }
  }
  return { clusterIP: next.clusterIP, add, remove, reject: next.reject, count: next.targets.length, ...tracedExternal(next) };
}

/**
 * The target list after a traced change: `prev` without `remove`, plus `add`, sorted as
 * {@link Proxier.syncProxyRules} sorts them (by IP, code units), so the same list as the sync
 * applied. The kept tuples are `prev`'s own (shared, not copied).
 */
export function applyTargetDelta<T extends readonly [string, string]>(prev: readonly T[], remove: readonly (readonly [string, string])[], add: readonly T[]): T[] {
  if (remove.length === 0 && add.length === 0) return [...prev];
  const gone = remove.length === 0 ? undefined : new Set(remove.map(([ip, uid]) => `${ip}|${uid}`));
  const kept = gone === undefined ? prev : prev.filter((t) => !gone.has(`${t[0]}|${t[1]}`));
  if (add.length === 0) return [...kept];
  // Merge the kept (sorted) list with the additions (sorted here, as traced in IP order anyway).
  const adds = [...add].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < kept.length || j < adds.length) {
    if (j >= adds.length || (i < kept.length && kept[i][0] <= adds[j][0])) out.push(kept[i++]);
    else out.push(adds[j++]);
  }
  return out;
}
