/**
 * The scheduler cache (`pkg/scheduler/internal/cache/cache.go`) and `NodeInfo`
 * (`pkg/scheduler/framework/types.go`), reduced to what NodeResourcesFit and
 * NodeResourcesLeastAllocated read: allocatable pods / CPU (millicores) / memory (bytes) and
 * the requests of every pod bound or assumed on the node. A pod counts until its DELETED event
 * (or a terminal phase) — a Terminating pod still occupies its node. Keys are pod UIDs.
 */
import { quantityMilliValue, quantityValue, type Node, type Pod, type Taint } from '@podsim/api';
import { effectiveTaints } from './taints.js';

/** Default max pods when the node does not report allocatable `pods` (kubelet `--max-pods`). */
export const DEFAULT_MAX_PODS = 110;
/** `schedutil.DefaultMilliCPURequest`: used for scoring pods that request no CPU. */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
/** `schedutil.DefaultMemoryRequest` (200 MiB): used for scoring pods that request no memory. */
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

/** A pod's requests: `computePodResourceRequest` (max of the sum of containers and each init container). */
export interface PodResources {
  readonly cpu: number;
  readonly mem: number;
  /** Non-zero variants for scoring (`GetNonzeroRequests`). */
  readonly nzCpu: number;
  readonly nzMem: number;
}

export function podResources(p: Pod): PodResources {
  let cpu = 0;
  let mem = 0;
  let nzCpu = 0;
  let nzMem = 0;
  for (const c of p.spec.containers ?? []) {
    const rc = quantityMilliValue(c.resources?.requests?.cpu) ?? 0;
    const rm = quantityValue(c.resources?.requests?.memory) ?? 0;
    cpu += rc;
    mem += rm;
    nzCpu += rc === 0 && c.resources?.requests?.cpu === undefined ? DEFAULT_MILLI_CPU_REQUEST : rc;
    nzMem += rm === 0 && c.resources?.requests?.memory === undefined ? DEFAULT_MEMORY_REQUEST : rm;
  }
  for (const c of p.spec.initContainers ?? []) {
    const rc = quantityMilliValue(c.resources?.requests?.cpu) ?? 0;
    const rm = quantityValue(c.resources?.requests?.memory) ?? 0;
    cpu = Math.max(cpu, rc);
    mem = Math.max(mem, rm);
  }
  return { cpu, mem, nzCpu, nzMem };
}

export class NodeInfo {
  node: Node | undefined;
  allowedPods = DEFAULT_MAX_PODS;
  /** Allocatable CPU in millicores; undefined when the node does not report it (no limit). */
  allocCpu: number | undefined;
  /** Allocatable memory in bytes; undefined when not reported (no limit). */
  allocMem: number | undefined;
  /** NoSchedule/NoExecute taints, including the readiness taint (set with the node). */
  taints: readonly Taint[] = [];
  readonly pods = new Map<string, PodResources>();
  requestedCpu = 0;
  requestedMem = 0;
  nonzeroCpu = 0;
  nonzeroMem = 0;

  constructor(readonly name: string) {}

  setNode(node: Node | undefined, defaultMaxPods: number, requireReady = true): void {
    this.node = node;
    this.taints = node ? effectiveTaints(node, requireReady).filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute') : [];
    const a = node?.status?.allocatable;
    this.allowedPods = quantityValue(a?.pods) ?? defaultMaxPods;
    this.allocCpu = quantityMilliValue(a?.cpu);
    this.allocMem = quantityValue(a?.memory);
  }

  addPod(uid: string, r: PodResources): void {
    if (this.pods.has(uid)) this.removePod(uid);
    this.pods.set(uid, r);
    this.requestedCpu += r.cpu;
    this.requestedMem += r.mem;
    this.nonzeroCpu += r.nzCpu;
    this.nonzeroMem += r.nzMem;
  }

