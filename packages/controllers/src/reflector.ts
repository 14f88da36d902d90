/**
 * client-go `tools/cache/reflector.go` `ListAndWatch` over the apiserver protocol: LIST the
 * resource (all namespaces), `Replace` the informer's store, then WATCH from the list's
 * resourceVersion. A watch ERROR (410 Gone: the RV fell out of the watch cache) or a failed
 * request makes it relist after a backoff (client-go's 800 ms initial backoff, doubled to 30 s).
 * Watch ids are `<client>/<resource>#<n>`; a relist starts a new id and unwatches the old one.
 */
import type { ApiList, ApiResult, ApiUnwatch, ApiWatch, KubeList, KubeObject, WatchEvent } from '@podsim/api';
import { millis, seconds } from '@podsim/api';
import type { ControllerEnv } from './env.js';
import type { Informer } from './informer.js';

export const REFLECTOR_BACKOFF_INITIAL_US = millis(800);
export const REFLECTOR_BACKOFF_MAX_US = seconds(30);

/** Sends an unthrottled request (list/watch use their own client) and reports its result. */
export type ReflectorSend = (req: ApiList | ApiWatch | ApiUnwatch, onResult: (res: ApiResult) => void) => void;

export class Reflector<T extends KubeObject> {
  private generation = 0;
  private backoffUs = REFLECTOR_BACKOFF_INITIAL_US;
  /** The current watch id (events for other ids are ignored). */
  watchId = '';
  /** Lists performed (1 + relists). */
  lists = 0;

  constructor(
    private readonly env: ControllerEnv,
    readonly informer: Informer<T>,
    private readonly send: ReflectorSend,
    private readonly clientName: string,
    private readonly onSynced?: () => void,
  ) {}

  start(): void {
    this.list();
  }

  /** True if `watchId` belongs to this reflector's current watch. */
  owns(watchId: string): boolean {
    return watchId === this.watchId;
  }

  /** Applies one event of the current watch. */
  handleEvent(ev: WatchEvent<KubeObject>): void {
    if (!this.informer.applyEvent(ev)) this.restart();
  }

  private list(): void {
    this.lists++;
    const gen = ++this.generation;
    this.send({ type: 'ApiList', resource: this.informer.resource }, (res) => {
      if (gen !== this.generation) return;
      if (res.code !== 200) {
        this.retryLater();
        return;
      }
      const list = res.body as KubeList<T>;
      const first = !this.informer.hasSynced;
      this.informer.replace(list.items, list.metadata.resourceVersion ?? '');
      this.backoffUs = REFLECTOR_BACKOFF_INITIAL_US;
      this.watch(gen);
      if (first) this.onSynced?.();
    });
  }

  private watch(gen: number): void {
    this.watchId = `${this.clientName}/${this.informer.resource}#${gen}`;
    this.send(
      { type: 'ApiWatch', resource: this.informer.resource, watchId: this.watchId, resourceVersion: this.informer.resourceVersion },
      (res) => {
        if (gen !== this.generation) return;
        if (res.code >= 300) this.restart();
      },
    );
  }

  private restart(): void {
    const old = this.watchId;
    this.watchId = '';
    this.generation++;
    if (old) this.send({ type: 'ApiUnwatch', watchId: old }, () => {});
    this.retryLater();
  }

  private retryLater(): void {
    const gen = this.generation;
    const d = this.backoffUs;
    this.backoffUs = Math.min(this.backoffUs * 2, REFLECTOR_BACKOFF_MAX_US);
    this.env.after(d, () => {
      if (gen === this.generation) this.list();
    });
  }
}
