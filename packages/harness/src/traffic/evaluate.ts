/**
 * Client traffic to Services (issue #18; spec endpoints-traffic §9, §11.2), evaluated over a
 * finished run's trace. Requests do not change the cluster (no server load is modelled), so
 * each one is decided after the run from what the actors recorded, exactly as §11.2 decides it:
 * 1. a keep-alive request reuses its pooled connection, pinned (conntrack) to the pod chosen when
 *    it was opened, whatever the rules say now;
 * 2. a new connection from node j at time t uses node j's **applied** kube-proxy view at t (the
 *    last `proxy.sync` that ended by t): no rules yet → timed out (NO_RULES), REJECT → refused
 *    (REJECT_NO_ENDPOINTS), else a seeded uniform pick among the Ready targets;
 * 3. the chosen pod: sandbox network gone (`cri.network` down) → timed out (TIMEOUT_DEAD_IP);
 *    no listening process (not started, exited, or its listener closed
 *    `podsim.dev/close-listener-after` after SIGTERM) → refused (REFUSED_POD); else the request
 *    runs for `podsim.dev/service-time` and is reset (RESET_INFLIGHT) if the process exits or the
 *    drain limit (`podsim.dev/drain` after the close) passes before it ends.
 * A node powered off (`nodeDown`: its runtime crashed, engine.crash of `runtime/<node>`) takes its
 * pods' IPs with it at that instant — the sandboxes are gone, so new connections to them time out
 * (TIMEOUT_DEAD_IP) until every node's rules drop them (node-lifecycle §3.6 MarkPodsNotReady at
 * T_U, endpoints-traffic §7.5) — and its own clients send nothing while it is down. A kubelet
 * that is down or cut off from the control plane (`kubeletDown`, `networkPartition`) leaves its
 * containers serving (node-lifecycle §2.4, no self-fencing).
 * Keep-alive connections close when the pod's listener closes (a draining app closes idle
 * connections) or its process exits; a request sent within {@link KEEPALIVE_RACE_US} of that close
 * fails (RESET_KEEPALIVE), later ones reconnect. Failed requests are retried `retries` times on a
 * new connection (refused/reset at once, timed out after the timeout).
 * Arrivals per client node are a Poisson process from the stream `traffic/<source>/<node>` of the
 * run seed, so the same run gives the same requests.
 * A `nodePort: true` source is external clients sending to the Service's node port on `toNodes`
 * (KUBE-NODEPORTS on the arrival node): ETP Cluster → the node's cluster targets; ETP Local → the
 * node's XLB chain, its Ready local endpoints only, none → dropped (DROP_NO_LOCAL, a timeout);
 * no Ready endpoint at all → REJECT. `sessionAffinity: ClientIP`: each node keeps the `recent`
 * table of kube-proxy's `-m recent --rcheck --seconds T --reap` / `--set` rules per Service, keyed
 * by the client's source identity (`clients:` per source, default one per client node): a new
 * connection goes to the endpoint this client last connected to through this node while that
 * endpoint stayed in the chain used (Ready, 1.22.4+; a sync that drops it destroys its table) and
 * the last connection is at most T old (sliding, `--set` on each new connection); else a uniform
 * pick that is then remembered. IPVS mode uses the same views (real servers = the Ready, or for
 * ETP Local node ports the Ready local, endpoints; `persistent` with the affinity timeout; a removed
 * real server's templates expire, `expire_quiescent_template=1`); its ETP Local node port with no
 * local real server is refused instead of dropped. Not modelled: UDP, a cloud load balancer choosing nodes by the
 * health check node port, xt_recent's 200-entry table limit (`ip_list_tot`), IP reuse by another pod
 * (WRONG_TARGET), server-side queueing.
 */
import { APP_ANNOTATIONS, DEFAULT_APP_BEHAVIOR, type AppBehavior, type Prng, type TraceRecord, US_PER_SECOND, deriveStream, parseAppAnnotations, sampleUs } from '@podsim/api';
import { formatDuration } from '../duration.js';
import type { TraceModel } from '../checkers/model.js';
import { proxyViews, type ViewPoint } from './proxyViews.js';
import type { TrafficExpectSpec, TrafficSourceSpec } from '../scenario/schema.js';

/** Client-side window in which a request written on a connection the server is closing fails (µs). */
export const KEEPALIVE_RACE_US = 1_000;
/** Default connect / request timeout of a traffic source (µs). */
export const DEFAULT_TRAFFIC_TIMEOUT_US = US_PER_SECOND;

