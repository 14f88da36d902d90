/**
 * The pod garbage collector (`pkg/controller/podgc/gc_controller.go` `gc`, v1.22; spec §11.3,
 * R12): every 20 s (from the end of the previous pass, as `wait.Until`) `gcTerminated` (oldest
 * terminal pods beyond 12500), `gcOrphaned` (pods on nodes missing for the 40 s quarantine,
 * confirmed by a live GET) and `gcUnscheduledTerminating`, all on the lists taken at the start
 * of the pass. Every delete is a force delete (grace 0), so the kubelet is not waited for (C12).
 */
import type { Node, Pod } from '@podsim/api';
import { seconds } from '@podsim/api';
import type { ApiClient } from '../client.js';
import { all, call, isNotFound, runSync, type Sync } from '../coroutine.js';
import type { ControllerEnv } from '../env.js';
import type { Informer } from '../informer.js';
import { byCreationTimestamp, objectKey } from '../objects.js';
import { isPodTerminated } from '../podutil.js';
import type { ControllerPlantedBug } from '../plantedBugs.js';

/** `gcCheckPeriod`. */
export const GC_CHECK_PERIOD_US = seconds(20);
/** `quarantineTime`: how long a missing node must stay missing before its pods are deleted. */
export const QUARANTINE_TIME_US = seconds(40);
/** `--terminated-pod-gc-threshold` default (0 disables gcTerminated). */
export const TERMINATED_POD_GC_THRESHOLD = 12500;

export const POD_NODE_NAME_INDEX = 'podgc/nodeName';
export const POD_TERMINATED_INDEX = 'podgc/terminated';
export const POD_UNSCHEDULED_TERMINATING_INDEX = 'podgc/unscheduledTerminating';

export interface PodGCOptions {
  readonly gcCheckPeriodUs?: number;
  readonly quarantineTimeUs?: number;
  readonly terminatedPodThreshold?: number;
  /** Test-only planted bugs (plantedBugs.ts): `podgcSkipQuarantine`. */
  readonly plantedBugs?: ReadonlySet<ControllerPlantedBug>;
}

export type PodGCReason = 'terminated' | 'orphaned' | 'unscheduledTerminating';

export class PodGCController {
  /** The delaying node queue: node name → virtual µs at which it is due. */
  readonly nodeQueue = new Map<string, number>();
  readonly gcCheckPeriodUs: number;
  readonly quarantineTimeUs: number;
  readonly terminatedPodThreshold: number;
  /** Completed passes. */
  passes = 0;
  private running = false;
  private readonly skipQuarantine: boolean;

  constructor(
    private readonly env: ControllerEnv,
    private readonly pods: Informer<Pod>,
    private readonly nodes: Informer<Node>,
    private readonly client: ApiClient,
    opts: PodGCOptions = {},
  ) {
    this.gcCheckPeriodUs = opts.gcCheckPeriodUs ?? GC_CHECK_PERIOD_US;
    this.quarantineTimeUs = opts.quarantineTimeUs ?? QUARANTINE_TIME_US;
    this.terminatedPodThreshold = opts.terminatedPodThreshold ?? TERMINATED_POD_GC_THRESHOLD;
    this.skipQuarantine = opts.plantedBugs?.has('podgcSkipQuarantine') ?? false;
    pods.addIndexer(POD_NODE_NAME_INDEX, (p) => (p.spec.nodeName ? [p.spec.nodeName] : []));
    pods.addIndexer(POD_TERMINATED_INDEX, (p) => (isPodTerminated(p) ? ['true'] : []));
    pods.addIndexer(POD_UNSCHEDULED_TERMINATING_INDEX, (p) => (p.metadata.deletionTimestamp && !p.spec.nodeName ? ['true'] : []));
  }

