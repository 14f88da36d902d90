/**
 * client-go `tools/cache/reflector.go` (v0.22.8) `ListAndWatch` over the apiserver protocol: LIST
 * the resource (all namespaces), `Replace` the informer's store, then WATCH from the list's
 * resourceVersion. A watch ends after `minWatchTimeout × (1 + rand)` (the server's
 * `timeoutSeconds`) or when the connection breaks, and the loop watches again from the last
 * resourceVersion seen (the watch cache replays what was missed). A watch ERROR (410 Expired) or a
 * failed request relists after a backoff (800 ms doubled to 30 s). Watch ids are
 * `<client>/<resource>#<n>`, a new one per watch; the old one is unwatched.
 */
import type { ApiList, ApiResult, ApiUnwatch, ApiWatch, KubeList, KubeObject, WatchEvent } from '@podsim/api';
import { US_PER_MINUTE, millis, seconds } from '@podsim/api';
import type { ControllerEnv } from './env.js';
import type { Informer } from './informer.js';

export const REFLECTOR_BACKOFF_INITIAL_US = millis(800);
export const REFLECTOR_BACKOFF_MAX_US = seconds(30);
/** client-go `minWatchTimeout`: a watch lasts minWatchTimeout × (1 + rand). */
export const MIN_WATCH_TIMEOUT_US = 5 * US_PER_MINUTE;

/** Sends an unthrottled request (list/watch use their own client) and reports its result. */
export type ReflectorSend = (req: ApiList | ApiWatch | ApiUnwatch, onResult: (res: ApiResult) => void) => void;

export interface ReflectorOptions {
  /** `minWatchTimeout`, virtual µs (0: a watch never times out). Default 5 min. */
  readonly minWatchTimeoutUs?: number;
  /**
   * Virtual times at which the client's connection to the apiserver breaks (scenario fault
   * `disconnect`): the current watch ends there and the reflector watches again.
   */
  readonly connectionLossesUs?: readonly number[];
}

export class Reflector<T extends KubeObject> {
  private generation = 0;
  private backoffUs = REFLECTOR_BACKOFF_INITIAL_US;
  private watchTimer: number | undefined;
  private watching = false;
  /** The current watch id (events for other ids are ignored). */
  watchId = '';
  /** Lists performed (1 + relists). */
  lists = 0;
  /** Watches requested (1 per list + re-watches). */
  watches = 0;

  constructor(
    private readonly env: ControllerEnv,
    readonly informer: Informer<T>,
    private readonly send: ReflectorSend,
    private readonly clientName: string,
    private readonly onSynced?: () => void,
    private readonly options: ReflectorOptions = {},
  ) {}

  start(): void {
    for (const t of this.options.connectionLossesUs ?? []) {
      if (t >= this.env.now) this.env.after(t - this.env.now, () => this.connectionLost());
    }
    this.list();
  }

  /** True if `watchId` belongs to this reflector's current watch. */
  owns(watchId: string): boolean {
    return watchId === this.watchId;
  }

  /** Applies one event of the current watch. */
  handleEvent(ev: WatchEvent<KubeObject>): void {
    if (!this.informer.applyEvent(ev)) {
      this.trace('list', `watch of ${this.informer.resource} ended with ${(ev.object as { code?: number }).code ?? 'an error'}: relist`);
      this.restart();
    }
  }

  private list(): void {
    this.lists++;
    const gen = ++this.generation;
    if (this.lists > 1) this.trace('list', `list ${this.informer.resource} (retry)`);
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
      this.watch(gen, 'start');
      if (first) this.onSynced?.();
    });
  }

  /** Watches from the informer's last resourceVersion under a new watch id. */
  private watch(gen: number, reason: string): void {
    const old = this.watchId;
    if (old) this.send({ type: 'ApiUnwatch', watchId: old }, () => {});
    this.watchId = `${this.clientName}/${this.informer.resource}#${++this.watches}`;
    this.watching = true;
    if (reason !== 'start') this.trace('watch', `watch ${this.informer.resource} from rv ${this.informer.resourceVersion} (${reason})`);
    this.cancelWatchTimer();
    const minUs = this.options.minWatchTimeoutUs ?? MIN_WATCH_TIMEOUT_US;
    if (minUs > 0) {
      const watchId = this.watchId;
      const timeoutUs = Math.floor(minUs * (1 + this.env.stream(`reflector/${this.informer.resource}`).float()));
      this.watchTimer = this.env.after(timeoutUs, () => {
        this.watchTimer = undefined;
        if (gen === this.generation && this.watchId === watchId) this.watch(gen, 'timeout');
      });
    }
    const watchId = this.watchId;
    this.send(
      { type: 'ApiWatch', resource: this.informer.resource, watchId, resourceVersion: this.informer.resourceVersion },
      (res) => {
        if (gen !== this.generation || watchId !== this.watchId) return;
        if (res.code >= 300) this.restart();
      },
    );
  }

  /** The connection broke: a current watch ends and is requested again. */
  private connectionLost(): void {
    if (this.watching) this.watch(this.generation, 'connection lost');
  }

  private restart(): void {
    const old = this.watchId;
    this.watchId = '';
    this.watching = false;
    this.cancelWatchTimer();
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

  private cancelWatchTimer(): void {
    if (this.watchTimer !== undefined) this.env.cancel(this.watchTimer);
    this.watchTimer = undefined;
  }

  private trace(what: 'list' | 'watch', msg: string): void {
    this.env.trace(`reflector.${what}`, msg, { resource: this.informer.resource, rv: this.informer.resourceVersion });
  }
}
