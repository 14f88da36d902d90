/**
 * The TTL-after-finished controller (`pkg/controller/ttlafterfinished/ttlafterfinished_controller.go`,
 * v1.22, TTLAfterFinished Beta on; spec WC §4.11): watches Jobs; one that has
 * `ttlSecondsAfterFinished`, a Complete or Failed condition True and no deletionTimestamp expires
 * at that condition's `lastTransitionTime` + TTL. Before expiry the key is requeued after the time
 * left; at expiry the Job is re-read uncached, re-checked, and DELETEd with
 * `propagationPolicy: Foreground` and a UID precondition, so the garbage collector removes its
 * pods before the Job itself goes. Not modelled: the clock-skew warning, metrics.
 */
import type { ApiResult, Job } from '@podsim/api';
import { seconds } from '@podsim/api';
import type { ApiClient } from '../client.js';
import { call, isNotFound, isOk, objectOf, syncErrorOf, type Sync } from '../coroutine.js';
import type { ControllerEnv } from '../env.js';
import type { Informer } from '../informer.js';
import { objectKey, splitKey } from '../objects.js';
import { Workers, type SyncResult } from '../workqueue.js';

/** `--concurrent-ttl-after-finished-syncs` default. */
export const CONCURRENT_TTL_SYNCS = 5;

/** `needsCleanup`: a TTL, finished, not being deleted. */
export function needsCleanup(job: Job): boolean {
  return job.spec.ttlSecondsAfterFinished !== undefined && jobFinishTime(job) !== undefined && !job.metadata.deletionTimestamp;
}

/** `jobFinishTime`: lastTransitionTime of the True Complete/Failed condition (RFC 3339), if any. */
export function jobFinishTime(job: Job): string | undefined {
  for (const c of job.status?.conditions ?? []) {
    if ((c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') return c.lastTransitionTime ?? '';
  }
  return undefined;
}

/**
 * `timeLeft`: virtual µs until the Job expires (≤ 0 = expired), or undefined when it needs no
 * cleanup or its finish time is unreadable (upstream logs an error and drops the key).
 */
export function timeLeft(job: Job, nowUs: number, parse: (ts: string) => number | undefined): number | undefined {
  if (!needsCleanup(job)) return undefined;
  const finishUs = parse(jobFinishTime(job)!);
  if (finishUs === undefined) return undefined;
  return finishUs + seconds(job.spec.ttlSecondsAfterFinished!) - nowUs;
}

export class TTLAfterFinishedController {
  readonly workers: Workers;

  constructor(
    private readonly env: ControllerEnv,
    private readonly jobs: Informer<Job>,
    client: ApiClient,
    opts: { workers?: number } = {},
  ) {
    this.workers = new Workers(env, opts.workers ?? CONCURRENT_TTL_SYNCS, (key) => this.processJob(key), client.sender);
    jobs.addEventHandler({
      onAdd: (j) => this.addJob(j),
      onUpdate: (_o, j) => this.addJob(j),
    });
  }

  private addJob(job: Job): void {
    if (needsCleanup(job)) this.workers.queue.add(objectKey(job));
  }

  /** `processJob(key)`: requeue until expiry, then the uncached re-check and the Foreground DELETE. */
  *processJob(key: string): Sync<SyncResult> {
    const cached = this.jobs.get(key);
    if (!cached) return undefined;
    const left = timeLeft(cached, this.env.now, (ts) => this.env.clock.parse(ts));
    if (left === undefined) return undefined;
    if (left > 0) return { requeueAfterUs: left };
    const { namespace, name } = splitKey(key);
    // The cached Job may be stale (its TTL changed): re-read it from the apiserver.
    const got: ApiResult = yield* call({ type: 'ApiGet', resource: 'jobs', namespace, name });
    if (isNotFound(got)) return undefined;
    if (!isOk(got)) return syncErrorOf(got, 'get job');
    const fresh = objectOf<Job>(got);
    const freshLeft = timeLeft(fresh, this.env.now, (ts) => this.env.clock.parse(ts));
    if (freshLeft === undefined) return undefined;
    if (freshLeft > 0) return { requeueAfterUs: freshLeft };
    const res: ApiResult = yield* call({
      type: 'ApiDelete',
      resource: 'jobs',
      namespace,
      name,
      options: { propagationPolicy: 'Foreground', preconditions: { uid: fresh.metadata.uid } },
    });
    this.env.trace('controller.ttl.delete', `${key} expired (ttlSecondsAfterFinished ${fresh.spec.ttlSecondsAfterFinished}): DELETE ${res.code}`, { job: key, code: res.code });
    if (!isOk(res) && !isNotFound(res)) return syncErrorOf(res, 'delete job');
    return undefined;
  }
}
