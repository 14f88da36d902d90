/**
 * `NoExecuteTaintManager` (`pkg/controller/nodelifecycle/scheduler/taint_manager.go` and
 * `timed_workers.go`, v1.23.13 read, 1.22 semantics; node-lifecycle spec §5): keeps each node's
 * NoExecute taints, and per pod a timed deletion from the smallest `tolerationSeconds` of the
 * tolerations it uses (`getMinTolerationTime`); a pod that does not tolerate every taint is
 * deleted at once; a pod tolerating forever, or a node losing its NoExecute taints, cancels the
 * pending deletion (event "Cancelling deletion of Pod ns/name"). A pending deletion keeps its
 * first schedule (`CreatedAt`), so later taint swaps neither restart nor shorten it. The deletion
 * is a DELETE with empty DeleteOptions (the pod's own grace; not the Eviction API, no PDB), up to
 * 5 attempts, event `TaintManagerEviction` "Marking for deletion Pod ns/name"; after it succeeds
 * the pod's key stays (nil worker) so it is not deleted again while it lingers Terminating.
 *
 * Simplifications: node and pod updates are handled synchronously on the informer event (not on
 * 8 sharded workers); the 10 ms sleep between delete retries is not modelled. Times are µs.
 */
import type { ApiRequest, Node, Pod, Taint, Toleration } from '@podsim/api';
import { US_PER_SECOND } from '@podsim/api';
import type { ApiClient } from '../client.js';
import type { ControllerEnv, TimerHandle } from '../env.js';
import type { ControllerEventRecorder } from '../events.js';
import type { Informer } from '../informer.js';
import { toleratesTaint } from '../scheduler/framework.js';
import { noExecuteTaints } from './nodeHealth.js';
import type { ControllerPlantedBug } from '../plantedBugs.js';

/** Attempts of `deletePodHandler`. */
export const TAINT_MANAGER_DELETE_RETRIES = 5;
export const TAINT_MANAGER_EVICTION_REASON = 'TaintManagerEviction';

/** `GetMatchingTolerations`: whether every taint is tolerated, and the first toleration used per taint. */
export function getMatchingTolerations(taints: readonly Taint[], tolerations: readonly Toleration[] | undefined): [boolean, Toleration[]] {
  if (taints.length === 0) return [true, []];
  const tols = tolerations ?? [];
  if (tols.length === 0) return [false, []];
  const used: Toleration[] = [];
  for (const taint of taints) {
    const t = tols.find((x) => toleratesTaint(x, taint));
    if (!t) return [false, []];
    used.push(t);
  }
  return [true, used];
}

/** `getMinTolerationTime` in µs: 0 for none or any ≤ 0, −1 (forever) when none has seconds. */
export function getMinTolerationTimeUs(tolerations: readonly Toleration[]): number {
  if (tolerations.length === 0) return 0;
  let min = Infinity;
  for (const t of tolerations) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds === null) continue;
    if (t.tolerationSeconds <= 0) return 0;
    if (t.tolerationSeconds < min) min = t.tolerationSeconds;
  }
  return min === Infinity ? -1 : min * US_PER_SECOND;
}

/** One `TimedWorker`: a pending deletion (`handle` set) or a fired one (`handle` undefined). */
interface TimedWorker {
  readonly createdAt: number;
  readonly fireAt: number;
  handle: TimerHandle | undefined;
}

export class NoExecuteTaintManager {
  /** `taintedNodes`: node name → its NoExecute taints. */
  readonly taintedNodes = new Map<string, Taint[]>();
  /** `taintEvictionQueue.workers`: `ns/name` → pending or fired worker. */
  readonly workers = new Map<string, TimedWorker>();
  /** DELETEs sent (for tests). */
  deletes = 0;

