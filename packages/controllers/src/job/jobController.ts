/**
 * The Job controller (`pkg/controller/job/job_controller.go`, v1.22 with the default gates:
 * IndexedJob and SuspendJob on, JobTrackingWithFinalizers off, i.e. the "legacy" path that counts
 * succeeded/failed from the pod objects that exist; spec WC §4). Informer handlers
 * (`addPod`/`updatePod`/`deletePod`, a Failed update delayed by `getBackoff`), `syncJob`
 * (backoffLimit, `pastBackoffLimitOnFailure`, `pastActiveDeadline`, completion, suspend/resume
 * conditions, the deliberate "failed pod(s) detected" error that drives the 10 s × 2ⁿ queue
 * back-off, spec §4.6), `manageJob` (slow-start creates, deletions first, Indexed indexes) and
 * `enactJobFinished` (conditions and events). Not modelled: pod adoption/release by selector
 * (`ClaimPods`; podsim's Jobs always own their pods through the controller-uid selector), metrics.
 */
import type { ApiResult, Job, JobCondition, JobStatus, Pod } from '@podsim/api';
import { seconds } from '@podsim/api';
import { sortActivePods } from '../activePodsOrder.js';
import type { ApiClient } from '../client.js';
import { all, call, hasStatusCause, isNotFound, isOk, objectOf, statusOf, syncErrorOf, type Sync, type SyncError } from '../coroutine.js';
import { nowTimestamp, parseTimestamp, type ControllerEnv } from '../env.js';
import { ControllerEventRecorder } from '../events.js';
import { UIDTrackingControllerExpectations } from '../expectations.js';
import { CONTROLLER_UID_INDEX, controllerUidIndexFunc, type Informer } from '../informer.js';
import { getControllerOf, keyOf, newControllerRef, objectKey } from '../objects.js';
import { getPodFromTemplate, isPodActive } from '../podutil.js';
import { Workers, type SyncResult } from '../workqueue.js';
import {
  addCompletionIndexEnvVariables,
  calculateSucceededIndexes,
  firstPendingIndexes,
  indexedTemplate,
  intervalsString,
  intervalsTotal,
  podGenerateNameWithIndex,
  splitDuplicatedIndexPods,
  UNKNOWN_COMPLETION_INDEX,
  type Interval,
} from './indexedJobUtils.js';

/** `DefaultJobBackOff`: the queue's per-item back-off base. */
export const DEFAULT_JOB_BACKOFF_US = seconds(10);
/** `MaxJobBackOff`. */
export const MAX_JOB_BACKOFF_US = seconds(360);
/** `MaxPodCreateDeletePerSync`. */
export const MAX_POD_CREATE_DELETE_PER_SYNC = 500;
/** `--concurrent-job-syncs` default. */
export const CONCURRENT_JOB_SYNCS = 5;
/** `statusUpdateRetries`. */
const STATUS_UPDATE_RETRIES = 3;
/** `controller.SlowStartInitialBatchSize`. */
const SLOW_START_INITIAL_BATCH_SIZE = 1;

const JOB_API_VERSION = 'batch/v1';
const JOB_KIND = 'Job';

export interface JobControllerOptions {
  readonly workers?: number;
}

/** `IsJobFinished`: a Complete or Failed condition with status True. */
export function isJobFinished(job: Job): boolean {
  return (job.status?.conditions ?? []).some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}

/** `jobSuspended`. */
export function jobSuspended(job: Job): boolean {
  return job.spec.suspend === true;
}

/**
 * `getBackoff(queue, key)`: 0 before any requeue, else 10 s × 2^(requeues − 1), capped at 360 s
 * (virtual µs). The delay of the sync that a pod turning Failed triggers.
 */
export function getBackoff(numRequeues: number): number {
  if (numRequeues <= 0) return 0;
  return Math.min(DEFAULT_JOB_BACKOFF_US * 2 ** (numRequeues - 1), MAX_JOB_BACKOFF_US);
}

/**
 * `pastBackoffLimitOnFailure`: restartPolicy OnFailure only; the container and init-container
 * restarts of the Running and Pending pods reach backoffLimit (exceed it when backoffLimit is 0).
 */
