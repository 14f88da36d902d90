/**
 * kube-scheduler's `scheduleOne` (`pkg/scheduler/scheduler.go`, `generic_scheduler.go`,
 * `eventhandlers.go`, v1.22), one `default-scheduler` profile: filter nodes round-robin up to
 * `numFeasibleNodesToFind`, LeastAllocated score, seeded tie-break, assume, bind latency, POST
 * pods/binding; failures patch PodScheduled=False (Unschedulable) when it changed and requeue.
 * Pods being deleted are never scheduled; Terminating pods keep occupying their node.
 */
import { ControllerEventRecorder } from '../events.js';
import type { ApiResult, Node, Pod, PodCondition } from '@podsim/api';
import { millis } from '@podsim/api';
import type { ApiClient } from '../client.js';
import { isOk, statusOf } from '../coroutine.js';
import { nowTimestamp, type ControllerEnv } from '../env.js';
import type { Informer } from '../informer.js';
import { objectKey } from '../objects.js';
import { fitErrorMessage, filterNode, leastAllocatedScore, NO_NODES_AVAILABLE, numFeasibleNodesToFind } from './framework.js';
import { DEFAULT_MAX_PODS, type NodeInfo, podResources, SchedulerCache } from './nodeInfo.js';
import { FLUSH_BACKOFF_Q_PERIOD_US, FLUSH_UNSCHEDULABLE_Q_PERIOD_US, type QueuedPodInfo, SchedulingQueue } from './schedulingQueue.js';

export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';
/** Default bind latency model: the binding goroutine's work before its POST (virtual µs). */
export const DEFAULT_BIND_LATENCY = { minUs: millis(1), jitterUs: millis(1) } as const;

export interface SchedulerOptions {
  readonly schedulerName?: string;
  /** 0 = adaptive (`percentageOfNodesToScore` default). */
  readonly percentageOfNodesToScore?: number;
  readonly defaultMaxPods?: number;
  /** Treat nodes whose Ready condition is not True as tainted not-ready/unreachable (default true). */
  readonly requireNodeReady?: boolean;
  readonly bindLatency?: { readonly minUs: number; readonly jitterUs: number };
  readonly podInitialBackoffUs?: number;
  readonly podMaxBackoffUs?: number;
}

function isTerminal(p: Pod): boolean {
  const ph = p.status?.phase;
  return ph === 'Succeeded' || ph === 'Failed';
}

export class Scheduler {
  readonly cache: SchedulerCache;
  readonly queue: SchedulingQueue;
  private readonly schedulerName: string;
  private readonly percentage: number;
  private readonly requireReady: boolean;
  private readonly bindLatency: { readonly minUs: number; readonly jitterUs: number };
  private nextStartNodeIndex = 0;
  private started = false;
  private wakeScheduled = false;
  private startedAt = 0;
  /** Pods between assume and the end of their binding call. */
  private readonly binding = new Set<string>();
  /** Counters for tests and metrics. */
  readonly stats = { attempts: 0, bound: 0, unschedulable: 0, bindErrors: 0 };
  /** `fwk.EventRecorder()` (component `default-scheduler`): Scheduled, FailedScheduling. */
  private readonly recorder: ControllerEventRecorder;

