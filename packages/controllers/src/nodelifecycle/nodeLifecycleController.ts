/**
 * The node lifecycle controller in taint mode (`pkg/controller/nodelifecycle/
 * node_lifecycle_controller.go` v1.23.13 read, 1.22 semantics; node-lifecycle spec §3, §5):
 * - `monitorNodeHealth` at start and then `nodeMonitorPeriod` (5 s) after each pass returns:
 *   `classifyNodes` (RegisteredNode / RemovingNode events, zone tainters), `tryUpdateNodeHealth`
 *   per node (pure decision in nodeHealth.ts; a PUT of `nodes/status` when Ready goes Unknown,
 *   re-GET and retry on failure, 5 tries), `processTaintBaseEviction` with the *observed*
 *   condition (so the NoExecute taint is queued one pass after Ready flips, as 1.22 does),
 *   `NodeNotReady` event + `MarkPodsNotReady`, then `handleDisruption` (zone states, limiter
 *   swaps, master disruption mode);
 * - `doNoScheduleTaintingPass` on every node add/update (not rate limited);
 * - `doNoExecuteTaintingPass` every `NodeEvictionPeriod` (100 ms) over the zone queues, run only
 *   while some queue holds a name (an empty queue's `Try` does nothing, not even take a token);
 * - the embedded {@link NoExecuteTaintManager}, sharing the `node-controller` client (20/30).
 * Taint writes are `SwapNodeControllerTaint`: GET the Node, then a merge PATCH of `spec.taints`
 * with the read resourceVersion (a 409 re-GETs, 5 tries as `RetryOnConflict`).
 * Simplifications: the 20 ms sleep between health retries and the taint-update backoff are not
 * modelled; node updates are processed one at a time (upstream: 8 workers); no
 * `reconcileNodeLabels`; the legacy (non-taint) eviction path is not simulated.
 */
import type { ApiRequest, Lease, Node, NodeCondition, Pod, Taint } from '@podsim/api';
import { NAMESPACE_NODE_LEASE } from '@podsim/api';
import type { ApiClient } from '../client.js';
import { call, isConflict, isNotFound, isOk, runSync, type Sync } from '../coroutine.js';
import type { ControllerEnv } from '../env.js';
import { ControllerEventRecorder } from '../events.js';
import type { Informer } from '../informer.js';
import { POD_NODE_NAME_INDEX } from '../podgc/gcController.js';
import {
  computeZoneState,
  decideNodeHealth,
  DEFAULT_NODE_LIFECYCLE_CONFIG,
  excludedFromDisruption,
  getCondition,
  getZoneKey,
  leaseRenewTime,
  noScheduleTaintDiff,
  NOT_READY_NO_EXECUTE,
  swapTaints,
  taintExists,
  UNREACHABLE_NO_EXECUTE,
  zoneEvictionQPS,
  type NodeHealthData,
  type NodeLifecycleConfig,
  type ZoneState,
} from './nodeHealth.js';
import { RateLimitedTimedQueue } from './rateLimitedQueue.js';
import { NoExecuteTaintManager } from './taintManager.js';
import type { ControllerPlantedBug } from '../plantedBugs.js';

/** `scheduler.NodeEvictionPeriod`: the NoExecute tainting pass period. */
export const NODE_EVICTION_PERIOD_US = 100_000;
/** `scheduler.NodeHealthUpdateRetry`. */
export const NODE_HEALTH_UPDATE_RETRY = 5;
/** `UpdateTaintBackoff.Steps` of `RetryOnConflict`. */
const TAINT_UPDATE_STEPS = 5;

export class NodeLifecycleController {
  readonly cfg: NodeLifecycleConfig;
  /** `nodeHealthMap`. */
  readonly nodeHealthMap = new Map<string, NodeHealthData>();
  /** `knownNodeSet`. */
  readonly knownNodeSet = new Map<string, Node>();
  readonly zoneStates = new Map<string, ZoneState>();
  readonly zoneNoExecuteTainter = new Map<string, RateLimitedTimedQueue>();
  readonly nodesToRetry = new Set<string>();
  readonly taintManager: NoExecuteTaintManager;
  readonly recorder: ControllerEventRecorder;
  /** Completed monitor passes. */
  passes = 0;
  private running = false;
  private taintLoopScheduled = false;
  private readonly nodeUpdateQueue = new Set<string>();
  private nodeWorkerBusy = false;

