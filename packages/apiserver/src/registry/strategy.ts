/**
 * The strategy interfaces of k8s.io/apiserver v0.22.8 `pkg/registry/rest` (RESTCreateStrategy,
 * RESTUpdateStrategy, RESTDeleteStrategy, RESTGracefulDeleteStrategy,
 * GarbageCollectionDeleteStrategy) and the per-request context the registry needs: the virtual
 * clock, seeded ids (`names.SimpleNameGenerator` draws from `ctx.newId`), the request namespace.
 */
import type { Clock, DeleteOptions, KubeObject, Status, VirtualTime } from '@podsim/api';
import { KUBE_NAME_ALPHABET } from '@podsim/api';
import type { FieldError, GroupKind } from '../errors.js';

/** What one request may read from the outside world (all deterministic, from the actor's ctx). */
export interface RequestContext {
  /** Virtual µs of the request. */
  readonly now: VirtualTime;
  readonly clock: Clock;
  /** Seeded id (ctx.newId). */
  newId(size: number, alphabet: string): string;
  /** Seeded UUID (ctx.uuid). */
  uuid(): string;
  /**
   * Seeded UUID for a new Event, from a stream of its own: recording an Event (which upstream
   * does on many paths) then does not shift the uids and generated names of every later object.
   * Falls back to {@link uuid}.
   */
  eventUuid?(): string;
  /** `genericapirequest.NamespaceFrom(ctx)`; undefined for cluster-scoped and all-namespace requests. */
  readonly namespace?: string;
}

/** `rest.GarbageCollectionPolicy`. */
export type GarbageCollectionPolicy = 'DeleteDependents' | 'OrphanDependents' | 'Unsupported' | '';

/** One resource's strategy (create, update, delete), as upstream splits them across interfaces. */
export interface RESTStrategy<T extends KubeObject = KubeObject> {
  readonly namespaceScoped: boolean;
  /** The kind used in Invalid errors (`Pod`, `Deployment.apps`). */
  readonly groupKind: GroupKind;
  /** Clears fields users may not set on create (status, generation = 1, …). */
  prepareForCreate(obj: T, rctx: RequestContext): void;
  /** Clears fields users may not change on update (main resource: status; status subresource: spec). */
  prepareForUpdate(obj: T, old: T): void;
  /**
   * `prepareForUpdate` sets `spec` to the stored object's (the status strategies). A patch that
   * leaves the spec untouched then hands the stored spec to the decoder, which does not copy it.
   */
  readonly specFromStored?: boolean;
  validate(obj: T): FieldError[];
  validateUpdate(obj: T, old: T): FieldError[];
  /**
   * The allocations a resource's REST storage makes after BeforeCreate / BeforeUpdate validated
   * the object (Services: `REST.Create`'s `initNodePorts` and health check node port, `updateNodePorts`
   * on update; `old` is undefined on create). Returns the Status of a refused allocation (422 for a
   * node port already allocated or out of range, 500 for the health check node port, as upstream).
   */
  allocate?(obj: T, rctx: RequestContext, old: T | undefined): Status | undefined;
  /** `Canonicalize`: normalizes the object after validation (namespaces: the name label). */
  canonicalize?(obj: T): void;
  readonly allowCreateOnUpdate: boolean;
  readonly allowUnconditionalUpdate: boolean;
  /** RESTGracefulDeleteStrategy (pods only): may rewrite `options.gracePeriodSeconds`. */
  checkGracefulDelete?(obj: T, options: DeleteOptions): boolean;
  /** GarbageCollectionDeleteStrategy. */
  defaultGarbageCollectionPolicy?(): GarbageCollectionPolicy;
}

/** `names.SimpleNameGenerator.GenerateName`: base (truncated to 58) + 5 chars of KUBE_NAME_ALPHABET. */
export function generateName(base: string, rctx: RequestContext): string {
  const maxGeneratedNameLength = 63 - 5;
  const b = base.length > maxGeneratedNameLength ? base.slice(0, maxGeneratedNameLength) : base;
  return b + rctx.newId(5, KUBE_NAME_ALPHABET);
}