export type Outcome = 'served' | 'refused' | 'reset' | 'timedOut';
export type FailureCause = 'REFUSED_POD' | 'REJECT_NO_ENDPOINTS' | 'DROP_NO_LOCAL' | 'TIMEOUT_DEAD_IP' | 'NO_RULES' | 'RESET_INFLIGHT' | 'RESET_KEEPALIVE' | 'TIMEOUT_SLOW';

const OUTCOME_OF: Record<FailureCause, Outcome> = {
  REFUSED_POD: 'refused',
  REJECT_NO_ENDPOINTS: 'refused',
  DROP_NO_LOCAL: 'timedOut',
  TIMEOUT_DEAD_IP: 'timedOut',
  NO_RULES: 'timedOut',
  TIMEOUT_SLOW: 'timedOut',
  RESET_INFLIGHT: 'reset',
  RESET_KEEPALIVE: 'reset',
};

/**
 * The exposure window of one pod that left the rules (§11.3): from when it stopped taking new
 * connections (listener closed, or its IP gone first — a powered-off node) to the last node's
 * rule removal.
 */
export interface ExposureWindow {
  readonly pod: string;
  /** Virtual seconds of the pod's listener close (SIGTERM + close-listener-after); absent if it never closed. */
  readonly listenerClosedAt?: number;
  /** Virtual seconds its (first) sandbox network went away (StopPodSandbox, or its node powered off); absent if it never did. */
  readonly ipGoneAt?: number;
  /** Per client node, when its rules stopped selecting the pod (virtual s). */
  readonly ruleRemovedAt: Readonly<Record<string, number>>;
  /** max(0, max_j ruleRemovedAt − min(listenerClosedAt, ipGoneAt)) in seconds. */
  readonly windowSeconds: number;
  /** New connections routed to the pod while its listener was closed (or its IP gone). */
  readonly failedRequests: number;
}

export interface TrafficSourceResult {
  readonly id: string;
  readonly service: string;
  readonly connection: 'new' | 'keepAlive';
  /** The client nodes, or with `nodePort` the nodes whose node port the external clients hit. */
  readonly fromNodes: readonly string[];
  /** Sent to the Service's node port from outside the cluster (`nodePort: true`, `toNodes`). */
  readonly nodePort?: true;
  readonly startSeconds: number;
  readonly stopSeconds: number;
  readonly requests: number;
  /** Attempts including retries. */
  readonly attempts: number;
  readonly served: number;
  readonly failed: number;
  readonly byOutcome: Readonly<Record<Outcome, number>>;
  readonly byCause: Readonly<Partial<Record<FailureCause, number>>>;
  /** Failed requests by the pod they were sent to ('' = none chosen: REJECT, no rules). */
  readonly byPod: Readonly<Record<string, number>>;
  /** Failed requests by client node. */
  readonly byNode: Readonly<Record<string, number>>;
  /** Failed requests per whole virtual second of the run (`"12"`: in [12 s, 13 s)). */
  readonly bySecond: Readonly<Record<string, number>>;
  /** Send times (virtual s) of the first and the last failed request; absent when none failed. */
  readonly failureWindow?: { readonly first: number; readonly last: number };
  /** With `clients:`: per client identity, the pods that served its requests and how many. */
  readonly servedByClient?: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /** Every request by outcome over time, by the time it was sent (see {@link OutcomesOverTime}). */
  readonly overTime: OutcomesOverTime;
  /** Why this source sent fewer requests than its scenario asked for (the run ended early); absent when it ran its course. */
  readonly cutShort?: string;
}

/**
 * Requests per outcome in consecutive buckets of `bucketSeconds` from `startSeconds` (the
 * source's start): `served[k]` requests sent in [start + k·bucket, start + (k+1)·bucket) were
 * served, and so on. The bucket is the smallest of {@link OVER_TIME_BUCKETS_S} that keeps a
 * source to {@link MAX_OVER_TIME_BUCKETS} buckets (0.5 s for a 2-minute source, 2 s for 10 minutes).
 */
export interface OutcomesOverTime {
  readonly startSeconds: number;
  readonly bucketSeconds: number;
  readonly served: readonly number[];
  readonly refused: readonly number[];
  readonly reset: readonly number[];
  readonly timedOut: readonly number[];
}

/** Bucket widths of {@link OutcomesOverTime}, in virtual seconds. */
export const OVER_TIME_BUCKETS_S = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600] as const;
/**
 * At most this many buckets per source (unless even the widest bucket needs more): about what the
 * report draws (300 bars per source) — finer buckets would only grow `--json` (each count is a line).
 */
export const MAX_OVER_TIME_BUCKETS = 300;

