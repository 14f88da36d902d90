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
 * client-go's EventCorrelator (`@podsim/api` eventCorrelator.ts, events_cache.go) runs first, per
 * recorder: a repeat becomes a merge patch of the first Event (count + 1, lastTimestamp,
 * message; a create again if it is gone), more than 10 similar ones in 10 minutes one
 * "(combined from similar events)" Event, and spam is dropped. Not modelled: the broadcaster's
 * 1000-deep channel and the sink's 12 retries.
 */
import { EventCorrelator, eventName, type ApiResult, type Event, type KubeObject } from '@podsim/api';
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
  /** Last unix-ns handed out, so names stay unique within one µs. */
  private lastNs = -1n;
  private readonly correlator = new EventCorrelator();

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

  /** `Eventf(obj, type, reason, message)`. Fire-and-forget: a failed write is counted, not retried. */
  event(obj: EventSubject, type: EventType, reason: string, message: string): void {
    const ns = obj.metadata.namespace ?? 'default';
    const name = obj.metadata.name ?? 'object';
    const ts = this.env.clock.format(this.env.now);
    const named = eventName(name, this.env.clock.epochUnixSeconds, this.env.now, this.lastNs);
    this.lastNs = named.ns;
    const ev: Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: named.name, namespace: ns },
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
    const r = this.correlator.correlate(ev, this.env.now, ts, named.name);
    if (r.skip) {
      this.env.count('controllers.eventsSpamFiltered');
      return;
    }
    const done = (res: ApiResult) => {
      if (res.code >= 300) this.env.count('controllers.eventsFailed');
    };
    const create = () => this.client.send({ type: 'ApiCreate', resource: 'events', namespace: ns, object: r.event }, done);
    if (!r.patch) create();
    else {
      this.client.send({ type: 'ApiPatch', resource: 'events', namespace: ns, name: r.event.metadata.name!, patchType: 'strategic', patch: r.patch }, (res) =>
        res.code === 404 ? create() : done(res),
      );
    }
  }
}
