/**
 * The kubelet's event recorder (`record.EventRecorder` via the kubelet's event broadcaster):
 * core/v1 Events created with `ApiCreate` through their own `eventRecordQPS`/`eventBurst`
 * bucket, dropped when the queue is full (the broadcaster's 1000-deep channel), or not at all
 * when `eventsEnabled` is false. No aggregation/correlation (a simplification).
 */
import type { Event, Pod } from '@podsim/api';
import { ApiClient } from './apiClient.js';
import type { KubeletEnv } from './env.js';

export type EventType = 'Normal' | 'Warning';

export class EventRecorder {
  private readonly client: ApiClient | undefined;

  constructor(
    private readonly env: KubeletEnv,
    private readonly nodeName: string,
    enabled: boolean,
    qps: number,
    burst: number,
  ) {
    this.client = enabled ? new ApiClient(env, qps, burst, 1000, 'kubelet events') : undefined;
  }

  /** `Eventf(pod, type, reason, message)`; `fieldPath` e.g. `spec.containers{app}`. */
  event(pod: Pod, type: EventType, reason: string, message: string, fieldPath?: string): void {
    if (!this.client) return;
    const ns = pod.metadata.namespace ?? 'default';
    const ts = this.env.clock.format(this.env.now());
    const ev: Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${pod.metadata.name ?? 'pod'}.${this.env.newId()}`, namespace: ns },
      involvedObject: { kind: 'Pod', namespace: ns, name: pod.metadata.name, uid: pod.metadata.uid, apiVersion: 'v1', ...(fieldPath ? { fieldPath } : {}) },
      reason,
      message,
      source: { component: 'kubelet', host: this.nodeName },
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
      type,
    };
    const sent = this.client.request({ type: 'ApiCreate', resource: 'events', namespace: ns, object: ev }, () => {});
    if (!sent) this.env.count('kubelet.eventsDropped');
  }
}
