/**
 * The apiserver pod source: `pkg/kubelet/config/apiserver.go` `NewSourceApiserver` — a reflector
 * (list, then watch from the list's resourceVersion) on pods with `spec.nodeName=<node>` in all
 * namespaces, feeding an UndeltaStore whose every change is a SET of the full list, merged by
 * {@link PodStorage} (spec §4.1). A watch ERROR (e.g. 410 Gone) makes the reflector relist.
 */
import type { ApiWatchEvent, KubeList, Pod } from '@podsim/api';
import type { ApiClient } from '../apiClient.js';
import { PodStorage, type PodUpdate } from './podStorage.js';

export const API_SOURCE = 'api';

export class ApiserverPodSource {
  readonly storage = new PodStorage();
  /** The watch id while a watch is (being) established. */
  private watchId: string | undefined;
  private generation = 0;
  /** One watch id per kubelet incarnation, reused after a relist. */
  readonly watchName: string;

  constructor(
    private readonly client: ApiClient,
    private readonly nodeName: string,
    /** Unique per kubelet incarnation (watch ids are per client actor). */
    private readonly watchIdPrefix: string,
    private readonly onUpdates: (updates: PodUpdate[]) => void,
    private readonly onRetryLater: (fn: () => void) => void,
  ) {
    this.watchName = `${watchIdPrefix}-pods`;
  }

  /** Lists, merges the list as a SET, then watches from its resourceVersion. */
  start(): void {
    const gen = ++this.generation;
    if (this.watchId !== undefined) this.client.request({ type: 'ApiUnwatch', watchId: this.watchId }, () => {});
    this.watchId = undefined;
    this.client.request({ type: 'ApiList', resource: 'pods', fieldSelector: `spec.nodeName=${this.nodeName}` }, (res) => {
      if (gen !== this.generation) return;
      if (res.code !== 200) {
        this.onRetryLater(() => this.start());
        return;
      }
      const list = res.body as KubeList<Pod>;
      this.emit(this.storage.merge(API_SOURCE, list.items));
      const watchId = this.watchName;
      this.watchId = watchId;
      this.client.request(
        { type: 'ApiWatch', resource: 'pods', watchId, fieldSelector: `spec.nodeName=${this.nodeName}`, resourceVersion: list.metadata.resourceVersion },
        (r) => {
          if (gen === this.generation && r.code >= 300) this.onRetryLater(() => this.start());
        },
      );
    });
  }

  /** Feeds one ApiWatchEvent (ignored unless it is for the current watch). */
  handleWatchEvent(ev: ApiWatchEvent): void {
    if (this.watchId === undefined || !ev.watchIds.includes(this.watchId)) return;
    const e = ev.event;
    if (e.type === 'ERROR') {
      this.start();
      return;
    }
    if (e.type === 'BOOKMARK') return;
    const pod = e.object as Pod;
    const uid = pod.metadata.uid!;
    this.emit(this.storage.mergeOne(API_SOURCE, uid, e.type === 'DELETED' ? undefined : pod));
  }

  private emit(updates: PodUpdate[]): void {
    if (updates.length > 0) this.onUpdates(updates);
  }
}
