/**
 * API errors as `metav1.Status` values (plain tagged objects, STYLE.md "Errors"), mirroring
 * k8s.io/apimachinery v0.22.8 `pkg/api/errors/errors.go` (NewNotFound, NewAlreadyExists,
 * NewConflict, NewInvalid, NewBadRequest, NewInternalError, NewResourceExpired, NewTimeoutError,
 * NewTooLargeResourceVersionError, NewMethodNotSupported) and `pkg/util/validation/field`
 * (Error, ErrorBody, ErrorList.ToAggregate). Message texts are upstream's, verbatim.
 */
import type { Status, StatusCause, StatusReason } from '@podsim/api';

/** `schema.GroupResource`: `{group: '', resource: 'pods'}`, `{group: 'apps', resource: 'deployments'}`. */
export interface GroupResource {
  readonly group: string;
  readonly resource: string;
}

/** `schema.GroupKind`: `{group: '', kind: 'Pod'}`. */
export interface GroupKind {
  readonly group: string;
  readonly kind: string;
}

/** `GroupResource.String()`: `pods`, `deployments.apps`. */
export function groupResourceString(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

/** `GroupKind.String()`: `Pod`, `Deployment.apps`. */
export function groupKindString(gk: GroupKind): string {
  return gk.group ? `${gk.kind}.${gk.group}` : gk.kind;
}

/** Go's `%q` for the ASCII names Kubernetes allows. */
export function quote(s: string): string {
  return JSON.stringify(s);
}

function failure(code: number, reason: StatusReason | undefined, message: string, details?: Status['details']): Status {
  const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code };
  if (reason) s.reason = reason;
  if (details) s.details = details;
  return s;
}

function details(gr: GroupResource, name: string): NonNullable<Status['details']> {
  const d: NonNullable<Status['details']> = { name };
  if (gr.group) d.group = gr.group;
  d.kind = gr.resource;
  return d;
}

/** 404 `pods "p" not found`. */
export function newNotFound(gr: GroupResource, name: string): Status {
  return failure(404, 'NotFound', `${groupResourceString(gr)} ${quote(name)} not found`, details(gr, name));
}

/** 409 `pods "p" already exists`. */
export function newAlreadyExists(gr: GroupResource, name: string): Status {
  return failure(409, 'AlreadyExists', `${groupResourceString(gr)} ${quote(name)} already exists`, details(gr, name));
}

/** 409 `Operation cannot be fulfilled on pods "p": <err>`. */
export function newConflict(gr: GroupResource, name: string, err: string): Status {
  return failure(409, 'Conflict', `Operation cannot be fulfilled on ${groupResourceString(gr)} ${quote(name)}: ${err}`, details(gr, name));
}

/** `registry.OptimisticLockErrorMsg`. */
export const OPTIMISTIC_LOCK_ERROR_MSG = 'the object has been modified; please apply your changes to the latest version and try again';

/**
 * 403 `apierrors.NewForbidden`: `pods "p" is forbidden: <err>` (`pods is forbidden: …` without a
 * name, `forbidden: …` without a resource).
 */
export function newForbidden(gr: GroupResource, name: string, err: string): Status {
  const message = !gr.resource ? `forbidden: ${err}` : name === '' ? `${groupResourceString(gr)} is forbidden: ${err}` : `${groupResourceString(gr)} ${quote(name)} is forbidden: ${err}`;
  return failure(403, 'Forbidden', message, details(gr, name));
}

/** 400 with a free-form message. */
export function newBadRequest(message: string): Status {
  return failure(400, 'BadRequest', message);
}

/** 500 `Internal error occurred: <err>`. */
export function newInternalError(err: string): Status {
  return failure(500, 'InternalError', `Internal error occurred: ${err}`, { causes: [{ message: err }] });
}

/** 410 Expired (watch / list from a compacted resourceVersion). */
export function newResourceExpired(message: string): Status {
  return failure(410, 'Expired', message);
}

/** 429 `apierrors.NewTooManyRequests` (retryAfterSeconds 0 is omitted from the details, as Go's omitempty does). */
export function newTooManyRequests(message: string, retryAfterSeconds: number): Status {
  return failure(429, 'TooManyRequests', message, retryAfterSeconds ? { retryAfterSeconds } : {});
}

/** 504 `Timeout: <message>`. */
export function newTimeoutError(message: string, retryAfterSeconds: number): Status {
  return failure(504, 'Timeout', `Timeout: ${message}`, { retryAfterSeconds });
}

/** 504 for a watch from a resourceVersion the store has not reached (`NewTooLargeResourceVersionError`). */
export function newTooLargeResourceVersionError(minimumResourceVersion: number, currentRevision: number, retryAfterSeconds: number): Status {
  const s = newTimeoutError(`Too large resource version: ${minimumResourceVersion}, current: ${currentRevision}`, retryAfterSeconds);
  s.details!.causes = [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }];
  return s;
}

