/**
 * Sync functions as deterministic coroutines. An upstream controller's `syncHandler` is straight-
 * line Go that blocks on API calls; here it is a generator that yields a batch of requests (one
 * request, or several "in parallel goroutines" such as a slow-start batch) and is resumed with
 * their results, in request order, once all have answered. DESIGN.md §3 allows exactly this
 * ("a deterministic coroutine that the engine resumes when the reply message is delivered").
 * No Promises: the runner is driven by the reply callbacks of {@link ApiClient}.
 */
import type { ApiRequest, ApiResult, KubeObject, Status } from '@podsim/api';

/** One step of a sync: the requests to issue together. */
export type Batch = readonly ApiRequest[];
/** A sync coroutine returning `R`. */
export type Sync<R = void> = Generator<Batch, R, readonly ApiResult[]>;
/** Issues one request and calls back exactly once with its result. */
export type Send = (req: ApiRequest, onResult: (res: ApiResult) => void) => void;

/** Issues one request and returns its result. */
export function* call(req: ApiRequest): Generator<Batch, ApiResult, readonly ApiResult[]> {
  const res = yield [req];
  return res[0];
}

/** Issues the requests together ("one goroutine each, then wg.Wait()") and returns all results. */
export function* all(reqs: readonly ApiRequest[]): Generator<Batch, readonly ApiResult[], readonly ApiResult[]> {
  if (reqs.length === 0) return [];
  return yield reqs;
}

/**
 * Runs a sync to completion: sends each yielded batch through `send`, resumes with the results,
 * and finally calls `onDone` with the return value. Exceptions thrown by the sync (broken
 * invariants) propagate to whoever delivered the last reply, i.e. they crash the actor.
 */
export function runSync<R>(sync: Sync<R>, send: Send, onDone: (result: R) => void): void {
  const step = (input: readonly ApiResult[]): void => {
    for (;;) {
      const it = sync.next(input);
      if (it.done) {
        onDone(it.value);
        return;
      }
      const batch = it.value;
      if (batch.length === 0) {
        input = [];
        continue;
      }
      const results: ApiResult[] = new Array(batch.length);
      let pending = batch.length;
      batch.forEach((req, i) => {
        send(req, (res) => {
          results[i] = res;
          if (--pending === 0) step(results);
        });
      });
      return;
    }
  };
  step([]);
}

/** 2xx. */
export function isOk(res: ApiResult): boolean {
  return res.code >= 200 && res.code < 300;
}

/** The `metav1.Status` of an error result (a synthesised one if the body is not a Status). */
export function statusOf(res: ApiResult): Status {
  const b = res.body as Partial<Status>;
  if (b && b.kind === 'Status') return b as Status;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: res.code, message: `HTTP ${res.code}` };
}

/** The object of a successful result. */
export function objectOf<T extends KubeObject>(res: ApiResult): T {
  return res.body as T;
}

/** `apierrors.HasStatusCause`: the error Status lists a cause of this type (`NamespaceTerminating`). */
export function hasStatusCause(res: ApiResult, cause: string): boolean {
  return !isOk(res) && (statusOf(res).details?.causes ?? []).some((c) => c.reason === cause);
}

/** `apierrors.IsNotFound`. */
export const isNotFound = (res: ApiResult) => res.code === 404;
/** `apierrors.IsConflict` (409 Conflict; AlreadyExists is also 409 but has its own reason). */
export const isConflict = (res: ApiResult) => res.code === 409 && statusOf(res).reason !== 'AlreadyExists';
/** `apierrors.IsAlreadyExists`. */
export const isAlreadyExists = (res: ApiResult) => res.code === 409 && statusOf(res).reason === 'AlreadyExists';

/** The error a sync returns to its worker: the failed call's Status (requeued with backoff). */
export interface SyncError {
  readonly reason: string;
  readonly message: string;
  readonly code?: number;
}

/** A SyncError from an API result. */
export function syncErrorOf(res: ApiResult, what: string): SyncError {
  const s = statusOf(res);
  return { reason: s.reason ?? 'Unknown', code: res.code, message: `${what}: ${s.message ?? `HTTP ${res.code}`}` };
}