  constructor(
    private readonly env: ControllerEnv,
    private readonly nodes: Informer<Node>,
    private readonly podsOnNode: (nodeName: string) => readonly Pod[],
    private readonly getPod: (key: string) => Pod | undefined,
    private readonly client: ApiClient,
    private readonly recorder: ControllerEventRecorder,
    /** Whether `Run` has started (events before it are covered by the start-up pass over every node). */
    private readonly running: () => boolean = () => true,
    /** Test-only planted bugs (plantedBugs.ts): `taintManagerEvictForeverTolerating`, `taintManagerNoCancel`. */
    private readonly bugs: ReadonlySet<ControllerPlantedBug> = new Set(),
  ) {}

  /** Registers the informer handlers (`NodeUpdated` / `PodUpdated` filters). */
  register(pods: Informer<Pod>): void {
    this.nodes.addEventHandler({
      onAdd: (n) => {
        if (this.running()) this.handleNodeUpdate(n.metadata.name ?? '');
      },
      onUpdate: (o, n) => {
        if (this.running() && !sameTaints(noExecuteTaints(o.spec?.taints), noExecuteTaints(n.spec?.taints))) this.handleNodeUpdate(n.metadata.name ?? '');
      },
      onDelete: (n) => {
        if (this.running()) this.handleNodeUpdate(n.metadata.name ?? '');
      },
    });
    pods.addEventHandler({
      onAdd: (p) => {
        if (this.running()) this.handlePodUpdate(p, p.spec.nodeName ?? '');
      },
      onUpdate: (o, p) => {
        if (!this.running() || (o.spec.nodeName === p.spec.nodeName && sameTolerations(o.spec.tolerations, p.spec.tolerations))) return;
        this.handlePodUpdate(p, p.spec.nodeName ?? '');
      },
      onDelete: (p) => {
        if (this.running()) this.cancelWorkWithEvent(podKey(p));
      },
    });
  }

  /** `handleNodeUpdate`. */
  handleNodeUpdate(nodeName: string): void {
    const node = this.nodes.get(nodeName);
    if (!node) {
      // Pending timers of its pods are not cancelled (podgc force-deletes them first anyway).
      this.taintedNodes.delete(nodeName);
      return;
    }
    const taints = noExecuteTaints(node.spec?.taints);
    if (taints.length === 0) this.taintedNodes.delete(nodeName);
    else this.taintedNodes.set(nodeName, taints);
    const pods = this.podsOnNode(nodeName);
    if (pods.length === 0) return;
    if (taints.length === 0) {
      // The planted bug `taintManagerNoCancel` (test-only): pending deletions stay.
      if (this.bugs.has('taintManagerNoCancel')) return;
      for (const p of pods) this.cancelWorkWithEvent(podKey(p));
      return;
    }
    const now = this.env.now;
    for (const p of pods) this.processPodOnNode(podKey(p), p.spec.tolerations, taints, now);
  }

  /** `handlePodUpdate` (a pod added, or its tolerations or nodeName changed). */
  handlePodUpdate(pod: Pod, nodeName: string): void {
    if (!nodeName || pod.spec.nodeName !== nodeName) return;
    const taints = this.taintedNodes.get(nodeName);
    if (!taints) return;
    this.processPodOnNode(podKey(pod), pod.spec.tolerations, taints, this.env.now);
  }

  /** `processPodOnNode`. */
  processPodOnNode(key: string, tolerations: readonly Toleration[] | undefined, taints: readonly Taint[], now: number): void {
    if (taints.length === 0) this.cancelWorkWithEvent(key);
    const [allTolerated, used] = getMatchingTolerations(taints, tolerations);
    if (!allTolerated) {
      // Cancel whatever is scheduled: the pod is deleted right away.
      this.cancelWorkWithEvent(key);
      this.addWork(key, now, now);
      return;
    }
    const min = getMinTolerationTimeUs(used);
    // The planted bug `taintManagerEvictForeverTolerating` (test-only): forever means now.
    if (min < 0 && this.bugs.has('taintManagerEvictForeverTolerating')) {
      this.addWork(key, now, now);
      return;
    }
    if (min < 0) {
      this.cancelWorkWithEvent(key);
      return;
    }
    let start = now;
    const trigger = start + min;
    const scheduled = this.workers.get(key);
    if (scheduled && scheduled.handle !== undefined) {
      start = scheduled.createdAt;
      if (start + min < trigger) return;
      this.cancelWorkWithEvent(key);
    }
    this.addWork(key, start, trigger);
  }

