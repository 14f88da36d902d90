/**
 * The apiserver as a pure machine: one {@link ApiRequest} in, one {@link ApiResult} out, watch
 * events queued for delivery. It plays the parts of kube-apiserver v1.22 a podsim client
 * touches: the REST handlers (`pkg/endpoints/handlers` get/list/create/update/patch/delete/
 * watch, status codes and `checkName`), decoding defaults, the admission plugins that shape
 * pods (NamespaceLifecycle, ServiceAccount, Priority, DefaultTolerationSeconds), the generic
 * registry per resource, the watch cache and the Table printers.
 *
 * No ctx here: time and ids come in a {@link RequestContext}; deliveries are drained by the
 * actor shell after it has replied, so a client always sees its reply before the watch events
 * its own write caused.
 */
import type {
  ActorId,
  ApiCreate,
  ApiDelete,
  ApiGet,
  ApiList,
  ApiPatch,
  ApiRequest,
  ApiResult,
  ApiUpdate,
  ApiWatch,
  ApiWatchEvent,
  Clock,
  DeleteOptions,
  Deployment,
  Eviction,
  DaemonSet,
  Job,
  KubeObject,
  Namespace,
  Pod,
  PodDisruptionBudget,
  ReplicaSet,
  ResourceName,
  Scale,
  StatefulSet,
  Service,
  Status,
} from '@podsim/api';
import { DEFAULT_EPOCH_UNIX_SECONDS, Clock as ClockClass } from '@podsim/api';
import { decodeDeleteOptions, decodeTypedCopy } from './decode.js';
import { admitDefaultTolerationSeconds, admitPodCreate, setDefaultsDeployment, setDefaultsNamespace, setDefaultsPod, setDefaultsReplicaSet } from './defaults.js';
import {
  field,
  isStatus,
  newBadRequest,
  newInvalid,
  newForbidden,
  newMethodNotSupported,
  newNotFound,
  newResourceExpired,
  newTooLargeResourceVersionError,
  successStatus,
} from './errors.js';
import { deepClone, isPlainObject } from './objects.js';
import { type PatchKind, MERGE_KEYS, applyPatch, isPatchError } from './patch.js';
import { applyOwnership, droppedByApply, removeFields, updateOwnership } from './fieldManager.js';
import { toTable } from './printers.js';
import { createBinding } from './registry/podBinding.js';
import { createEviction } from './registry/podEviction.js';
import { deploymentStatusStrategy, deploymentStrategy } from './registry/deploymentStrategy.js';
import { eventStrategy } from './registry/eventStrategy.js';
import { deleteNamespace, shouldDeleteNamespaceDuringUpdate } from './registry/namespaceRest.js';
import { namespaceFinalizeStrategy, namespaceStatusStrategy, namespaceStrategy } from './registry/namespaceStrategy.js';
import { leaseStrategy } from './registry/leaseStrategy.js';
import { nodeStatusStrategy, nodeStrategy } from './registry/nodeStrategy.js';
import { podDisruptionBudgetStatusStrategy, podDisruptionBudgetStrategy } from './registry/podDisruptionBudgetStrategy.js';
import { podStatusStrategy, podStrategy } from './registry/podStrategy.js';
import { replicaSetStatusStrategy, replicaSetStrategy } from './registry/replicaSetStrategy.js';
import { jobStatusStrategy, jobStrategy, setDefaultsJob } from './registry/jobStrategy.js';
import { daemonSetStatusStrategy, daemonSetStrategy, setDefaultsDaemonSet } from './registry/daemonSetStrategy.js';
import { scaleFrom, updateScale } from './registry/scale.js';
import {
  controllerRevisionStrategy,
  persistentVolumeClaimStatusStrategy,
  persistentVolumeClaimStrategy,
  setDefaultsStatefulSet,
  statefulSetStatusStrategy,
  statefulSetStrategy,
} from './registry/statefulSetStrategy.js';
import { endpointSliceStrategy, endpointsStrategy, serviceStrategy, setDefaultsService } from './registry/serviceStrategy.js';
import { Store, type StoreOptions } from './registry/store.js';
import type { RESTStrategy, RequestContext } from './registry/strategy.js';
import { checkFieldLabels, parseFieldSelector, type ParsedFieldSelector } from './selectors/fields.js';
import { type ParsedLabelSelector, parseLabelSelector } from '@podsim/api';
import type { StorageEvent } from './storage/interfaces.js';
import { DEFAULT_HISTORY_SIZE, MemoryStorage, keyPrefix } from './storage/memoryStorage.js';
import { Cacher, type WatchDelivery, type Watcher } from './watch/cacher.js';

/** Plain-data configuration of the apiserver (the actor's `config`). */
export interface ApiServerConfig {
  /** Events kept for watch-from-resourceVersion (410 Expired beyond). Default 10,000. */
  readonly historySize?: number;
  /**
   * Namespaces that exist at start. Default `['default', 'kube-node-lease', 'kube-system']`, then
   * `kube-public` (see {@link ApiServer.bootstrap}).
   */
  readonly namespaces?: readonly string[];
  /**
   * Virtual µs each request occupies the (single) request processor; 0 = answer instantly.
   * Requests queue FIFO behind each other. Default 0.
   */
  readonly serviceTimeUs?: number;
  /** Trace `api.write` / `api.request` (default true; the kinds can also be filtered by the run). */
  readonly trace?: boolean;
  /**
   * Deep-freeze stored objects (default false): objects in replies and watch events are the
   * stored ones, shared by reference inside a thread, so a client that mutates one would corrupt
   * the store; with this on it throws instead. For tests.
   */
  readonly freezeObjects?: boolean;
  /**
   * `--event-ttl` in virtual seconds (default 3600): an Event is deleted this long after its
   * last write (etcd's lease, renewed by each write through the event registry's TTLFunc).
   */
  readonly eventTtlSeconds?: number;
}