export interface TrafficReport {
  readonly sources: readonly TrafficSourceResult[];
  readonly total: { readonly requests: number; readonly served: number; readonly failed: number; readonly byOutcome: Readonly<Record<Outcome, number>>; readonly byCause: Readonly<Partial<Record<FailureCause, number>>> };
  readonly exposure: readonly ExposureWindow[];
  /** What the traffic model does not simulate, so no verdict covers it. */
  readonly unchecked: readonly string[];
  /**
   * Set when the run ended before its timeline finished (interrupted, failed, or at its bound):
   * the traffic stopped with it, so `expect: traffic:` is not judged (never a pass).
   */
  readonly cutShort?: string;
}

interface Net {
  /** The runtime actor that set the network up (`runtime/<node>`). */
  readonly runtime: string;
  readonly podUid: string;
  readonly pod: string;
  readonly upAt: number;
  downAt: number;
  readonly app: AppBehavior;
}

/** What the trace says, indexed for per-request lookups. */
class TrafficWorld {
  /** node → service key → applied view changes in time order. */
  readonly views: Map<string, Map<string, ViewPoint[]>>;
  /** pod IP → network lifetimes in time order. */
  readonly nets = new Map<string, Net[]>();
  readonly podName = new Map<string, string>();
  /** Per runtime actor, the [crash, restart) intervals it was down (a powered-off node), in time order. */
  readonly runtimeDown = new Map<string, { from: number; to: number }[]>();

  constructor(
    records: readonly TraceRecord[],
    readonly model: TraceModel,
  ) {
    this.views = proxyViews(records);
    for (const r of records) {
      if (r.kind === 'cri.network') {
        const d = r.data as { podUid: string; pod: string; ip: string; up: boolean; annotations?: Record<string, string> };
        let l = this.nets.get(d.ip);
        if (!l) this.nets.set(d.ip, (l = []));
        if (d.up) l.push({ runtime: r.actor, podUid: d.podUid, pod: d.pod, upAt: r.t, downAt: Infinity, app: parseAppAnnotations(d.annotations).app });
        else {
          const open = [...l].reverse().find((n) => n.podUid === d.podUid && n.downAt === Infinity);
          if (open) open.downAt = r.t;
        }
        this.podName.set(d.podUid, d.pod);
      } else if (r.kind === 'engine.crash' && r.actor.startsWith('runtime/')) {
        // Power off: every sandbox of this runtime loses its network at once.
        for (const l of this.nets.values()) for (const n of l) if (n.runtime === r.actor && n.downAt === Infinity) n.downAt = r.t;
        let d = this.runtimeDown.get(r.actor);
        if (!d) this.runtimeDown.set(r.actor, (d = []));
        d.push({ from: r.t, to: Infinity });
      } else if (r.kind === 'engine.restart' && r.actor.startsWith('runtime/')) {
        const last = this.runtimeDown.get(r.actor)?.at(-1);
        if (last && last.to === Infinity) last.to = r.t;
      }
    }
  }

  /** Is the node (its runtime) powered off at t? */
  nodeDownAt(node: string, t: number): boolean {
    return (this.runtimeDown.get(`runtime/${node}`) ?? []).some((d) => d.from <= t && t < d.to);
  }

