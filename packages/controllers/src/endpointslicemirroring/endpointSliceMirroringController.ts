/**
 * The EndpointSliceMirroring controller: kubernetes v1.22 `pkg/controller/endpointslicemirroring/
 * endpointslicemirroring_controller.go`, started by kube-controller-manager's
 * `startEndpointSliceMirroringController` (`cmd/kube-controller-manager/app/discovery.go`) with the
 * shared Endpoints, EndpointSlice and Service informers and its own client
 * `endpointslicemirroring-controller`. It mirrors the Endpoints of Services **without a selector**
 * (user-managed endpoints) into EndpointSlices kube-proxy reads ({@link reconcileMirroredSlices}).
 * Triggers: Service add/delete without a selector, or an update that adds or removes the selector
 * → the key at once; Endpoints add/update/delete unless neither version should be mirrored (label
 * `endpointslice.kubernetes.io/skip-mirror=true`, or the leader-election annotation) → at once;
 * slice add/update/delete of a slice managed by this controller that the tracker says it did not
 * write (or delete) itself → after `--mirroring-endpointslice-updates-batch-period` (0).
 * `syncEndpoints`: the Endpoints gone, not to be mirrored, its Service gone, or the Service has a
 * selector (1.22.4+, #106132) → delete every mirrored slice; a stale informer → the
 * `StaleInformerCache` error; else reconcile, with Warning events `InvalidIPAddress` /
 * `TooManyAddressesToMirror` on the Endpoints. `--mirroring-concurrent-service-endpoint-syncs` 5,
 * retries 1 s → 100 s. Not modelled: metrics, `maxRetries` 15 (retries continue).
 */
import type { ApiResult, EndpointSlice, Endpoints, Service } from '@podsim/api';
import { ANNOTATION_LEADER_ELECTION, ENDPOINTSLICEMIRRORING_CONTROLLER_NAME, LABEL_SKIP_MIRROR } from '@podsim/api';
import type { ApiClient } from '../client.js';
import { ControllerEventRecorder } from '../events.js';
import { type Sync, type SyncError, call, isNotFound, isOk, syncErrorOf } from '../coroutine.js';
import type { ControllerEnv } from '../env.js';
import type { Informer } from '../informer.js';
import { keyOf, objectKey, splitKey } from '../objects.js';
import { type SyncResult, Workers } from '../workqueue.js';
import { DEFAULT_SYNC_BACKOFF_US, EndpointSliceTracker, MAX_SYNC_BACKOFF_US, managedServiceKey } from '../endpointslice/endpointSliceController.js';
import { MIRRORING_MAX_ENDPOINTS_PER_SUBSET, type MirrorResult, reconcileMirroredSlices } from './reconciler.js';

/** `--mirroring-concurrent-service-endpoint-syncs` default. */
export const MIRRORING_CONCURRENT_SERVICE_ENDPOINT_SYNCS = 5;
/** Index of mirrored slices by `<namespace>/<kubernetes.io/service-name>`. */
export const MIRRORED_SLICE_INDEX = 'endpointslicemirroring/service';

export interface EndpointSliceMirroringControllerOptions {
  readonly workers?: number;
  readonly maxEndpointsPerSubset?: number;
  /** `--mirroring-endpointslice-updates-batch-period`, virtual µs (default 0). */
  readonly batchPeriodUs?: number;
}

/** `shouldMirror`: not labelled skip-mirror=true and not a leader-election lock. */
export function shouldMirror(ep: Endpoints | undefined): boolean {
  if (!ep) return false;
  return ep.metadata.labels?.[LABEL_SKIP_MIRROR] !== 'true' && ep.metadata.annotations?.[ANNOTATION_LEADER_ELECTION] === undefined;
}

/** `svc.Spec.Selector != nil` once read back (an empty map is omitted on the wire, so it reads as nil). */
function hasSelector(svc: Service): boolean {
  return Object.keys(svc.spec?.selector ?? {}).length > 0;
}

/** `managedByController` + `endpointsControllerKey`: the key of a slice this controller manages. */
const mirroredServiceKey = (s: EndpointSlice) => managedServiceKey(s, ENDPOINTSLICEMIRRORING_CONTROLLER_NAME);

export class EndpointSliceMirroringController {
  readonly workers: Workers;
  readonly tracker = new EndpointSliceTracker();
  private readonly recorder: ControllerEventRecorder;
  private readonly maxEndpointsPerSubset: number;
  /** Slice writes (create + update + delete) sent (for tests and metrics). */
  writes = 0;

