/**
 * Pod workers: `pkg/kubelet/pod_workers.go` (1.22-era; spec §5). One serial worker per pod UID
 * drives a pod through SyncPodWork → TerminatingPodWork → TerminatedPodWork and never back;
 * updates arriving while a sync runs are coalesced (latest wins, `lastUndeliveredWorkUpdate`);
 * the effective grace period only shrinks (`calculateEffectiveGracePeriod`) and is always handed
 * to syncTerminatingPod as the kill override. A Go goroutine blocked in `GetNewerThan` or a sync
 * function is a pending callback here; `context.Context` is a {@link WorkerContext}.
 */
import type { Pod, PodStatus } from '@podsim/api';
import type { KubeletEnv } from './env.js';
import type { RuntimePod, RuntimePodStatus } from './container.js';
import { runtimePodToAPIPod } from './container.js';
import { WorkQueue } from './workQueue.js';

export type SyncPodType = 'SyncPodSync' | 'SyncPodUpdate' | 'SyncPodCreate' | 'SyncPodKill';
export type PodWorkType = 'SyncPodWork' | 'TerminatingPodWork' | 'TerminatedPodWork';

/** `KillPodOptions`. Grace in seconds. */
export interface KillPodOptions {
  readonly evict?: boolean;
  readonly podTerminationGracePeriodSecondsOverride?: number;
  /** Mutates the status before it is set (eviction reason); the last one wins. */
  readonly podStatusFunc?: (s: PodStatus) => PodStatus;
  /** `CompletedCh`: called once the pod reached terminated (or at once if it already did). */
  readonly completed?: () => void;
}

/** `UpdatePodOptions`. */
export interface UpdatePodOptions {
  readonly updateType: SyncPodType;
  readonly pod?: Pod;
  readonly mirrorPod?: Pod;
  /** A runtime-only (orphaned) pod: only SyncPodKill is accepted. */
  readonly runningPod?: RuntimePod;
  readonly killPodOptions?: KillPodOptions;
  /** Virtual µs (metrics only). */
  readonly startTime?: number;
}

interface PodWork {
  readonly workType: PodWorkType;
  readonly options: UpdatePodOptions & { readonly pod: Pod };
}

/** `context.Context` of one sync: `cancelled` flips when the pod worker cancels it. */
export interface WorkerContext {
  cancelled: boolean;
}

/** The error a sync returns when it noticed its context was cancelled (`context.Canceled`). */
export const CONTEXT_CANCELED = 'context canceled';
/** Substring of the transient network error that is retried after 1 s (`NetworkNotReadyErrorMsg`). */
export const NETWORK_NOT_READY_ERROR_MSG = 'network is not ready';

/** A sync's outcome: undefined = success, else the error message. */
export type SyncError = string | undefined;

/** The Kubelet functions the workers call (`syncPodFn`, `syncTerminatingPodFn`, `syncTerminatedPodFn`). */
export interface PodSyncer {
  syncPod(ctx: WorkerContext, updateType: SyncPodType, pod: Pod, mirrorPod: Pod | undefined, podStatus: RuntimePodStatus, done: (err: SyncError) => void): void;
  syncTerminatingPod(
    ctx: WorkerContext,
    pod: Pod,
    podStatus: RuntimePodStatus | undefined,
    runningPod: RuntimePod | undefined,
    gracePeriod: number | undefined,
    podStatusFn: ((s: PodStatus) => PodStatus) | undefined,
    done: (err: SyncError) => void,
  ): void;
  syncTerminatedPod(ctx: WorkerContext, pod: Pod, podStatus: RuntimePodStatus, done: (err: SyncError) => void): void;
}

/** The pod cache wait (`podCache.GetNewerThan`); `cb` runs once data newer than `minTime` exists. */
export interface PodCacheReader {
  getNewerThan(uid: string, minTime: number, cb: (status: RuntimePodStatus) => void): void;
}

