/**
 * The apiserver pod source: `pkg/kubelet/config/apiserver.go` `NewSourceApiserver` — a client-go
 * reflector (`tools/cache/reflector.go` v0.22.8 `ListAndWatch`) on pods with
 * `spec.nodeName=<node>` feeding an UndeltaStore whose every change is a SET of the full list,
 * merged by {@link PodStorage} (spec §4.1). Each watch ends after `minWatchTimeout × (1 + rand)`
 * (the server's `timeoutSeconds`) or when the connection breaks, and is re-established from the
 * last resourceVersion seen, so the watch cache replays what was missed; a watch ERROR (410
 * Expired) or a failed request relists after client-go's backoff (800 ms doubling to 30 s).
 */
import type { ApiWatchEvent, KubeList, KubeObject, Pod } from '@podsim/api';
import type { ApiClient } from '../apiClient.js';
import type { KubeletEnv } from '../env.js';
import { PodStorage, type PodUpdate } from './podStorage.js';

export const API_SOURCE = 'api';

/** client-go `minWatchTimeout` (5 min): a watch lasts minWatchTimeout × (1 + rand). */
export const MIN_WATCH_TIMEOUT_US = 5 * 60 * 1_000_000;
/** client-go reflector backoff (`NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0)`). */
export const REFLECTOR_BACKOFF_INITIAL_US = 800_000;
export const REFLECTOR_BACKOFF_MAX_US = 30_000_000;

export interface ApiserverSourceOptions {
  /** `minWatchTimeout`, virtual µs (0: a watch never times out). */
  readonly minWatchTimeoutUs: number;
  /**
   * Virtual times at which this kubelet's connection to the apiserver breaks (scenario fault
   * `disconnect`): the current watch ends there, as a broken HTTP/2 connection ends it, and the
   * reflector re-watches from its last resourceVersion.
   */
  readonly connectionLossesUs: readonly number[];
}

type State = 'idle' | 'listing' | 'awaitingWatch' | 'watching';

export class ApiserverPodSource {
  readonly storage = new PodStorage();
  /** One watch id per kubelet incarnation, reused by every re-watch and relist (a second ApiWatch with the same id replaces the first). */
  readonly watchName: string;
  /** `lastSyncResourceVersion`: of the last list, or of the last event applied. */
  lastResourceVersion = '';
  /** Lists performed (1 + relists) and watches requested (1 + re-watches), for tests. */
  lists = 0;
  watches = 0;
  private state: State = 'idle';
  private started = false;
  /** Bumped by every list and every watch request; replies and timers of older ones are ignored. */
  private generation = 0;
  private watchTimer: number | undefined;
  private backoffUs = REFLECTOR_BACKOFF_INITIAL_US;

  constructor(
    private readonly client: ApiClient,
    private readonly env: KubeletEnv,
    private readonly nodeName: string,
    /** Unique per kubelet incarnation (watch ids are per client actor). */
    watchIdPrefix: string,
    private readonly onUpdates: (updates: PodUpdate[]) => void,
    private readonly options: ApiserverSourceOptions = { minWatchTimeoutUs: MIN_WATCH_TIMEOUT_US, connectionLossesUs: [] },
  ) {
    this.watchName = `${watchIdPrefix}-pods`;
  }

  /** Lists, merges the list as a SET, then watches from its resourceVersion. */
  start(): void {
    if (!this.started) {
      this.started = true;
      const now = this.env.now();
      for (const t of this.options.connectionLossesUs) if (t >= now) this.env.setTimer(t - now, () => this.connectionLost());
    }
    this.list('start');
  }

  /** Feeds one ApiWatchEvent (ignored unless it belongs to the current watch stream). */
  handleWatchEvent(ev: ApiWatchEvent): void {
    if (!ev.watchIds.includes(this.watchName)) return;
    // Before the reply to the current ApiWatch, events on this id come from the stream it
    // replaced (the apiserver replies first, then streams; the link is FIFO): the new stream
    // replays them from the resourceVersion it was asked for.
    if (this.state !== 'watching') return;
    const e = ev.event;
    if (e.type === 'ERROR') {
      this.trace('list', `watch of pods ended with ${(e.object as { code?: number }).code ?? 'an error'}: relist`);
      this.relistLater();
      return;
    }
    const rv = (e.object as KubeObject).metadata?.resourceVersion;
    if (rv) this.lastResourceVersion = rv;
    if (e.type === 'BOOKMARK') return;
    const pod = e.object as Pod;
    this.emit(this.storage.mergeOne(API_SOURCE, pod.metadata.uid!, e.type === 'DELETED' ? undefined : pod));
  }

  private list(reason: string): void {
    const gen = ++this.generation;
    this.cancelWatchTimer();
    if (this.state === 'watching' || this.state === 'awaitingWatch') this.client.request({ type: 'ApiUnwatch', watchId: this.watchName }, () => {});
    this.state = 'listing';
    this.lists++;
    this.trace('list', `list pods (${reason})`);
    this.client.request({ type: 'ApiList', resource: 'pods', fieldSelector: `spec.nodeName=${this.nodeName}` }, (res) => {
      if (gen !== this.generation) return;
      if (res.code !== 200) return this.relistLater();
      const list = res.body as KubeList<Pod>;
      this.backoffUs = REFLECTOR_BACKOFF_INITIAL_US;
      this.lastResourceVersion = list.metadata.resourceVersion ?? '';
      this.emit(this.storage.merge(API_SOURCE, list.items));
      this.watch('start');
    });
  }

  /** Watches from the last resourceVersion; the watch ends after minWatchTimeout × (1 + rand). */
  private watch(reason: string): void {
    const gen = ++this.generation;
    this.cancelWatchTimer();
    this.state = 'awaitingWatch';
    this.watches++;
    const rv = this.lastResourceVersion;
    if (reason !== 'start') this.trace('watch', `watch pods from rv ${rv} (${reason})`);
    if (this.options.minWatchTimeoutUs > 0) {
      const timeoutUs = Math.floor(this.options.minWatchTimeoutUs * (1 + this.env.stream('reflector').float()));
      this.watchTimer = this.env.setTimer(timeoutUs, () => {
        this.watchTimer = undefined;
        if (gen === this.generation) this.watch('timeout');
      });
    }
    this.client.request(
      { type: 'ApiWatch', resource: 'pods', watchId: this.watchName, fieldSelector: `spec.nodeName=${this.nodeName}`, resourceVersion: rv },
      (r) => {
        if (gen !== this.generation) return;
        if (r.code >= 300) return this.relistLater();
        this.state = 'watching';
      },
    );
  }

  /** The connection broke: an established or pending watch ends; a list in flight fails on its own (request timeout). */
  private connectionLost(): void {
    if (this.state === 'watching' || this.state === 'awaitingWatch') this.watch('connection lost');
  }

  private relistLater(): void {
    const gen = ++this.generation;
    this.cancelWatchTimer();
    this.state = 'idle';
    const d = this.backoffUs;
    this.backoffUs = Math.min(this.backoffUs * 2, REFLECTOR_BACKOFF_MAX_US);
    this.env.setTimer(d, () => {
      if (gen === this.generation) this.list('retry');
    });
  }

  private cancelWatchTimer(): void {
    if (this.watchTimer !== undefined) this.env.cancelTimer(this.watchTimer);
    this.watchTimer = undefined;
  }

  private trace(what: 'list' | 'watch', msg: string): void {
    this.env.trace(`reflector.${what}`, msg, { resource: 'pods', rv: this.lastResourceVersion });
  }

  private emit(updates: PodUpdate[]): void {
    if (updates.length > 0) this.onUpdates(updates);
  }
}
