/**
 * The control plane's event recorder: what `record.EventRecorder` (client-go
 * tools/record/event.go, via `EventBroadcaster.NewRecorder`) does for a controller. Each call
 * creates one core/v1 Event through the controller's own rate-limited {@link ApiClient}; the
 * Event is named `<involvedObject name>.<creation time as hex Unix nanoseconds>` as client-go's
 * `makeEvent` names it (`fmt.Sprintf("%v.%x", ref.Name, t.UnixNano())`), so `kubectl get events`
 * lists them in time order. Two events for the same object in the same virtual microsecond get a
 * name one nanosecond apart (client-go's would collide and the second create would fail with
 * AlreadyExists; podsim keeps both).
 *
 * Not modelled: the EventCorrelator's aggregation and spam filter (events_cache.go), the
 * broadcaster's 1000-deep channel.
 */
import type { ApiResult, Event, KubeObject } from '@podsim/api';
import type { ApiClient } from './client.js';
import type { ControllerEnv } from './env.js';

export type EventType = 'Normal' | 'Warning';

/** The object an Event is about (any served kind with apiVersion, kind and metadata). */
export interface EventSubject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: KubeObject['metadata'];
}

export class ControllerEventRecorder {
  /** Last (name, unix-ns) handed out, so names stay unique within one µs. */
  private lastNs = -1n;

  /**
   * @param component `source.component` (e.g. `replicaset-controller`, `node-controller`).
   * @param client the controller's own client (its QPS/burst apply to events as in client-go,
   *   where the broadcaster shares the controller's clientset).
   */
  constructor(
    private readonly env: ControllerEnv,
    private readonly client: ApiClient,
    readonly component: string,
  ) {}

  /** `Eventf(obj, type, reason, message)`. Fire-and-forget: a failed create is counted, not retried. */
  event(obj: EventSubject, type: EventType, reason: string, message: string): void {
    const ns = obj.metadata.namespace ?? 'default';
    const name = obj.metadata.name ?? 'object';
    const ts = this.env.clock.format(this.env.now);
    let ns64 = (BigInt(this.env.clock.epochUnixSeconds) * 1_000_000n + BigInt(this.env.now)) * 1000n;
    if (ns64 <= this.lastNs) ns64 = this.lastNs + 1n;
    this.lastNs = ns64;
    const ev: Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${name}.${ns64.toString(16)}`, namespace: ns },
      involvedObject: {
        kind: obj.kind,
        namespace: obj.metadata.namespace,
        name,
        uid: obj.metadata.uid,
        apiVersion: obj.apiVersion,
        resourceVersion: obj.metadata.resourceVersion,
      },
      reason,
      message,
      source: { component: this.component },
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
      type,
    };
    this.client.send({ type: 'ApiCreate', resource: 'events', namespace: ns, object: ev }, (res: ApiResult) => {
      if (res.code >= 300) this.env.count('controllers.eventsFailed');
    });
  }
}