/** `podSyncStatus`. Times are virtual µs; undefined = unset (virtual time 0 is a real instant). */
export interface PodSyncStatus {
  ctx: WorkerContext | undefined;
  working: boolean;
  syncedAt: number;
  terminatingAt: number | undefined;
  startedTerminating: boolean;
  deleted: boolean;
  /** Seconds; 0 = not yet computed. */
  gracePeriod: number;
  evicted: boolean;
  terminatedAt: number | undefined;
  finished: boolean;
  notifyPostTerminating: (() => void)[];
  statusPostTerminating: ((s: PodStatus) => PodStatus)[];
  /** managePodLoop's `lastSyncTime` (the goroutine's local; -1 = zero time). */
  lastSyncTime: number;
}

/**
 * `calculateEffectiveGracePeriod` (seconds): start from the remembered grace, take the smaller
 * positive of dgps and the override, fall back to TGPS when still 0 (so 0 = "unset"), floor 1.
 * `shortened` iff a previous non-zero grace changed.
 */
export function calculateEffectiveGracePeriod(
  statusGracePeriod: number,
  pod: Pod,
  opts: KillPodOptions | undefined,
): { gracePeriod: number; shortened: boolean } {
  let g = statusGracePeriod;
  const dgps = pod.metadata.deletionGracePeriodSeconds;
  if (dgps !== undefined && (g === 0 || dgps < g)) g = dgps;
  const ov = opts?.podTerminationGracePeriodSecondsOverride;
  if (ov !== undefined && (g === 0 || ov < g)) g = ov;
  const tgps = pod.spec.terminationGracePeriodSeconds;
  if (g === 0 && tgps !== undefined) g = tgps;
  if (g < 1) g = 1;
  return { gracePeriod: g, shortened: statusGracePeriod !== 0 && statusGracePeriod !== g };
}

const podName = (p: Pod) => `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`;

export interface PodWorkersOptions {
  /** `resyncInterval` (= syncFrequency), µs. */
  readonly resyncIntervalUs: number;
  /** `backOffPeriod`, µs. */
  readonly backOffPeriodUs: number;
  /** Called when a worker reaches terminatedAt (the volume manager's populator watches `ShouldPodRuntimeBeRemoved`). */
  readonly onPodTerminated?: (uid: string) => void;
  /**
   * Called whenever the work type {@link PodWorkers.workTypeOf} reports for a UID may have
   * changed (a worker created, terminating, terminated or forgotten): housekeeping re-checks
   * only those UIDs instead of every pod of the node.
   */
  readonly onWorkTypeChange?: (uid: string) => void;
}

const WORKER_RESYNC_INTERVAL_JITTER_FACTOR = 0.5;
const WORKER_BACKOFF_PERIOD_JITTER_FACTOR = 0.5;
const BACKOFF_ON_TRANSIENT_ERROR_US = 1_000_000;

export class PodWorkers {
  readonly podSyncStatuses = new Map<string, PodSyncStatus>();
  private readonly lastUndeliveredWorkUpdate = new Map<string, PodWork>();
  /** UIDs of the {@link podSyncStatuses} entries that are `finished` (a finished entry stays so until SyncKnownPods forgets it). */
  private readonly finishedUids = new Set<string>();
  /** Set by the first SyncKnownPods (housekeeping after sources are ready). */
  podsSynced = false;
  readonly workQueue = new WorkQueue();
  private spanSeq = 0;

  constructor(
    private readonly env: KubeletEnv,
    private readonly syncer: PodSyncer,
    private readonly podCache: PodCacheReader,
    private readonly opts: PodWorkersOptions,
  ) {}

  // ---- predicates (the table of spec §5.1) ----------------------------------------------