/** kube-apiserver's default `--event-ttl` (1 h). */
export const DEFAULT_EVENT_TTL_SECONDS = 3600;

/** A resource the server serves. */
interface ResourceEntry {
  readonly name: ResourceName;
  readonly store: Store;
  readonly statusStore?: Store;
  /** `namespaces/{name}/finalize` (FinalizeREST: PUT only). */
  readonly finalizeStore?: Store;
  readonly scalable: boolean;
  readonly defaults?: (obj: KubeObject) => void;
}

/** What the shell observes of each committed write (for `api.write`). */
export type WriteObserver = (ev: StorageEvent, resource: ResourceName) => void;

/**
 * NamespaceLifecycle's immortal namespaces (`metav1.NamespaceDefault`, `NamespaceSystem`,
 * `NamespacePublic`): a DELETE of one is 403 Forbidden.
 */
export const IMMORTAL_NAMESPACES: ReadonlySet<string> = new Set(['default', 'kube-system', 'kube-public']);

const KIND_OF_PREFIX: Record<string, ResourceName> = {
  pods: 'pods',
  minions: 'nodes',
  namespaces: 'namespaces',
  events: 'events',
  replicasets: 'replicasets',
  deployments: 'deployments',
  poddisruptionbudgets: 'poddisruptionbudgets',
  jobs: 'jobs',
  daemonsets: 'daemonsets',
  statefulsets: 'statefulsets',
  controllerrevisions: 'controllerrevisions',
  persistentvolumeclaims: 'persistentvolumeclaims',
  services: 'services',
  endpoints: 'endpoints',
  endpointslices: 'endpointslices',
  leases: 'leases',
};

function notFoundResource(): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', code: 404 };
}

/**
 * fieldmanager's Update operation on a non-apply write: `obj`'s managedFields get `manager`'s
 * `operation: Update` entry for the fields that changed from `live` (none for a create).
 */
function recordUpdateManager(e: ResourceEntry, live: KubeObject | undefined, obj: KubeObject, manager: string, rctx: RequestContext): void {
  obj.metadata.managedFields = updateOwnership(live, obj, manager, e.store.opts.apiVersion, rctx.clock.format(rctx.now), MERGE_KEYS) as NonNullable<KubeObject['metadata']['managedFields']>;
}

function result(code: number, body: ApiResult['body']): ApiResult {
  return { type: 'ApiResult', code, body };
}

function fail(st: Status): ApiResult {
  return result(st.code, st);
}

export class ApiServer {
  readonly storage: MemoryStorage;
  readonly cacher = new Cacher();
  readonly clock: Clock;
  private readonly resources = new Map<ResourceName, ResourceEntry>();
  private outbox: WatchDelivery[] = [];
  /** Virtual µs of the request being handled (watch Tables are printed at this time). */
  private now = 0;
  private observer: WriteObserver | undefined;
  /** Event writes in time order: (expiry µs, key, rv of that write). The TTL is constant, so FIFO. */
  private readonly eventExpiries: Array<{ atUs: number; key: string; rv: number }> = [];
  private eventExpiryHead = 0;
  private readonly eventTtlUs: number;

