/**
 * The kubelet's event recorder (`record.EventRecorder` via the kubelet's event broadcaster,
 * client-go tools/record/event.go v0.22.8): `makeEvent` names each Event
 * `<pod name>.<hex Unix ns>`, client-go's EventCorrelator (`@podsim/api` eventCorrelator.ts)
 * aggregates repeats into one Event with a rising `count` (a merge patch of count,
 * lastTimestamp and message, `recordToSink`; a create again if the Event is gone) and drops spam;
 * what remains goes through the events' own `eventRecordQPS`/`eventBurst` bucket, dropped when
 * the queue is full (the broadcaster's 1000-deep channel), or nowhere when `eventsEnabled` is
 * false. A failed write is counted, not retried (upstream retries 12 times, 10 s apart).
 */
import { EventCorrelator, eventName, type Event, type EventCorrelateResult, type Pod } from '@podsim/api';
import { ApiClient } from './apiClient.js';
import type { KubeletEnv } from './env.js';

export type EventType = 'Normal' | 'Warning';

export class EventRecorder {
  private readonly client: ApiClient | undefined;
  private readonly correlator = new EventCorrelator();
  private lastNs = -1n;

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
    const now = this.env.now();
    const ts = this.env.clock.format(now);
    const named = eventName(pod.metadata.name ?? 'pod', this.env.clock.epochUnixSeconds, now, this.lastNs);
    this.lastNs = named.ns;
    const ev: Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: named.name, namespace: ns },
      involvedObject: { kind: 'Pod', namespace: ns, name: pod.metadata.name, uid: pod.metadata.uid, apiVersion: 'v1', ...(fieldPath ? { fieldPath } : {}) },
      reason,
      message,
      source: { component: 'kubelet', host: this.nodeName },
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
      type,
    };
    const r = this.correlator.correlate(ev, now, ts, named.name);
    if (r.skip) {
      this.env.count('kubelet.eventsSpamFiltered');
      return;
    }
    this.write(r);
  }

  /** `recordEvent`: patch a repeat, create a new one (or a repeat whose Event is gone). */
  private write(r: Extract<EventCorrelateResult, { skip: false }>): void {
    const ns = r.event.metadata.namespace ?? 'default';
    const create = () => this.client!.request({ type: 'ApiCreate', resource: 'events', namespace: ns, object: r.event }, () => {});
    const sent = r.patch
      ? this.client!.request({ type: 'ApiPatch', resource: 'events', namespace: ns, name: r.event.metadata.name!, patchType: 'strategic', patch: r.patch }, (res) => {
          if (res.code === 404) create();
        })
      : create();
    if (!sent) this.env.count('kubelet.eventsDropped');
  }
}