  /** Node j's applied view of `svc` at t (the last change at or before t). */
  viewAt(node: string, svc: string, t: number): ViewPoint | undefined {
    const l = this.views.get(node)?.get(svc);
    if (!l) return undefined;
    let lo = 0;
    let hi = l.length - 1;
    let best = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (l[mid].t <= t) {
        best = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return best < 0 ? undefined : l[best];
  }

  /**
   * The network of `podUid` behind `ip` that was up by t (its last one). An endpoint without a
   * pod (`podUid` '': a user's Endpoints address, mirrored) reaches whichever pod had the IP last.
   */
  netOf(ip: string, podUid: string, t: number): Net | undefined {
    const l = this.nets.get(ip) ?? [];
    for (let i = l.length - 1; i >= 0; i--) if ((podUid === '' || l[i].podUid === podUid) && l[i].upAt <= t) return l[i];
    return undefined;
  }

  /** SIGTERM times (first per process) and lives of a pod's processes. */
  listener(podUid: string, app: AppBehavior, t: number): { listening: boolean; exitAt: number; abortAt: number; closeAt: number } {
    const procs = this.model.processesOf(podUid);
    let closeAt = Infinity;
    for (const p of procs) {
      const term = p.signals.find((s) => s.signal === 'SIGTERM')?.t;
      if (term !== undefined && app.closeListenerAfterUs !== null) closeAt = Math.min(closeAt, term + app.closeListenerAfterUs);
    }
    const running = procs.filter((p) => p.startedAt <= t && (p.exitedAt === undefined || p.exitedAt > t));
    if (running.length === 0) return { listening: false, exitAt: t, abortAt: t, closeAt };
    const exitAt = Math.min(...running.map((p) => p.exitedAt ?? Infinity));
    const abortAt = app.drainUs === null ? exitAt : Math.min(exitAt, closeAt + app.drainUs);
    return { listening: t < closeAt, exitAt, abortAt, closeAt };
  }
}

interface Attempt {
  readonly cause?: FailureCause;
  readonly pod: string;
  /** When the client learns the outcome (µs). */
  readonly doneAt: number;
}

/** One node's `recent` entry for a client: the endpoint it last connected to and when (µs). */
interface AffinityEntry {
  readonly target: readonly [string, string];
  readonly at: number;
}

/** Per node, per Service, per client identity: the `recent` tables of that node (kernel state). */
export type AffinityTables = Map<string, AffinityEntry>;

/** The targets a new connection may go to at node j: the XLB chain's for ETP Local node-port traffic. */
function chainTargets(v: ViewPoint, nodePort: boolean): readonly (readonly [string, string])[] {
  const all = v.targets ?? [];
  if (!nodePort || v.local === undefined) return all;
  const local = new Set(v.local);
  return all.filter((x) => local.has(x[0]));
}

/**
 * Is a `recent` entry still honoured at t on this node? The endpoint must be in the chain of every
 * view applied since the entry was set (a sync that drops its chain destroys the table, and
 * since 1.22.4 only Ready endpoints have affinity rules), the affinity rules still present, and
 * the entry at most `affinitySeconds` old (`--rcheck --seconds`).
 */
export function affinityHolds(points: readonly ViewPoint[], entry: AffinityEntry, t: number, nodePort: boolean): boolean {
  // The first view applied after the entry was set (binary search; points are in time order).
  let lo = 0;
  let hi = points.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (points[mid].t <= entry.at) lo = mid + 1;
    else hi = mid;
  }
  let now: ViewPoint | undefined = lo > 0 ? points[lo - 1] : undefined;
  for (let i = lo; i < points.length && points[i].t <= t; i++) {
    now = points[i];
    if (now.affinitySeconds === undefined || !chainTargets(now, nodePort).some((x) => x[0] === entry.target[0] && x[1] === entry.target[1])) return false;
  }
  return now?.affinitySeconds !== undefined && t - entry.at <= now.affinitySeconds * US_PER_SECOND;
}

/** Where a new connection goes and who asked: the arrival node's rules, the client, its mode. */
interface Route {
  readonly node: string;
  readonly svc: string;
  /** External traffic to a node port (KUBE-NODEPORTS) instead of the ClusterIP. */
  readonly nodePort: boolean;
  /** The client's source identity (the `recent` tables' key). */
  readonly client: string;
  readonly affinity: AffinityTables;
}

/** One new connection + request at t (spec §11.2 steps 2–3). */
function newConnection(w: TrafficWorld, r: Route, t: number, timeoutUs: number, prng: Prng): { attempt: Attempt; target?: readonly [string, string] } {
  // An external client's SYN to the node port of a powered-off node goes unanswered: the node's IP is dead.
  if (r.nodePort && w.nodeDownAt(r.node, t)) return { attempt: { cause: 'TIMEOUT_DEAD_IP', pod: '', doneAt: t + timeoutUs } };
  const v = w.viewAt(r.node, r.svc, t);
  if (!v || v.targets === null || (r.nodePort && v.nodePorts === undefined)) return { attempt: { cause: 'NO_RULES', pod: '', doneAt: t + timeoutUs } };
  if (v.reject || v.targets.length === 0) return { attempt: { cause: 'REJECT_NO_ENDPOINTS', pod: '', doneAt: t } };
  const targets = chainTargets(v, r.nodePort);
  if (targets.length === 0) {
    // IPVS: the node-port virtual server has no real server, and the kernel answers a SYN to a
    // destination-less virtual service with ICMP port unreachable (ip_vs_leave; kernel behaviour,
    // unverified against a 1.22 node) → refused.
    if (v.mode === 'ipvs') return { attempt: { cause: 'REJECT_NO_ENDPOINTS', pod: '', doneAt: t } };
    // iptables KUBE-XLB-…: "has no local endpoints" → KUBE-MARK-DROP; the client's SYNs go unanswered.
    return { attempt: { cause: 'DROP_NO_LOCAL', pod: '', doneAt: t + timeoutUs } };
  }
  let target: readonly [string, string] | undefined;
  if (v.affinitySeconds !== undefined) {
    const key = `${r.node}|${r.svc}|${r.client}`;
    const e = r.affinity.get(key);
    if (e && affinityHolds(w.views.get(r.node)!.get(r.svc)!, e, t, r.nodePort)) target = e.target;
    target ??= targets[prng.int(targets.length)];
    r.affinity.set(key, { target, at: t });
  } else target = targets[prng.int(targets.length)];
  // An address without a pod reference (a user's Endpoints, mirrored) reaches the pod holding that IP now.
  if (target[1] === '') {
    const n = w.netOf(target[0], '', t);
    if (n) target = [target[0], n.podUid];
  }
  return { attempt: request(w, target, t, timeoutUs, prng), target };
}