  constructor(
    readonly config: ApiServerConfig = {},
    epochUnixSeconds: number = DEFAULT_EPOCH_UNIX_SECONDS,
  ) {
    this.clock = new ClockClass(epochUnixSeconds);
    this.eventTtlUs = (config.eventTtlSeconds ?? DEFAULT_EVENT_TTL_SECONDS) * 1_000_000;
    this.storage = new MemoryStorage(config.historySize ?? DEFAULT_HISTORY_SIZE, config.freezeObjects ?? false);
    this.storage.onEvent((ev) => this.onStorageEvent(ev));
    const mk = <T extends KubeObject>(o: Omit<StoreOptions<T>, 'enableGarbageCollection'>) =>
      new Store<T>(this.storage, { ...o, enableGarbageCollection: true }) as unknown as Store;
    const core = (resource: string, kind: string, keyPrefix: string, strategy: RESTStrategy, returnDeletedObject: boolean) =>
      mk({ resource: { group: '', resource }, kind, apiVersion: 'v1', listKind: `${kind}List`, keyPrefix, strategy, returnDeletedObject });
    const apps = (resource: string, kind: string, strategy: RESTStrategy) =>
      mk({ resource: { group: 'apps', resource }, kind, apiVersion: 'apps/v1', listKind: `${kind}List`, keyPrefix: `/registry/${resource}`, strategy, returnDeletedObject: false });
    const add = (e: ResourceEntry) => this.resources.set(e.name, e);
    add({
      name: 'pods',
      store: core('pods', 'Pod', '/registry/pods', podStrategy as RESTStrategy, true),
      statusStore: core('pods', 'Pod', '/registry/pods', podStatusStrategy as RESTStrategy, true),
      scalable: false,
      defaults: (o) => setDefaultsPod(o as Pod),
    });
    add({
      name: 'nodes',
      store: core('nodes', 'Node', '/registry/minions', nodeStrategy as RESTStrategy, false),
      statusStore: core('nodes', 'Node', '/registry/minions', nodeStatusStrategy as RESTStrategy, false),
      scalable: false,
    });
    const nsStore = (strategy: RESTStrategy) =>
      new Store(this.storage, {
        resource: { group: '', resource: 'namespaces' },
        kind: 'Namespace',
        apiVersion: 'v1',
        listKind: 'NamespaceList',
        keyPrefix: '/registry/namespaces',
        strategy,
        returnDeletedObject: true,
        enableGarbageCollection: true,
        shouldDeleteDuringUpdate: shouldDeleteNamespaceDuringUpdate,
      });
    add({
      name: 'namespaces',
      store: nsStore(namespaceStrategy as RESTStrategy),
      statusStore: nsStore(namespaceStatusStrategy as RESTStrategy),
      finalizeStore: nsStore(namespaceFinalizeStrategy as RESTStrategy),
      scalable: false,
      defaults: (o) => setDefaultsNamespace(o as Namespace),
    });
    add({ name: 'events', store: core('events', 'Event', '/registry/events', eventStrategy as RESTStrategy, false), scalable: false });
    add({
      name: 'replicasets',
      store: apps('replicasets', 'ReplicaSet', replicaSetStrategy as RESTStrategy),
      statusStore: apps('replicasets', 'ReplicaSet', replicaSetStatusStrategy as RESTStrategy),
      scalable: true,
      defaults: (o) => setDefaultsReplicaSet(o as ReplicaSet),
    });
    add({
      name: 'deployments',
      store: apps('deployments', 'Deployment', deploymentStrategy as RESTStrategy),
      statusStore: apps('deployments', 'Deployment', deploymentStatusStrategy as RESTStrategy),
      scalable: true,
      defaults: (o) => setDefaultsDeployment(o as Deployment),
    });
    add({
      name: 'daemonsets',
      store: apps('daemonsets', 'DaemonSet', daemonSetStrategy as RESTStrategy),
      statusStore: apps('daemonsets', 'DaemonSet', daemonSetStatusStrategy as RESTStrategy),
      scalable: false,
      defaults: (o) => setDefaultsDaemonSet(o as DaemonSet),
    });
    const batch = (strategy: RESTStrategy) =>
      mk({ resource: { group: 'batch', resource: 'jobs' }, kind: 'Job', apiVersion: 'batch/v1', listKind: 'JobList', keyPrefix: '/registry/jobs', strategy, returnDeletedObject: false });
    add({ name: 'jobs', store: batch(jobStrategy as RESTStrategy), statusStore: batch(jobStatusStrategy as RESTStrategy), scalable: false, defaults: (o) => setDefaultsJob(o as Job) });
    const policy = (strategy: RESTStrategy) =>
      mk({
        resource: { group: 'policy', resource: 'poddisruptionbudgets' },
        kind: 'PodDisruptionBudget',
        apiVersion: 'policy/v1',
        listKind: 'PodDisruptionBudgetList',
        keyPrefix: '/registry/poddisruptionbudgets',
        strategy,
        returnDeletedObject: false,
      });
    add({
      name: 'poddisruptionbudgets',
      store: policy(podDisruptionBudgetStrategy as RESTStrategy),
      statusStore: policy(podDisruptionBudgetStatusStrategy as RESTStrategy),
      scalable: false,
    });
    add({
      name: 'leases',
      store: mk({
        resource: { group: 'coordination.k8s.io', resource: 'leases' },
        kind: 'Lease',
        apiVersion: 'coordination.k8s.io/v1',
        listKind: 'LeaseList',
        keyPrefix: '/registry/leases',
        strategy: leaseStrategy as RESTStrategy,
        returnDeletedObject: false,
      }),
      scalable: false,
    });
    add({
      name: 'statefulsets',
      store: apps('statefulsets', 'StatefulSet', statefulSetStrategy as RESTStrategy),
      statusStore: apps('statefulsets', 'StatefulSet', statefulSetStatusStrategy as RESTStrategy),
      scalable: true,
      defaults: (o) => setDefaultsStatefulSet(o as StatefulSet),
    });
    add({ name: 'controllerrevisions', store: apps('controllerrevisions', 'ControllerRevision', controllerRevisionStrategy as RESTStrategy), scalable: false });
    add({
      name: 'persistentvolumeclaims',
      store: core('persistentvolumeclaims', 'PersistentVolumeClaim', '/registry/persistentvolumeclaims', persistentVolumeClaimStrategy as RESTStrategy, false),
      statusStore: core('persistentvolumeclaims', 'PersistentVolumeClaim', '/registry/persistentvolumeclaims', persistentVolumeClaimStatusStrategy as RESTStrategy, false),
      scalable: false,
    });
    this.addServiceResources(core, mk);
  }