  constructor(
    private readonly env: ControllerEnv,
    private readonly nodes: Informer<Node>,
    private readonly pods: Informer<Pod>,
    private readonly leases: Informer<Lease>,
    private readonly client: ApiClient,
    cfg: Partial<NodeLifecycleConfig> = {},
    /** Test-only planted bugs (plantedBugs.ts): `nlcAdvanceHeartbeat`, `nlcIgnoreEvictionLimiter`, the taint manager's two. */
    private readonly bugs: ReadonlySet<ControllerPlantedBug> = new Set(),
  ) {
    this.cfg = { ...DEFAULT_NODE_LIFECYCLE_CONFIG, ...cfg };
    this.recorder = new ControllerEventRecorder(env, client, 'node-controller');
    pods.addIndexer(POD_NODE_NAME_INDEX, (p) => (p.spec.nodeName ? [p.spec.nodeName] : []));
    this.taintManager = new NoExecuteTaintManager(env, nodes, (n) => this.podsOnNode(n), (k) => pods.get(k), client, new ControllerEventRecorder(env, client, 'taint-controller'), () => this.running, bugs);
    this.taintManager.register(pods);
    nodes.addEventHandler({
      onAdd: (n) => this.enqueueNode(n.metadata.name ?? ''),
      onUpdate: (_o, n) => this.enqueueNode(n.metadata.name ?? ''),
      onDelete: (n) => this.nodesToRetry.delete(n.metadata.name ?? ''),
    });
    pods.addEventHandler({
      onAdd: (p) => this.podUpdated(undefined, p),
      onUpdate: (o, p) => this.podUpdated(o, p),
    });
  }

  /** `Run` after the caches synced: the taint manager, the node workers, the two loops. */
  start(): void {
    if (this.running) return;
    this.running = true;
    for (const n of this.nodes.values()) this.taintManager.handleNodeUpdate(n.metadata.name ?? '');
    this.processNodeQueue();
    this.monitorLoop();
  }

  private podsOnNode(nodeName: string): Pod[] {
    return this.pods.byIndex(POD_NODE_NAME_INDEX, nodeName);
  }

  private monitorLoop(): void {
    runSync(this.monitorNodeHealth(), this.client.sender, () => {
      this.passes++;
      this.env.after(this.cfg.nodeMonitorPeriodUs, () => this.monitorLoop());
    });
  }

  // ---- node updates: doNoScheduleTaintingPass -------------------------------------------------

  private enqueueNode(name: string): void {
    this.nodeUpdateQueue.add(name);
    if (this.running) this.processNodeQueue();
  }

  /** One worker over the queue; passes that need no API call finish in this loop (no recursion). */
  private processNodeQueue(): void {
    if (this.nodeWorkerBusy) return;
    this.nodeWorkerBusy = true;
    for (;;) {
      const next = this.nodeUpdateQueue.values().next();
      if (next.done) {
        this.nodeWorkerBusy = false;
        return;
      }
      this.nodeUpdateQueue.delete(next.value);
      let inline = true;
      let finished = false;
      runSync(this.doNoScheduleTaintingPass(next.value), this.client.sender, () => {
        finished = true;
        if (inline) return;
        this.nodeWorkerBusy = false;
        this.processNodeQueue();
      });
      inline = false;
      if (!finished) return;
    }
  }

  /** `doNoScheduleTaintingPass`: condition (and unschedulable) NoSchedule taints follow the status. */
  *doNoScheduleTaintingPass(name: string): Sync<void> {
    const node = this.nodes.get(name);
    if (!node) return;
    const [toAdd, toRemove] = noScheduleTaintDiff(node);
    if (toAdd.length === 0 && toRemove.length === 0) return;
    yield* this.swapNodeControllerTaint(node, toAdd, toRemove);
  }

  // ---- pods newly bound: processPod -------------------------------------------------------------

  private podUpdated(old: Pod | undefined, pod: Pod): void {
    const nodeName = pod.spec.nodeName;
    if (!this.running || !nodeName || old?.spec.nodeName === nodeName) return;
    const health = this.nodeHealthMap.get(nodeName);
    const ready = health?.savedReady;
    if (!ready || ready.status === 'True') return;
    runSync(this.markPodsNotReady([pod], nodeName), this.client.sender, () => {});
  }

