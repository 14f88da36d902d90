/**
 * The generic create / update / delete hooks of k8s.io/apiserver v0.22.8 `pkg/registry/rest`:
 * `BeforeCreate` (create.go), `BeforeUpdate` (update.go), `BeforeDelete` (delete.go) and
 * apimachinery's `ValidateDeleteOptions`. They mutate the object they are given, which is
 * always the registry's private copy. Steps are in upstream order; errors are metav1.Status.
 */
import type { DeleteOptions, KubeObject, Status } from '@podsim/api';
import { US_PER_SECOND } from '@podsim/api';
import {
  type FieldError,
  field,
  newBadRequest,
  newConflict,
  newInternalError,
  newInvalid,
} from '../errors.js';
import { maxGracePeriodSeconds } from '../decode.js';
import { validateObjectMeta, validateObjectMetaUpdate, validatePathSegmentName } from '../validation.js';
import { type RESTStrategy, type RequestContext, generateName } from './strategy.js';

/** `rest.ValidNamespace`: fills an empty namespace from the request; false on mismatch. */
function validNamespace(rctx: RequestContext, obj: KubeObject): boolean {
  const ns = rctx.namespace;
  if (!obj.metadata.namespace) obj.metadata.namespace = ns;
  return ns !== undefined && ns === obj.metadata.namespace;
}

/**
 * `rest.BeforeCreate`: namespace, clears deletion fields, PrepareForCreate,
 * FillObjectMetaSystemFields (creationTimestamp = now, uid = ctx.uuid), generateName, Validate,
 * then ValidateObjectMeta. Returns a Status on failure.
 */
export function beforeCreate<T extends KubeObject>(strategy: RESTStrategy<T>, rctx: RequestContext, obj: T): Status | undefined {
  const meta = obj.metadata;
  if (strategy.namespaceScoped) {
    if (!validNamespace(rctx, obj)) return newBadRequest('the namespace of the provided object does not match the namespace sent on the request');
  } else if (meta.namespace) {
    delete meta.namespace;
  }
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  strategy.prepareForCreate(obj, rctx);
  // FillObjectMetaSystemFields
  meta.creationTimestamp = rctx.clock.format(rctx.now);
  meta.uid = strategy.groupKind.kind === 'Event' && rctx.eventUuid ? rctx.eventUuid() : rctx.uuid();
  delete meta.selfLink;
  if (meta.generateName && !meta.name) meta.name = generateName(meta.generateName, rctx);
  delete meta.clusterName;
  const errs = strategy.validate(obj);
  if (errs.length > 0) return newInvalid(strategy.groupKind, meta.name ?? '', errs);
  // Custom validation (including name validation) passed. Now run common validation on object
  // meta; this is done after custom validation so that specific error messages are shown first.
  const common = validateObjectMeta(meta, strategy.namespaceScoped, validatePathSegmentName);
  if (common.length > 0) return newInvalid(strategy.groupKind, meta.name ?? '', common);
  const refused = strategy.allocate?.(obj, rctx, undefined);
  if (refused) return refused;
  strategy.canonicalize?.(obj);
  return undefined;
}

/**
 * `rest.BeforeUpdate`: namespace, generation kept from `old`, PrepareForUpdate, uid /
 * creationTimestamp / deletionTimestamp / deletionGracePeriodSeconds carried over, then the
 * common metadata checks and the strategy's ValidateUpdate.
 */