  /** `CouldHaveRunningContainers`. */
  couldHaveRunningContainers(uid: string): boolean {
    const s = this.podSyncStatuses.get(uid);
    return s ? s.terminatedAt === undefined : !this.podsSynced;
  }
  /** `IsPodTerminationRequested`. */
  isPodTerminationRequested(uid: string): boolean {
    const s = this.podSyncStatuses.get(uid);
    return s ? s.terminatingAt !== undefined : false;
  }
  /** `IsPodKnownTerminated`. */
  isPodKnownTerminated(uid: string): boolean {
    const s = this.podSyncStatuses.get(uid);
    return s ? s.terminatedAt !== undefined : false;
  }
  /** `ShouldPodContainersBeTerminating`. */
  shouldPodContainersBeTerminating(uid: string): boolean {
    const s = this.podSyncStatuses.get(uid);
    return s ? s.startedTerminating : this.podsSynced;
  }
  /** `ShouldPodRuntimeBeRemoved`. */
  shouldPodRuntimeBeRemoved(uid: string): boolean {
    const s = this.podSyncStatuses.get(uid);
    return s ? s.terminatedAt !== undefined : this.podsSynced;
  }
  /** `ShouldPodContentBeRemoved`. */
  shouldPodContentBeRemoved(uid: string): boolean {
    const s = this.podSyncStatuses.get(uid);
    return s ? s.evicted || (s.deleted && s.terminatedAt !== undefined) : this.podsSynced;
  }

  // ---- UpdatePod ----------------------------------------------------------------------------

  /** `UpdatePod` (spec §5.2). */
  updatePod(options: UpdatePodOptions): void {
    let pod = options.pod;
    let isRuntimePod = false;
    if (options.runningPod !== undefined && pod === undefined) {
      if (options.updateType !== 'SyncPodKill') return; // runtime pods can only be killed
      pod = runtimePodToAPIPod(options.runningPod);
      isRuntimePod = true;
    }
    if (pod === undefined) throw new Error('UpdatePod without a pod or a running pod');
    const uid = pod.metadata.uid!;
    const now = this.env.now();
    let status = this.podSyncStatuses.get(uid);
    if (!status) {
      status = {
        ctx: undefined,
        working: false,
        syncedAt: now,
        terminatingAt: undefined,
        startedTerminating: false,
        deleted: false,
        gracePeriod: 0,
        evicted: false,
        terminatedAt: undefined,
        finished: false,
        notifyPostTerminating: [],
        statusPostTerminating: [],
        lastSyncTime: -1,
      };
      this.podSyncStatuses.set(uid, status);
      this.opts.onWorkTypeChange?.(uid);
    }
    // Once a pod is terminated by UID it cannot re-enter the pod worker until housekeeping forgets it.
    if (status.finished) return;

    let becameTerminating = false;
    if (status.terminatingAt === undefined) {
      if (isRuntimePod) {
        status.deleted = true;
        status.terminatingAt = now;
        becameTerminating = true;
      } else if (pod.metadata.deletionTimestamp !== undefined) {
        status.deleted = true;
        status.terminatingAt = now;
        becameTerminating = true;
      } else if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') {
        status.terminatingAt = now;
        becameTerminating = true;
      } else if (options.updateType === 'SyncPodKill') {
        if (options.killPodOptions?.evict) status.evicted = true;
        status.terminatingAt = now;
        becameTerminating = true;
      }
      if (becameTerminating) this.opts.onWorkTypeChange?.(uid);
    }

    let workType: PodWorkType;
    let wasGracePeriodShortened = false;
    // The work's options: `options` with the pod and the kill options this work type gets (one copy).
    let killPodOptions: KillPodOptions | undefined;
    if (status.terminatedAt !== undefined) {
      // A runtime pod kill from a stale housekeeping view is ignored until the worker completes.
      if (isRuntimePod) return;
      workType = 'TerminatedPodWork';
      options.killPodOptions?.completed?.();
    } else if (status.terminatingAt !== undefined) {
      workType = 'TerminatingPodWork';
      const kpo = options.killPodOptions ?? {};
      if (kpo.completed) status.notifyPostTerminating.push(kpo.completed);
      if (kpo.podStatusFunc) status.statusPostTerminating.push(kpo.podStatusFunc);
      const { gracePeriod, shortened } = calculateEffectiveGracePeriod(status.gracePeriod, pod, kpo);
      wasGracePeriodShortened = shortened;
      status.gracePeriod = gracePeriod;
      // Always set the grace period for syncTerminatingPod (never zero).
      killPodOptions = { ...kpo, podTerminationGracePeriodSecondsOverride: gracePeriod };
    } else {
      workType = 'SyncPodWork';
      options.killPodOptions?.completed?.();
    }
    let work: PodWork = { workType, options: { ...options, pod, killPodOptions } };