/** A request sent to `target` ([ip, podUid]) at t on a fresh connection. */
function request(w: TrafficWorld, target: readonly [string, string], t: number, timeoutUs: number, prng: Prng): Attempt {
  const [ip, uid] = target;
  const net = w.netOf(ip, uid, t);
  const pod = uid === '' ? ip : (w.podName.get(uid) ?? uid);
  if (!net || t >= net.downAt) return { cause: 'TIMEOUT_DEAD_IP', pod, doneAt: t + timeoutUs };
  const l = w.listener(uid, net.app, t);
  if (!l.listening) return { cause: 'REFUSED_POD', pod, doneAt: t };
  return serve(net.app, l.abortAt, pod, t, timeoutUs, prng);
}

function serve(app: AppBehavior, abortAt: number, pod: string, t: number, timeoutUs: number, prng: Prng): Attempt {
  const s = sampleUs(app.serviceTime, prng);
  if (s > timeoutUs && t + timeoutUs <= abortAt) return { cause: 'TIMEOUT_SLOW', pod, doneAt: t + timeoutUs };
  if (t + s > abortAt) return { cause: 'RESET_INFLIGHT', pod, doneAt: abortAt };
  return { pod, doneAt: t + s };
}

/** Request times of one client node: a Poisson process of `ratePerSec` in [startUs, stopUs). */
function arrivals(prng: Prng, ratePerSec: number, startUs: number, stopUs: number): number[] {
  const out: number[] = [];
  const meanUs = US_PER_SECOND / ratePerSec;
  let t = startUs;
  for (;;) {
    t += Math.max(1, Math.round(-meanUs * Math.log(1 - prng.float())));
    if (t >= stopUs) return out;
    out.push(t);
  }
}

/** What no traffic verdict covers (listed in every report). */
export const UNCHECKED_TRAFFIC: readonly string[] = [
  'UDP',
  'a cloud load balancer choosing nodes by the health check node port (node-port traffic goes to toNodes as given)',
  'LoadBalancer ingress IPs and externalIPs',
  "xt_recent's per-table entry limit for ClientIP affinity",
  'pod IP reuse (WRONG_TARGET)',
  'server-side queueing',
];

/** Inputs of {@link evaluateTraffic} besides the trace. */
export interface TrafficContext {
  readonly seed: number;
  readonly namespace: string;
  readonly nodes: readonly string[];
  /** Step id → virtual µs the step started (for `since`). */
  readonly stepStartUs: Readonly<Record<string, number>>;
  readonly endUs: number;
  /** Why the run ended before its timeline finished (see {@link TrafficReport.cutShort}); undefined when it finished. */
  readonly cutShort?: string;
}