  removePod(uid: string): boolean {
    const r = this.pods.get(uid);
    if (!r) return false;
    this.pods.delete(uid);
    this.requestedCpu -= r.cpu;
    this.requestedMem -= r.mem;
    this.nonzeroCpu -= r.nzCpu;
    this.nonzeroMem -= r.nzMem;
    return true;
  }
}

interface PodState {
  nodeName: string;
  /** Bound by this scheduler but not yet observed with its nodeName (`AssumePod`). */
  assumed: boolean;
}

/** The cache: nodes by name (insertion order = scheduling order) and pod placements. */
export class SchedulerCache {
  private readonly infos = new Map<string, NodeInfo>();
  private readonly podStates = new Map<string, PodState>();
  /** Names of nodes that have a Node object, in the order they were added. */
  private nodeList: string[] = [];
  private nodeListDirty = false;
  private nodeInfos: NodeInfo[] | undefined;

  constructor(
    private readonly defaultMaxPods: number,
    private readonly requireReady = true,
  ) {}

  private info(name: string): NodeInfo {
    let i = this.infos.get(name);
    if (!i) this.infos.set(name, (i = new NodeInfo(name)));
    return i;
  }

  addOrUpdateNode(node: Node): void {
    const name = node.metadata.name ?? '';
    const i = this.info(name);
    if (!i.node) {
      this.nodeList.push(name);
      this.nodeInfos = undefined;
    }
    i.setNode(node, this.defaultMaxPods, this.requireReady);
  }

  removeNode(name: string): void {
    const i = this.infos.get(name);
    if (!i || !i.node) return;
    i.node = undefined;
    this.nodeListDirty = true;
    this.nodeInfos = undefined;
    if (i.pods.size === 0) this.infos.delete(name);
  }

  /** Node infos that have a Node object, in a stable order. */
  nodes(): readonly NodeInfo[] {
    if (this.nodeListDirty) {
      this.nodeList = this.nodeList.filter((n) => this.infos.get(n)?.node !== undefined);
      this.nodeListDirty = false;
    }
    this.nodeInfos ??= this.nodeList.map((n) => this.infos.get(n)!);
    return this.nodeInfos;
  }

  get(name: string): NodeInfo | undefined {
    return this.infos.get(name);
  }

  /** `AssumePod`: counts the pod on `nodeName` before the binding is confirmed. */
  assumePod(uid: string, nodeName: string, r: PodResources): void {
    this.podStates.set(uid, { nodeName, assumed: true });
    this.info(nodeName).addPod(uid, r);
  }

  /** `ForgetPod`: an assumed pod whose binding failed. */
  forgetPod(uid: string): void {
    const s = this.podStates.get(uid);
    if (!s || !s.assumed) return;
    this.removePod(uid);
  }

  isAssumed(uid: string): boolean {
    return this.podStates.get(uid)?.assumed ?? false;
  }

  /** True if the pod is already counted, confirmed, on `nodeName` (requests are immutable). */
  isBoundTo(uid: string, nodeName: string): boolean {
    const s = this.podStates.get(uid);
    return s !== undefined && !s.assumed && s.nodeName === nodeName;
  }

  /** `AddPod` / `UpdatePod` for a pod observed bound to `nodeName` (confirms an assumed pod). */
  observeBoundPod(uid: string, nodeName: string, r: PodResources): void {
    const s = this.podStates.get(uid);
    if (s && s.nodeName !== nodeName) this.removePod(uid);
    this.podStates.set(uid, { nodeName, assumed: false });
    this.info(nodeName).addPod(uid, r);
  }

  /** `RemovePod`. Returns true if the pod was counted somewhere. */
  removePod(uid: string): boolean {
    const s = this.podStates.get(uid);
    if (!s) return false;
    this.podStates.delete(uid);
    const i = this.infos.get(s.nodeName);
    if (!i) return false;
    i.removePod(uid);
    if (!i.node && i.pods.size === 0) this.infos.delete(s.nodeName);
    return true;
  }

  /** Pods counted on nodes (bound + assumed). */
  get podCount(): number {
    return this.podStates.size;
  }
}
