/**
 * Invariant checkers of spec endpoints-traffic §12 (issue #18), outside the actors, over the
 * trace: the apiserver's `api.write` records of Services, Endpoints and EndpointSlices (with the
 * target UIDs and conditions it records for them) and kube-proxy's `proxy.sync`. Checked: §12.1
 * (Endpoints exclusion), §12.2/§12.3 (a terminating endpoint is never ready; ready ⇒ serving ∧
 * ¬terminating), §12.4 (object sizes against the API limits), the "a slice never lists a
 * pod the apiserver deleted once the controller synced", §12.5 (a node's rules only target
 * endpoints Ready in the slices), §12.6 (sync rate) and §12.9/§12.10 (the ETP Local XLB chain,
 * whose emptiness is also the health check node port's 503, holds only the node's own Ready pods). The time-based ones allow the
 * controllers and kube-proxy {@link OBSERVE_TOLERANCE_US} to observe a write, and are skipped in
 * runs with injected faults (a delayed watch makes them unknowable from the trace). Not observable
 * here: §12.7, §12.8, §12.11, §12.12 (conntrack, UDP flush, preStop ordering is the
 * deletion checker `prestop-before-sigterm`, propagation independence).
 */
import { US_PER_SECOND, type TraceRecord } from '@podsim/api';
import type { TraceModel } from './model.js';
import type { Invariant, Violation } from './invariants.js';
import { proxyViews } from '../traffic/proxyViews.js';

/** How long a controller or kube-proxy may take to observe a write (watch + queue + sync), µs. */
export const OBSERVE_TOLERANCE_US = 5 * US_PER_SECOND;
/** `maxCapacity` of an Endpoints object and `maxEndpoints` of an EndpointSlice. */
const MAX_ENDPOINTS = 1000;

const sec = (us: number) => `${(us / US_PER_SECOND).toFixed(6).replace(/\.?0+$/, '')}s`;

interface Writes {
  /**
   * The endpoints controller's Endpoints writes (a user's Endpoints of a selector-less Service is
   * not the controller's: the API takes more than its 1000-address maxCapacity, as v1.22 does, and
   * the mirroring controller caps the slices it makes of it).
   */
  readonly endpoints: TraceRecord[];
  readonly slices: TraceRecord[];
  readonly services: Map<string, boolean>;
  readonly syncs: TraceRecord[];
  readonly faulted: boolean;
}

const cache = new WeakMap<TraceModel, Writes>();

function writesOf(m: TraceModel): Writes {
  let w = cache.get(m);
  if (w) return w;
  const endpoints: TraceRecord[] = [];
  const slices: TraceRecord[] = [];
  const services = new Map<string, boolean>();
  const syncs: TraceRecord[] = [];
  let faulted = false;
  for (const r of m.records) {
    if (r.kind.startsWith('fault.')) faulted = true;
    if (r.kind === 'proxy.sync') syncs.push(r);
    if (r.kind !== 'api.write') continue;
    const d = r.data as { resource?: string; event?: string; namespace?: string; name?: string; publishNotReadyAddresses?: boolean; tolerateUnready?: string; client?: string };
    if (d.resource === 'endpoints' && d.event !== 'DELETED' && (d.client === undefined || d.client === 'kube-controller-manager')) endpoints.push(r);
    if (d.resource === 'endpointslices' && d.event !== 'DELETED') slices.push(r);
    if (d.resource === 'services') services.set(`${d.namespace}/${d.name}`, d.publishNotReadyAddresses === true || ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(d.tolerateUnready ?? ''));
  }
  w = { endpoints, slices, services, syncs, faulted };
  cache.set(m, w);
  return w;
}

/** Per pod UID: when its deletionTimestamp was first written, and when it was DELETED. */
function podTimes(m: TraceModel): Map<string, { terminatingAt?: number; deletedAt?: number; name: string }> {
  const out = new Map<string, { terminatingAt?: number; deletedAt?: number; name: string }>();
  for (const [uid, ws] of m.podWrites) {
    out.set(uid, { terminatingAt: ws.find((w) => w.deletionTimestamp !== undefined)?.t, deletedAt: ws.find((w) => w.event === 'DELETED')?.t, name: ws[0]?.name ?? uid });
  }
  return out;
}

type SliceEp = [string, boolean | null, boolean | null, boolean | null];