/** Evaluates every traffic source of a run. */
export function evaluateTraffic(records: readonly TraceRecord[], model: TraceModel, sources: readonly TrafficSourceSpec[], ctx: TrafficContext): TrafficReport {
  const w = new TrafficWorld(records, model);
  const results: TrafficSourceResult[] = [];
  const exposureFails = new Map<string, number>();
  const svcKeys = new Set<string>();
  sources.forEach((src, i) => {
    const id = src.id ?? `traffic[${i}]`;
    const svc = `${src.namespace ?? ctx.namespace}/${src.service}`;
    svcKeys.add(svc);
    const nodePort = src.nodePort === true;
    // External clients arrive at the node ports of `toNodes`; cluster clients send from `fromNodes`.
    const from = (nodePort ? src.toNodes : src.fromNodes) ?? ctx.nodes;
    const clients = src.clients ?? 1;
    const servedByClient: Record<string, Record<string, number>> | undefined = src.clients !== undefined ? {} : undefined;
    const affinity: AffinityTables = new Map();
    // A `since` step that never started (the run ended first) starts no traffic: sending from
    // t = 0 instead would judge requests the scenario never asked for.
    const base = src.since !== undefined ? (ctx.stepStartUs[src.since] ?? Infinity) : 0;
    const startUs = Math.min(ctx.endUs, base + (src.start ?? 0));
    const stopUs = Math.max(startUs, Math.min(ctx.endUs, src.stop !== undefined ? base + src.stop : ctx.endUs));
    const over = outcomeBuckets(startUs, stopUs);
    // A `stop` past the run's end: the source sent less than the scenario asked for.
    const stopAsked = src.stop !== undefined && Number.isFinite(base) ? base + src.stop : undefined;
    // Each request is decided one by one: a source above MAX_TRAFFIC_REQUESTS would exhaust memory
    // (300 M requests crashed V8); it is not simulated and says so, never judged.
    const expected = (src.rate * (stopUs - startUs)) / US_PER_SECOND;
    const tooMany = expected > MAX_TRAFFIC_REQUESTS;
    const cutShort = tooMany
      ? `it would send about ${Math.round(expected).toLocaleString('en-US')} requests (rate × duration), more than the ${MAX_TRAFFIC_REQUESTS.toLocaleString('en-US')} podsim decides per source; lower its rate or bound it with stop`
      : (ctx.cutShort ?? (stopAsked !== undefined && stopAsked > ctx.endUs ? `the run ended at virtual ${formatDuration(ctx.endUs)}, before the source's stop at ${formatDuration(stopAsked)}` : undefined));
    const timeoutUs = src.timeout ?? DEFAULT_TRAFFIC_TIMEOUT_US;
    const retries = src.retries ?? 0;
    const connection = src.connection ?? 'new';
    const byOutcome: Record<Outcome, number> = { served: 0, refused: 0, reset: 0, timedOut: 0 };
    const byCause: Partial<Record<FailureCause, number>> = {};
    const byPod: Record<string, number> = {};
    const byNode: Record<string, number> = {};
    const bySecond: Record<string, number> = {};
    let requests = 0;
    let attempts = 0;
    let firstFailUs = Infinity;
    let lastFailUs = -Infinity;
    for (const node of tooMany ? [] : from) {
      const prng = deriveStream(ctx.seed, `traffic/${id}/${node}`);
      const times = arrivals(prng, src.rate / from.length, startUs, stopUs);
      // closeAt: when the server closes the connection (FIN: listener closed or process gone);
      // deadAt: when the pod's IP dies (a powered-off node sends no FIN: the next request times out).
      const pool: ({ target: readonly [string, string]; closeAt: number; deadAt: number } | null)[] = Array.from({ length: src.pool ?? 2 }, () => null);
      let next = 0;
      // Which client sends each request: a stream of its own, drawn only with several clients, so
      // a source without `clients:` makes the same draws as before the field existed.
      const pick = clients > 1 ? deriveStream(ctx.seed, `traffic/${id}/${node}/clients`) : undefined;
      for (const t0 of times) {
        // A client on a powered-off node is dead too: it sends nothing. (A node-port source's
        // clients are outside the cluster: they keep sending to the dead node, and time out.)
        if (!nodePort && w.nodeDownAt(node, t0)) continue;
        requests++;
        let t = t0;
        const k = pick ? pick.int(clients) : 0;
        const route: Route = { node, svc, nodePort, client: nodePort ? `client-${k}` : `${node}/client-${k}`, affinity };
        let last: Attempt | undefined;
        for (let k = 0; k <= retries; k++) {
          attempts++;
          if (connection === 'keepAlive') {
            const ci = next;
            next = (next + 1) % pool.length;
            const c = pool[ci];
            if (c && t >= c.deadAt && c.deadAt <= c.closeAt) {
              // The peer vanished without a FIN (its IP died no later than its process: a power-off,
              // where the container "exits" with the runtime): the request on it goes unanswered.
              last = { cause: 'TIMEOUT_DEAD_IP', pod: w.podName.get(c.target[1]) ?? c.target[1], doneAt: t + timeoutUs };
              pool[ci] = null;
            } else if (c && t < c.closeAt + KEEPALIVE_RACE_US) {
              const [ip, uid] = c.target;
              const pod = w.podName.get(uid) ?? uid;
              if (t >= c.closeAt) {
                last = { cause: 'RESET_KEEPALIVE', pod, doneAt: t };
                pool[ci] = null;
              } else {
                const net = w.netOf(ip, uid, t);
                const l = net ? w.listener(uid, net.app, t) : undefined;
                last = net && l ? serve(net.app, l.abortAt, pod, t, timeoutUs, prng) : { cause: 'RESET_KEEPALIVE', pod, doneAt: t };
              }
            } else {
              const r = newConnection(w, route, t, timeoutUs, prng);
              last = r.attempt;
              if (r.target && !last.cause) {
                const net = w.netOf(r.target[0], r.target[1], t)!;
                const l = w.listener(r.target[1], net.app, t);
                pool[ci] = { target: r.target, closeAt: Math.min(l.closeAt, l.exitAt), deadAt: net.downAt };
              } else pool[ci] = null;
            }
          } else last = newConnection(w, route, t, timeoutUs, prng).attempt;
          if (!last.cause) break;
          t = last.doneAt;
        }
        const a = last!;
        const outcome = a.cause ? OUTCOME_OF[a.cause] : 'served';
        over.count(outcome, t0);
        if (!a.cause) {
          byOutcome.served++;
          if (servedByClient) {
            const m = (servedByClient[route.client] ??= {});
            m[a.pod] = (m[a.pod] ?? 0) + 1;
          }
          continue;
        }
        byOutcome[outcome]++;
        byCause[a.cause] = (byCause[a.cause] ?? 0) + 1;
        byPod[a.pod] = (byPod[a.pod] ?? 0) + 1;
        byNode[node] = (byNode[node] ?? 0) + 1;
        const sec = String(Math.floor(t0 / US_PER_SECOND));
        bySecond[sec] = (bySecond[sec] ?? 0) + 1;
        firstFailUs = Math.min(firstFailUs, t0);
        lastFailUs = Math.max(lastFailUs, t0);
        if (a.cause === 'REFUSED_POD' || a.cause === 'TIMEOUT_DEAD_IP') exposureFails.set(a.pod, (exposureFails.get(a.pod) ?? 0) + 1);
      }
    }
    results.push({
      id,
      service: svc,
      connection,
      fromNodes: from,
      ...(nodePort ? { nodePort: true as const } : {}),
      startSeconds: startUs / US_PER_SECOND,
      stopSeconds: stopUs / US_PER_SECOND,
      requests,
      attempts,
      served: byOutcome.served,
      failed: requests - byOutcome.served,
      byOutcome,
      byCause,
      byPod,
      byNode,
      bySecond,
      ...(Number.isFinite(firstFailUs) ? { failureWindow: { first: firstFailUs / US_PER_SECOND, last: lastFailUs / US_PER_SECOND } } : {}),
      ...(servedByClient ? { servedByClient } : {}),
      overTime: over.result(),
      ...(cutShort !== undefined ? { cutShort } : {}),
    });
  });
  const total = {
    requests: results.reduce((a, r) => a + r.requests, 0),
    served: results.reduce((a, r) => a + r.served, 0),
    failed: results.reduce((a, r) => a + r.failed, 0),
    byOutcome: { served: 0, refused: 0, reset: 0, timedOut: 0 } as Record<Outcome, number>,
    byCause: {} as Partial<Record<FailureCause, number>>,
  };
  for (const r of results) {
    for (const [k, v] of Object.entries(r.byOutcome)) total.byOutcome[k as Outcome] += v;
    for (const [k, v] of Object.entries(r.byCause)) total.byCause[k as FailureCause] = (total.byCause[k as FailureCause] ?? 0) + v;
  }
  return { sources: results, total, exposure: exposureWindows(w, svcKeys, exposureFails), ...(ctx.cutShort !== undefined ? { cutShort: ctx.cutShort } : {}), unchecked: UNCHECKED_TRAFFIC };
}