export function pastBackoffLimitOnFailure(job: Job, pods: readonly Pod[]): boolean {
  if (job.spec.template.spec.restartPolicy !== 'OnFailure') return false;
  let result = 0;
  for (const p of pods) {
    const phase = p.status?.phase ?? 'Pending';
    if (phase !== 'Running' && phase !== 'Pending') continue;
    for (const s of p.status?.initContainerStatuses ?? []) result += s.restartCount ?? 0;
    for (const s of p.status?.containerStatuses ?? []) result += s.restartCount ?? 0;
  }
  const limit = job.spec.backoffLimit ?? 6;
  return limit === 0 ? result > 0 : result >= limit;
}

/** `pastActiveDeadline`: ADS set, started, not suspended, and now − startTime ≥ ADS (µs). */
export function pastActiveDeadline(job: Job, nowUs: number, startUs: number | undefined): boolean {
  if (job.spec.activeDeadlineSeconds === undefined || startUs === undefined || jobSuspended(job)) return false;
  return nowUs - startUs >= seconds(job.spec.activeDeadlineSeconds);
}

/** `wantActive` of `manageJob` (not suspended): how many pods should be active. */
export function wantActive(job: Job, active: number, succeeded: number): number {
  const parallelism = job.spec.parallelism ?? 1;
  if (job.spec.completions === undefined) return succeeded > 0 ? active : parallelism;
  return Math.max(0, Math.min(job.spec.completions - succeeded, parallelism));
}

function newCondition(type: JobCondition['type'], status: JobCondition['status'], reason: string, message: string, now: string): JobCondition {
  return { type, status, lastProbeTime: now, lastTransitionTime: now, ...(reason ? { reason } : {}), ...(message ? { message } : {}) };
}

/**
 * `ensureJobConditionStatus`: updates (or, for True, appends) the condition of `type`; returns
 * whether it changed. A False condition is not added when absent.
 */
function ensureJobConditionStatus(conds: JobCondition[], type: JobCondition['type'], status: JobCondition['status'], reason: string, message: string, now: string): boolean {
  const i = conds.findIndex((c) => c.type === type);
  if (i >= 0) {
    const c = conds[i];
    if (c.status === status && (c.reason ?? '') === reason && (c.message ?? '') === message) return false;
    conds[i] = { ...c, status, reason, message, lastProbeTime: now, ...(c.status !== status ? { lastTransitionTime: now } : {}) };
    return true;
  }
  if (status === 'True') {
    conds.push(newCondition(type, status, reason, message, now));
    return true;
  }
  return false;
}

export class JobController {
  readonly expectations = new UIDTrackingControllerExpectations();
  readonly workers: Workers;
  readonly recorder: ControllerEventRecorder;

  constructor(
    private readonly env: ControllerEnv,
    private readonly pods: Informer<Pod>,
    private readonly jobs: Informer<Job>,
    private readonly client: ApiClient,
    opts: JobControllerOptions = {},
  ) {
    this.recorder = new ControllerEventRecorder(env, client, 'job-controller');
    this.workers = new Workers(env, opts.workers ?? CONCURRENT_JOB_SYNCS, (key) => this.syncJob(key), client.sender, undefined, MAX_JOB_BACKOFF_US, DEFAULT_JOB_BACKOFF_US);
    pods.addIndexer(CONTROLLER_UID_INDEX, controllerUidIndexFunc);
    pods.addEventHandler({
      onAdd: (p) => this.addPod(p),
      onUpdate: (o, p) => this.updatePod(o, p),
      onDelete: (p) => this.deletePod(p),
    });
    jobs.addEventHandler({
      onAdd: (j) => this.enqueueController(j, true),
      onUpdate: (o, j) => this.updateJob(o, j),
      onDelete: (j) => this.enqueueController(j, true),
    });
  }

  /** `enqueueController(obj, immediate)`: a non-immediate enqueue waits `getBackoff`. */
  private enqueueController(job: Job, immediate: boolean): void {
    const key = objectKey(job);
    const backoff = immediate ? 0 : getBackoff(this.workers.queue.numRequeues(key));
    this.workers.queue.addAfter(key, backoff);
  }

  private resolveControllerRef(namespace: string | undefined, ref: { kind: string; name: string; uid: string } | undefined): Job | undefined {
    if (!ref || ref.kind !== JOB_KIND) return undefined;
    const job = this.jobs.get(keyOf(namespace, ref.name));
    return job && job.metadata.uid === ref.uid ? job : undefined;
  }

