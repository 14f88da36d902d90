/**
 * The EndpointSlice controller: kubernetes v1.22 `pkg/controller/endpointslice/
 * endpointslice_controller.go` and `endpointslice_tracker.go`. Triggers as the Endpoints
 * controller's (Service events at once, pod changes after `endpointSliceUpdatesBatchPeriod`,
 * default 0); slice events only for slices managed by `endpointslice-controller.k8s.io` that
 * the tracker says this controller did not write itself (by generation, PR #99345), delayed by
 * max(`endpointSliceChangeMinSyncDelay` 1 s, batch period). `syncService`: the Service gone →
 * forget it (its slices are garbage-collected through their ownerReferences); no selector →
 * nothing; a stale informer (the tracker expects a newer generation, a slice not seen yet, or a
 * deletion not seen yet) → `StaleInformerCache` error, retried with the 1 s → 100 s backoff;
 * else {@link reconcileSlices} and its creates, updates (PUT) and deletes.
 * `--concurrent-service-endpoint-syncs` 5, `--max-endpoints-per-slice` 100. Not modelled:
 * the trigger-time annotation, metrics, topology hints, `maxRetries` 15 (retries continue).
 */
import type { ApiResult, EndpointSlice, Pod, Service } from '@podsim/api';
import { ENDPOINTSLICE_CONTROLLER_NAME, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, seconds } from '@podsim/api';
import type { ApiClient } from '../client.js';
import { ControllerEventRecorder } from '../events.js';
import { type Sync, type SyncError, call, isNotFound, isOk, syncErrorOf } from '../coroutine.js';
import type { ControllerEnv } from '../env.js';
import type { Informer } from '../informer.js';
import { keyOf, splitKey } from '../objects.js';
import { type SyncResult, Workers } from '../workqueue.js';
import { addServiceAndPodTriggers, servicePods } from '../endpoint/endpointUtil.js';
import { MAX_ENDPOINTS_PER_SLICE, type ReconcilerGates, reconcileSlices } from './reconciler.js';

/** `--concurrent-service-endpoint-syncs` default. */
export const CONCURRENT_SERVICE_ENDPOINT_SYNCS = 5;
/** `endpointSliceChangeMinSyncDelay`. */
export const ENDPOINTSLICE_CHANGE_MIN_SYNC_DELAY_US = seconds(1);
/** `defaultSyncBackOff` / `maxSyncBackOff` of the controller's rate limiter. */
export const DEFAULT_SYNC_BACKOFF_US = seconds(1);
export const MAX_SYNC_BACKOFF_US = seconds(100);
/** Index of slices by `<namespace>/<kubernetes.io/service-name>`. */
export const SLICE_SERVICE_INDEX = 'endpointslice/service';

export interface EndpointSliceControllerOptions {
  readonly workers?: number;
  readonly maxEndpointsPerSlice?: number;
  /** `--endpointslice-updates-batch-period`, virtual µs (default 0). */
  readonly batchPeriodUs?: number;
  readonly gates?: ReconcilerGates;
}

const DELETION_EXPECTED = -1;

/** `EndpointSliceTracker`: the generation this controller expects per slice UID, per Service. */
export class EndpointSliceTracker {
  private readonly byService = new Map<string, Map<string, number>>();

  private gfs(svcKey: string): Map<string, number> {
    let m = this.byService.get(svcKey);
    if (!m) this.byService.set(svcKey, (m = new Map()));
    return m;
  }

  update(svcKey: string, slice: EndpointSlice): void {
    this.gfs(svcKey).set(slice.metadata.uid ?? '', slice.metadata.generation ?? 0);
  }

  expectDeletion(svcKey: string, slice: EndpointSlice): void {
    this.gfs(svcKey).set(slice.metadata.uid ?? '', DELETION_EXPECTED);
  }

  /** `ShouldSync`: a slice event this controller did not cause. */
  shouldSync(svcKey: string, slice: EndpointSlice): boolean {
    const g = this.byService.get(svcKey)?.get(slice.metadata.uid ?? '');
    return g === undefined || (slice.metadata.generation ?? 0) > g;
  }

  /** `Has`: the tracker follows this slice (for the mirroring controller's delete handler). */
  has(svcKey: string, slice: EndpointSlice): boolean {
    return this.byService.get(svcKey)?.has(slice.metadata.uid ?? '') ?? false;
  }

  /** `HandleDeletion`: true when the deletion was not expected (the slice must be recreated). */
  handleDeletion(svcKey: string, slice: EndpointSlice): boolean {
    const m = this.byService.get(svcKey);
    const g = m?.get(slice.metadata.uid ?? '');
    m?.delete(slice.metadata.uid ?? '');
    return g !== DELETION_EXPECTED;
  }

  /** `StaleSlices`: the informer has not caught up with this controller's own writes. */
  staleSlices(svcKey: string, slices: readonly EndpointSlice[]): boolean {
    const gfs = this.byService.get(svcKey);
    if (!gfs) return false;
    const seen = new Set<string>();
    for (const s of slices) {
      const uid = s.metadata.uid ?? '';
      seen.add(uid);
      const g = gfs.get(uid);
      if (g !== undefined && (g === DELETION_EXPECTED || g > (s.metadata.generation ?? 0))) return true;
    }
    for (const [uid, g] of gfs) if (g !== DELETION_EXPECTED && !seen.has(uid)) return true;
    return false;
  }

  deleteService(svcKey: string): void {
    this.byService.delete(svcKey);
  }
}