export const TRAFFIC_INVARIANTS: readonly Invariant[] = [
  {
    id: 'endpoints-exclude-terminating',
    spec: 'endpoints-traffic §12.1',
    title: 'an Endpoints object written once the controller saw a pod terminating lists it nowhere (Services without publishNotReadyAddresses)',
    check(m) {
      const w = writesOf(m);
      if (w.faulted) return [];
      const pods = podTimes(m);
      const out: Violation[] = [];
      for (const r of w.endpoints) {
        const d = r.data as { namespace: string; name: string; addresses?: string[]; notReadyAddresses?: string[] };
        if (w.services.get(`${d.namespace}/${d.name}`) !== false) continue;
        for (const uid of [...(d.addresses ?? []), ...(d.notReadyAddresses ?? [])]) {
          const p = pods.get(uid);
          if (p?.terminatingAt !== undefined && r.t > p.terminatingAt + OBSERVE_TOLERANCE_US) {
            out.push({ invariant: 'endpoints-exclude-terminating', t: r.t, message: `Endpoints ${d.namespace}/${d.name} written at ${sec(r.t)} still lists pod ${p.name}, terminating since ${sec(p.terminatingAt)}` });
          }
        }
      }
      return out;
    },
  },
  {
    id: 'slice-terminating-not-ready',
    spec: 'endpoints-traffic §12.2, §12.3',
    title: 'a managed EndpointSlice endpoint that is ready is serving and not terminating (Services without publishNotReadyAddresses)',
    check(m) {
      const w = writesOf(m);
      const out: Violation[] = [];
      for (const r of w.slices) {
        const d = r.data as { namespace: string; name: string; service: string; managedBy: string; endpoints?: SliceEp[] };
        if (d.managedBy !== 'endpointslice-controller.k8s.io' || w.services.get(`${d.namespace}/${d.service}`) !== false) continue;
        for (const [uid, ready, serving, terminating] of d.endpoints ?? []) {
          if (ready === true && (serving === false || terminating === true)) {
            out.push({ invariant: 'slice-terminating-not-ready', t: r.t, message: `EndpointSlice ${d.namespace}/${d.name} at ${sec(r.t)}: endpoint ${uid} is ready with serving=${serving}, terminating=${terminating}` });
          }
        }
      }
      return out;
    },
  },
  {
    id: 'endpoint-object-size',
    spec: 'endpoints-traffic §12.4',
    title: 'no Endpoints object the endpoints controller writes has more than 1000 addresses and no EndpointSlice more than 1000 endpoints',
    check(m) {
      const w = writesOf(m);
      const out: Violation[] = [];
      for (const r of w.endpoints) {
        const d = r.data as { namespace: string; name: string; addresses?: string[]; notReadyAddresses?: string[] };
        const n = (d.addresses?.length ?? 0) + (d.notReadyAddresses?.length ?? 0);
        if (n > MAX_ENDPOINTS) out.push({ invariant: 'endpoint-object-size', t: r.t, message: `Endpoints ${d.namespace}/${d.name} has ${n} addresses (max ${MAX_ENDPOINTS})` });
      }
      for (const r of w.slices) {
        const d = r.data as { namespace: string; name: string; endpoints?: SliceEp[] };
        const n = d.endpoints?.length ?? 0;
        if (n > MAX_ENDPOINTS) out.push({ invariant: 'endpoint-object-size', t: r.t, message: `EndpointSlice ${d.namespace}/${d.name} has ${n} endpoints (max ${MAX_ENDPOINTS})` });
      }
      return out;
    },
  },
  {
    id: 'slice-drops-deleted-pods',
    spec: 'issue #18; endpoints-traffic §4.4',
    title: 'an EndpointSlice written once the controller saw a pod DELETED does not list it',
    check(m) {
      const w = writesOf(m);
      if (w.faulted) return [];
      const pods = podTimes(m);
      const out: Violation[] = [];
      for (const r of w.slices) {
        const d = r.data as { namespace: string; name: string; endpoints?: SliceEp[] };
        for (const [uid] of d.endpoints ?? []) {
          const p = pods.get(uid);
          if (p?.deletedAt !== undefined && r.t > p.deletedAt + OBSERVE_TOLERANCE_US) {
            out.push({ invariant: 'slice-drops-deleted-pods', t: r.t, message: `EndpointSlice ${d.namespace}/${d.name} written at ${sec(r.t)} lists pod ${p.name}, deleted at ${sec(p.deletedAt)}` });
          }
        }
      }
      return out;
    },
  },
  {
    id: 'proxy-routes-ready-only',
    spec: 'endpoints-traffic §12.5',
    title: "a node's kube-proxy rules send new connections only to endpoints Ready in the Service's slices",
    check(m) {
      const w = writesOf(m);
      if (w.faulted || w.syncs.length === 0) return [];
      // Per Service key, per pod UID: the times its ready condition changed in the slices (last write wins).
      const readyAt = new Map<string, Map<string, { t: number; ready: boolean }[]>>();
      for (const r of w.slices) {
        const d = r.data as { namespace: string; service: string; endpoints?: SliceEp[] };
        const key = `${d.namespace}/${d.service}`;
        let per = readyAt.get(key);
        if (!per) readyAt.set(key, (per = new Map()));
        for (const [uid, ready] of d.endpoints ?? []) {
          const l = per.get(uid) ?? [];
          const isReady = ready !== false;
          if (l.at(-1)?.ready !== isReady) l.push({ t: r.t, ready: isReady });
          per.set(uid, l);
        }
      }
      const out: Violation[] = [];
      // Every target of every changed view (the traced deltas rebuilt into full lists).
      for (const [node, perSvc] of proxyViews(w.syncs)) {
        for (const [key, points] of perSvc) {
          for (const p of points) {
            for (const [ip, uid] of p.targets ?? []) {
              // An endpoint without a targetRef (mirrored from a user's Endpoints) is traced by its IP.
              const hist = readyAt.get(key)?.get(uid || ip) ?? [];
              // The pod's slice state as kube-proxy could have seen it when the sync started (the last at or before).
              let i = hist.length - 1;
              while (i >= 0 && hist[i].t > p.startUs) i--;
              const seen = i >= 0 ? hist[i] : undefined;
              if (!seen) {
                out.push({ invariant: 'proxy-routes-ready-only', t: p.t, message: `kube-proxy/${node} sync at ${sec(p.t)} targets ${ip} (${uid}) of ${key}, never in its EndpointSlices before` });
              } else if (!seen.ready && p.startUs > seen.t + OBSERVE_TOLERANCE_US) {
                out.push({ invariant: 'proxy-routes-ready-only', t: p.t, message: `kube-proxy/${node} sync at ${sec(p.t)} targets ${ip} of ${key}, not ready in its slice since ${sec(seen.t)}` });
              }
            }
          }
        }
      }
      return out;
    },
  },
  {
    id: 'proxy-sync-rate',
    spec: 'endpoints-traffic §12.6',
    title: "a node's syncs never outrun the BoundedFrequencyRunner's token bucket (burst, one per minSyncPeriod)",
    check(m) {
      const w = writesOf(m);
      const byNode = new Map<string, { start: number; min: number; burst: number }[]>();
      for (const s of w.syncs) {
        const d = s.data as { node: string; startUs: number; minSyncPeriodUs?: number; burstSyncs?: number };
        if (!d.minSyncPeriodUs) continue;
        const l = byNode.get(d.node) ?? [];
        l.push({ start: d.startUs, min: d.minSyncPeriodUs, burst: d.burstSyncs ?? 2 });
        byNode.set(d.node, l);
      }
      const out: Violation[] = [];
      for (const [node, l] of byNode) {
        l.sort((a, b) => a.start - b.start);
        // Any k+1 consecutive syncs need at least (k + 1 − burst) full token periods between the first and the last.
        for (let i = 0; i < l.length; i++) {
          const { min, burst } = l[i];
          const j = i + burst;
          if (j >= l.length) break;
          const span = l[j].start - l[i].start;
          if (span + 1 < min) out.push({ invariant: 'proxy-sync-rate', t: l[j].start, message: `kube-proxy/${node}: ${burst + 1} syncs within ${sec(span)} (burst ${burst}, min sync period ${sec(min)})` });
        }
      }
      return out;
    },
  },
  {
    id: 'proxy-xlb-local-only',
    spec: 'endpoints-traffic §12.9, §12.10',
    title: "a node's ETP Local node-port chain (KUBE-XLB) holds only that node's own Ready endpoints: external traffic is never forwarded to another node",
    check(m) {
      const w = writesOf(m);
      if (w.syncs.length === 0) return [];
      // Which node each pod network lives on (its runtime), by IP and pod UID.
      const nodeOf = new Map<string, string>();
      for (const r of m.records) {
        if (r.kind !== 'cri.network' || !r.actor.startsWith('runtime/')) continue;
        const d = r.data as { podUid: string; ip: string; up: boolean };
        if (d.up) nodeOf.set(`${d.ip}|${d.podUid}`, r.actor.slice('runtime/'.length));
      }
      const out: Violation[] = [];
      for (const [node, perSvc] of proxyViews(w.syncs)) {
        for (const [key, points] of perSvc) {
          for (const p of points) {
            for (const ip of p.local ?? []) {
              const target = (p.targets ?? []).find((x) => x[0] === ip);
              const at = target ? nodeOf.get(`${ip}|${target[1]}`) : undefined;
              // The health check node port answers 200 iff this list is non-empty (§12.9), so a wrong entry is a wrong answer too.
              if (!target) out.push({ invariant: 'proxy-xlb-local-only', t: p.t, message: `kube-proxy/${node} sync at ${sec(p.t)}: the XLB chain of ${key} targets ${ip}, not a Ready endpoint of its rules` });
              else if (at !== undefined && at !== node) out.push({ invariant: 'proxy-xlb-local-only', t: p.t, message: `kube-proxy/${node} sync at ${sec(p.t)}: the XLB chain of ${key} targets ${ip}, a pod on ${at}` });
            }
          }
        }
      }
      return out;
    },
  },
];