  /** `addPod`: a pod that arrives already being deleted counts as a deletion. */
  private addPod(pod: Pod): void {
    if (pod.metadata.deletionTimestamp) {
      this.deletePod(pod);
      return;
    }
    const job = this.resolveControllerRef(pod.metadata.namespace, getControllerOf(pod));
    if (!job) return;
    this.expectations.creationObserved(objectKey(job));
    this.enqueueController(job, true);
  }

  /** `updatePod`: a deletionTimestamp is a deletion; a pod turning (or staying) Failed requeues after the back-off. */
  private updatePod(old: Pod, cur: Pod): void {
    if (cur.metadata.resourceVersion === old.metadata.resourceVersion) return;
    if (cur.metadata.deletionTimestamp) {
      this.deletePod(cur);
      return;
    }
    const immediate = cur.status?.phase !== 'Failed';
    const curRef = getControllerOf(cur);
    const oldRef = getControllerOf(old);
    if (oldRef && oldRef.uid !== curRef?.uid) {
      const j = this.resolveControllerRef(old.metadata.namespace, oldRef);
      if (j) this.enqueueController(j, immediate);
    }
    const job = this.resolveControllerRef(cur.metadata.namespace, curRef);
    if (job) this.enqueueController(job, immediate);
  }

  /** `deletePod`. */
  private deletePod(pod: Pod): void {
    const job = this.resolveControllerRef(pod.metadata.namespace, getControllerOf(pod));
    if (!job) return;
    this.expectations.deletionObserved(objectKey(job), objectKey(pod));
    this.enqueueController(job, true);
  }

  /** `updateJob`: enqueue; a changed activeDeadlineSeconds also queues the sync at the new deadline. */
  private updateJob(old: Job, cur: Job): void {
    this.enqueueController(cur, true);
    const ads = cur.spec.activeDeadlineSeconds;
    if (ads === undefined || ads === old.spec.activeDeadlineSeconds) return;
    const start = parseTimestamp(this.env, cur.status?.startTime);
    if (start === undefined) return;
    this.workers.queue.addAfter(objectKey(cur), seconds(ads) - (this.env.now - start));
  }

  /** The pods this Job controls (by controller UID; `getPodsForJob` without adoption). */
  private podsOf(job: Job): Pod[] {
    return this.pods.byIndex(CONTROLLER_UID_INDEX, job.metadata.uid ?? '');
  }

  // ---- sync -------------------------------------------------------------------------------