/**
 * `managedByController` + the Service key from `kubernetes.io/service-name`: the key of a slice
 * whose `managed-by` label is `managedBy` (this controller's by default; the mirroring controller
 * passes its own), else undefined.
 */
export function managedServiceKey(s: EndpointSlice, managedBy: string = ENDPOINTSLICE_CONTROLLER_NAME): string | undefined {
  const labels = s.metadata.labels ?? {};
  if (labels[LABEL_MANAGED_BY] !== managedBy) return undefined;
  const svc = labels[LABEL_SERVICE_NAME];
  return svc ? keyOf(s.metadata.namespace, svc) : undefined;
}

export class EndpointSliceController {
  readonly workers: Workers;
  readonly tracker = new EndpointSliceTracker();
  private readonly recorder: ControllerEventRecorder;
  private readonly batchPeriodUs: number;
  private readonly maxEndpointsPerSlice: number;
  /** Slice writes (create + update + delete) sent (for tests and metrics). */
  writes = 0;
  /** Syncs that found the informer stale (`StaleInformerCache`). */
  staleSyncs = 0;

  constructor(
    private readonly env: ControllerEnv,
    private readonly services: Informer<Service>,
    private readonly pods: Informer<Pod>,
    private readonly slices: Informer<EndpointSlice>,
    client: ApiClient,
    private readonly opts: EndpointSliceControllerOptions = {},
  ) {
    this.batchPeriodUs = opts.batchPeriodUs ?? 0;
    this.recorder = new ControllerEventRecorder(env, client, 'endpointslice-controller');
    this.maxEndpointsPerSlice = opts.maxEndpointsPerSlice ?? MAX_ENDPOINTS_PER_SLICE;
    this.workers = new Workers(env, opts.workers ?? CONCURRENT_SERVICE_ENDPOINT_SYNCS, (key) => this.syncService(key), client.sender, undefined, MAX_SYNC_BACKOFF_US, DEFAULT_SYNC_BACKOFF_US);
    slices.addIndexer(SLICE_SERVICE_INDEX, (s) => {
      const k = managedServiceKey(s);
      return k ? [k] : [];
    });
    addServiceAndPodTriggers(services, pods, this.workers.queue, this.batchPeriodUs);
    const sliceDelay = Math.max(ENDPOINTSLICE_CHANGE_MIN_SYNC_DELAY_US, this.batchPeriodUs);
    const onSlice = (s: EndpointSlice) => {
      const k = managedServiceKey(s);
      if (k && this.tracker.shouldSync(k, s)) this.workers.queue.addAfter(k, sliceDelay);
    };
    slices.addEventHandler({
      onAdd: onSlice,
      onUpdate: (_o, s) => onSlice(s),
      onDelete: (s) => {
        const k = managedServiceKey(s);
        if (k && this.tracker.handleDeletion(k, s)) this.workers.queue.addAfter(k, sliceDelay);
      },
    });
  }

  /** `syncService(key)`. */
  *syncService(key: string): Sync<SyncResult> {
    const svc = this.services.get(key);
    if (!svc) {
      this.tracker.deleteService(key);
      return undefined;
    }
    const pods = servicePods(svc, this.pods.values());
    if (!pods) return undefined;
    const existing = this.slices.byIndex(SLICE_SERVICE_INDEX, key);
    if (this.tracker.staleSlices(key, existing)) {
      this.staleSyncs++;
      return { reason: 'StaleInformerCache', message: `EndpointSlice informer cache is out of date for Service ${key}` };
    }
    const r = reconcileSlices(svc, pods, existing, this.maxEndpointsPerSlice, this.opts.gates);
    const err = yield* this.finalize(key, svc, r);
    // `syncService`: a failed reconcile is a Warning on the Service, then a rate-limited retry.
    if (err) this.recorder.event(svc, 'Warning', 'FailedToUpdateEndpointSlices', `Error updating Endpoint Slices for Service ${key}: ${err.message}`);
    return err;
  }

  /** `finalize`: creates (not while the Service is being deleted), updates, deletes; the first failure ends it. */
  private *finalize(key: string, svc: Service, r: ReturnType<typeof reconcileSlices>): Sync<SyncError | undefined> {
    const { namespace } = splitKey(key);
    // Creates are skipped while the Service is being deleted.
    if (!svc.metadata.deletionTimestamp) {
      for (const s of r.create) {
        this.writes++;
        const res: ApiResult = yield* call({ type: 'ApiCreate', resource: 'endpointslices', namespace, object: s });
        if (!isOk(res)) return res.code === 403 ? undefined : syncErrorOf(res, `create EndpointSlice for Service ${key}`);
        this.tracker.update(key, res.body as EndpointSlice);
      }
    }
    for (const s of r.update) {
      this.writes++;
      const { resourceVersion: _rv, ...meta } = s.metadata;
      const res: ApiResult = yield* call({ type: 'ApiUpdate', resource: 'endpointslices', namespace, name: s.metadata.name ?? '', object: { ...s, metadata: meta } });
      if (!isOk(res)) return syncErrorOf(res, `update EndpointSlice ${keyOf(namespace, s.metadata.name ?? '')}`);
      this.tracker.update(key, res.body as EndpointSlice);
    }
    for (const s of r.delete) {
      this.writes++;
      const res: ApiResult = yield* call({ type: 'ApiDelete', resource: 'endpointslices', namespace, name: s.metadata.name ?? '' });
      if (!isOk(res) && !isNotFound(res)) return syncErrorOf(res, `delete EndpointSlice ${keyOf(namespace, s.metadata.name ?? '')}`);
      this.tracker.expectDeletion(key, s);
    }
    return undefined;
  }
}