/** The most requests one traffic source may send in a run (each is decided and counted one by one). */
export const MAX_TRAFFIC_REQUESTS = 20_000_000;

/** Counts requests per outcome into the {@link OutcomesOverTime} buckets of a source sending in [startUs, stopUs). */
function outcomeBuckets(startUs: number, stopUs: number): { count(o: Outcome, t: number): void; result(): OutcomesOverTime } {
  const spanS = (stopUs - startUs) / US_PER_SECOND;
  const bucketSeconds = OVER_TIME_BUCKETS_S.find((b) => spanS / b <= MAX_OVER_TIME_BUCKETS) ?? OVER_TIME_BUCKETS_S[OVER_TIME_BUCKETS_S.length - 1];
  const bucketUs = bucketSeconds * US_PER_SECOND;
  const n = Math.max(0, Math.ceil((stopUs - startUs) / bucketUs));
  const counts: Record<Outcome, number[]> = { served: new Array<number>(n).fill(0), refused: new Array<number>(n).fill(0), reset: new Array<number>(n).fill(0), timedOut: new Array<number>(n).fill(0) };
  return {
    count(o, t) {
      counts[o][Math.min(n - 1, Math.floor((t - startUs) / bucketUs))]++;
    },
    result: () => ({ startSeconds: startUs / US_PER_SECOND, bucketSeconds, ...counts }),
  };
}