/** 405 `<action> is not supported on resources of kind "<gr>"`. */
export function newMethodNotSupported(gr: GroupResource, action: string): Status {
  return failure(405, 'MethodNotAllowed', `${action} is not supported on resources of kind ${quote(groupResourceString(gr))}`, {
    ...(gr.group ? { group: gr.group } : {}),
    kind: gr.resource,
  });
}

/** 500 ServerTimeout for a generateName collision (`NewServerTimeoutForKind(kind, "POST", 0)`). */
export function newServerTimeoutForKind(gk: GroupKind, operation: string, retryAfterSeconds: number): Status {
  return failure(
    500,
    'ServerTimeout',
    `The ${operation} operation against ${groupKindString(gk)} could not be completed at this time, please try again.`,
    { ...(gk.group ? { group: gk.group } : {}), kind: gk.kind, retryAfterSeconds },
  );
}

/** A success Status (`metav1.Status{Status: Success}`) with the given code and details. */
export function successStatus(code: number, det?: Status['details']): Status {
  const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code };
  if (det) s.details = det;
  return s;
}

/** Tagged-object test: is `x` a metav1.Status? */
export function isStatus(x: unknown): x is Status {
  return x !== null && typeof x === 'object' && (x as { kind?: unknown }).kind === 'Status';
}

// ---- field errors (pkg/util/validation/field) -------------------------------------------------

/** `field.ErrorType` values (also `metav1.CauseType`). */
export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError';

/** `field.Error`: `field` is the path string (`spec.containers[0].name`). */
export interface FieldError {
  readonly type: FieldErrorType;
  readonly field: string;
  readonly badValue?: unknown;
  readonly detail: string;
}

const TYPE_STRING: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
};

/** Go's `%#v`/`%v` rendering of a bad value, close enough for the values podsim validates. */
function formatValue(v: unknown): string {
  if (v === undefined || v === null) return 'null';
  if (typeof v === 'string') return quote(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) {
    if (v.every((x) => typeof x === 'string')) return `[]string{${v.map((x) => quote(x as string)).join(', ')}}`;
    return JSON.stringify(v);
  }
  if (typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>);
    if (entries.every(([, x]) => typeof x === 'string')) {
      return `map[string]string{${entries
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, x]) => `${quote(k)}:${quote(x as string)}`)
        .join(', ')}}`;
    }
    return JSON.stringify(v);
  }
  return String(v);
}

/** `(*field.Error).ErrorBody()`: the message without the field path. */
export function fieldErrorBody(e: FieldError): string {
  let s: string;
  switch (e.type) {
    case 'FieldValueRequired':
    case 'FieldValueForbidden':
    case 'FieldValueTooLong':
    case 'InternalError':
      s = TYPE_STRING[e.type];
      break;
    default:
      s = `${TYPE_STRING[e.type]}: ${formatValue(e.badValue)}`;
  }
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

/** `(*field.Error).Error()`: `spec.containers[0].name: Required value`. */
export function fieldErrorString(e: FieldError): string {
  return `${e.field}: ${fieldErrorBody(e)}`;
}

/** `field.Required`, `field.Invalid`, … constructors. */
export const field = {
  required: (path: string, detail = ''): FieldError => ({ type: 'FieldValueRequired', field: path, detail }),
  invalid: (path: string, value: unknown, detail: string): FieldError => ({ type: 'FieldValueInvalid', field: path, badValue: value, detail }),
  notSupported: (path: string, value: unknown, valid: readonly string[]): FieldError => ({
    type: 'FieldValueNotSupported',
    field: path,
    badValue: value,
    detail: valid.length ? `supported values: ${valid.map(quote).join(', ')}` : '',
  }),
  duplicate: (path: string, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field: path, badValue: value, detail: '' }),
  forbidden: (path: string, detail: string): FieldError => ({ type: 'FieldValueForbidden', field: path, detail }),
  notFound: (path: string, value: unknown): FieldError => ({ type: 'FieldValueNotFound', field: path, badValue: value, detail: '' }),
  tooLong: (path: string, value: unknown, max: number): FieldError => ({
    type: 'FieldValueTooLong',
    field: path,
    badValue: value,
    detail: `must have at most ${max} bytes`,
  }),
};

/** `ErrorList.ToAggregate().Error()`: one message, or `[a, b]` (duplicates dropped). */
export function aggregateMessage(errs: readonly FieldError[]): string {
  const seen = new Set<string>();
  const msgs: string[] = [];
  for (const e of errs) {
    const m = fieldErrorString(e);
    if (!seen.has(m)) {
      seen.add(m);
      msgs.push(m);
    }
  }
  return msgs.length === 1 ? msgs[0] : `[${msgs.join(', ')}]`;
}

/** 422 `Pod "p" is invalid: spec.containers[0].name: Required value`, with `details.causes`. */
export function newInvalid(gk: GroupKind, name: string, errs: readonly FieldError[]): Status {
  const causes: StatusCause[] = errs.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field }));
  const det: NonNullable<Status['details']> = { name };
  if (gk.group) det.group = gk.group;
  det.kind = gk.kind;
  det.causes = causes;
  return failure(422, 'Invalid', `${groupKindString(gk)} ${quote(name)} is invalid: ${aggregateMessage(errs)}`, det);
}