  constructor(
    private readonly env: ControllerEnv,
    private readonly pods: Informer<Pod>,
    nodes: Informer<Node>,
    private readonly client: ApiClient,
    opts: SchedulerOptions = {},
  ) {
    this.schedulerName = opts.schedulerName ?? DEFAULT_SCHEDULER_NAME;
    this.recorder = new ControllerEventRecorder(env, client, 'default-scheduler');
    this.percentage = opts.percentageOfNodesToScore ?? 0;
    this.requireReady = opts.requireNodeReady ?? true;
    this.bindLatency = opts.bindLatency ?? DEFAULT_BIND_LATENCY;
    this.cache = new SchedulerCache(opts.defaultMaxPods ?? DEFAULT_MAX_PODS, this.requireReady);
    this.queue = new SchedulingQueue(opts);
    pods.addEventHandler({
      onAdd: (p) => this.onPod(undefined, p),
      onUpdate: (o, p) => this.onPod(o, p),
      onDelete: (p) => this.onPodDeleted(p),
    });
    nodes.addEventHandler({
      onAdd: (n) => {
        this.cache.addOrUpdateNode(n);
        this.moveAll();
      },
      onUpdate: (o, n) => {
        this.cache.addOrUpdateNode(n);
        if (nodeSchedulingPropertiesChanged(o, n)) this.moveAll();
      },
      onDelete: (n) => this.cache.removeNode(n.metadata.name ?? ''),
    });
  }

  /** Starts scheduling (after the informers synced) and the queue's flush loops. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.startedAt = this.env.now;
    this.env.after(FLUSH_BACKOFF_Q_PERIOD_US, () => this.flushBackoff());
    this.env.after(FLUSH_UNSCHEDULABLE_Q_PERIOD_US, () => this.flushUnschedulable());
    this.wake();
  }

  private responsible(p: Pod): boolean {
    return (p.spec.schedulerName ?? DEFAULT_SCHEDULER_NAME) === this.schedulerName;
  }

  // ---- event handlers ---------------------------------------------------------------------

  private onPod(old: Pod | undefined, p: Pod): void {
    const uid = p.metadata.uid ?? '';
    if (p.spec.nodeName) {
      // Assigned pods: the cache (a terminal phase leaves it, as the scheduler's informer
      // filters status.phase!=Succeeded,Failed).
      this.queue.delete(uid);
      if (isTerminal(p)) {
        if (this.cache.removePod(uid)) this.moveAll();
      } else if (!this.cache.isBoundTo(uid, p.spec.nodeName)) this.cache.observeBoundPod(uid, p.spec.nodeName, podResources(p));
      return;
    }
    if (!this.responsible(p) || isTerminal(p)) return;
    if (p.metadata.deletionTimestamp) {
      // skipPodSchedule: a pod being deleted is never scheduled.
      this.queue.delete(uid);
      return;
    }
    if (this.binding.has(uid) || this.cache.isAssumed(uid)) return; // skipPodUpdate
    if (old) this.queue.update(old, p, this.env.now);
    else this.queue.add(p, this.env.now);
    this.wake();
  }

  private onPodDeleted(p: Pod): void {
    const uid = p.metadata.uid ?? '';
    this.queue.delete(uid);
    if (this.cache.removePod(uid)) this.moveAll();
  }

  private moveAll(): void {
    if (this.queue.moveAllToActiveOrBackoffQueue(this.env.now) > 0) this.wake();
  }

  // ---- loops ------------------------------------------------------------------------------

  private periodic(period: number, fn: () => void): void {
    // Fixed phase from start, as a ticker.
    const elapsed = this.env.now - this.startedAt;
    const next = (Math.floor(elapsed / period) + 1) * period - elapsed;
    fn();
    this.env.after(next, () => this.periodic(period, fn));
  }

  private flushBackoff(): void {
    this.periodic(FLUSH_BACKOFF_Q_PERIOD_US, () => {
      if (this.queue.flushBackoffQCompleted(this.env.now) > 0) this.wake();
    });
  }

  private flushUnschedulable(): void {
    this.periodic(FLUSH_UNSCHEDULABLE_Q_PERIOD_US, () => {
      if (this.queue.flushUnschedulableQLeftover(this.env.now) > 0) this.wake();
    });
  }

  private wake(): void {
    if (!this.started || this.wakeScheduled || this.queue.activeLength === 0) return;
    this.wakeScheduled = true;
    this.env.after(0, () => {
      this.wakeScheduled = false;
      for (let info = this.queue.pop(); info; info = this.queue.pop()) this.scheduleOne(info);
    });
  }

  // ---- scheduleOne ------------------------------------------------------------------------

  /** One scheduling cycle for `info` (synchronous up to assume; binding continues asynchronously). */
  scheduleOne(info: QueuedPodInfo): void {
    const pod = this.pods.get(objectKey(info.pod)) ?? info.pod;
    if (pod.metadata.uid !== info.uid || pod.metadata.deletionTimestamp || pod.spec.nodeName) return;
    this.stats.attempts++;
    const podCycle = this.queue.schedulingCycle;
    const r = podResources(pod);
    const nodes = this.cache.nodes();
    if (nodes.length === 0) {
      this.fail(info, pod, NO_NODES_AVAILABLE, podCycle);
      return;
    }
    const want = numFeasibleNodesToFind(nodes.length, this.percentage);
    const feasible: NodeInfo[] = [];
    const reasons = new Map<string, string[]>();
    let processed = 0;
    for (let i = 0; i < nodes.length && feasible.length < want; i++) {
      const ni = nodes[(this.nextStartNodeIndex + i) % nodes.length];
      processed++;
      const rs = filterNode(pod, r, ni);
      if (rs.length === 0) feasible.push(ni);
      else reasons.set(ni.name, rs);
    }
    this.nextStartNodeIndex = (this.nextStartNodeIndex + processed) % nodes.length;
    if (feasible.length === 0) {
      this.fail(info, pod, fitErrorMessage(nodes.length, reasons), podCycle);
      return;
    }
    const host = this.selectHost(feasible, r);
    this.assumeAndBind(info, pod, host.name, r);
  }