  /** `Run` after the caches synced: a pass now, then one `gcCheckPeriod` after each pass ends. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop();
  }

  private loop(): void {
    runSync(this.gc(), this.client.sender, () => {
      this.passes++;
      this.env.after(this.gcCheckPeriodUs, () => this.loop());
    });
  }

  /** One pass (`gc`). */
  *gc(): Sync<void> {
    // Lists taken at the start of the pass.
    const existing = new Set<string>();
    for (const n of this.nodes.values()) existing.add(n.metadata.name ?? '');
    const orphanCandidates = new Map<string, Pod[]>();
    for (const nodeName of this.pods.indexValues(POD_NODE_NAME_INDEX)) {
      if (!existing.has(nodeName)) orphanCandidates.set(nodeName, this.pods.byIndex(POD_NODE_NAME_INDEX, nodeName));
    }
    const unscheduledTerminating = this.pods.byIndex(POD_UNSCHEDULED_TERMINATING_INDEX, 'true');

    if (this.terminatedPodThreshold > 0) yield* this.gcTerminated();
    yield* this.gcOrphaned(existing, orphanCandidates);
    yield* this.gcUnscheduledTerminating(unscheduledTerminating);
  }

  /** `gcTerminated`. */
  private *gcTerminated(): Sync<void> {
    const keys = this.pods.indexKeys(POD_TERMINATED_INDEX, 'true');
    const deleteCount = keys.size - this.terminatedPodThreshold;
    if (deleteCount <= 0) return;
    const terminated = [...keys].map((k) => this.pods.get(k)!);
    terminated.sort(byCreationTimestamp);
    const victims = terminated.slice(0, deleteCount);
    const results = yield* all(victims.map((p) => forceDelete(p)));
    results.forEach((res, i) => this.traceDelete(victims[i], 'terminated', res.code));
  }

  /** `gcOrphaned` with `discoverDeletedNodes`. */
  private *gcOrphaned(existing: ReadonlySet<string>, candidates: ReadonlyMap<string, Pod[]>): Sync<void> {
    const now = this.env.now;
    // AddAfter: a name already waiting keeps its earlier due time.
    for (const nodeName of candidates.keys()) if (!this.nodeQueue.has(nodeName)) this.nodeQueue.set(nodeName, now + this.quarantineTimeUs);
    const deleted: string[] = [];
    // The planted bug `podgcSkipQuarantine` (test-only): no quarantine, no live GET.
    if (this.skipQuarantine) deleted.push(...candidates.keys());
    for (const [nodeName, due] of this.skipQuarantine ? [] : [...this.nodeQueue]) {
      if (due > now) continue;
      this.nodeQueue.delete(nodeName);
      if (existing.has(nodeName)) continue;
      const res = yield* call({ type: 'ApiGet', resource: 'nodes', name: nodeName });
      // An error other than NotFound leaves the node to be re-queued by a later pass.
      if (isNotFound(res)) deleted.push(nodeName);
    }
    for (const nodeName of deleted) {
      for (const p of candidates.get(nodeName) ?? []) {
        const res = yield* call(forceDelete(p));
        this.traceDelete(p, 'orphaned', res.code, nodeName);
      }
    }
  }

  /** `gcUnscheduledTerminating`. */
  private *gcUnscheduledTerminating(pods: readonly Pod[]): Sync<void> {
    for (const p of pods) {
      const res = yield* call(forceDelete(p));
      this.traceDelete(p, 'unscheduledTerminating', res.code);
    }
  }

  private traceDelete(p: Pod, reason: PodGCReason, code: number, node?: string): void {
    this.env.count(`podgc.${reason}`);
    this.env.trace('controller.podgc.delete', `${objectKey(p)} ${reason}${node ? ` (node ${node})` : ''}: ${code}`, {
      namespace: p.metadata.namespace,
      pod: p.metadata.name,
      uid: p.metadata.uid,
      reason,
      node,
      code,
    });
  }
}

/** `gcc.deletePod`: DELETE with `gracePeriodSeconds: 0`. */
function forceDelete(p: Pod) {
  return { type: 'ApiDelete' as const, resource: 'pods' as const, namespace: p.metadata.namespace, name: p.metadata.name ?? '', options: { gracePeriodSeconds: 0 } };
}