  // ---- monitorNodeHealth ----------------------------------------------------------------------

  /** One `monitorNodeHealth` pass. */
  *monitorNodeHealth(): Sync<void> {
    const nodes = [...this.nodes.values()];
    // classifyNodes
    const seen = new Set<string>();
    for (const n of nodes) {
      const name = n.metadata.name ?? '';
      seen.add(name);
      if (!this.knownNodeSet.has(name)) {
        this.nodeEvent(n, 'Normal', 'RegisteredNode', `Registered Node ${name} in Controller`);
        this.knownNodeSet.set(name, n);
        this.addPodEvictorForNewZone(n);
        yield* this.markNodeAsReachable(n);
      } else if (!this.zoneStates.has(getZoneKey(n))) this.addPodEvictorForNewZone(n);
    }
    for (const [name, n] of [...this.knownNodeSet]) {
      if (seen.has(name)) continue;
      this.nodeEvent(n, 'Normal', 'RemovingNode', `Removing Node ${name} from Controller`);
      this.knownNodeSet.delete(name);
    }

    const zoneToNodeConditions = new Map<string, (NodeCondition | undefined)[]>();
    for (const informerNode of nodes) {
      const name = informerNode.metadata.name ?? '';
      let node: Node = informerNode;
      let result: { observed: NodeCondition; current: NodeCondition | undefined } | undefined;
      for (let attempt = 0; attempt < NODE_HEALTH_UPDATE_RETRY && !result; attempt++) {
        const r = yield* this.tryUpdateNodeHealth(node);
        if (r) {
          result = r;
          break;
        }
        const got = yield* call({ type: 'ApiGet', resource: 'nodes', name });
        if (!isOk(got)) break;
        node = got.body as Node;
      }
      if (!result) {
        this.env.trace('controller.nodelifecycle.skip', `Update health of Node '${name}' from Controller failed. Skipping - no pods will be evicted.`, { node: name });
        continue;
      }
      const { observed, current } = result;
      if (!excludedFromDisruption(node)) {
        const zone = getZoneKey(node);
        let list = zoneToNodeConditions.get(zone);
        if (!list) zoneToNodeConditions.set(zone, (list = []));
        list.push(current);
      }
      if (current) {
        const pods = this.podsOnNode(name);
        yield* this.processTaintBaseEviction(node, observed);
        const needsRetry = this.nodesToRetry.has(name);
        const flipped = current.status !== 'True' && observed.status === 'True';
        if (flipped) this.nodeEvent(node, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
        if (flipped || (needsRetry && observed.status !== 'True')) {
          const ok = yield* this.markPodsNotReady(pods, name);
          if (!ok) {
            this.nodesToRetry.add(name);
            continue;
          }
        }
      }
      this.nodesToRetry.delete(name);
    }
    yield* this.handleDisruption(zoneToNodeConditions, nodes);
  }

  /**
   * `tryUpdateNodeHealth`: the pure decision, then the status PUT it asks for. Undefined when the
   * PUT failed (the caller re-GETs and retries); the health entry is saved either way.
   */
  *tryUpdateNodeHealth(node: Node): Sync<{ observed: NodeCondition; current: NodeCondition | undefined } | undefined> {
    const name = node.metadata.name ?? '';
    const now = this.env.now;
    const clock = this.env.clock;
    const lease = this.leases.get(`${NAMESPACE_NODE_LEASE}/${name}`);
    const creationUs = clock.parse(node.metadata.creationTimestamp ?? '') ?? 0;
    const d = decideNodeHealth(node, this.nodeHealthMap.get(name), leaseRenewTime(lease, (t) => clock.parse(t)), now, creationUs, this.cfg, (us) => clock.format(us));
    this.nodeHealthMap.set(name, d.health);
    if (!d.update) return { observed: d.observed, current: d.current };
    // The planted bug `nlcAdvanceHeartbeat` (test-only): the controller stamps its own heartbeat.
    const ts = this.env.clock.format(now);
    const update = this.bugs.has('nlcAdvanceHeartbeat') ? { ...d.update, status: { ...d.update.status, conditions: d.update.status?.conditions?.map((c) => ({ ...c, lastHeartbeatTime: ts })) } } : d.update;
    const res = yield* call({ type: 'ApiUpdate', resource: 'nodes', name, subresource: 'status', object: update });
    this.env.trace('controller.nodelifecycle.status', `${name} Ready ${d.observed.status} -> ${d.current?.status}: ${res.code}`, {
      node: name,
      from: d.observed.status,
      to: d.current?.status,
      probeUs: d.health.probeTimestamp,
      graceUs: d.gracePeriodUs,
      code: res.code,
    });
    if (!isOk(res)) return undefined;
    this.nodeHealthMap.set(name, { ...d.health, savedReady: d.current, readyTransitionTimestamp: this.env.now });
    return { observed: d.observed, current: d.current };
  }

  /** `processTaintBaseEviction` with the condition observed at the start of the pass. */
  private *processTaintBaseEviction(node: Node, observed: NodeCondition): Sync<void> {
    const taints = node.spec?.taints;
    switch (observed.status) {
      case 'False':
        if (taintExists(taints, UNREACHABLE_NO_EXECUTE)) yield* this.swapNodeControllerTaint(node, [NOT_READY_NO_EXECUTE], [UNREACHABLE_NO_EXECUTE]);
        else this.markNodeForTainting(node, 'False');
        return;
      case 'Unknown':
        if (taintExists(taints, NOT_READY_NO_EXECUTE)) yield* this.swapNodeControllerTaint(node, [UNREACHABLE_NO_EXECUTE], [NOT_READY_NO_EXECUTE]);
        else this.markNodeForTainting(node, 'Unknown');
        return;
      case 'True':
        yield* this.markNodeAsReachable(node);
        return;
    }
  }

  /** `markNodeForTainting`: (re)queue the node in its zone's tainter; false if already there. */
  private markNodeForTainting(node: Node, status: 'False' | 'Unknown'): boolean {
    const q = this.zoneNoExecuteTainter.get(getZoneKey(node))!;
    const name = node.metadata.name ?? '';
    const template = status === 'False' ? NOT_READY_NO_EXECUTE : UNREACHABLE_NO_EXECUTE;
    if (!taintExists(node.spec?.taints, template)) q.remove(name);
    const added = q.add(name, node.metadata.uid ?? '', this.env.now);
    if (added) this.scheduleTaintingPass();
    return added;
  }

  /** `markNodeAsReachable`: both NoExecute condition taints off, the node out of its zone queue. */
  private *markNodeAsReachable(node: Node): Sync<boolean> {
    yield* this.removeTaintOffNode(node, [UNREACHABLE_NO_EXECUTE]);
    yield* this.removeTaintOffNode(node, [NOT_READY_NO_EXECUTE]);
    return this.zoneNoExecuteTainter.get(getZoneKey(node))?.remove(node.metadata.name ?? '') ?? false;
  }

  /** `addPodEvictorForNewZone`. */
  private addPodEvictorForNewZone(node: Node): void {
    const zone = getZoneKey(node);
    if (this.zoneStates.has(zone)) return;
    this.zoneStates.set(zone, 'Initial');
    this.zoneNoExecuteTainter.set(zone, new RateLimitedTimedQueue(this.cfg.evictionLimiterQPS, this.env.now));
  }

  // ---- doNoExecuteTaintingPass ----------------------------------------------------------------

  private scheduleTaintingPass(): void {
    if (this.taintLoopScheduled) return;
    this.taintLoopScheduled = true;
    // On the 100 ms grid of `wait.Until(doNoExecuteTaintingPass, NodeEvictionPeriod)`.
    const delay = NODE_EVICTION_PERIOD_US - (this.env.now % NODE_EVICTION_PERIOD_US);
    this.env.after(delay, () => {
      runSync(this.doNoExecuteTaintingPass(), this.client.sender, () => {
        this.taintLoopScheduled = false;
        for (const q of this.zoneNoExecuteTainter.values()) {
          if (q.length > 0) {
            this.scheduleTaintingPass();
            return;
          }
        }
      });
    });
  }

  /** `doNoExecuteTaintingPass`: each zone queue's `Try`, tainting per the node's current Ready. */
  *doNoExecuteTaintingPass(): Sync<void> {
    for (const [zone, q] of this.zoneNoExecuteTainter) {
      for (;;) {
        const head = q.head();
        if (!head) break;
        const now = this.env.now;
        // The planted bug `nlcIgnoreEvictionLimiter` (test-only): no token needed.
        if (!q.limiter.tryAccept(now) && !this.bugs.has('nlcIgnoreEvictionLimiter')) break;
        if (now < head.processAt) break;
        const node = this.nodes.get(head.value);
        if (!node) {
          q.done(head);
          continue;
        }
        const ready = getCondition(node.status?.conditions, 'Ready')?.status;
        if (ready !== 'False' && ready !== 'Unknown') {
          // "Node … was in a taint queue, but it's ready now. Ignoring taint request."
          q.done(head);
          continue;
        }
        const [add, opposite] = ready === 'False' ? [NOT_READY_NO_EXECUTE, UNREACHABLE_NO_EXECUTE] : [UNREACHABLE_NO_EXECUTE, NOT_READY_NO_EXECUTE];
        const ok = yield* this.swapNodeControllerTaint(node, [add], [opposite]);
        if (ok) {
          this.env.count('nodelifecycle.evictionsNumber');
          this.env.trace('controller.nodelifecycle.noExecute', `${head.value} ${add.key}:NoExecute (zone ${JSON.stringify(zone)})`, { node: head.value, key: add.key, zone });
          q.done(head);
        } else q.retry(head, this.env.now, 0);
      }
    }
  }

  // ---- handleDisruption -----------------------------------------------------------------------

  /** `handleDisruption`: zone states, limiter swaps and master disruption mode. */
  private *handleDisruption(zoneToNodeConditions: ReadonlyMap<string, readonly (NodeCondition | undefined)[]>, nodes: readonly Node[]): Sync<void> {
    const newZoneStates = new Map<string, ZoneState>();
    let allAreFullyDisrupted = true;
    for (const [k, v] of zoneToNodeConditions) {
      const [, state] = computeZoneState(v, this.cfg.unhealthyZoneThreshold);
      newZoneStates.set(k, state);
      if (state !== 'FullDisruption') allAreFullyDisrupted = false;
    }
    let allWasFullyDisrupted = true;
    for (const [k, v] of [...this.zoneStates]) {
      if (!zoneToNodeConditions.has(k)) {
        this.zoneStates.delete(k);
        continue;
      }
      if (v !== 'FullDisruption') {
        allWasFullyDisrupted = false;
        break;
      }
    }
    if (allAreFullyDisrupted && allWasFullyDisrupted) return;
    const now = this.env.now;
    if (allAreFullyDisrupted) {
      this.env.trace('controller.nodelifecycle.disruption', 'Controller detected that all Nodes are not-Ready. Entering master disruption mode.', { mode: 'enter' });
      for (const n of nodes) yield* this.markNodeAsReachable(n);
      for (const k of this.zoneStates.keys()) this.zoneNoExecuteTainter.get(k)?.swapLimiter(0, now);
      for (const k of this.zoneStates.keys()) this.zoneStates.set(k, 'FullDisruption');
      return;
    }
    if (allWasFullyDisrupted) {
      for (const n of nodes) {
        const h = this.nodeHealthMap.get(n.metadata.name ?? '');
        if (h) this.nodeHealthMap.set(n.metadata.name ?? '', { ...h, probeTimestamp: now, readyTransitionTimestamp: now });
      }
      // Each zone's new state and limiter QPS, for the invariant checkers (trace data only).
      const zones: Record<string, [ZoneState, number]> = {};
      for (const k of this.zoneStates.keys()) {
        const state = newZoneStates.get(k) ?? 'Normal';
        this.setLimiterInZone(k, zoneToNodeConditions.get(k)?.length ?? 0, state);
        this.zoneStates.set(k, state);
        zones[k] = [state, this.zoneNoExecuteTainter.get(k)?.limiter.qps ?? 0];
      }
      this.env.trace('controller.nodelifecycle.disruption', 'Controller detected that some Nodes are Ready. Exiting master disruption mode.', { mode: 'exit', zones });
      return;
    }
    for (const [k, v] of this.zoneStates) {
      const state = newZoneStates.get(k);
      if (state === undefined || v === state) continue;
      this.setLimiterInZone(k, zoneToNodeConditions.get(k)?.length ?? 0, state);
      this.zoneStates.set(k, state);
      // `qps`: the zone limiter's rate after the swap (trace data, for the §8.4 / §8.5 checkers).
      this.env.trace('controller.nodelifecycle.zone', `Controller detected that zone ${JSON.stringify(k)} is now in state ${state}.`, { zone: k, state, qps: this.zoneNoExecuteTainter.get(k)?.limiter.qps ?? 0 });
    }
  }

  /** `setLimiterInZone`. */
  private setLimiterInZone(zone: string, zoneSize: number, state: ZoneState): void {
    const qps = zoneEvictionQPS(state, zoneSize, this.cfg);
    if (qps !== undefined) this.zoneNoExecuteTainter.get(zone)?.swapLimiter(qps, this.env.now);
  }

  // ---- API helpers ----------------------------------------------------------------------------

  /** `MarkPodsNotReady`: Ready=False (PUT pods/status) and a Warning `NodeNotReady` per pod; false on an error. */
  *markPodsNotReady(pods: readonly Pod[], nodeName: string): Sync<boolean> {
    let ok = true;
    const ts = this.env.clock.format(this.env.now);
    for (const pod of pods) {
      if (pod.spec.nodeName !== nodeName) continue;
      const conds = pod.status?.conditions;
      const ready = conds?.find((c) => c.type === 'Ready');
      if (!ready || ready.status === 'False') continue;
      const status = { ...pod.status, conditions: conds!.map((c) => (c.type === 'Ready' ? { ...c, status: 'False' as const, lastTransitionTime: ts } : c)) };
      const res = yield* call({ type: 'ApiUpdate', resource: 'pods', namespace: pod.metadata.namespace, name: pod.metadata.name ?? '', subresource: 'status', object: { ...pod, status } as Pod });
      if (isNotFound(res)) continue;
      if (!isOk(res)) {
        ok = false;
        continue;
      }
      this.env.trace('controller.nodelifecycle.podNotReady', `${pod.metadata.namespace}/${pod.metadata.name}`, { namespace: pod.metadata.namespace, pod: pod.metadata.name, node: nodeName });
      this.recorder.event({ apiVersion: 'v1', kind: 'Pod', metadata: pod.metadata }, 'Warning', 'NodeNotReady', 'Node is not ready');
    }
    return ok;
  }

  /** `SwapNodeControllerTaint`: add (with timeAdded = now), then remove; false on failure. */
  *swapNodeControllerTaint(node: Node, add: readonly Taint[], remove: readonly Taint[]): Sync<boolean> {
    if (add.length > 0 && !(yield* this.updateTaints(node.metadata.name ?? '', add, []))) return false;
    return yield* this.removeTaintOffNode(node, remove);
  }

  /** `RemoveTaintOffNode`: nothing to do (no API call) unless `node` carries one of `taints`. */
  private *removeTaintOffNode(node: Node, taints: readonly Taint[]): Sync<boolean> {
    if (taints.length === 0 || !taints.some((t) => taintExists(node.spec?.taints, t))) return true;
    return yield* this.updateTaints(node.metadata.name ?? '', [], taints);
  }

  /** GET the Node, PATCH `spec.taints` with its resourceVersion; a 409 re-reads (5 tries). */
  private *updateTaints(name: string, add: readonly Taint[], remove: readonly Taint[]): Sync<boolean> {
    for (let i = 0; i < TAINT_UPDATE_STEPS; i++) {
      const got = yield* call({ type: 'ApiGet', resource: 'nodes', name });
      if (!isOk(got)) return isNotFound(got) && add.length === 0;
      const cur = got.body as Node;
      const next = swapTaints(cur.spec?.taints, add, remove, this.env.clock.format(this.env.now));
      if (!next) return true;
      const req: ApiRequest = { type: 'ApiPatch', resource: 'nodes', name, patchType: 'merge', patch: { metadata: { resourceVersion: cur.metadata.resourceVersion }, spec: { taints: next } } };
      const res = yield* call(req);
      if (isOk(res)) {
        this.env.trace('controller.nodelifecycle.taints', `${name}: ${next.map((t) => `${t.key}:${t.effect}`).join(',') || '<none>'}`, { node: name, taints: next.map((t) => `${t.key}:${t.effect}`) });
        return true;
      }
      if (!isConflict(res)) return false;
    }
    return false;
  }

  private nodeEvent(node: Node, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.recorder.event({ apiVersion: 'v1', kind: 'Node', metadata: { name: node.metadata.name, uid: node.metadata.uid } }, type, reason, message);
  }
}