  /** v1 services (+ status) and endpoints, discovery.k8s.io/v1 endpointslices (registry/serviceStrategy.ts). */
  private addServiceResources(
    core: (resource: string, kind: string, keyPrefix: string, strategy: RESTStrategy, returnDeletedObject: boolean) => Store,
    mk: <T extends KubeObject>(o: Omit<StoreOptions<T>, 'enableGarbageCollection'>) => Store,
  ): void {
    const svc = serviceStrategy(() => this.storage.list('/registry/services/')) as RESTStrategy;
    const svcStatus: RESTStrategy = { ...svc, prepareForCreate() {}, prepareForUpdate: (o, old) => void ((o as Service).spec = (old as Service).spec) } as RESTStrategy;
    this.resources.set('services', {
      name: 'services',
      store: core('services', 'Service', '/registry/services', svc, false),
      statusStore: core('services', 'Service', '/registry/services', svcStatus, false),
      scalable: false,
      defaults: (o) => setDefaultsService(o as Service),
    });
    this.resources.set('endpoints', { name: 'endpoints', store: core('endpoints', 'Endpoints', '/registry/endpoints', endpointsStrategy as RESTStrategy, false), scalable: false });
    this.resources.set('endpointslices', {
      name: 'endpointslices',
      store: mk({
        resource: { group: 'discovery.k8s.io', resource: 'endpointslices' },
        kind: 'EndpointSlice',
        apiVersion: 'discovery.k8s.io/v1',
        listKind: 'EndpointSliceList',
        keyPrefix: '/registry/endpointslices',
        strategy: endpointSliceStrategy as RESTStrategy,
        returnDeletedObject: false,
      }),
      scalable: false,
    });
  }

  /** Observe every committed write (the shell traces `api.write`). */
  onWrite(observer: WriteObserver): void {
    this.observer = observer;
  }

