/**
 * The HTTP side of the kubectl facade as a pure function: one HTTP request (method, URL,
 * headers, body bytes) → what to do — answer a fixed document (version, discovery, OpenAPI), an
 * apiserver request of packages/api/src/protocol/apiserver.ts, a watch stream, or a metav1.Status
 * error. Mirrors k8s.io/apiserver v0.22.8 `pkg/endpoints/handlers` (URL → verb, `rest.go`
 * DeleteOptions from body or query, `patch.go` patch types) and `negotiation` (Accept → JSON /
 * YAML / Table, 406; Content-Type → 415). No I/O here; server.ts does the sockets.
 */
import { parse as parseYaml } from 'yaml';
import { jsonShapeProblem } from '../jsonShape.js';
import { PROTOBUF_MEDIA_TYPE, decodeProtobufBody, isProtobufError } from './protobuf.js';
import { pruneUnknownFields, rootMessage, strictDecodingError, type FieldValidation } from './fieldValidation.js';
import { OPENAPI_V2_PROTOBUF, wantsOpenApiV2Protobuf } from './openapiV2.js';
import type { ApiRequest, ApiWatch, DeleteOptions, IncludeObjectPolicy, KubeObject, PatchType, Status, Subresource } from '@podsim/api';
import {
  AGGREGATED_V2,
  NAMED_GROUPS,
  VERSION_INFO,
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  groupVersion,
  openApiV2,
  openApiV3Doc,
  openApiV3Root,
  servedResource,
  type ServedResource,
} from './discovery.js';

/** The request as the socket layer hands it over. */
export interface HttpRequestIn {
  readonly method: string;
  /** Path and query, as in the request line. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

/** Response body encoding chosen from Accept. */
export type OutputFormat = 'json' | 'yaml';

/** What server.ts does with a request. */
export type Outcome =
  /** Answer `body` (JSON- or YAML-encoded per `format`) with `status` and `contentType`. */
  | { readonly kind: 'reply'; readonly status: number; readonly contentType?: string; readonly body: unknown; readonly format?: OutputFormat }
  /** Send `request` to the apiserver; answer its ApiResult (code, body). */
  | {
      readonly kind: 'api';
      readonly request: Exclude<ApiRequest, ApiWatch | { type: 'ApiUnwatch' }>;
      readonly format: OutputFormat;
      /** `Warning` response headers (text without the `299 -` code), e.g. `fieldValidation=Warn`'s unknown fields. */
      readonly warnings?: readonly string[];
    }
  /** Start a watch (the gateway picks the watchId); stream newline-delimited JSON events. */
  | { readonly kind: 'watch'; readonly request: Omit<ApiWatch, 'watchId'>; readonly timeoutSeconds?: number };

/** The real apiserver's default `--max-request-body-bytes` is 3 MiB (etcd's object limit + headroom). */
export const DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024;

// ---- Status errors --------------------------------------------------------------------------------

function status(code: number, reason: Status['reason'], message: string, details?: Status['details']): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
}

/** 404 for a path nothing serves (`the server could not find the requested resource`). */
export function notFoundPath(): Status {
  return status(404, 'NotFound', 'the server could not find the requested resource', {});
}