/** Per pod that was ever a target and whose listener closed: [c_p, r_j] per node (§11.3). */
function exposureWindows(w: TrafficWorld, svcKeys: ReadonlySet<string>, fails: ReadonlyMap<string, number>): ExposureWindow[] {
  const removed = new Map<string, Record<string, number>>();
  for (const [node, m] of w.views) {
    for (const [svc, points] of m) {
      if (!svcKeys.has(svc)) continue;
      for (const p of points) {
        for (const uid of p.removed) (removed.get(uid) ?? removed.set(uid, {}).get(uid)!)[node] = p.t;
        // A pod back in the rules (not yet removed for good) has no removal time on this node.
        for (const uid of p.added) {
          const r = removed.get(uid);
          if (r) delete r[node];
        }
      }
    }
  }
  // Each pod's first network (in IP, then time order), whose app behaviour is the pod's.
  const firstNet = new Map<string, Net>();
  for (const l of w.nets.values()) for (const n of l) if (!firstNet.has(n.podUid)) firstNet.set(n.podUid, n);
  const out: ExposureWindow[] = [];
  for (const [uid, perNode] of removed) {
    const net = firstNet.get(uid);
    const closeAt = w.listener(uid, net?.app ?? DEFAULT_APP_BEHAVIOR, Infinity).closeAt;
    const goneAt = net?.downAt ?? Infinity;
    const from = Math.min(closeAt, goneAt);
    const lastRemoval = Math.max(...Object.values(perNode));
    const pod = w.podName.get(uid) ?? uid;
    out.push({
      pod,
      ...(Number.isFinite(closeAt) ? { listenerClosedAt: closeAt / US_PER_SECOND } : {}),
      ...(Number.isFinite(goneAt) ? { ipGoneAt: goneAt / US_PER_SECOND } : {}),
      ruleRemovedAt: Object.fromEntries(Object.entries(perNode).map(([n, t]) => [n, t / US_PER_SECOND])),
      windowSeconds: Number.isFinite(from) ? Math.max(0, lastRemoval - from) / US_PER_SECOND : 0,
      failedRequests: fails.get(pod) ?? 0,
    });
  }
  return out.sort((a, b) => a.pod.localeCompare(b.pod));
}

/** One `expect: traffic:` entry as expectation results (kind `traffic`). */
export function trafficExpectations(report: TrafficReport, specs: readonly TrafficExpectSpec[]): { expected: string; ok: boolean; actual: string }[] {
  const out: { expected: string; ok: boolean; actual: string }[] = [];
  for (const e of specs) {
    const srcs = e.source === undefined ? report.sources : report.sources.filter((s) => s.id === e.source);
    const sum = (f: (s: TrafficSourceResult) => number) => srcs.reduce((a, s) => a + f(s), 0);
    const got: Record<string, number> = {
      failed: sum((s) => s.failed),
      served: sum((s) => s.served),
      refused: sum((s) => s.byOutcome.refused),
      reset: sum((s) => s.byOutcome.reset),
      timedOut: sum((s) => s.byOutcome.timedOut),
    };
    for (const k of ['failed', 'served', 'refused', 'reset', 'timedOut'] as const) {
      const b = e[k];
      if (!b) continue;
      const v = got[k];
      // A bound judged over no request at all checked nothing (a source that starts after the
      // run ended, or a Service it never reached): that is not a pass.
      const requests = sum((s) => s.requests);
      // Traffic cut short by the run's end covers less than the scenario asked: not judged either.
      const shortBy = report.cutShort ?? srcs.find((s) => s.cutShort !== undefined)?.cutShort;
      const ok = shortBy === undefined && requests > 0 && (b.min === undefined || v >= b.min) && (b.max === undefined || v <= b.max);
      const range = `${b.min !== undefined ? `≥ ${b.min}` : ''}${b.min !== undefined && b.max !== undefined ? ' and ' : ''}${b.max !== undefined ? `≤ ${b.max}` : ''}`;
      const causes = Object.entries(srcs.reduce<Record<string, number>>((acc, s) => {
        for (const [c, n] of Object.entries(s.byCause)) acc[c] = (acc[c] ?? 0) + (n ?? 0);
        return acc;
      }, {}))
        .map(([c, n]) => `${c} ${n}`)
        .join(', ');
      out.push({
        expected: `traffic${e.source ? ` ${e.source}` : ''} ${k} ${range}`,
        ok,
        actual: shortBy !== undefined
          ? `not judged: the traffic was cut short (${shortBy}); ${k} ${v} of ${requests} requests so far`
          : requests === 0 ? `no request was sent${e.source ? ` by source ${e.source}` : ''} during the run, so nothing was checked` : `${k} ${v} of ${requests} requests${causes ? ` (${causes})` : ''}`,
      });
    }
  }
  return out;
}

/** The app annotation keys (for docs). */
export const TRAFFIC_APP_ANNOTATIONS = APP_ANNOTATIONS;
