/**
 * The namespace controller: kubernetes v1.22 `pkg/controller/namespace/namespace_controller.go`.
 * A namespace with a deletionTimestamp is queued 5 s (`namespaceDeletionGracePeriod`) after each
 * add/update event; `--concurrent-namespace-syncs` 10 workers run the deleter
 * (`namespacedResourcesDeleter.ts`): content remaining → `AddAfter(estimate/2 + 1 s)`, any other
 * error → rate-limited (5 ms × 2ⁿ, at most 60 s: `nsControllerRateLimiter`). Not modelled: the
 * 5-minute informer resync (`--namespace-sync-period`), a safety net for lost events.
 */
import type { Namespace } from '@podsim/api';
import { seconds } from '@podsim/api';
import type { ApiClient } from '../client.js';
import type { Sync } from '../coroutine.js';
import type { ControllerEnv } from '../env.js';
import type { Informer } from '../informer.js';
import { objectKey } from '../objects.js';
import { type SyncResult, Workers } from '../workqueue.js';
import { NamespacedResourcesDeleter, requeueForRemaining } from './namespacedResourcesDeleter.js';

/** `namespaceDeletionGracePeriod`: delay before a namespace event is processed. */
export const NAMESPACE_DELETION_GRACE_PERIOD_US = seconds(5);
/** `--concurrent-namespace-syncs` default. */
export const CONCURRENT_NAMESPACE_SYNCS = 10;
/** `nsControllerRateLimiter`'s per-item cap: retry namespace deletion at least every minute. */
export const NAMESPACE_RATE_LIMIT_MAX_US = seconds(60);

export interface NamespaceControllerOptions {
  readonly workers?: number;
}

export class NamespaceController {
  readonly workers: Workers;
  readonly deleter: NamespacedResourcesDeleter;

  constructor(
    private readonly env: ControllerEnv,
    private readonly namespaces: Informer<Namespace>,
    client: ApiClient,
    opts: NamespaceControllerOptions = {},
  ) {
    this.deleter = new NamespacedResourcesDeleter(env);
    this.workers = new Workers(
      env,
      opts.workers ?? CONCURRENT_NAMESPACE_SYNCS,
      (key) => this.syncNamespaceFromKey(key),
      client.sender,
      (key, err) => env.trace('controller.namespace.error', `deletion of namespace ${key} failed: ${err.message}`, { namespace: key, message: err.message }),
      NAMESPACE_RATE_LIMIT_MAX_US,
    );
    namespaces.addEventHandler({
      onAdd: (ns) => this.enqueueNamespace(ns),
      onUpdate: (_old, ns) => this.enqueueNamespace(ns),
    });
  }

  /** `enqueueNamespace`: only namespaces being deleted, after the deletion grace period. */
  private enqueueNamespace(ns: Namespace): void {
    // don't queue if we aren't deleted
    if (!ns.metadata.deletionTimestamp) return;
    // delay processing namespace events to allow HA api servers to observe namespace deletion,
    // and HA etcd servers to observe last minute object creations inside the namespace
    this.workers.queue.addAfter(objectKey(ns), NAMESPACE_DELETION_GRACE_PERIOD_US);
  }

  /** `syncNamespaceFromKey`: the lister's namespace (gone → done), then the deleter. */
  *syncNamespaceFromKey(key: string): Sync<SyncResult> {
    const ns = this.namespaces.get(key);
    if (!ns) return undefined;
    const res = yield* this.deleter.delete(ns.metadata.name ?? key);
    if (res !== undefined && 'kind' in res) {
      this.env.trace('controller.namespace.remaining', `${key}: some content remains, estimate ${res.estimate} seconds`, { namespace: key, estimate: res.estimate });
      return requeueForRemaining(res);
    }
    return res;
  }
}