  /** `selectHost`: highest score; ties chosen uniformly by reservoir sampling on a seeded stream. */
  private selectHost(feasible: readonly NodeInfo[], r: ReturnType<typeof podResources>): NodeInfo {
    if (feasible.length === 1) return feasible[0];
    const rng = this.env.stream('selectHost');
    let best = feasible[0];
    let bestScore = leastAllocatedScore(r, best);
    let ties = 1;
    for (let i = 1; i < feasible.length; i++) {
      const s = leastAllocatedScore(r, feasible[i]);
      if (s > bestScore) {
        best = feasible[i];
        bestScore = s;
        ties = 1;
      } else if (s === bestScore) {
        ties++;
        if (rng.int(ties) === 0) best = feasible[i];
      }
    }
    return best;
  }

  private assumeAndBind(info: QueuedPodInfo, pod: Pod, nodeName: string, r: ReturnType<typeof podResources>): void {
    const uid = info.uid;
    this.cache.assumePod(uid, nodeName, r);
    this.binding.add(uid);
    const lat = this.bindLatency;
    const delay = lat.minUs + (lat.jitterUs > 0 ? this.env.stream('bindLatency').int(lat.jitterUs + 1) : 0);
    const ns = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    const send = () =>
      this.client.send(
        {
          type: 'ApiCreate',
          resource: 'pods',
          namespace: ns,
          name,
          subresource: 'binding',
          object: {
            apiVersion: 'v1',
            kind: 'Binding',
            metadata: { name, namespace: ns, uid },
            target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
          } as never,
        },
        (res) => this.bound(info, pod, nodeName, res),
      );
    if (delay > 0) this.env.after(delay, send);
    else send();
  }

  private bound(info: QueuedPodInfo, pod: Pod, nodeName: string, res: ApiResult): void {
    this.binding.delete(info.uid);
    const ns = pod.metadata.namespace ?? '';
    this.env.trace('scheduler.bind', `${ns}/${pod.metadata.name} to ${nodeName}: ${res.code}`, {
      namespace: ns,
      pod: pod.metadata.name,
      uid: info.uid,
      node: nodeName,
      code: res.code,
    });
    if (isOk(res)) {
      this.stats.bound++;
      // scheduleOne's binding goroutine, once bound.
      this.recorder.event(podSubject(pod), 'Normal', 'Scheduled', `Successfully assigned ${ns}/${pod.metadata.name ?? ''} to ${nodeName}`);
      return;
    }
    this.stats.bindErrors++;
    this.cache.forgetPod(info.uid);
    this.handleFailure(info, `binding rejected: ${statusOf(res).message ?? res.code}`, 'SchedulerError', this.queue.schedulingCycle);
  }