  /**
   * `syncJob(key)` on the legacy path. Returns a SyncError to requeue with the job back-off
   * (the deliberate "failed pod(s) detected" error included), `keepFailures` when upstream
   * returns forget = false, undefined when it forgets.
   */
  *syncJob(key: string): Sync<SyncResult> {
    const cached = this.jobs.get(key);
    if (!cached) {
      this.expectations.deleteExpectations(key);
      return undefined;
    }
    // Finished jobs are never synced again (no pod creation, deletion or counting).
    if (isJobFinished(cached)) return undefined;
    const job: Job = { ...cached, status: { ...(cached.status ?? {}), conditions: [...(cached.status?.conditions ?? [])] } };
    const st = job.status!;
    const mode = job.spec.completionMode ?? 'NonIndexed';
    if (mode !== 'NonIndexed' && mode !== 'Indexed') {
      this.recorder.event(job, 'Warning', 'UnknownCompletionMode', `Skipped Job sync because completion mode ${mode} is unknown`);
      return undefined;
    }
    const indexed = mode === 'Indexed';
    const jobNeedsSync = this.expectations.satisfiedExpectations(key, this.env.now);
    const pods = this.podsOf(job);
    const activePods = pods.filter(isPodActive);
    let active = activePods.length;
    let succeeded = pods.filter((p) => p.status?.phase === 'Succeeded').length;
    let failed = pods.filter((p) => p.status?.phase === 'Failed').length;
    const now = nowTimestamp(this.env);

    let startUs = parseTimestamp(this.env, st.startTime);
    if (st.startTime === undefined && !jobSuspended(job)) {
      st.startTime = now;
      startUs = this.env.now;
      // enqueue a sync to check if job past ActiveDeadlineSeconds
      if (job.spec.activeDeadlineSeconds !== undefined) this.workers.queue.addAfter(key, seconds(job.spec.activeDeadlineSeconds));
    }

    const parallelism = job.spec.parallelism ?? 1;
    const backoffLimit = job.spec.backoffLimit ?? 6;
    const jobHasNewFailure = failed > (st.failed ?? 0);
    // New failures happen when status does not reflect the failures and active is different
    // than parallelism; otherwise the previous sync failed updating status.
    const exceedsBackoffLimit = jobHasNewFailure && active !== parallelism && failed > backoffLimit;
    let finishedCondition: JobCondition | undefined;
    if (exceedsBackoffLimit || pastBackoffLimitOnFailure(job, pods)) {
      finishedCondition = newCondition('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit', now);
    } else if (pastActiveDeadline(job, this.env.now, startUs)) {
      finishedCondition = newCondition('Failed', 'True', 'DeadlineExceeded', 'Job was active longer than specified deadline', now);
    }

    let succeededIndexes: Interval[] = [];
    if (indexed) {
      succeededIndexes = calculateSucceededIndexes(pods, job.spec.completions ?? 0);
      succeeded = intervalsTotal(succeededIndexes);
    }
    let suspendCondChanged = false;
    let manageJobErr: SyncError | undefined;
    if (finishedCondition) {
      const err = yield* this.deleteActivePods(job, activePods);
      // Legacy behaviour: pretend all active pods were successfully removed.
      failed += active;
      active = 0;
      manageJobErr = err;
    } else {
      let manageJobCalled = false;
      if (jobNeedsSync && !job.metadata.deletionTimestamp) {
        const r = yield* this.manageJob(job, activePods, succeeded, succeededIndexes);
        active = r.active;
        manageJobErr = r.error;
        manageJobCalled = true;
      }
      const completions = job.spec.completions;
      const complete = completions === undefined ? succeeded > 0 && active === 0 : succeeded >= completions && active === 0;
      if (complete) finishedCondition = newCondition('Complete', 'True', '', '', now);
      else if (manageJobCalled) {
        // Conditions and events only in a sync that ran manageJob.
        if (jobSuspended(job)) {
          if (ensureJobConditionStatus(st.conditions!, 'Suspended', 'True', 'JobSuspended', 'Job suspended', now)) {
            suspendCondChanged = true;
            this.recorder.event(job, 'Normal', 'Suspended', 'Job suspended');
          }
        } else if (ensureJobConditionStatus(st.conditions!, 'Suspended', 'False', 'JobResumed', 'Job resumed', now)) {
          suspendCondChanged = true;
          this.recorder.event(job, 'Normal', 'Resumed', 'Job resumed');
          // A resumed job restarts its ActiveDeadlineSeconds clock.
          st.startTime = now;
        }
      }
    }

    // A success since the last status clears the back-off (kubernetes#56853).
    let forget = (st.succeeded ?? 0) < succeeded;
    if ((st.active ?? 0) !== active || (st.succeeded ?? 0) !== succeeded || (st.failed ?? 0) !== failed || suspendCondChanged || finishedCondition) {
      const status: JobStatus = { ...st, active, succeeded, failed };
      if (indexed) status.completedIndexes = intervalsString(succeededIndexes);
      const updated: Job = { ...job, status };
      this.enactJobFinished(updated, finishedCondition);
      const res = yield* this.updateJobStatus(updated);
      this.env.trace('controller.job.status', `${key} active=${active} succeeded=${succeeded} failed=${failed}${finishedCondition ? ` ${finishedCondition.type}${finishedCondition.reason ? ` ${finishedCondition.reason}` : ''}` : ''}: ${res.code}`, {
        job: key,
        active,
        succeeded,
        failed,
        condition: finishedCondition?.type,
        reason: finishedCondition?.reason,
        code: res.code,
      });
      if (!isOk(res)) return syncErrorOf(res, 'update job status');
      if (jobHasNewFailure && !isJobFinished(updated)) {
        // Returning an error re-enqueues the Job after the back-off period.
        return { reason: 'FailedPods', message: `failed pod(s) detected for job key "${key}"` };
      }
      forget = true;
    }
    if (manageJobErr) return manageJobErr;
    return forget ? undefined : { keepFailures: true };
  }