  /** `TimedWorkerQueue.AddWork`: refused while the key exists (pending or fired). */
  private addWork(key: string, createdAt: number, fireAt: number): void {
    if (this.workers.has(key)) return;
    const w: TimedWorker = { createdAt, fireAt, handle: undefined };
    this.workers.set(key, w);
    w.handle = this.env.after(Math.max(0, fireAt - this.env.now), () => {
      w.handle = undefined;
      this.deletePodHandler(key, w);
    });
    this.env.trace('controller.taintManager.schedule', `${key} at ${fireAt / US_PER_SECOND}s`, { pod: key, fireAtUs: fireAt, createdAtUs: createdAt });
  }

  /** `cancelWorkWithEvent`: drops the key; an event only when a live timer was cancelled. */
  cancelWorkWithEvent(key: string): void {
    const w = this.workers.get(key);
    if (!w) return;
    this.workers.delete(key);
    if (w.handle === undefined) return;
    this.env.cancel(w.handle);
    this.env.trace('controller.taintManager.cancel', key, { pod: key });
    const [namespace, name] = splitKey(key);
    this.recorder.event({ apiVersion: 'v1', kind: 'Pod', metadata: this.getPod(key)?.metadata ?? { namespace, name } }, 'Normal', TAINT_MANAGER_EVICTION_REASON, `Cancelling deletion of Pod ${key}`);
  }

  /** `deletePodHandler`: event, then DELETE with empty options, up to 5 attempts. */
  private deletePodHandler(key: string, w: TimedWorker): void {
    const [namespace, name] = splitKey(key);
    this.recorder.event({ apiVersion: 'v1', kind: 'Pod', metadata: this.getPod(key)?.metadata ?? { namespace, name } }, 'Normal', TAINT_MANAGER_EVICTION_REASON, `Marking for deletion Pod ${key}`);
    const req: ApiRequest = { type: 'ApiDelete', resource: 'pods', namespace, name, options: {} };
    const attempt = (n: number) => {
      this.deletes++;
      this.client.send(req, (res) => {
        const ok = (res.code >= 200 && res.code < 300) || res.code === 404;
        this.env.trace('controller.taintManager.delete', `${key}: ${res.code}`, { namespace, pod: name, code: res.code, attempt: n });
        if (ok) return; // the key stays (nil worker): no second deletion while it lingers
        if (n + 1 < TAINT_MANAGER_DELETE_RETRIES) attempt(n + 1);
        else if (this.workers.get(key) === w) this.workers.delete(key);
      });
    };
    attempt(0);
  }
}

function podKey(p: Pod): string {
  return `${p.metadata.namespace ?? 'default'}/${p.metadata.name ?? ''}`;
}

function splitKey(key: string): [string, string] {
  const i = key.indexOf('/');
  return [key.slice(0, i), key.slice(i + 1)];
}

function sameTaints(a: readonly Taint[], b: readonly Taint[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i].key !== b[i].key || a[i].effect !== b[i].effect || (a[i].value ?? '') !== (b[i].value ?? '') || (a[i].timeAdded ?? '') !== (b[i].timeAdded ?? '')) return false;
  }
  return true;
}

function sameTolerations(a: readonly Toleration[] | undefined, b: readonly Toleration[] | undefined): boolean {
  if (a === b) return true;
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) {
    const s = x[i];
    const t = y[i];
    if (s.key !== t.key || s.operator !== t.operator || s.value !== t.value || s.effect !== t.effect || s.tolerationSeconds !== t.tolerationSeconds) return false;
  }
  return true;
}