    if (!status.working) {
      status.working = true;
      this.deliver(uid, work);
      return;
    }
    const undelivered = this.lastUndeliveredWorkUpdate.get(uid);
    if (undelivered?.options.startTime !== undefined && (work.options.startTime === undefined || undelivered.options.startTime < work.options.startTime)) {
      work = { ...work, options: { ...work.options, startTime: undelivered.options.startTime } };
    }
    this.lastUndeliveredWorkUpdate.set(uid, work);
    if ((becameTerminating || wasGracePeriodShortened) && status.ctx !== undefined) status.ctx.cancelled = true;
  }

  // ---- managePodLoop ---------------------------------------------------------------------

  /** One iteration of `managePodLoop` for `work` (the goroutine received it from its channel). */
  private deliver(uid: string, work: PodWork): void {
    const status = this.podSyncStatuses.get(uid)!;
    if (work.options.runningPod !== undefined) {
      this.runWork(uid, work, undefined);
      return;
    }
    // Wait until a PLEG relist refreshed the cache after the previous sync (spec §5.3 step 1).
    this.podCache.getNewerThan(uid, status.lastSyncTime, (podStatus) => this.runWork(uid, work, podStatus));
  }

  private runWork(uid: string, work: PodWork, podStatus: RuntimePodStatus | undefined): void {
    const status = this.podSyncStatuses.get(uid);
    if (!status) throw new Error(`pod worker ${uid} lost its status while working`);
    // contextForWorker: a fresh context if there is none or the last one was cancelled.
    if (status.ctx === undefined || status.ctx.cancelled) status.ctx = { cancelled: false };
    const ctx = status.ctx;
    const pod = work.options.pod;
    const span = ++this.spanSeq;
    const traced = this.env.tracing('kubelet.sync');
    if (traced) this.env.trace('kubelet.sync', `${work.workType} ${podName(pod)} B`, { podUid: uid, pod: podName(pod), work: work.workType, ph: 'B', span });
    const done = (err: SyncError) => {
      status.lastSyncTime = this.env.now();
      if (traced) {
        this.env.trace('kubelet.sync', `${work.workType} ${podName(pod)} E${err ? ' error' : ''}`, {
          podUid: uid,
          pod: podName(pod),
          work: work.workType,
          ph: 'E',
          span,
          ...(err ? { error: err } : {}),
        });
      }
      this.afterSync(uid, work, err);
    };
    switch (work.workType) {
      case 'TerminatedPodWork':
        return this.syncer.syncTerminatedPod(ctx, pod, podStatus!, done);
      case 'TerminatingPodWork': {
        const podStatusFn = this.acknowledgeTerminating(uid);
        return this.syncer.syncTerminatingPod(ctx, pod, podStatus, work.options.runningPod, work.options.killPodOptions?.podTerminationGracePeriodSecondsOverride, podStatusFn, done);
      }
      default:
        return this.syncer.syncPod(ctx, work.options.updateType, pod, work.options.mirrorPod, podStatus!, done);
    }
  }

  private afterSync(uid: string, work: PodWork, err: SyncError): void {
    const pod = work.options.pod;
    if (err === undefined) {
      if (work.workType === 'TerminatedPodWork') {
        this.completeTerminated(uid);
        return;
      }
      if (work.workType === 'TerminatingPodWork') {
        if (work.options.runningPod !== undefined) {
          this.completeTerminatingRuntimePod(uid);
          return;
        }
        this.completeTerminating(uid, pod);
      }
    }
    this.completeWork(uid, err);
  }

  /** `acknowledgeTerminating`: the worker has begun terminating; returns the last status func. */
  private acknowledgeTerminating(uid: string): ((s: PodStatus) => PodStatus) | undefined {
    const s = this.podSyncStatuses.get(uid);
    if (!s) return undefined;
    s.startedTerminating = true;
    return s.statusPostTerminating.length > 0 ? s.statusPostTerminating[s.statusPostTerminating.length - 1] : undefined;
  }

  /** `completeTerminating`: terminatedAt, notify waiters, force the next work to TerminatedPodWork. */
  private completeTerminating(uid: string, pod: Pod): void {
    const s = this.podSyncStatuses.get(uid);
    if (s) {
      s.terminatedAt = this.env.now();
      this.opts.onWorkTypeChange?.(uid);
      for (const fn of s.notifyPostTerminating) fn();
      s.notifyPostTerminating = [];
      s.statusPostTerminating = [];
    }
    this.lastUndeliveredWorkUpdate.set(uid, { workType: 'TerminatedPodWork', options: { updateType: 'SyncPodSync', pod } });
    this.opts.onPodTerminated?.(uid);
  }

  /** `completeTerminatingRuntimePod`: an orphan is done once its containers are killed. */
  private completeTerminatingRuntimePod(uid: string): void {
    const s = this.podSyncStatuses.get(uid);
    if (s) {
      s.terminatedAt = this.env.now();
      this.opts.onWorkTypeChange?.(uid);
      s.finished = true;
      this.finishedUids.add(uid);
      s.working = false;
    }
    this.lastUndeliveredWorkUpdate.delete(uid);
  }

  /** `completeTerminated`: the worker is finished and its goroutine exits. */
  private completeTerminated(uid: string): void {
    this.lastUndeliveredWorkUpdate.delete(uid);
    const s = this.podSyncStatuses.get(uid);
    if (s) {
      s.finished = true;
      this.finishedUids.add(uid);
      s.working = false;
    }
  }

  /** `completeWork`: requeue (resync 1 m / transient 1 s / backoff 10 s, jitter 0.5), then send pending work. */
  private completeWork(uid: string, err: SyncError): void {
    const now = this.env.now();
    let delay: number;
    if (err === undefined) delay = this.env.jitter(this.opts.resyncIntervalUs, WORKER_RESYNC_INTERVAL_JITTER_FACTOR);
    else if (err.includes(NETWORK_NOT_READY_ERROR_MSG)) delay = this.env.jitter(BACKOFF_ON_TRANSIENT_ERROR_US, WORKER_BACKOFF_PERIOD_JITTER_FACTOR);
    else delay = this.env.jitter(this.opts.backOffPeriodUs, WORKER_BACKOFF_PERIOD_JITTER_FACTOR);
    this.workQueue.enqueue(uid, now, delay);
    this.completeWorkQueueNext(uid);
  }

  private completeWorkQueueNext(uid: string): void {
    const next = this.lastUndeliveredWorkUpdate.get(uid);
    const s = this.podSyncStatuses.get(uid);
    if (next !== undefined) {
      this.lastUndeliveredWorkUpdate.delete(uid);
      this.deliver(uid, next);
    } else if (s) {
      s.working = false;
    }
  }

  // ---- housekeeping -------------------------------------------------------------------------

  /**
   * `SyncKnownPods`: marks podsSynced and forgets finished workers whose pod left the config.
   * Upstream also returns every remaining worker's work type; housekeeping reads it per UID
   * through {@link workTypeOf} instead (the same answers until the next UpdatePod), so the
   * 2 s pass over a node's pods builds no map.
   */
  syncKnownPods(desired: { has(uid: string): boolean }): void {
    this.podsSynced = true;
    // Only finished workers are forgotten (removeTerminatedWorker), so only they are visited.
    for (const uid of this.finishedUids) {
      if (desired.has(uid)) continue;
      this.podSyncStatuses.delete(uid);
      this.lastUndeliveredWorkUpdate.delete(uid);
      this.finishedUids.delete(uid);
      this.opts.onWorkTypeChange?.(uid);
    }
  }

  /** The work type `SyncKnownPods` reports for `uid`; undefined = no worker. */
  workTypeOf(uid: string): PodWorkType | undefined {
    const s = this.podSyncStatuses.get(uid);
    if (s === undefined) return undefined;
    return s.terminatedAt !== undefined ? 'TerminatedPodWork' : s.terminatingAt !== undefined ? 'TerminatingPodWork' : 'SyncPodWork';
  }

  /** UIDs whose requeue is due (`workQueue.GetWork`). */
  getWork(now: number): string[] {
    return this.workQueue.getWork(now);
  }
}
