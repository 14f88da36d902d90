/**
 * Test harness for the pure apiserver: a deterministic RequestContext (seeded ids, virtual
 * time in µs), request helpers that drain watch deliveries, and pod fixtures.
 */
import type { ActorId, ApiRequest, ApiResult, ApiWatchEvent, KubeObject, Pod, PodPhase, ResourceName, Status } from '@podsim/api';
import { IdGenerator, Prng, US_PER_SECOND } from '@podsim/api';
import { ApiServer, type ApiServerConfig } from '../src/apiServer.js';
import type { WatchDelivery } from '../src/watch/cacher.js';
import type { RequestContext } from '../src/registry/strategy.js';

export class Harness {
  readonly api: ApiServer;
  /** Virtual µs of the next request. */
  now = 0;
  readonly ids = new IdGenerator(new Prng('test-ids'));
  /** Every delivery so far, in order. */
  readonly deliveries: WatchDelivery[] = [];
  /** Every storage write so far: [type, resource, name, rv]. */
  readonly writes: Array<{ type: string; resource: string; name: string; rv: string; object: KubeObject }> = [];

  constructor(config: ApiServerConfig = {}) {
    // Frozen storage: any mutation of a stored object (by the server or a test) throws.
    this.api = new ApiServer({ freezeObjects: true, ...config });
    this.api.onWrite((ev, resource) => this.writes.push({ type: ev.type, resource, name: ev.object.metadata.name ?? '', rv: ev.object.metadata.resourceVersion ?? '', object: ev.object }));
    this.api.bootstrap(this.rctx());
    this.writes.length = 0;
  }

  rctx(): RequestContext {
    return { now: this.now, clock: this.api.clock, newId: (n, a) => this.ids.id(n, a), uuid: () => this.ids.uuid() };
  }

  /** Sets the virtual time in seconds. */
  at(seconds: number): this {
    this.now = Math.round(seconds * US_PER_SECOND);
    return this;
  }

  req(req: ApiRequest, client: ActorId = 'client'): ApiResult {
    const r = this.api.handle(req, client, this.rctx());
    this.deliveries.push(...this.api.drain());
    return r;
  }

  /** Deliveries addressed to `client` since index `from`, flattened to (watchIds, event). */
  eventsFor(client: ActorId, from = 0): ApiWatchEvent[] {
    return this.deliveries.slice(from).filter((d) => d.to.includes(client)).map((d) => d.body);
  }

  /** Creates a pod (defaults: one container `c`, image busybox) and returns it. */
  createPod(name: string, spec: Partial<Pod['spec']> = {}, meta: Partial<Pod['metadata']> = {}, namespace = 'default'): Pod {
    const r = this.req({
      type: 'ApiCreate',
      resource: 'pods',
      namespace,
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...meta }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], ...spec } } as Pod,
    });
    if (r.code !== 201) throw new Error(`create ${name}: ${r.code} ${(r.body as Status).message}`);
    return r.body as Pod;
  }

  /** Marks a pod's status phase via the status subresource (merge patch). */
  setPhase(name: string, phase: PodPhase, namespace = 'default'): ApiResult {
    return this.req({ type: 'ApiPatch', resource: 'pods', namespace, name, subresource: 'status', patchType: 'merge', patch: { status: { phase } } });
  }

  get(name: string, resource: ResourceName = 'pods', namespace = 'default'): ApiResult {
    return this.req({ type: 'ApiGet', resource, namespace: resource === 'nodes' ? undefined : namespace, name });
  }
}

export function status(r: ApiResult): Status {
  return r.body as Status;
}