  /**
   * Creates the configured namespaces (call once, at start), as the bootstrap controller's
   * `createNamespaceIfNeeded` has them on a v1.22 cluster (SystemNamespaces: kube-system,
   * kube-public, kube-node-lease, plus default). `kube-public` came later to podsim: it is
   * created last, with its uid from `laterUuid` (a stream of its own) when given, so that it does
   * not shift the uids and generated names of every later object.
   */
  bootstrap(rctx: RequestContext, laterUuid?: () => string): void {
    const create = (ctx: RequestContext, ns: string) => {
      const r = this.resources.get('namespaces')!.store.create(ctx, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      if (isStatus(r)) throw new Error(`bootstrap namespace ${ns}: ${r.message}`);
    };
    for (const ns of this.config.namespaces ?? ['default', 'kube-node-lease', 'kube-system']) create(rctx, ns);
    if (this.config.namespaces === undefined) create(laterUuid ? { ...rctx, uuid: laterUuid } : rctx, 'kube-public');
    this.outbox = [];
  }

  /** Removes and returns the watch deliveries queued since the last drain. */
  drain(): WatchDelivery[] {
    const o = this.outbox;
    this.outbox = [];
    return o;
  }

  /** Number of registered watches. */
  get watchCount(): number {
    return this.cacher.size;
  }

  private onStorageEvent(ev: StorageEvent): void {
    const resource = KIND_OF_PREFIX[ev.prefix];
    if (!resource) throw new Error(`storage event for unknown prefix ${ev.prefix}`);
    this.observer?.(ev, resource);
    if (resource === 'events' && ev.type !== 'DELETED') this.eventExpiries.push({ atUs: this.now + this.eventTtlUs, key: ev.key, rv: ev.rv });
    if (this.cacher.size > 0) for (const d of this.cacher.dispatch(ev, resource, this.now, this.clock)) this.outbox.push(d);
  }

  /** Handles one request from `client` at `rctx.now`. */
  handle(req: ApiRequest, client: ActorId, rctx: RequestContext): ApiResult {
    this.now = rctx.now;
    this.expireEvents();
    switch (req.type) {
      case 'ApiGet':
        return this.get(req, rctx);
      case 'ApiList':
        return this.list(req);
      case 'ApiCreate':
        return this.create(req, rctx);
      case 'ApiUpdate':
        return this.update(req, rctx);
      case 'ApiPatch':
        return this.patch(req, rctx);
      case 'ApiDelete':
        return this.delete(req, rctx);
      case 'ApiWatch':
        return this.watch(req, client);
      case 'ApiUnwatch':
        this.cacher.remove(client, req.watchId);
        return result(200, successStatus(200));
      default:
        return fail(newBadRequest(`unknown request type ${JSON.stringify((req as { type?: unknown }).type)}`));
    }
  }

  /**
   * Deletes the Events whose TTL has passed by now (etcd expires the lease; watchers see
   * DELETED). Checked when a request arrives, so an expiry lands at the first request after its
   * due time — every list or get sees only live Events.
   */
  private expireEvents(): void {
    const q = this.eventExpiries;
    while (this.eventExpiryHead < q.length && q[this.eventExpiryHead].atUs <= this.now) {
      const { key, rv } = q[this.eventExpiryHead++];
      const cur = this.storage.get(key);
      // A later write renewed the lease: its own entry comes later in the queue.
      if (cur && Number(cur.metadata.resourceVersion) === rv) this.storage.delete(key, undefined, undefined);
    }
    if (this.eventExpiryHead > 1024 && this.eventExpiryHead * 2 > q.length) {
      q.splice(0, this.eventExpiryHead);
      this.eventExpiryHead = 0;
    }
  }

  private entry(resource: ResourceName): ResourceEntry | undefined {
    return this.resources.get(resource);
  }

  /** The request context with the request's namespace (cluster-scoped resources ignore it). */
  private scoped(rctx: RequestContext, e: ResourceEntry, namespace: string | undefined): RequestContext {
    const ns = e.store.strategy.namespaceScoped ? namespace : undefined;
    if (ns === rctx.namespace) return rctx;
    // The fields named one by one: V8 spreads an object of closures on its slow path (~0.5 µs,
    // against ~20 ns for the literal), once per request.
    // `satisfies`: a field added to RequestContext must be named here too.
    return { now: rctx.now, clock: rctx.clock, newId: rctx.newId, uuid: rctx.uuid, eventUuid: rctx.eventUuid, namespace: ns } satisfies Record<keyof RequestContext, unknown>;
  }

  // ---- get / list -------------------------------------------------------------------------------

  private get(req: ApiGet, rctx0: RequestContext): ApiResult {
    const e = this.entry(req.resource);
    if (!e) return fail(notFoundResource());
    const rctx = this.scoped(rctx0, e, req.namespace);
    if (req.subresource === 'binding') return fail(newMethodNotSupported({ group: '', resource: 'pods/binding' }, 'get'));
    if (req.subresource === 'finalize') return fail(e.finalizeStore ? newMethodNotSupported({ group: '', resource: 'namespaces/finalize' }, 'get') : notFoundResource());
    if (req.subresource === 'scale' && !e.scalable) return fail(notFoundResource());
    if (req.subresource === 'status' && !e.statusStore) return fail(notFoundResource());
    const obj = e.store.get(rctx, req.name);
    if (isStatus(obj)) return fail(obj);
    if (req.subresource === 'scale') {
      const s = scaleFrom(obj as Deployment);
      return isStatus(s) ? fail(s) : result(200, s);
    }
    if (req.asTable) {
      return result(200, toTable(req.resource, [obj], obj.metadata.resourceVersion ?? '', rctx.now, this.clock, { wide: req.wide, includeObject: req.includeObject }));
    }
    return result(200, obj);
  }

  private selectors(resource: ResourceName, labelSelector?: string, fieldSelector?: string): { label: ParsedLabelSelector; fields: ParsedFieldSelector } | Status {
    const label = parseLabelSelector(labelSelector ?? '');
    if ('error' in label) return newBadRequest(label.error);
    const fields = parseFieldSelector(fieldSelector ?? '');
    if ('error' in fields) return newBadRequest(fields.error);
    const unsupported = checkFieldLabels(resource, fields);
    if (unsupported) return newBadRequest(unsupported);
    return { label, fields };
  }

  private list(req: ApiList): ApiResult {
    const e = this.entry(req.resource);
    if (!e) return fail(notFoundResource());
    const sel = this.selectors(req.resource, req.labelSelector, req.fieldSelector);
    if (isStatus(sel)) return fail(sel);
    const ns = e.store.strategy.namespaceScoped ? req.namespace : undefined;
    const list = e.store.list(ns, sel.label, sel.fields);
    if (req.asTable) {
      return result(200, toTable(req.resource, list.items, list.metadata.resourceVersion ?? '', this.now, this.clock, { wide: req.wide, includeObject: req.includeObject }));
    }
    return result(200, list);
  }

  // ---- create -----------------------------------------------------------------------------------

  /**
   * The decoded request body: a private copy, type-checked against the kind's Go struct
   * (`decode.ts`: 400, or 422 on field `patch` for a patched object), with defaults applied
   * (what the decoder does).
   */
  private decode(e: ResourceEntry, obj: unknown, mode: 'body' | 'patch' = 'body', name?: string, storedSpec?: object): KubeObject | Status {
    if (!isPlainObject(obj)) return newBadRequest('the body of the request was in an unknown format - accepted media types include: application/json, application/yaml');
    const { kind, apiVersion, resource } = e.store.opts;
    const keep = storedSpec ? { key: 'spec', value: storedSpec } : undefined;
    const d = decodeTypedCopy(obj, kind, apiVersion.split('/').pop()!, mode, { group: resource.group, kind }, name, keep);
    if (d.status) return d.status;
    const o = d.object as unknown as KubeObject & { spec?: unknown };
    if (!isPlainObject(o.metadata)) o.metadata = {};
    if (storedSpec !== undefined && o.spec === storedSpec) {
      // The stored spec, shared: the defaults must not write into it. They have nothing to do on
      // it (it was defaulted when it was written) and the strategy drops it for the stored one.
      o.spec = undefined;
      e.defaults?.(o);
      o.spec = storedSpec;
    } else e.defaults?.(o);
    return o;
  }

  /** A private, type-checked copy of a subresource body (`Binding`, `Scale`). */
  private decodeSub(obj: unknown, kind: 'Binding' | 'Scale' | 'Eviction', mode: 'body' | 'patch' = 'body', name?: string): KubeObject | Status {
    if (!isPlainObject(obj)) return newBadRequest('the body of the request was in an unknown format - accepted media types include: application/json, application/yaml');
    const gk = { group: kind === 'Scale' ? 'autoscaling' : kind === 'Eviction' ? 'policy' : '', kind };
    const d = decodeTypedCopy(obj, kind, 'v1', mode, gk, name);
    return d.status ?? (d.object as unknown as KubeObject);
  }

  /**
   * NamespaceLifecycle admission of a create (k8s.io/apiserver v0.22.8
   * `plugin/namespace/lifecycle` `Admit`): only into an existing namespace (404 NotFound of the
   * namespace) whose phase is not Terminating (403 Forbidden with cause `NamespaceTerminating`,
   * named after the object as `admission.NewForbidden` names it: its name, else its
   * generateName). Subresource creates (pods/binding, pods/eviction) are admitted alike. The informer cache
   * and its live-lookup fallback are the storage itself here.
   */
  private admitNamespace(e: ResourceEntry, rctx: RequestContext, obj: KubeObject | undefined, name?: string): Status | undefined {
    if (!e.store.strategy.namespaceScoped) return undefined;
    if (!rctx.namespace) return newBadRequest('Namespace parameter required.');
    const ns = this.storage.get(`/registry/namespaces/${rctx.namespace}`) as Namespace | undefined;
    if (!ns) return newNotFound({ group: '', resource: 'namespaces' }, rctx.namespace);
    if (ns.status?.phase !== 'Terminating') return undefined;
    const objName = name || obj?.metadata.name || obj?.metadata.generateName || 'Unknown';
    const st = newForbidden(e.store.opts.resource, objName, `unable to create new content in namespace ${rctx.namespace} because it is being terminated`);
    st.details = { ...st.details, causes: [{ reason: 'NamespaceTerminating', message: `namespace ${rctx.namespace} is being terminated`, field: 'metadata.namespace' }] };
    return st;
  }

  private create(req: ApiCreate, rctx0: RequestContext): ApiResult {
    const e = this.entry(req.resource);
    if (!e) return fail(notFoundResource());
    const rctx = this.scoped(rctx0, e, req.namespace);
    if (req.subresource === 'binding') {
      if (req.resource !== 'pods' || !req.name) return fail(notFoundResource());
      const binding = this.decodeSub(req.object, 'Binding');
      if (isStatus(binding)) return fail(binding);
      const admBinding = this.admitNamespace(e, rctx, binding, req.name);
      if (admBinding) return fail(admBinding);
      const st = createBinding(e.store as unknown as Store<Pod>, rctx, req.name, binding, req.dryRun);
      return result(st.code, st);
    }
    if (req.subresource === 'eviction') {
      if (req.resource !== 'pods' || !req.name) return fail(notFoundResource());
      const eviction = this.decodeSub(req.object, 'Eviction');
      if (isStatus(eviction)) return fail(eviction);
      const admEviction = this.admitNamespace(e, rctx, eviction, req.name);
      if (admEviction) return fail(admEviction);
      const pdbs = this.resources.get('poddisruptionbudgets')!.statusStore as unknown as Store<PodDisruptionBudget>;
      const st = createEviction(e.store as unknown as Store<Pod>, pdbs, rctx, req.name, eviction as Eviction, req.dryRun);
      return result(st.code, st);
    }
    if (req.subresource) return fail(newMethodNotSupported({ group: '', resource: `${req.resource}/${req.subresource}` }, 'create'));
    const obj = this.decode(e, req.object);
    if (isStatus(obj)) return fail(obj);
    const adm = this.admitNamespace(e, rctx, obj);
    if (adm) return fail(adm);
    if (req.resource === 'pods') admitPodCreate(obj as Pod);
    // fieldmanager Update: a create names its manager's fields (fieldManager.ts).
    if (req.fieldManager) recordUpdateManager(e, undefined, obj, req.fieldManager, rctx);
    const out = e.store.create(rctx, obj, req.dryRun, true);
    return isStatus(out) ? fail(out) : result(201, out);
  }

  // ---- update / patch ---------------------------------------------------------------------------

  /** `checkName`: the body's name and namespace must match the URL's (filled in when empty). */
  private checkName(obj: KubeObject, name: string, rctx: RequestContext): Status | undefined {
    if (obj.metadata.name && obj.metadata.name !== name) {
      return newBadRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
    }
    obj.metadata.name = name;
    if (rctx.namespace && obj.metadata.namespace && obj.metadata.namespace !== rctx.namespace) {
      return newBadRequest(`the namespace of the object (${obj.metadata.namespace}) does not match the namespace on the request (${rctx.namespace})`);
    }
    return undefined;
  }

  private storeFor(e: ResourceEntry, subresource: string | undefined): Store | Status {
    if (!subresource) return e.store;
    if (subresource === 'status' && e.statusStore) return e.statusStore;
    if (subresource === 'finalize' && e.finalizeStore) return e.finalizeStore;
    return notFoundResource();
  }

  private update(req: ApiUpdate, rctx0: RequestContext): ApiResult {
    const e = this.entry(req.resource);
    if (!e) return fail(notFoundResource());
    const rctx = this.scoped(rctx0, e, req.namespace);
    if (req.subresource === 'scale' && e.scalable) {
      const body = this.decodeSub(req.object, 'Scale');
      if (isStatus(body)) return fail(body);
      const s = updateScale(e.store as unknown as Store<Deployment | ReplicaSet>, rctx, req.name, () => body, req.dryRun);
      return isStatus(s) ? fail(s) : result(200, s);
    }
    const store = this.storeFor(e, req.subresource);
    if (isStatus(store)) return fail(store);
    const obj = this.decode(e, req.object);
    if (isStatus(obj)) return fail(obj);
    const bad = this.checkName(obj, req.name, rctx);
    if (bad) return fail(bad);
    // Mutating admission on UPDATE: DefaultTolerationSeconds (pods proper, not subresources).
    if (req.resource === 'pods' && !req.subresource) admitDefaultTolerationSeconds(obj as Pod);
    // defaultUpdatedObjectInfo.Preconditions: the body's UID is a storage precondition.
    const uid = obj.metadata.uid;
    // The update function runs once (storage calls are synchronous), so it may hand over `obj`.
    const manager = req.subresource ? undefined : req.fieldManager;
    const updatedObject = (existing: KubeObject) => {
      if (manager) recordUpdateManager(e, existing, obj, manager, rctx);
      return obj;
    };
    const res = store.update(rctx, req.name, { preconditions: uid ? { uid } : undefined, updatedObject }, req.dryRun);
    if (isStatus(res)) return fail(res);
    return result(res.created ? 201 : 200, res.object);
  }

  private patch(req: ApiPatch, rctx0: RequestContext): ApiResult {
    const e = this.entry(req.resource);
    if (!e) return fail(notFoundResource());
    const rctx = this.scoped(rctx0, e, req.namespace);
    const kind = req.patchType as PatchKind;
    if (req.subresource === 'scale' && e.scalable) {
      const s = updateScale(
        e.store as unknown as Store<Deployment | ReplicaSet>,
        rctx,
        req.name,
        (oldScale) => {
          const patched = this.applyPatchTo(kind, oldScale, req.patch, req.name, rctx);
          return isStatus(patched) ? patched : this.decodeSub(patched, 'Scale', 'patch', req.name);
        },
        req.dryRun,
      );
      return isStatus(s) ? fail(s) : result(200, s as Scale);
    }
    // FinalizeREST is an Updater only: no PATCH.
    if (req.subresource === 'finalize' && e.finalizeStore) return fail(newMethodNotSupported({ group: '', resource: 'namespaces/finalize' }, 'patch'));
    const store = this.storeFor(e, req.subresource);
    if (isStatus(store)) return fail(store);
    // Server-side apply's field ownership (fieldManager.ts): a manager is required.
    const manager = req.fieldManager;
    // ValidatePatchOptions: kubectl defaults it to "kubectl"; other clients must set it.
    if (kind === 'apply' && !manager) return fail(newInvalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', [field.required('fieldManager', 'is required for apply patch')]));
    const own = (live: KubeObject | undefined, obj: KubeObject): Status | undefined => {
      if (req.subresource) return undefined;
      if (kind !== 'apply') {
        if (manager && live) recordUpdateManager(e, live, obj, manager, rctx);
        return undefined;
      }
      const mf = applyOwnership(live, req.patch, manager!, req.force ?? false, e.store.opts.apiVersion, rctx.clock.format(rctx.now), MERGE_KEYS);
      if (isStatus(mf)) return mf;
      obj.metadata.managedFields = mf as NonNullable<KubeObject['metadata']['managedFields']>;
      return undefined;
    };
    // Server-side apply of an object that does not exist yet creates it.
    if (kind === 'apply' && !req.subresource) {
      const key = store.keyFunc(rctx, req.name);
      if (typeof key !== 'string') return fail(key);
      if (!this.storage.get(key)) {
        const obj = this.decode(e, req.patch);
        if (isStatus(obj)) return fail(obj);
        const bad = this.checkName(obj, req.name, rctx);
        if (bad) return fail(bad);
        const adm = this.admitNamespace(e, rctx, obj, req.name);
        if (adm) return fail(adm);
        if (req.resource === 'pods') admitPodCreate(obj as Pod);
        const conflict = own(undefined, obj);
        if (conflict) return fail(conflict);
        const out = store.create(rctx, obj, req.dryRun, true);
        return isStatus(out) ? fail(out) : result(201, out);
      }
    }
    const res = store.update(
      rctx,
      req.name,
      {
        updatedObject: (existing) => {
          // patcher.applyPatch: make sure we actually have a persisted currentObject.
          if (!existing.metadata.uid) return newNotFound(e.store.opts.resource, req.name);
          const patched = this.applyPatchTo(kind, existing, req.patch, req.name, rctx);
          // Fields this applier set before and no longer applies, owned by no one else, go (Updater.prune).
          if (kind === 'apply' && !req.subresource && !isStatus(patched)) removeFields(patched, droppedByApply(existing, req.patch, manager!, MERGE_KEYS));
          // A status patch that left the spec alone: the status strategy replaces the decoded
          // spec by the stored one (`specFromStored`), so the decoder need not copy it.
          const keepSpec =
            store.strategy.specFromStored && !isStatus(patched) && isPlainObject(patched) && isPlainObject((existing as { spec?: unknown }).spec) && patched.spec === (existing as { spec?: unknown }).spec
              ? ((existing as { spec?: unknown }).spec as object)
              : undefined;
          const decoded = isStatus(patched) ? patched : this.decode(e, patched, 'patch', req.name, keepSpec);
          if (isStatus(decoded)) return decoded;
          // Mutating admission on UPDATE: DefaultTolerationSeconds (pods proper, not subresources).
          if (req.resource === 'pods' && !req.subresource) admitDefaultTolerationSeconds(decoded as Pod);
          return own(existing, decoded) ?? decoded;
        },
      },
      req.dryRun,
    );
    if (isStatus(res)) return fail(res);
    return result(res.created ? 201 : 200, res.object);
  }

  /** `patcher.applyPatch`: the patched object (JSON), checked against the URL's name. */
  private applyPatchTo(kind: PatchKind, current: KubeObject, patch: unknown, name: string, rctx: RequestContext): unknown {
    const out = applyPatch(kind, current, patch);
    if (isPatchError(out)) {
      if (out.code === 400) return newBadRequest(out.patchError);
      // ErrorToAPIStatus of an error that is no APIStatus: 500, StatusReasonUnknown (no reason).
      if (out.code === 500) return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: out.patchError, code: 500 } satisfies Status;
      return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: out.patchError, reason: 'Invalid', code: 422 } satisfies Status;
    }
    if (!isPlainObject(out)) return newBadRequest('the patched object is not an object');
    const meta = (out.metadata ?? {}) as KubeObject['metadata'];
    if (meta.name !== undefined && meta.name !== name) {
      return newBadRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    }
    if (rctx.namespace && meta.namespace !== undefined && meta.namespace !== rctx.namespace) {
      return newBadRequest(`the namespace of the object (${meta.namespace}) does not match the namespace on the request (${rctx.namespace})`);
    }
    return out;
  }