/** 405 for a verb the path does not take. */
export function methodNotAllowed(method: string, what: string): Status {
  return status(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource (${method} ${what})`, {});
}

/** 406: the Accept header offers nothing podsim can write. */
export function notAcceptable(): Status {
  return status(406, 'NotAcceptable', 'only the following media types are accepted: application/json, application/yaml, application/json;as=Table;v=v1;g=meta.k8s.io');
}

/** 413: the body is larger than the cap. */
export function entityTooLarge(limit: number): Status {
  return status(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
}

/**
 * 415: a body in a media type podsim does not decode. A POST / PUT without Content-Type is
 * decoded as JSON, as upstream's `NegotiateInputSerializerForMediaType` takes the first
 * supported type then; a PATCH without one is refused (`patch.go` checks the patch type).
 */
export function unsupportedMediaType(_contentType: string, accepted: readonly string[]): Status {
  return status(
    415,
    'UnsupportedMediaType',
    // negotiation.NewUnsupportedMediaTypeError: upstream does not name the type it got.
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

/** 400 with a free-form message. */
export function badRequest(message: string): Status {
  return status(400, 'BadRequest', message);
}

/** 504: the request did not complete within the server's bound. */
export function timeoutStatus(message: string): Status {
  return status(504, 'Timeout', `Timeout: ${message}`, { retryAfterSeconds: 1 });
}

/** 500 InternalError. */
export function internalError(message: string): Status {
  return status(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

/** 503 while the simulation is not (or no longer) running. */
export function serviceUnavailable(message: string): Status {
  return status(503, 'ServiceUnavailable', message);
}

function fail(st: Status): Outcome {
  return { kind: 'reply', status: st.code, body: st };
}

// ---- negotiation --------------------------------------------------------------------------------

interface MediaRange {
  readonly type: string;
  readonly params: Readonly<Record<string, string>>;
}

function header(h: HttpRequestIn['headers'], name: string): string {
  const v = h[name];
  return Array.isArray(v) ? v.join(',') : (v ?? '');
}

function parseMediaRanges(accept: string): MediaRange[] {
  return accept
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      const [type, ...rest] = part.split(';').map((s) => s.trim());
      const params: Record<string, string> = {};
      for (const p of rest) {
        const i = p.indexOf('=');
        if (i > 0) params[p.slice(0, i).trim().toLowerCase()] = p.slice(i + 1).trim();
      }
      return { type: type.toLowerCase(), params };
    });
}

/** The output the client accepts: JSON / YAML, and whether it asked for a Table. */
export interface Negotiated {
  readonly format: OutputFormat;
  readonly table: boolean;
}

/**
 * `negotiation.NegotiateOutputMediaType` for podsim: the first acceptable entry of Accept wins.
 * `application/json;as=Table;g=meta.k8s.io;v=v1|v1beta1` → Table; plain `application/json`,
 * `application/*`, `*\/*` → JSON; `application/yaml` → YAML; protobuf and partial-metadata
 * forms are skipped (kubectl always lists JSON after them). No Accept = JSON. Nothing acceptable
 * → undefined (406).
 */
export function negotiate(accept: string, allowTable: boolean): Negotiated | undefined {
  const ranges = parseMediaRanges(accept);
  if (ranges.length === 0) return { format: 'json', table: false };
  for (const r of ranges) {
    const as = r.params.as;
    if (r.type === 'application/json') {
      if (as === undefined) return { format: 'json', table: false };
      if (as === 'Table' && r.params.g === 'meta.k8s.io' && (r.params.v === 'v1' || r.params.v === 'v1beta1')) {
        if (allowTable) return { format: 'json', table: true };
      }
      continue;
    }
    if (as !== undefined) continue;
    if (r.type === 'application/yaml') return { format: 'yaml', table: false };
    if (r.type === '*/*' || r.type === 'application/*') return { format: 'json', table: false };
  }
  return undefined;
}

/** Whether Accept asks for aggregated discovery v2 (exactly that media type; spec §2.1). */
export function wantsAggregatedV2(accept: string): boolean {
  return parseMediaRanges(accept).some((r) => r.type === 'application/json' && r.params.g === 'apidiscovery.k8s.io' && r.params.v === 'v2' && r.params.as === 'APIGroupDiscoveryList');
}

// ---- bodies -------------------------------------------------------------------------------------

const JSON_TYPES = ['application/json', 'application/yaml'];
/** Media types of POST / PUT / DELETE bodies (kubectl's typed clients send protobuf). */
const BODY_TYPES = [...JSON_TYPES, PROTOBUF_MEDIA_TYPE];
const PATCH_TYPES: Readonly<Record<string, PatchType>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};

function mediaType(contentType: string): string {
  return contentType.split(';')[0].trim().toLowerCase();
}

/** Decodes a JSON or YAML body. Returns the value, or a 400 Status naming the parse error. */
function decodeBody(body: Buffer, yaml: boolean): { value: unknown } | Status {
  const text = body.toString('utf8');
  if (text.trim() === '') return badRequest('the request body is empty; expected a JSON object');
  try {
    // One document only; YAML is a superset of JSON, so `apply-patch+yaml` bodies in JSON parse too.
    const value = yaml ? (parseYaml(text, { uniqueKeys: false, maxAliasCount: 100 }) as unknown) : (JSON.parse(text) as unknown);
    // A YAML alias inside its own anchor parses to a cyclic value, and a few thousand levels of
    // nesting overflow the stack of whatever copies the object next (the apiserver actor, the
    // engine's message encoder): both used to end the whole simulation.
    const bad = jsonShapeProblem(value);
    if (bad) return badRequest(`the request body is not a valid Kubernetes object: at ${bad.path}: ${bad.message}`);
    return { value };
  } catch (e) {
    const msg = e instanceof Error ? e.message.split('\n')[0] : String(e);
    return badRequest(`the request body is not valid ${yaml ? 'YAML' : 'JSON'}: ${msg}`);
  }
}

function isObject(x: unknown): x is Record<string, unknown> {
  return x !== null && typeof x === 'object' && !Array.isArray(x);
}

/** A protobuf body (`k8s\0` + runtime.Unknown) as the JSON-shaped object; a 400 / 415 Status when it does not decode. */
function protobufBody(req: HttpRequestIn): { value: Record<string, unknown> } | Status {
  const d = decodeProtobufBody(req.body);
  if (!isProtobufError(d)) {
    const bad = jsonShapeProblem(d.object);
    return bad ? badRequest(`the request body is not a valid Kubernetes object: at ${bad.path}: ${bad.message}`) : { value: d.object };
  }
  return d.code === 415 ? status(415, 'UnsupportedMediaType', d.message) : badRequest(d.message);
}

/** A JSON/YAML/protobuf object body of a POST or PUT (415 for other media types, 400 when malformed). */
function objectBody(req: HttpRequestIn): { object: KubeObject } | Status {
  const ct = mediaType(header(req.headers, 'content-type'));
  if (ct !== '' && !BODY_TYPES.includes(ct)) return unsupportedMediaType(ct, BODY_TYPES);
  const d = ct === PROTOBUF_MEDIA_TYPE ? protobufBody(req) : decodeBody(req.body, ct === 'application/yaml');
  if ('kind' in d) return d;
  if (!isObject(d.value)) return badRequest('the request body must be a JSON object (a Kubernetes object with apiVersion, kind and metadata)');
  if (d.value.metadata !== undefined && !isObject(d.value.metadata)) return badRequest('metadata: must be an object');
  return { object: d.value as unknown as KubeObject };
}

/** Query flags that take a boolean (`true`/`1`). */
function flag(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  return v === 'true' || v === '1';
}

/** `dryRun=All` → true; any other value is a 400 (as `ValidateDryRun`). */
function dryRun(q: URLSearchParams): boolean | Status {
  const v = q.getAll('dryRun');
  if (v.length === 0) return false;
  if (v.every((x) => x === 'All')) return true;
  return badRequest(`dryRun: Unsupported value: ${JSON.stringify(v.find((x) => x !== 'All'))}: supported values: "All"`);
}

/**
 * DeleteOptions from the body (JSON) merged with the query (`gracePeriodSeconds`,
 * `propagationPolicy`, `orphanDependents`, `dryRun`), as `rest.go` DeleteResource does: the
 * query's values are decoded into the same struct after the body.
 */
export function deleteOptions(req: HttpRequestIn, q: URLSearchParams): DeleteOptions | Status {
  let opts: DeleteOptions = {};
  if (req.body.length > 0 && req.body.toString('utf8').trim() !== '') {
    const ct = mediaType(header(req.headers, 'content-type'));
    if (ct !== '' && !BODY_TYPES.includes(ct)) return unsupportedMediaType(ct, BODY_TYPES);
    const d = ct === PROTOBUF_MEDIA_TYPE ? protobufBody(req) : decodeBody(req.body, ct === 'application/yaml');
    if ('kind' in d) return d;
    if (!isObject(d.value)) return badRequest('the DELETE body must be a DeleteOptions object');
    if (d.value.kind !== undefined && d.value.kind !== 'DeleteOptions') return badRequest(`expected a DeleteOptions body, got kind ${JSON.stringify(d.value.kind)}`);
    opts = d.value as DeleteOptions;
  }
  const g = q.get('gracePeriodSeconds');
  if (g !== null) {
    if (!/^-?\d+$/.test(g)) return badRequest(`gracePeriodSeconds: invalid value ${JSON.stringify(g)}: must be an integer`);
    opts = { ...opts, gracePeriodSeconds: Number(g) };
  }
  const p = q.get('propagationPolicy');
  if (p !== null) opts = { ...opts, propagationPolicy: p as DeleteOptions['propagationPolicy'] };
  const o = q.get('orphanDependents');
  if (o !== null) opts = { ...opts, orphanDependents: o === 'true' || o === '1' };
  if (q.getAll('dryRun').length > 0) opts = { ...opts, dryRun: q.getAll('dryRun') };
  if (opts.gracePeriodSeconds !== undefined && (typeof opts.gracePeriodSeconds !== 'number' || !Number.isInteger(opts.gracePeriodSeconds))) {
    return badRequest('gracePeriodSeconds: must be an integer');
  }
  return opts;
}

// ---- list options ----------------------------------------------------------------------------

/** Go's `strconv.Quote` for the ASCII strings a query holds (JSON's escaping is close enough). */
function goQuote(v: string): string {
  return JSON.stringify(v);
}

/**
 * `runtime.Convert_Slice_string_To_int64` (apimachinery runtime/conversion.go): the first value,
 * parsed as Go's `strconv.ParseInt(v, 10, 64)`; the error is its text.
 */
function parseInt64(name: string, q: URLSearchParams): number | undefined | Status {
  const v = q.get(name);
  if (v === null) return undefined;
  if (!/^[+-]?\d+$/.test(v)) return badRequest(`strconv.ParseInt: parsing ${goQuote(v)}: invalid syntax`);
  const n = BigInt(v);
  if (n > 9223372036854775807n || n < -9223372036854775808n) return badRequest(`strconv.ParseInt: parsing ${goQuote(v)}: value out of range`);
  return Number(n);
}

/**
 * `APIObjectVersioner.ParseResourceVersion` as etcd3 `store.GetList` reports it: "" and "0" are
 * 0; anything `strconv.ParseUint` refuses is a 400 `invalid resource version: resourceVersion:
 * Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`.
 */
function parseListResourceVersion(v: string): Status | undefined {
  if (v === '' || v === '0') return undefined;
  let why: string | undefined;
  if (!/^\d+$/.test(v)) why = 'invalid syntax';
  else if (BigInt(v) > 18446744073709551615n) why = 'value out of range';
  if (why === undefined) return undefined;
  return badRequest(`invalid resource version: resourceVersion: Invalid value: ${goQuote(v)}: strconv.ParseUint: parsing ${goQuote(v)}: ${why}`);
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Go's `json.Unmarshal` first-syntax-error text for a value that does not start a JSON value. */
function goJsonError(text: string): string {
  const i = text.search(/\S/);
  if (i < 0) return 'unexpected end of JSON input';
  return `invalid character '${goQuoteChar(text.charCodeAt(i))}' looking for beginning of value`;
}

/** encoding/json `quoteChar` of one byte (read as Latin-1, as Go turns a byte into a rune). */
function goQuoteChar(c: number): string {
  const special: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 39: "\\'", 92: '\\\\' };
  if (special[c] !== undefined) return special[c];
  const hex = (w: number) => c.toString(16).padStart(w, '0');
  if (c < 0x20 || c === 0x7f) return `\\x${hex(2)}`;
  if ((c >= 0x80 && c <= 0x9f) || c === 0xad) return `\\u${hex(4)}`;
  return String.fromCharCode(c);
}

/**
 * `storage.DecodeContinue` (apiserver pkg/storage/continue.go) for a list's `continue`: base64url
 * (no padding) of a JSON `{"v":"meta.k8s.io/v1","rv":N,"start":"key"}`. podsim never hands out
 * continue tokens (it answers every list in one page), so a token that decodes is one from
 * another server or an older run: 410 Expired as for a compacted revision; one that does not is
 * a 400 `invalid continue token: continue key is not valid: …` with Go's decoding error.
 */
function checkContinue(token: string): Status {
  const bad = (why: string) => badRequest(`invalid continue token: continue key is not valid: ${why}`);
  if (!BASE64URL.test(token) || token.length % 4 === 1) {
    const at = BASE64URL.test(token) ? token.length - 1 : [...token].findIndex((ch) => !/[A-Za-z0-9_-]/.test(ch));
    return bad(`illegal base64 data at input byte ${at}`);
  }
  const text = Buffer.from(token, 'base64url').toString('latin1');
  let c: unknown;
  try {
    c = JSON.parse(text);
  } catch {
    return bad(goJsonError(text));
  }
  if (!isObject(c)) return bad(`json: cannot unmarshal ${Array.isArray(c) ? 'array' : c === null ? 'null' : typeof c === 'boolean' ? 'bool' : typeof c} into Go value of type storage.continueToken`);
  if (c.v !== 'meta.k8s.io/v1') return bad(`server does not recognize this encoded version ${goQuote(String(c.v ?? ''))}`);
  if (!c.rv) return bad('incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (!c.start) return bad('encoded start key empty (version meta.k8s.io/v1)');
  return status(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
}

/**
 * The list / watch query as upstream's ListResource handler decodes it (`ParameterCodec.
 * DecodeParameters` into `metainternalversion.ListOptions`: 400 with the conversion error), and
 * the storage's checks of `resourceVersion` and `continue` (etcd3 `store.GetList`). Returns the
 * Status to answer, or undefined when the query is acceptable. `limit` is accepted and ignored:
 * podsim answers every list in one page (never sets `metadata.continue`).
 */
export function checkListOptions(q: URLSearchParams, watch: boolean): Status | undefined {
  for (const name of ['limit', 'timeoutSeconds']) {
    const n = parseInt64(name, q);
    if (n !== undefined && typeof n !== 'number') return n;
  }
  const rv = q.get('resourceVersion');
  const cont = q.get('continue');
  if (!watch && cont !== null && cont !== '') {
    const bad = checkContinue(cont);
    if (bad.code === 400) return bad;
    if (rv !== null && rv !== '' && rv !== '0') return badRequest('specifying resource version is not allowed when using continue');
    return bad;
  }
  if (!watch && rv !== null) return parseListResourceVersion(rv);
  return undefined;
}

// ---- field validation ---------------------------------------------------------------------------

/** `?fieldValidation=` (absent or empty: Ignore, as v1.22 dropped unknown fields silently); a 422 for other values. */
function fieldValidationOf(q: URLSearchParams, options: string): FieldValidation | Status {
  const v = q.get('fieldValidation') ?? '';
  if (v === '' || v === 'Ignore') return 'Ignore';
  if (v === 'Warn' || v === 'Strict') return v;
  return status(422, 'Invalid', `${options}.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: ${JSON.stringify(v)}: supported values: "", "Ignore", "Strict", "Warn"`, {
    group: 'meta.k8s.io',
    kind: options,
    causes: [{ reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(v)}: supported values: "", "Ignore", "Strict", "Warn"`, field: 'fieldValidation' }],
  });
}

/**
 * `?fieldManager=` checked as apimachinery's `ValidateFieldManager`: at most 128 bytes, every
 * character printable (`unicode.IsPrint`: no control, format or separator other than the space).
 * A 422 on `<options>.meta.k8s.io`, undefined when fine or absent.
 */
function fieldManagerProblem(q: URLSearchParams, options: string): Status | undefined {
  const fm = q.get('fieldManager') ?? '';
  const causes: Array<{ reason: string; message: string; field: string }> = [];
  if (Buffer.byteLength(fm) > 128) causes.push({ reason: 'FieldValueTooLong', message: 'Too long: must have at most 128 bytes', field: 'fieldManager' });
  let i = 0;
  for (const ch of fm) {
    if (ch !== ' ' && /[\p{C}\p{Z}]/u.test(ch)) {
      const code = `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
      causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(fm)}: invalid character ${code} (at position ${i})`, field: 'fieldManager' });
    }
    i += Buffer.byteLength(ch);
  }
  if (causes.length === 0) return undefined;
  const text = causes.map((c) => `${c.field}: ${c.message}`);
  return status(422, 'Invalid', `${options}.meta.k8s.io "" is invalid: ${text.length === 1 ? text[0] : `[${text.join(', ')}]`}`, { group: 'meta.k8s.io', kind: options, causes });
}

/**
 * Drops the body's unknown fields (fieldValidation.ts) and applies the directive: Strict → the
 * 400 Status (`Pod in version "v1" cannot be handled as a Pod: strict decoding error: …` for a
 * whole object), Warn → warning texts, Ignore → nothing.
 */
function validateFields(body: Record<string, unknown>, served: ServedResource, group: string, mode: FieldValidation, patch: boolean): Status | string[] {
  const unknown = pruneUnknownFields(body, rootMessage(group, served.kind), patch);
  if (unknown.length === 0 || mode === 'Ignore') return [];
  if (mode === 'Warn') return unknown.map((u) => `unknown field ${JSON.stringify(u)}`);
  const version = groupVersion(group).split('/').pop()!;
  return badRequest(patch ? strictDecodingError(unknown) : `${served.kind} in version ${JSON.stringify(version)} cannot be handled as a ${served.kind}: ${strictDecodingError(unknown)}`);
}

/**
 * The manager of a write that is not an apply (fieldmanager `managerOrUserAgent`): `?fieldManager=`,
 * else the User-Agent up to its first `/` (`kubectl/v1.32.4 (linux/amd64) …` → `kubectl`).
 */
function updateManager(q: URLSearchParams, headers: HttpRequestIn['headers']): { fieldManager?: string } {
  const fm = q.get('fieldManager');
  if (fm) return { fieldManager: fm };
  const ua = header(headers, 'user-agent');
  const prefix = ua.split('/')[0];
  return prefix ? { fieldManager: prefix } : {};
}

// ---- routing ------------------------------------------------------------------------------------

/** A parsed resource path: `/api/v1/...` or `/apis/<group>/v1/...`. */
interface ResourcePath {
  readonly served: ServedResource;
  readonly namespace?: string;
  readonly name?: string;
  readonly subresource?: string;
  readonly watchPrefix: boolean;
}

/** Splits the part after the group-version into resource, namespace, name, subresource. */
function resourcePath(group: string, segs: string[]): ResourcePath | Status {
  let watchPrefix = false;
  if (segs[0] === 'watch') {
    watchPrefix = true;
    segs = segs.slice(1);
  }
  let namespace: string | undefined;
  let rest = segs;
  // `/namespaces/<ns>/<resource>...` for a namespaced resource; `/namespaces[/<ns>[/status]]` is the namespace itself.
  if (segs[0] === 'namespaces' && segs.length >= 3 && servedResource(group, segs[2])?.namespaced) {
    namespace = segs[1];
    rest = segs.slice(2);
  }
  const served = servedResource(group, rest[0] ?? '');
  if (!served || rest.length > 3 || rest.some((s) => s === '')) return notFoundPath();
  const name = rest[1];
  // A namespaced resource by name needs its namespace (`/api/v1/pods/x` does not exist).
  if (served.namespaced && namespace === undefined && name !== undefined) return notFoundPath();
  return { served, namespace, name, subresource: rest[2], watchPrefix };
}

const SUBRESOURCE_NAMES = new Set<string>(['status', 'scale', 'binding', 'eviction', 'finalize']);
/** Subresources that only take POST (`pods/binding`, `pods/eviction`). */
const CREATE_ONLY = new Set<string | undefined>(['binding', 'eviction']);

/**
 * Turns one HTTP request into an {@link Outcome}. `serverAddress` is `host:port` for the legacy
 * `/api` document. Bodies must already be within the size cap (server.ts answers 413).
 */
export function route(req: HttpRequestIn, serverAddress: string): Outcome {
  let url: URL;
  try {
    url = new URL(req.url, 'http://podsim.invalid');
  } catch {
    return fail(badRequest(`malformed request URL ${JSON.stringify(req.url)}`));
  }
  const method = req.method.toUpperCase();
  const path = url.pathname.replace(/\/+$/, '') || '/';
  const q = url.searchParams;
  const accept = header(req.headers, 'accept');
  const segs = path.split('/').slice(1).map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });

  const readOnly = (body: () => Outcome): Outcome => (method === 'GET' || method === 'HEAD' ? body() : fail(methodNotAllowed(method, path)));
  const json = (body: unknown, contentType?: string): Outcome => {
    const n = negotiate(accept, false);
    if (!n) return fail(notAcceptable());
    return { kind: 'reply', status: 200, body, format: contentType ? 'json' : n.format, ...(contentType ? { contentType } : {}) };
  };

  switch (path) {
    case '/version':
      return readOnly(() => json(VERSION_INFO));
    case '/healthz':
    case '/readyz':
    case '/livez':
      return readOnly(() => ({ kind: 'reply', status: 200, contentType: 'text/plain; charset=utf-8', body: 'ok' }));
    case '/api':
      return readOnly(() => (wantsAggregatedV2(accept) ? json(aggregatedDiscovery(true), AGGREGATED_V2) : json(apiVersions(serverAddress))));
    case '/apis':
      return readOnly(() => (wantsAggregatedV2(accept) ? json(aggregatedDiscovery(false), AGGREGATED_V2) : json(apiGroupList())));
    case '/api/v1':
      return readOnly(() => json(apiResourceList('')));
    case '/openapi/v3':
      return readOnly(() => json(openApiV3Root()));
    case '/openapi/v2':
      // client-go's OpenAPISchema() asks for the gnostic protobuf; a browser or curl gets JSON.
      return readOnly(() => (wantsOpenApiV2Protobuf(accept) ? { kind: 'reply', status: 200, contentType: OPENAPI_V2_PROTOBUF, body: openApiV2().protobuf } : json(openApiV2().json)));
  }
  // `/apis/<group>` and `/apis/<group>/v1` of every named group SERVED_RESOURCES has.
  const groupPath = /^\/apis\/([^/]+)(\/v1)?$/.exec(path);
  if (groupPath && NAMED_GROUPS.includes(groupPath[1])) {
    const g = groupPath[1];
    return readOnly(() => json(groupPath[2] === undefined ? apiGroup(g) : apiResourceList(g)));
  }
  if (path.startsWith('/openapi/v3/')) {
    const doc = openApiV3Doc(path.slice('/openapi/v3/'.length));
    return doc === undefined ? fail(notFoundPath()) : readOnly(() => json(doc));
  }

  let group: string;
  let rest: string[];
  if (segs[0] === 'api' && segs[1] === 'v1') {
    group = '';
    rest = segs.slice(2);
  } else if (segs[0] === 'apis' && NAMED_GROUPS.includes(segs[1]) && segs[2] === 'v1') {
    group = segs[1];
    rest = segs.slice(3);
  } else return fail(notFoundPath());
  const rp = resourcePath(group, rest);
  if ('kind' in rp) return fail(rp);
  return resourceOutcome(req, method, q, accept, group, rp);
}

function resourceOutcome(req: HttpRequestIn, method: string, q: URLSearchParams, accept: string, group: string, rp: ResourcePath): Outcome {
  const { served, name } = rp;
  const resource = served.resource;
  const what = `${served.resource}${group ? `.${group}` : ''}`;
  const target = { resource, ...(rp.namespace !== undefined ? { namespace: rp.namespace } : {}) };
  let subresource: Subresource | undefined;
  if (rp.subresource !== undefined) {
    if (!SUBRESOURCE_NAMES.has(rp.subresource) || !served.subresources.some((s) => s.name === rp.subresource)) return fail(notFoundPath());
    subresource = rp.subresource as Subresource;
  }
  const watch = rp.watchPrefix || flag(q, 'watch');
  // Tables only for reads of the resource itself (not Scale, not writes).
  const n = negotiate(accept, (method === 'GET' || method === 'HEAD') && subresource === undefined);
  if (!n) return fail(notAcceptable());
  const includeObject = q.get('includeObject') ?? undefined;
  if (includeObject !== undefined && !['None', 'Metadata', 'Object'].includes(includeObject)) {
    return fail(badRequest(`includeObject: Unsupported value: ${JSON.stringify(includeObject)}: supported values: "None", "Metadata", "Object"`));
  }
  // The real apiserver always sends every column; kubectl hides priority-1 ones unless -o wide.
  const table = n.table ? { asTable: true, wide: true, ...(includeObject ? { includeObject: includeObject as IncludeObjectPolicy } : {}) } : {};
  const dry = dryRun(q);
  if (typeof dry !== 'boolean') return fail(dry);
  const dryOpt = dry ? { dryRun: true } : {};
  const api = (request: Extract<Outcome, { kind: 'api' }>['request'], warnings: readonly string[] = []): Outcome => ({
    kind: 'api',
    request,
    format: n.format,
    ...(warnings.length > 0 ? { warnings } : {}),
  });

  if (name === undefined) {
    // Collection: list / watch / create.
    switch (method) {
      case 'GET':
      case 'HEAD': {
        const selectors = {
          ...(q.get('labelSelector') ? { labelSelector: q.get('labelSelector')! } : {}),
          ...(q.get('fieldSelector') ? { fieldSelector: q.get('fieldSelector')! } : {}),
        };
        const badOpts = checkListOptions(q, watch);
        if (badOpts) return fail(badOpts);
        if (watch) {
          if (n.format !== 'json') return fail(notAcceptable());
          const ts = q.get('timeoutSeconds');
          const rv = q.get('resourceVersion');
          return {
            kind: 'watch',
            request: { type: 'ApiWatch', ...target, ...selectors, ...table, ...(rv ? { resourceVersion: rv } : {}) },
            ...(ts !== null && Number(ts) > 0 ? { timeoutSeconds: Number(ts) } : {}),
          };
        }
        return api({ type: 'ApiList', ...target, ...selectors, ...table });
      }
      case 'POST': {
        if (served.namespaced && rp.namespace === undefined) return fail(methodNotAllowed(method, `${what} (create needs /namespaces/<namespace>/${resource})`));
        const b = objectBody(req);
        if ('kind' in b) return fail(b);
        const bad = checkKind(b.object, served, group);
        if (bad) return fail(bad);
        const fmBad = fieldManagerProblem(q, 'CreateOptions');
        if (fmBad) return fail(fmBad);
        const fv = fieldValidationOf(q, 'CreateOptions');
        if (typeof fv !== 'string') return fail(fv);
        const fw = validateFields(b.object as unknown as Record<string, unknown>, served, group, fv, false);
        if (!Array.isArray(fw)) return fail(fw);
        const ns = b.object.metadata?.namespace;
        if (served.namespaced && ns !== undefined && ns !== '' && ns !== rp.namespace) {
          return fail(badRequest(`the namespace of the provided object (${ns}) does not match the namespace sent on the request (${rp.namespace ?? ''})`));
        }
        return api({ type: 'ApiCreate', ...target, object: b.object, ...dryOpt, ...updateManager(q, req.headers) }, fw);
      }
      case 'DELETE':
        return fail(methodNotAllowed(method, `${what}: deletecollection is not served by podsim; delete objects one by one (kubectl delete --all does)`));
      default:
        return fail(methodNotAllowed(method, what));
    }
  }

  if (watch && (method === 'GET' || method === 'HEAD')) {
    // The deprecated `/watch/.../name` form: a watch with a metadata.name field selector.
    if (n.format !== 'json') return fail(notAcceptable());
    const rv = q.get('resourceVersion');
    return { kind: 'watch', request: { type: 'ApiWatch', ...target, fieldSelector: `metadata.name=${name}`, ...table, ...(rv ? { resourceVersion: rv } : {}) } };
  }
  const sub = subresource !== undefined ? { subresource } : {};
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (CREATE_ONLY.has(subresource)) return fail(methodNotAllowed(method, `${what}/${subresource}`));
      return api({ type: 'ApiGet', ...target, name, ...sub, ...table });
    case 'POST': {
      if (!CREATE_ONLY.has(subresource)) return fail(methodNotAllowed(method, `${what}${subresource ? `/${subresource}` : ''}`));
      const b = objectBody(req);
      if ('kind' in b) return fail(b);
      if (subresource === 'eviction') {
        const bad = checkEviction(b.object);
        if (bad) return fail(bad);
      }
      return api({ type: 'ApiCreate', ...target, name, subresource, object: b.object, ...dryOpt, ...updateManager(q, req.headers) });
    }
    case 'PUT': {
      if (CREATE_ONLY.has(subresource)) return fail(methodNotAllowed(method, `${what}/${subresource}`));
      const b = objectBody(req);
      if ('kind' in b) return fail(b);
      let fw: string[] = [];
      if (subresource === undefined || subresource === 'status') {
        if (subresource === undefined) {
          const bad = checkKind(b.object, served, group);
          if (bad) return fail(bad);
        }
        const fmBad = fieldManagerProblem(q, 'UpdateOptions');
        if (fmBad) return fail(fmBad);
        const fv = fieldValidationOf(q, 'UpdateOptions');
        if (typeof fv !== 'string') return fail(fv);
        const r = validateFields(b.object as unknown as Record<string, unknown>, served, group, fv, false);
        if (!Array.isArray(r)) return fail(r);
        fw = r;
      }
      return api({ type: 'ApiUpdate', ...target, name, ...sub, object: b.object, ...dryOpt, ...updateManager(q, req.headers) }, fw);
    }
    case 'PATCH': {
      if (CREATE_ONLY.has(subresource)) return fail(methodNotAllowed(method, `${what}/${subresource}`));
      const ct = mediaType(header(req.headers, 'content-type'));
      const patchType = PATCH_TYPES[ct];
      if (!patchType) return fail(unsupportedMediaType(ct, Object.keys(PATCH_TYPES)));
      const d = decodeBody(req.body, patchType === 'apply');
      if ('kind' in d) return fail(d);
      if (patchType === 'json' ? !Array.isArray(d.value) : !isObject(d.value)) {
        return fail(badRequest(`a ${ct} body must be a JSON ${patchType === 'json' ? 'array of operations' : 'object'}`));
      }
      if (patchType === 'apply') {
        const bad = checkKind(d.value as unknown as KubeObject, served, group);
        if (bad) return fail(bad);
      }
      const fmBad = fieldManagerProblem(q, 'PatchOptions');
      if (fmBad) return fail(fmBad);
      let fw: string[] = [];
      if (patchType !== 'json' && (subresource === undefined || subresource === 'status')) {
        const fv = fieldValidationOf(q, 'PatchOptions');
        if (typeof fv !== 'string') return fail(fv);
        const r = validateFields(d.value as Record<string, unknown>, served, group, fv, patchType !== 'apply');
        if (!Array.isArray(r)) return fail(r);
        fw = r;
      }
      const fm = q.get('fieldManager');
      return api({
        type: 'ApiPatch',
        ...target,
        name,
        ...sub,
        patchType,
        patch: d.value,
        ...(patchType === 'apply' ? (fm ? { fieldManager: fm } : {}) : updateManager(q, req.headers)),
        ...(flag(q, 'force') ? { force: true } : {}),
        ...dryOpt,
      }, fw);
    }
    case 'DELETE': {
      if (subresource !== undefined) return fail(methodNotAllowed(method, `${what}/${subresource}`));
      const opts = deleteOptions(req, q);
      if ('kind' in opts && opts.kind === 'Status') return fail(opts as Status);
      return api({ type: 'ApiDelete', ...target, name, options: opts as DeleteOptions });
    }
    default:
      return fail(methodNotAllowed(method, what));
  }
}

/**
 * An Eviction body is policy/v1 or policy/v1beta1 (EvictionREST.AcceptsGroupVersion); its kind,
 * when given, is Eviction.
 */
function checkEviction(obj: KubeObject): Status | undefined {
  if (obj.apiVersion !== undefined && obj.apiVersion !== 'policy/v1' && obj.apiVersion !== 'policy/v1beta1') {
    return badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (policy/v1 or policy/v1beta1)`);
  }
  if (obj.kind !== undefined && obj.kind !== 'Eviction') return badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (Eviction)`);
  return undefined;
}

/** The body's apiVersion/kind, when given, must be the URL's (`the API version in the data …`). */
function checkKind(obj: KubeObject, served: ServedResource, group: string): Status | undefined {
  const gv = groupVersion(group);
  if (obj.apiVersion !== undefined && obj.apiVersion !== gv) {
    return badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${gv})`);
  }
  if (obj.kind !== undefined && obj.kind !== served.kind) {
    return badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${served.kind})`);
  }
  return undefined;
}