  private fail(info: QueuedPodInfo, pod: Pod, message: string, podCycle: number): void {
    this.stats.unschedulable++;
    this.env.trace('scheduler.unschedulable', `${objectKey(pod)}: ${message}`, { namespace: pod.metadata.namespace, pod: pod.metadata.name, uid: info.uid, message });
    this.handleFailure(info, message, 'Unschedulable', podCycle);
  }

  /** `MakeDefaultErrorFunc` + `recordSchedulingFailure`: requeue and patch PodScheduled=False. */
  private handleFailure(info: QueuedPodInfo, message: string, reason: string, podCycle: number): void {
    // recordSchedulingFailure records the event for every failed attempt (truncateMessage: 1024 bytes).
    this.recorder.event(podSubject(info.pod), 'Warning', 'FailedScheduling', message.length > 1024 ? `${message.slice(0, 1021)}...` : message);
    const cached = this.pods.get(objectKey(info.pod));
    if (!cached || cached.metadata.uid !== info.uid || cached.spec.nodeName) return;
    info.pod = cached;
    this.queue.addUnschedulableIfNotPresent(info, podCycle, this.env.now);
    const conditions = updatePodScheduledCondition(cached, { type: 'PodScheduled', status: 'False', reason, message, lastProbeTime: null }, nowTimestamp(this.env));
    if (!conditions) return;
    this.client.send(
      {
        type: 'ApiPatch',
        resource: 'pods',
        namespace: cached.metadata.namespace,
        name: cached.metadata.name ?? '',
        subresource: 'status',
        patchType: 'merge',
        patch: { status: { conditions } },
      },
      () => {},
    );
  }
}

/** The pod as an Event's involvedObject. */
function podSubject(pod: Pod) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: pod.metadata };
}

/**
 * `podutil.UpdatePodCondition` on a copy of the pod's conditions: returns the new list, or
 * undefined when nothing changed (lastTransitionTime moves only when the status changes).
 */
export function updatePodScheduledCondition(pod: Pod, cond: PodCondition, now: string): PodCondition[] | undefined {
  const list = pod.status?.conditions ?? [];
  const i = list.findIndex((c) => c.type === cond.type);
  const next: PodCondition = { ...cond, lastTransitionTime: now };
  if (i < 0) return [...list, next];
  const old = list[i];
  if (old.status === next.status) next.lastTransitionTime = old.lastTransitionTime;
  const equal =
    old.status === next.status &&
    old.reason === next.reason &&
    old.message === next.message &&
    (old.lastProbeTime ?? null) === (next.lastProbeTime ?? null) &&
    old.lastTransitionTime === next.lastTransitionTime;
  if (equal) return undefined;
  const out = [...list];
  out[i] = next;
  return out;
}

/** `nodeSchedulingPropertiesChange`: allocatable, labels, taints, unschedulable or conditions. */
function nodeSchedulingPropertiesChanged(o: Node, n: Node): boolean {
  const j = (x: unknown) => JSON.stringify(x ?? null);
  return (
    j(o.status?.allocatable) !== j(n.status?.allocatable) ||
    j(o.metadata.labels) !== j(n.metadata.labels) ||
    j(o.spec?.taints) !== j(n.spec?.taints) ||
    !!o.spec?.unschedulable !== !!n.spec?.unschedulable ||
    j(o.status?.conditions?.map((c) => [c.type, c.status])) !== j(n.status?.conditions?.map((c) => [c.type, c.status]))
  );
}
