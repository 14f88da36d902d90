/**
 * Clients ↔ apiserver messages (one file per edge; STYLE.md "Layout"). Every client — kubelet,
 * controllers, scheduler, the scenario driver, the HTTP facade — talks to the `apiserver` actor
 * with these requests through `ctx.request`, and gets one {@link ApiResult} back. Watches are
 * registered with {@link ApiWatch}; their events arrive as {@link ApiWatchEvent} messages.
 *
 * The shapes follow the Kubernetes REST API (the HTTP facade translates 1:1): `code` is the
 * HTTP status the real apiserver would answer, `body` is what it would put in the response.
 */
import type { DeleteOptions, IncludeObjectPolicy, KubeList, KubeObject, Status, Table, WatchEvent } from '../k8s/meta.js';

/** Resources podsim serves. */
export type ResourceName =
  | 'pods'
  | 'nodes'
  | 'namespaces'
  | 'events'
  | 'replicasets'
  | 'deployments'
  | 'poddisruptionbudgets'
  | 'leases'
  | 'jobs'
  | 'daemonsets'
  | 'statefulsets'
  | 'controllerrevisions'
  | 'persistentvolumeclaims'
  | TrafficResourceName;

/** The Service resources (issue #18): v1 services and endpoints, discovery.k8s.io/v1 endpointslices. */
export type TrafficResourceName = 'services' | 'endpoints' | 'endpointslices';

/** Subresources podsim serves (`finalize`: namespaces only, PUT; `eviction`: pods only, POST). */
export type Subresource = 'status' | 'scale' | 'binding' | 'finalize' | 'eviction';

/** Patch content types (`Content-Type` of a PATCH). */
export type PatchType = 'merge' | 'strategic' | 'json' | 'apply';

interface Target {
  readonly resource: ResourceName;
  /** Omitted for cluster-scoped resources (nodes, namespaces) and for all-namespace list/watch. */
  readonly namespace?: string;
}

/**
 * Table output options shared by get, list and watch. The real apiserver always prints every
 * column (kubectl hides priority-1 columns itself unless `-o wide`); podsim does the hiding
 * server-side unless `wide` is set, so the HTTP facade passes `wide: true` and in-simulation
 * clients (the driver printing `kubectl get -w` rows) get exactly what kubectl would show.
 */
interface TableOptions {
  readonly asTable?: boolean;
  /** `-o wide`: include priority-1 columns in Table output. */
  readonly wide?: boolean;
  /** What each row's `object` holds (`?includeObject=`); default `Metadata` (PartialObjectMetadata). */
  readonly includeObject?: IncludeObjectPolicy;
}

/** GET one object. `asTable` asks for a `meta.k8s.io/v1 Table` printed by the apiserver's printers. */
export interface ApiGet extends Target, TableOptions {
  readonly type: 'ApiGet';
  readonly name: string;
  readonly subresource?: Subresource;
}

/** LIST. Selectors use the Kubernetes string syntax (`app=minio,tier!=db`, `spec.nodeName=node-1`). */
export interface ApiList extends Target, TableOptions {
  readonly type: 'ApiList';
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
}

/** POST. `object.metadata.generateName` is honoured. */
export interface ApiCreate extends Target {
  readonly type: 'ApiCreate';
  readonly object: KubeObject;
  /** POST to a subresource (pods/binding). */
  readonly name?: string;
  readonly subresource?: Subresource;
  readonly dryRun?: boolean;
  /** The manager of an `operation: Update` managedFields entry (`?fieldManager=` or the user agent's prefix); none: no entry. */
  readonly fieldManager?: string;
}

/** PUT: full replacement; `metadata.resourceVersion`, when set, is a precondition (409 on mismatch). */
export interface ApiUpdate extends Target {
  readonly type: 'ApiUpdate';
  readonly name: string;
  readonly object: KubeObject;
  readonly subresource?: Subresource;
  readonly dryRun?: boolean;
  /** As ApiCreate's. */
  readonly fieldManager?: string;
}

/** PATCH. `patch` is the decoded patch document (an object for merge/strategic/apply, an array for json). */
export interface ApiPatch extends Target {
  readonly type: 'ApiPatch';
  readonly name: string;
  readonly patchType: PatchType;
  readonly patch: unknown;
  readonly subresource?: Subresource;
  readonly fieldManager?: string;
  readonly force?: boolean;
  readonly dryRun?: boolean;
}

/** DELETE with `metav1.DeleteOptions` (absent options = the handler's defaults). */
export interface ApiDelete extends Target {
  readonly type: 'ApiDelete';
  readonly name: string;
  readonly options?: DeleteOptions;
}

/**
 * Starts a watch. Events with a resourceVersion greater than `resourceVersion` are sent (from the
 * bounded history). Without `resourceVersion` (or with `"0"`), the watch starts with synthetic
 * ADDED events for every current matching object (like `kubectl get -w` without a list).
 * `watchId` is chosen by the client and must be unique per client actor; a second ApiWatch with
 * the same id from the same actor replaces the first (how a restarted actor re-watches).
 *
 * The reply is `ApiResult{code: 200, body: Status Success}`, sent before any event. As in the
 * real watch cache, a `resourceVersion` older than the history is not an HTTP error: the reply
 * is still 200 and is followed by one ERROR event carrying `Status{code: 410, reason: Expired,
 * message: "too old resource version: <rv> (<oldest-1>)"}`, which ends the watch (relist, then
 * watch again). A malformed selector or resourceVersion gets a 400 reply and no watch; a
 * resourceVersion newer than the store's gets 504 (`Too large resource version`).
 *
 * Field-selector watches see transitions like the real watch cache: an object that starts to
 * match arrives as ADDED, one that stops matching as DELETED (previous state, the write's RV).
 */
export interface ApiWatch extends Target, TableOptions {
  readonly type: 'ApiWatch';
  readonly watchId: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly resourceVersion?: string;
}

/** Stops a watch (a kubectl that disconnected, a reflector that restarts). */
export interface ApiUnwatch {
  readonly type: 'ApiUnwatch';
  readonly watchId: string;
}

export type ApiRequest = ApiGet | ApiList | ApiCreate | ApiUpdate | ApiPatch | ApiDelete | ApiWatch | ApiUnwatch;

/**
 * The one reply type. `code` is the HTTP status (200, 201, 202, 404, 409, 410, 422, …);
 * `body` is the object, list, Table, or a `Status` for errors (and for watch start: Success).
 */
export interface ApiResult<B = KubeObject | KubeList | Table | Status> {
  readonly type: 'ApiResult';
  readonly code: number;
  readonly body: B;
}

/**
 * One watch event, pushed to the watcher. Multicast to every watcher actor whose watch matched:
 * `watchIds` lists all matching watch ids of all recipients (a recipient picks its own). The
 * apiserver guarantees that no id in the list names one of the recipient's own watches that did
 * not match (it splits the multicast when ids collide), so "my ids ∩ watchIds" is exact.
 * For `asTable` watches `event.object` is a Table with one row (what kubectl -w prints), printed
 * at the apiserver's clock when the event is sent.
 * An ERROR event carries a Status (e.g. 410 Expired) and ends the watch.
 */
export interface ApiWatchEvent {
  readonly type: 'ApiWatchEvent';
  readonly watchIds: readonly string[];
  readonly event: WatchEvent<KubeObject | Table | Status>;
}

export type ApiServerMessage = ApiRequest | ApiResult | ApiWatchEvent;

/** The apiserver's actor id. */
export const APISERVER_ACTOR = 'apiserver';