export function beforeUpdate<T extends KubeObject>(strategy: RESTStrategy<T>, rctx: RequestContext, obj: T, old: T): Status | undefined {
  const meta = obj.metadata;
  const oldMeta = old.metadata;
  if (strategy.namespaceScoped) {
    if (!validNamespace(rctx, obj)) return newBadRequest('the namespace of the provided object does not match the namespace sent on the request');
  } else if (meta.namespace) {
    delete meta.namespace;
  }
  // Ensure requests cannot update generation
  if (oldMeta.generation !== undefined) meta.generation = oldMeta.generation;
  else delete meta.generation;
  strategy.prepareForUpdate(obj, old);
  delete meta.clusterName;
  // Use the existing UID if none is provided
  if (!meta.uid) meta.uid = oldMeta.uid;
  // ignore changes to timestamp
  if (oldMeta.creationTimestamp) meta.creationTimestamp = oldMeta.creationTimestamp;
  // an update can never remove/change a deletion timestamp
  if (oldMeta.deletionTimestamp) meta.deletionTimestamp = oldMeta.deletionTimestamp;
  // an update can never remove/change grace period seconds
  if (oldMeta.deletionGracePeriodSeconds !== undefined && meta.deletionGracePeriodSeconds === undefined) {
    meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
  }
  const errs: FieldError[] = [
    ...validateObjectMeta(meta, strategy.namespaceScoped, validatePathSegmentName),
    ...validateObjectMetaUpdate(meta, oldMeta),
  ];
  errs.push(...strategy.validateUpdate(obj, old));
  if (errs.length > 0) return newInvalid(strategy.groupKind, meta.name ?? '', dedupe(errs));
  const refused = strategy.allocate?.(obj, rctx, old);
  if (refused) return refused;
  strategy.canonicalize?.(obj);
  return undefined;
}