  constructor(
    env: ControllerEnv,
    private readonly services: Informer<Service>,
    private readonly endpoints: Informer<Endpoints>,
    private readonly slices: Informer<EndpointSlice>,
    client: ApiClient,
    opts: EndpointSliceMirroringControllerOptions = {},
  ) {
    const batchPeriodUs = opts.batchPeriodUs ?? 0;
    this.maxEndpointsPerSubset = opts.maxEndpointsPerSubset ?? MIRRORING_MAX_ENDPOINTS_PER_SUBSET;
    this.recorder = new ControllerEventRecorder(env, client, 'endpoint-slice-mirroring-controller');
    this.workers = new Workers(env, opts.workers ?? MIRRORING_CONCURRENT_SERVICE_ENDPOINT_SYNCS, (key) => this.syncEndpoints(key), client.sender, undefined, MAX_SYNC_BACKOFF_US, DEFAULT_SYNC_BACKOFF_US);
    const queue = this.workers.queue;
    slices.addIndexer(MIRRORED_SLICE_INDEX, (s) => {
      const k = mirroredServiceKey(s);
      return k ? [k] : [];
    });
    services.addEventHandler({
      onAdd: (s) => !hasSelector(s) && queue.add(objectKey(s)),
      onUpdate: (o, s) => hasSelector(o) !== hasSelector(s) && queue.add(objectKey(s)),
      onDelete: (s) => !hasSelector(s) && queue.add(objectKey(s)),
    });
    endpoints.addEventHandler({
      onAdd: (e) => shouldMirror(e) && queue.add(objectKey(e)),
      onUpdate: (o, e) => (shouldMirror(o) || shouldMirror(e)) && queue.add(objectKey(e)),
      onDelete: (e) => shouldMirror(e) && queue.add(objectKey(e)),
    });
    const onSlice = (s: EndpointSlice) => {
      const k = mirroredServiceKey(s);
      if (k && this.tracker.shouldSync(k, s)) queue.addAfter(k, batchPeriodUs);
    };
    slices.addEventHandler({
      onAdd: onSlice,
      onUpdate: (o, s) => {
        // A changed service-name label or managed-by value re-syncs both sides.
        const before = mirroredServiceKey(o);
        const after = mirroredServiceKey(s);
        if (before !== after) {
          if (before) queue.addAfter(before, batchPeriodUs);
          if (after) queue.addAfter(after, batchPeriodUs);
          return;
        }
        onSlice(s);
      },
      onDelete: (s) => {
        const k = mirroredServiceKey(s);
        // An unexpected deletion of a tracked slice: recreate it.
        if (k && this.tracker.has(k, s) && this.tracker.handleDeletion(k, s)) queue.addAfter(k, batchPeriodUs);
      },
    });
  }

  /** The slices this controller mirrored for the Service `key`. */
  private mirrored(key: string): EndpointSlice[] {
    return this.slices.byIndex(MIRRORED_SLICE_INDEX, key);
  }

  /** `syncEndpoints(key)`. */
  *syncEndpoints(key: string): Sync<SyncResult> {
    const ep = this.endpoints.get(key);
    const svc = this.services.get(key);
    // Nothing (or no longer anything) to mirror: clean up what was mirrored.
    if (!ep || !shouldMirror(ep) || !svc || hasSelector(svc)) {
      this.tracker.deleteService(key);
      return yield* this.deleteMirroredSlices(key);
    }
    const existing = this.mirrored(key);
    if (this.tracker.staleSlices(key, existing)) return { reason: 'StaleInformerCache', message: `EndpointSlice informer cache is out of date for Endpoints ${key}` };
    const r = reconcileMirroredSlices(ep, existing, this.maxEndpointsPerSubset);
    if (r.invalidAddresses > 0) this.recorder.event(ep, 'Warning', 'InvalidIPAddress', `Skipped ${r.invalidAddresses} invalid IP addresses when mirroring to EndpointSlices`);
    if (r.addressesSkipped > r.invalidAddresses) {
      this.recorder.event(ep, 'Warning', 'TooManyAddressesToMirror', `A max of ${this.maxEndpointsPerSubset} addresses can be mirrored to EndpointSlices per Endpoints subset. ${r.addressesSkipped} addresses were skipped`);
    }
    return yield* this.finalize(key, ep, r);
  }

  /** `deleteMirroredSlices` → `reconciler.deleteEndpoints`: every mirrored slice, errors collected. */
  private *deleteMirroredSlices(key: string): Sync<SyncError | undefined> {
    const { namespace } = splitKey(key);
    const slices = this.mirrored(key);
    let first: SyncError | undefined;
    let failed = 0;
    for (const s of slices) {
      this.writes++;
      const res: ApiResult = yield* call({ type: 'ApiDelete', resource: 'endpointslices', namespace, name: s.metadata.name ?? '' });
      if (!isOk(res) && !isNotFound(res)) {
        failed++;
        first ??= syncErrorOf(res, `delete EndpointSlice ${keyOf(namespace, s.metadata.name ?? '')}`);
      }
    }
    return first ? { ...first, message: `Error(s) deleting ${failed}/${slices.length} EndpointSlices for ${key} Endpoints, including: ${first.message}` } : undefined;
  }

  /** `finalize`: creates (not while the Endpoints is being deleted; a terminating namespace drops them), updates, deletes. */
  private *finalize(key: string, ep: Endpoints, r: MirrorResult): Sync<SyncError | undefined> {
    const { namespace } = splitKey(key);
    if (!ep.metadata.deletionTimestamp) {
      for (const s of r.create) {
        this.writes++;
        const res: ApiResult = yield* call({ type: 'ApiCreate', resource: 'endpointslices', namespace, object: s });
        if (!isOk(res)) return res.code === 403 ? undefined : syncErrorOf(res, `failed to create EndpointSlice for Endpoints ${key}`);
        this.tracker.update(key, res.body as EndpointSlice);
      }
    }
    for (const s of r.update) {
      this.writes++;
      const res: ApiResult = yield* call({ type: 'ApiUpdate', resource: 'endpointslices', namespace, name: s.metadata.name ?? '', object: s });
      if (!isOk(res)) return syncErrorOf(res, `failed to update ${s.metadata.name ?? ''} EndpointSlice for Endpoints ${key}`);
      this.tracker.update(key, res.body as EndpointSlice);
    }
    for (const s of r.delete) {
      this.writes++;
      const res: ApiResult = yield* call({ type: 'ApiDelete', resource: 'endpointslices', namespace, name: s.metadata.name ?? '' });
      if (!isOk(res)) return syncErrorOf(res, `failed to delete ${s.metadata.name ?? ''} EndpointSlice for Endpoints ${key}`);
      this.tracker.expectDeletion(key, s);
    }
    return undefined;
  }
}