  /** `updateJobStatus`: GET the Job, put the new status on it, UpdateStatus; up to `statusUpdateRetries` + 1 times. */
  private *updateJobStatus(job: Job): Sync<ApiResult> {
    let res: ApiResult | undefined;
    for (let i = 0; i <= STATUS_UPDATE_RETRIES; i++) {
      const got: ApiResult = yield* call({ type: 'ApiGet', resource: 'jobs', namespace: job.metadata.namespace, name: job.metadata.name ?? '' });
      if (!isOk(got)) return got;
      const fresh = objectOf<Job>(got);
      res = yield* call({ type: 'ApiUpdate', resource: 'jobs', namespace: job.metadata.namespace, name: job.metadata.name ?? '', subresource: 'status', object: { ...fresh, status: job.status } as Job });
      if (isOk(res)) return res;
    }
    return res!;
  }

  /** `enactJobFinished`: appends the condition, sets completionTime, emits the event(s). */
  private enactJobFinished(job: Job, cond: JobCondition | undefined): void {
    if (!cond) return;
    const st = job.status!;
    st.conditions = [...(st.conditions ?? []), cond];
    if (cond.type === 'Complete') {
      if (job.spec.completions !== undefined && (st.succeeded ?? 0) > job.spec.completions) {
        this.recorder.event(job, 'Warning', 'TooManySucceededPods', 'Too many succeeded pods running after completion count reached');
      }
      st.completionTime = cond.lastTransitionTime;
      this.recorder.event(job, 'Normal', 'Completed', 'Job completed');
    } else this.recorder.event(job, 'Warning', cond.reason ?? '', cond.message ?? '');
  }

  /** `deleteActivePods` (the job failed): parallel DELETEs with empty options; no expectations. */
  private *deleteActivePods(job: Job, pods: readonly Pod[]): Sync<SyncError | undefined> {
    if (pods.length === 0) return undefined;
    const results = yield* all(pods.map((p) => this.deleteRequest(job, p)));
    let err: SyncError | undefined;
    results.forEach((res, i) => {
      this.podDeleted(job, pods[i], res);
      if (!isOk(res) && !isNotFound(res)) err ??= syncErrorOf(res, 'delete pod');
    });
    return err;
  }

  private deleteRequest(job: Job, p: Pod) {
    return { type: 'ApiDelete' as const, resource: 'pods' as const, namespace: job.metadata.namespace, name: p.metadata.name ?? '', options: {} };
  }