function dedupe(errs: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errs.filter((e) => {
    const k = `${e.type}|${e.field}|${e.detail}|${JSON.stringify(e.badValue)}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** apimachinery `ValidateDeleteOptions` (+ `ValidateDryRun`). */
export function validateDeleteOptions(options: DeleteOptions): FieldError[] {
  const errs: FieldError[] = [];
  if (options.orphanDependents !== undefined && options.propagationPolicy !== undefined) {
    errs.push(field.invalid('propagationPolicy', options.propagationPolicy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  const pp = options.propagationPolicy as string | undefined;
  if (pp !== undefined && pp !== 'Foreground' && pp !== 'Background' && pp !== 'Orphan') {
    errs.push(field.notSupported('propagationPolicy', pp, ['Foreground', 'Background', 'Orphan', 'nil']));
  }
  if (options.dryRun && !options.dryRun.every((d) => d === 'All')) errs.push(field.notSupported('dryRun', options.dryRun, ['All']));
  return errs;
}

/** 422 for invalid DeleteOptions (`NewInvalid(GroupKind{meta.k8s.io, DeleteOptions}, "", errs)`). */
export function invalidDeleteOptions(errs: readonly FieldError[]): Status {
  return newInvalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', errs);
}

/** What BeforeDelete decided. */
export interface BeforeDeleteResult {
  /** Write the object's new deletionTimestamp / deletionGracePeriodSeconds first. */
  readonly graceful: boolean;
  /** Already being deleted with an equal or shorter grace: change nothing. */
  readonly gracefulPending: boolean;
}

/**
 * `rest.BeforeDelete` on the fetched copy `obj` (mutated: deletionTimestamp,
 * deletionGracePeriodSeconds, generation) with `options` (mutated: gracePeriodSeconds).
 * Grace only shrinks: a second delete with a longer or equal grace is `gracefulPending`.
 */
export function beforeDelete<T extends KubeObject>(
  strategy: RESTStrategy<T>,
  rctx: RequestContext,
  obj: T,
  options: DeleteOptions,
): BeforeDeleteResult | Status {
  const meta = obj.metadata;
  const errs = validateDeleteOptions(options);
  if (errs.length > 0) return invalidDeleteOptions(errs);
  // Checking the Preconditions here to fail early. They'll be enforced later on when we actually
  // do the deletion, too. Note: upstream names the *kind* here (`on Pod "p"`), not the resource.
  const gr = { group: strategy.groupKind.group, resource: strategy.groupKind.kind };
  const pre = options.preconditions;
  if (pre?.uid !== undefined && pre.uid !== meta.uid) {
    return newConflict(
      gr,
      meta.name ?? '',
      `the UID in the precondition (${pre.uid}) does not match the UID in record (${meta.uid ?? ''}). The object might have been deleted and then recreated`,
    );
  }
  if (pre?.resourceVersion !== undefined && pre.resourceVersion !== meta.resourceVersion) {
    return newConflict(
      gr,
      meta.name ?? '',
      `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${meta.resourceVersion ?? ''}). The object might have been modified`,
    );
  }
  // Negative values will be treated as the value `1s` on the delete path.
  if (options.gracePeriodSeconds !== undefined && options.gracePeriodSeconds < 0) options.gracePeriodSeconds = 1;
  if (meta.deletionGracePeriodSeconds !== undefined && meta.deletionGracePeriodSeconds < 0) meta.deletionGracePeriodSeconds = 1;

  if (!strategy.checkGracefulDelete) {
    // Not deleting gracefully: no point in updating Generation, nothing is written first.
    return { graceful: false, gracefulPending: false };
  }
  // if the object is already being deleted, no need to update generation.
  if (meta.deletionTimestamp) {
    // If we are already being deleted, we may only shorten the deletion grace period. A stored
    // grace of nil or 0 means "delete now" (this also recovers from a failed storage delete).
    if (meta.deletionGracePeriodSeconds === undefined || meta.deletionGracePeriodSeconds === 0) {
      return { graceful: false, gracefulPending: false };
    }
    // only a shorter grace period may be provided by a user
    if (options.gracePeriodSeconds !== undefined) {
      const period = options.gracePeriodSeconds;
      if (period >= meta.deletionGracePeriodSeconds) return { graceful: false, gracefulPending: true };
      const old = rctx.clock.parse(meta.deletionTimestamp);
      if (old === undefined) return newInternalError(`invalid deletionTimestamp ${JSON.stringify(meta.deletionTimestamp)}`);
      meta.deletionTimestamp = rctx.clock.format(old - meta.deletionGracePeriodSeconds * US_PER_SECOND + period * US_PER_SECOND);
      meta.deletionGracePeriodSeconds = period;
      return { graceful: true, gracefulPending: false };
    }
    // graceful deletion is pending, do nothing
    options.gracePeriodSeconds = meta.deletionGracePeriodSeconds;
    return { graceful: false, gracefulPending: true };
  }
  // `CheckGracefulDelete` will be implemented by specific strategy
  if (!strategy.checkGracefulDelete(obj, options)) return { graceful: false, gracefulPending: false };
  if (options.gracePeriodSeconds === undefined) return newInternalError('options.GracePeriodSeconds should not be nil');
  // podsim only (decode.ts): a deletionTimestamp beyond the virtual clock's range cannot be written.
  const maxGrace = maxGracePeriodSeconds(rctx.now);
  if (options.gracePeriodSeconds > maxGrace) {
    return newInvalid(strategy.groupKind, meta.name ?? '', [
      field.invalid(
        'gracePeriodSeconds',
        options.gracePeriodSeconds,
        `podsim's virtual clock cannot hold a deletionTimestamp that far ahead: at most ${maxGrace} seconds from now (about ${Math.floor(maxGrace / 31_557_600)} years)`,
      ),
    ]);
  }
  meta.deletionTimestamp = rctx.clock.format(rctx.now + options.gracePeriodSeconds * US_PER_SECOND);
  meta.deletionGracePeriodSeconds = options.gracePeriodSeconds;
  // If it's the first graceful deletion we are going to set the DeletionTimestamp to non-nil.
  // Controllers of the object that's being deleted shouldn't take any nontrivial actions, hence
  // its behavior changes. Thus we need to bump object's Generation (if set).
  if ((meta.generation ?? 0) > 0) meta.generation = meta.generation! + 1;
  return { graceful: true, gracefulPending: false };
}