  // ---- delete -----------------------------------------------------------------------------------

  private delete(req: ApiDelete, rctx0: RequestContext): ApiResult {
    const e = this.entry(req.resource);
    if (!e) return fail(notFoundResource());
    const rctx = this.scoped(rctx0, e, req.namespace);
    // The HTTP handler always passes options: the body's, or `{}` (a private copy: BeforeDelete writes it).
    const options: DeleteOptions = isPlainObject(req.options) ? deepClone(req.options) : {};
    const bad = decodeDeleteOptions(options);
    if (bad) return fail(bad);
    // NamespaceLifecycle admission: prevent deletion of immortal namespaces.
    if (req.resource === 'namespaces' && IMMORTAL_NAMESPACES.has(req.name)) {
      return fail(newForbidden({ group: '', resource: 'namespaces' }, req.name, 'this namespace may not be deleted'));
    }
    const res = req.resource === 'namespaces' ? deleteNamespace(e.store as unknown as Store<Namespace>, rctx, req.name, options) : e.store.delete(rctx, req.name, options);
    if (isStatus(res)) return fail(res);
    // 202 only when the object was not deleted immediately and the client explicitly set the
    // deprecated orphanDependents=false.
    const code = !res.wasDeleted && options.orphanDependents === false ? 202 : 200;
    return result(code, res.object);
  }