  /** RealPodControl.DeletePod's event and trace. */
  private podDeleted(job: Job, p: Pod, res: ApiResult): void {
    const ns = job.metadata.namespace ?? '';
    this.env.trace('controller.job.delete', `${ns}/${job.metadata.name} deleted pod ${p.metadata.name}: ${res.code}`, { job: job.metadata.name, namespace: ns, pod: p.metadata.name, uid: p.metadata.uid, code: res.code });
    if (isOk(res)) this.recorder.event(job, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata.name}`);
    else if (!isNotFound(res)) this.recorder.event(job, 'Warning', 'FailedDelete', `Error deleting: ${statusOf(res).message ?? `HTTP ${res.code}`}`);
  }

  /** `deleteJobPods`: parallel DELETEs; a failure (other than NotFound) lowers the expectation and the count removed. */
  private *deleteJobPods(job: Job, key: string, pods: readonly Pod[]): Sync<{ removed: number; error?: SyncError }> {
    const results = yield* all(pods.map((p) => this.deleteRequest(job, p)));
    let removed = pods.length;
    let error: SyncError | undefined;
    results.forEach((res, i) => {
      this.podDeleted(job, pods[i], res);
      if (!isOk(res) && !isNotFound(res)) {
        this.expectations.deletionObserved(key, objectKey(pods[i]));
        removed--;
        error ??= syncErrorOf(res, 'delete pod');
      }
    });
    return { removed, error };
  }

  /** `activePodsForRemoval`: Indexed duplicates and invalid indexes first, then `ActivePods` order. */
  private activePodsForRemoval(job: Job, pods: readonly Pod[], rmAtLeast: number): Pod[] {
    let rm: Pod[] = [];
    let left: readonly Pod[] = pods;
    if (job.spec.completionMode === 'Indexed') ({ rm, left } = splitDuplicatedIndexPods(pods, job.spec.completions ?? 0, this.env.clock));
    if (rm.length < rmAtLeast) rm = [...rm, ...sortActivePods(left, this.env.clock).slice(0, rmAtLeast - rm.length)];
    return rm;
  }

  /**
   * `manageJob`: suspended → delete every active pod; else delete the surplus over `wantActive`
   * (deletion takes precedence: no creates in the same sync), or create the missing pods in
   * slow-start batches (Indexed: the lowest pending indexes). Returns the new active count.
   */
  private *manageJob(job: Job, activePods: readonly Pod[], succeeded: number, succeededIndexes: readonly Interval[]): Sync<{ active: number; error?: SyncError }> {
    let active = activePods.length;
    const key = objectKey(job);
    const rmAtLeast = jobSuspended(job) ? active : Math.max(0, active - wantActive(job, active, succeeded));
    const podsToDelete = this.activePodsForRemoval(job, activePods, rmAtLeast).slice(0, MAX_POD_CREATE_DELETE_PER_SYNC);
    if (podsToDelete.length > 0) {
      this.expectations.expectDeletions(
        key,
        podsToDelete.map((p) => objectKey(p)),
        this.env.now,
      );
      const r = yield* this.deleteJobPods(job, key, podsToDelete);
      return { active: active - r.removed, error: r.error };
    }
    if (jobSuspended(job)) return { active };
    const want = wantActive(job, active, succeeded);
    if (active >= want) return { active };
    let diff = Math.min(want - active, MAX_POD_CREATE_DELETE_PER_SYNC);
    this.expectations.expectCreations(key, diff, this.env.now);
    let indexesToAdd: number[] = [];
    const indexed = job.spec.completionMode === 'Indexed';
    if (indexed) {
      indexesToAdd = firstPendingIndexes(activePods, succeededIndexes, diff, job.spec.completions ?? 0);
      // Upstream expects `diff` creations and creates only as many as there are pending indexes.
      for (let i = indexesToAdd.length; i < diff; i++) this.expectations.creationObserved(key);
      diff = indexesToAdd.length;
    }
    active += diff;
    const template = indexed ? addCompletionIndexEnvVariables(job.spec.template) : job.spec.template;
    const ref = newControllerRef(job, JOB_API_VERSION, JOB_KIND);
    const name = job.metadata.name ?? '';
    const ns = job.metadata.namespace ?? '';
    let error: SyncError | undefined;
    for (let batch = Math.min(diff, SLOW_START_INITIAL_BATCH_SIZE); diff > 0; batch = Math.min(2 * batch, diff)) {
      const reqs = Array.from({ length: batch }, () => {
        const ix = indexesToAdd.length > 0 ? indexesToAdd.shift()! : UNKNOWN_COMPLETION_INDEX;
        const pod = ix === UNKNOWN_COMPLETION_INDEX ? getPodFromTemplate(template, name, ref) : getPodFromTemplate(indexedTemplate(template, name, ix), name, ref);
        if (ix !== UNKNOWN_COMPLETION_INDEX) pod.metadata.generateName = podGenerateNameWithIndex(name, ix);
        return { type: 'ApiCreate' as const, resource: 'pods' as const, namespace: ns, object: pod };
      });
      const results = yield* all(reqs);
      let batchFailed = false;
      for (const res of results) {
        if (isOk(res)) {
          const pod = objectOf<Pod>(res);
          this.env.trace('controller.job.create', `${ns}/${name} created pod ${pod.metadata.name}`, { job: name, namespace: ns, pod: pod.metadata.name, uid: pod.metadata.uid });
          this.recorder.event(job, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`);
          continue;
        }
        // If the namespace is being torn down, every later creation fails too: not an error.
        if (hasStatusCause(res, 'NamespaceTerminating')) continue;
        this.recorder.event(job, 'Warning', 'FailedCreate', `Error creating: ${statusOf(res).message ?? `HTTP ${res.code}`}`);
        this.expectations.creationObserved(key);
        active--;
        batchFailed = true;
        error ??= syncErrorOf(res, 'create pod');
      }
      const skipped = diff - batch;
      if (batchFailed && skipped > 0) {
        // Pods never attempted will not be observed.
        for (let i = 0; i < skipped; i++) this.expectations.creationObserved(key);
        active -= skipped;
        break;
      }
      diff -= batch;
    }
    return { active, error };
  }
}