  // ---- watch ------------------------------------------------------------------------------------

  private watch(req: ApiWatch, client: ActorId): ApiResult {
    const e = this.entry(req.resource);
    if (!e) return fail(notFoundResource());
    const sel = this.selectors(req.resource, req.labelSelector, req.fieldSelector);
    if (isStatus(sel)) return fail(sel);
    const rvText = req.resourceVersion ?? '';
    if (rvText !== '' && !/^\d+$/.test(rvText)) return fail(newBadRequest(`invalid resource version: ${JSON.stringify(rvText)}`));
    const rv = rvText === '' ? 0 : Number(rvText);
    const ns = e.store.strategy.namespaceScoped ? req.namespace : undefined;
    const prefix = e.store.listPrefix(ns);
    const w: Watcher = {
      client,
      watchId: req.watchId,
      resource: req.resource,
      storagePrefix: keyPrefix(prefix),
      keyPrefix: prefix,
      namespace: ns,
      label: sel.label,
      fields: sel.fields,
      asTable: req.asTable ?? false,
      wide: req.wide ?? false,
      includeObject: req.includeObject ?? 'Metadata',
    };
    const queue = (body: ApiWatchEvent) => this.outbox.push({ to: [client], body });
    if (rv === 0) {
      // Get State and Start at Most Recent: synthetic ADDED for every current matching object.
      this.cacher.add(w);
      for (const obj of this.storage.list(prefix)) {
        const key = this.keyOf(e, obj);
        if (this.cacher.matchesObject(w, key, obj)) queue(this.cacher.bodyFor(w, 'ADDED', obj, this.now, this.clock));
      }
      return result(200, successStatus(200));
    }
    const hist = this.storage.eventsSince(w.storagePrefix, rv);
    if (!hist.ok && !hist.tooOld) {
      return fail(newTooLargeResourceVersionError(rv, hist.current, 1));
    }
    if (!hist.ok) {
      // The watch cache answers 200 and then one ERROR event (410 Expired); the watch ends.
      this.cacher.remove(client, req.watchId);
      queue(this.cacher.errorFor(w, newResourceExpired(`too old resource version: ${rv} (${hist.oldest})`)));
      return result(200, successStatus(200));
    }
    this.cacher.add(w);
    for (const body of this.cacher.replay(w, hist.events, this.now, this.clock)) queue(body);
    return result(200, successStatus(200));
  }

  private keyOf(e: ResourceEntry, obj: KubeObject): string {
    const p = e.store.opts.keyPrefix;
    return e.store.strategy.namespaceScoped ? `${p}/${obj.metadata.namespace}/${obj.metadata.name}` : `${p}/${obj.metadata.name}`;
  }
}
