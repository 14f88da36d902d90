/**
 * Request bodies in `application/vnd.kubernetes.protobuf`, the media type kubectl's typed clients
 * send (`kubectl create namespace|deployment`, `run`, and drain's evictions). Mirrors
 * k8s.io/apimachinery v0.22.8 `pkg/runtime/serializer/protobuf/protobuf.go` (the 4-byte magic
 * `k8s\0`, then a `runtime.Unknown` whose `typeMeta` names apiVersion/kind and whose `raw` is the
 * typed message) and the generated Unmarshal of k8s.io/api: the typed message becomes the object
 * the JSON path would have decoded, so everything after the HTTP facade is shared.
 *
 * JSON shape rules (what Go's encoding/json would print for the same Go struct): a non-pointer
 * scalar holding its zero value is left out (the Go marshaller writes "" / 0 / false for every
 * non-pointer field; JSON's `omitempty` drops them, and Go decodes both to the same zero);
 * pointers keep zero values (`gracePeriodSeconds: 0`, `replicas: 0`); a zero `Time` is absent
 * (JSON `null`), others are RFC 3339 seconds (`Time` drops nanoseconds on decode, as upstream);
 * `Quantity` and `IntOrString` become their JSON forms; embedded structs are inlined.
 * Deliberate difference: upstream skips every field number it does not know; podsim skips one
 * only when it carries no data (a newer kubectl writes zero values of fields 1.22 lacks) and
 * answers 400 naming the message and field number otherwise, so no data is silently dropped.
 */
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { messagePackage, PROTO_MESSAGES } from './protobufSchema.js';

/** The media type (request Content-Type) of protobuf bodies. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** `protoEncodingPrefix`: every protobuf body starts with these bytes. */
export const PROTOBUF_MAGIC = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

/** A decoded body: the Unknown envelope's apiVersion/kind and the JSON-shaped object. */
export interface DecodedProtobuf {
  readonly apiVersion: string;
  readonly kind: string;
  readonly object: Record<string, unknown>;
}

/** Why a body could not be decoded (the HTTP facade answers it as a 400 / 415 Status). */
export interface ProtobufError {
  readonly code: 400 | 415;
  readonly message: string;
}

export function isProtobufError(x: unknown): x is ProtobufError {
  return typeof x === 'object' && x !== null && 'code' in x && 'message' in x && !('object' in x);
}

// ---- schema ---------------------------------------------------------------------------------------

type Scalar = 'string' | 'bool' | 'int32' | 'int64' | 'Time' | 'MicroTime' | 'Quantity' | 'IntOrString' | 'FieldsV1' | 'RawExtension';
const SCALARS = new Set<string>(['string', 'bool', 'int32', 'int64', 'Time', 'MicroTime', 'Quantity', 'IntOrString', 'FieldsV1', 'RawExtension']);

interface FieldSpec {
  /** JSON name; undefined for an inlined embedded struct. */
  readonly name: string | undefined;
  readonly number: number;
  /** A scalar, or a message key of PROTO_MESSAGES. */
  readonly type: string;
  readonly pointer: boolean;
  readonly repeated: boolean;
  readonly map: boolean;
}

type MessageSpec = ReadonlyMap<number, FieldSpec>;

const parsed = new Map<string, MessageSpec>();

/** The parsed fields of message `key` (PROTO_MESSAGES notation), cached. */
function messageSpec(key: string): MessageSpec {
  let spec = parsed.get(key);
  if (spec) return spec;
  const raw = PROTO_MESSAGES[key];
  if (!raw) throw new Error(`protobuf schema: no message ${key}`);
  const fields = new Map<number, FieldSpec>();
  for (const [num, text] of Object.entries(raw)) {
    const [name, typeText] = text.split(' ');
    let t = typeText;
    let pointer = false;
    let repeated = false;
    let map = false;
    if (t.startsWith('*')) [pointer, t] = [true, t.slice(1)];
    if (t.startsWith('[]')) [repeated, t] = [true, t.slice(2)];
    if (t.startsWith('map[string]')) [map, t] = [true, t.slice('map[string]'.length)];
    if (!SCALARS.has(t) && !PROTO_MESSAGES[t]) throw new Error(`protobuf schema: ${key} field ${num} has unknown type ${t}`);
    fields.set(Number(num), { name: name === '...' ? undefined : name, number: Number(num), type: t, pointer, repeated, map });
  }
  spec = fields;
  parsed.set(key, spec);
  return spec;
}

/** The protobuf full name of a message key, for error messages. */
export function protoName(key: string): string {
  const [pkg, kind] = key.split('.');
  return pkg === 'meta' ? `k8s.io.apimachinery.pkg.apis.meta.v1.${kind}` : `k8s.io.api.${pkg}.v1.${kind}`;
}

/**
 * The message of the kind an Unknown envelope names. Kinds podsim serves (and DeleteOptions,
 * which every group version registers); policy v1beta1 Eviction has the same fields as v1.
 */
export function messageForKind(apiVersion: string, kind: string): string | undefined {
  if (kind === 'DeleteOptions') return 'meta.DeleteOptions';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
  const pkg = messagePackage(group);
  if (group === 'policy' ? version !== 'v1' && version !== 'v1beta1' : version !== 'v1') return undefined;
  if (!['core', 'apps', 'autoscaling', 'policy', 'batch', 'discovery.k8s.io', 'coordination.k8s.io'].includes(group === '' ? 'core' : group)) return undefined;
  const key = `${pkg}.${kind}`;
  return PROTO_MESSAGES[key] && ROOTS.has(key) ? key : undefined;
}

/** Top-level kinds (not the messages nested in them). */
const ROOTS = new Set(['core.Pod', 'core.Node', 'core.Namespace', 'core.Event', 'core.Binding', 'apps.Deployment', 'apps.ReplicaSet', 'autoscaling.Scale', 'policy.Eviction', 'policy.PodDisruptionBudget', 'apps.DaemonSet', 'batch.Job', 'core.PersistentVolumeClaim', 'core.Service', 'core.Endpoints', 'apps.StatefulSet', 'apps.ControllerRevision', 'discovery.EndpointSlice', 'coordination.Lease']);

// ---- decoding -------------------------------------------------------------------------------------

class DecodeError extends Error {}

const WIRE_NAMES: Record<number, string> = { 0: 'varint', 1: 'fixed64', 2: 'length-delimited', 3: 'start group', 4: 'end group', 5: 'fixed32' };

/** The wire type of a field (proto2: repeated scalars are not packed; a map entry is a message). */
function expectedWire(f: FieldSpec): WireType {
  if (f.map) return WireType.LengthDelimited;
  return f.type === 'bool' || f.type === 'int32' || f.type === 'int64' ? WireType.Varint : WireType.LengthDelimited;
}

function toNumber(v: bigint | string): number {
  return Number(v);
}

/** RFC 3339 in UTC, seconds precision (`metav1.Time`) or microseconds (`metav1.MicroTime`). */
function formatTime(seconds: number, nanos: number, micro: boolean): string {
  const d = new Date(seconds * 1000);
  const base = d.toISOString().slice(0, 19);
  if (!micro) return `${base}Z`;
  return `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

/** Whether the bytes of an unknown length-delimited field hold nothing but zero values. */
function carriesNoData(bytes: Uint8Array, depth = 0): boolean {
  if (bytes.length === 0) return true;
  if (depth > 32) return false;
  try {
    const r = new BinaryReader(bytes);
    while (r.pos < r.len) {
      const [, wt] = r.tag();
      if (wt === WireType.Varint) {
        if (BigInt(r.uint64()) !== 0n) return false;
      } else if (wt === WireType.LengthDelimited) {
        if (!carriesNoData(r.bytes(), depth + 1)) return false;
      } else if (wt === WireType.Bit32) {
        if (r.fixed32() !== 0) return false;
      } else if (wt === WireType.Bit64) {
        if (BigInt(r.fixed64()) !== 0n) return false;
      } else return false;
    }
    return true;
  } catch {
    return false;
  }
}

/** Reads past an unknown field; whether it held only a zero value (see the module header). */
function unknownFieldIsEmpty(r: BinaryReader, wt: WireType, n: number): boolean {
  switch (wt) {
    case WireType.Varint:
      return BigInt(r.uint64()) === 0n;
    case WireType.LengthDelimited:
      return carriesNoData(r.bytes());
    case WireType.Bit32:
      return r.fixed32() === 0;
    case WireType.Bit64:
      return BigInt(r.fixed64()) === 0n;
    default:
      r.skip(wt, n);
      return false;
  }
}

function readScalar(r: BinaryReader, f: FieldSpec, msgKey: string): unknown {
  switch (f.type as Scalar) {
    case 'string':
      return r.string();
    case 'bool':
      return r.bool();
    case 'int32':
      return r.int32();
    case 'int64':
      return toNumber(r.int64());
    case 'Time':
    case 'MicroTime': {
      const b = r.bytes();
      if (b.length === 0) return undefined;
      const t = new BinaryReader(b);
      let seconds = 0;
      let nanos = 0;
      while (t.pos < t.len) {
        const [n, wt] = t.tag();
        if (n === 1 && wt === WireType.Varint) seconds = toNumber(t.int64());
        else if (n === 2 && wt === WireType.Varint) nanos = t.int32();
        else throw new DecodeError(`${protoName(msgKey)} field ${f.number} (${f.name ?? ''}): a Timestamp has no field ${n} (${WIRE_NAMES[wt] ?? wt})`);
      }
      if (!Number.isFinite(seconds) || Math.abs(seconds) > 253402300799) throw new DecodeError(`${protoName(msgKey)} field ${f.number} (${f.name ?? ''}): time out of range (${seconds} s)`);
      return formatTime(seconds, f.type === 'MicroTime' ? nanos : 0, f.type === 'MicroTime');
    }
    case 'Quantity': {
      const q = new BinaryReader(r.bytes());
      let s = '';
      while (q.pos < q.len) {
        const [n, wt] = q.tag();
        if (n === 1 && wt === WireType.LengthDelimited) s = q.string();
        else throw new DecodeError(`${protoName(msgKey)} field ${f.number} (${f.name ?? ''}): a Quantity has no field ${n}`);
      }
      return s === '' ? '0' : s;
    }
    case 'IntOrString': {
      const q = new BinaryReader(r.bytes());
      let type = 0;
      let intVal = 0;
      let strVal = '';
      while (q.pos < q.len) {
        const [n, wt] = q.tag();
        if (n === 1 && wt === WireType.Varint) type = toNumber(q.int64());
        else if (n === 2 && wt === WireType.Varint) intVal = q.int32();
        else if (n === 3 && wt === WireType.LengthDelimited) strVal = q.string();
        else throw new DecodeError(`${protoName(msgKey)} field ${f.number} (${f.name ?? ''}): an IntOrString has no field ${n}`);
      }
      return type === 1 ? strVal : intVal;
    }
    case 'RawExtension':
    case 'FieldsV1': {
      const q = new BinaryReader(r.bytes());
      let raw: Uint8Array = new Uint8Array();
      while (q.pos < q.len) {
        const [n, wt] = q.tag();
        if (n === 1 && wt === WireType.LengthDelimited) raw = q.bytes();
        else throw new DecodeError(`${protoName(msgKey)} field ${f.number} (${f.name ?? ''}): a ${f.type} has no field ${n}`);
      }
      if (raw.length === 0) return undefined;
      try {
        return JSON.parse(new TextDecoder().decode(raw)) as unknown;
      } catch {
        throw new DecodeError(`${protoName(msgKey)} field ${f.number} (${f.name ?? ''}): ${f.name ?? f.type} is not JSON`);
      }
    }
  }
  throw new Error(`protobuf schema: ${f.type} is not a scalar`);
}

/** Whether a decoded scalar is the zero value Go's JSON `omitempty` leaves out. */
function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false || v === undefined;
}

/** One map entry (`key = 1`, `value = 2`). */
function readMapEntry(bytes: Uint8Array, f: FieldSpec, msgKey: string, depth: number): [string, unknown] {
  const r = new BinaryReader(bytes);
  let key = '';
  let value: unknown = f.type === 'string' ? '' : f.type === 'Quantity' ? '0' : {};
  const valueSpec: FieldSpec = { ...f, map: false, repeated: false, pointer: true };
  while (r.pos < r.len) {
    const [n, wt] = r.tag();
    if (n === 1 && wt === WireType.LengthDelimited) key = r.string();
    else if (n === 2 && wt === expectedWire(valueSpec)) value = SCALARS.has(f.type) ? readScalar(r, valueSpec, msgKey) : readMessage(r.bytes(), f.type, depth + 1);
    else throw new DecodeError(`${protoName(msgKey)} field ${f.number} (${f.name ?? ''}): a map entry has no field ${n} (${WIRE_NAMES[wt] ?? wt})`);
  }
  return [key, value];
}

/** Decodes message `key` from `bytes` into a JSON-shaped object. */
function readMessage(bytes: Uint8Array, key: string, depth: number): Record<string, unknown> {
  if (depth > 64) throw new DecodeError(`${protoName(key)}: nested too deeply`);
  const spec = messageSpec(key);
  const out: Record<string, unknown> = {};
  const r = new BinaryReader(bytes);
  while (r.pos < r.len) {
    const [n, wt] = r.tag();
    const f = spec.get(n);
    if (!f) {
      if (!unknownFieldIsEmpty(r, wt, n)) throw new DecodeError(`${protoName(key)} has no field ${n} (${WIRE_NAMES[wt] ?? `wire type ${wt}`}) that podsim decodes (the fields of Kubernetes v1.22.8)`);
      continue;
    }
    if (wt !== expectedWire(f)) {
      throw new DecodeError(`${protoName(key)} field ${n} (${f.name ?? 'inline'}): expected ${WIRE_NAMES[expectedWire(f)]}, got ${WIRE_NAMES[wt] ?? `wire type ${wt}`}`);
    }
    if (f.name === undefined) {
      // An embedded struct JSON inlines (VolumeSource in Volume, Handler in Probe).
      Object.assign(out, readMessage(r.bytes(), f.type, depth + 1));
      continue;
    }
    if (f.map) {
      const [k, v] = readMapEntry(r.bytes(), f, key, depth);
      const m = (out[f.name] ??= {}) as Record<string, unknown>;
      // defineProperty, not `m[k] = v`: a key "__proto__" must stay a key, as JSON.parse keeps it.
      Object.defineProperty(m, k, { value: v, enumerable: true, writable: true, configurable: true });
      continue;
    }
    const value = SCALARS.has(f.type) ? readScalar(r, f, key) : readMessage(r.bytes(), f.type, depth + 1);
    if (f.repeated) {
      ((out[f.name] ??= []) as unknown[]).push(value ?? null);
      continue;
    }
    if (SCALARS.has(f.type) && (value === undefined || (!f.pointer && isZero(value)))) {
      // A later zero value still overrides an earlier one (last one wins, as in protobuf).
      delete out[f.name];
      continue;
    }
    out[f.name] = value;
  }
  return out;
}

function startsWithMagic(body: Uint8Array): boolean {
  return body.length >= 4 && PROTOBUF_MAGIC.every((b, i) => body[i] === b);
}

/**
 * Decodes a protobuf request body. 400 when it is not a `k8s\0` + runtime.Unknown body, names a
 * kind podsim does not serve, or holds a field that is malformed or unknown (with data); 415 for
 * an envelope `contentEncoding` (upstream accepts none either).
 */
export function decodeProtobufBody(body: Uint8Array): DecodedProtobuf | ProtobufError {
  if (!startsWithMagic(body)) return { code: 400, message: 'the protobuf body does not start with the Kubernetes magic number (6b 38 73 00, "k8s\\0")' };
  let apiVersion = '';
  let kind = '';
  let raw: Uint8Array = new Uint8Array();
  let contentEncoding = '';
  try {
    const r = new BinaryReader(body.subarray(4));
    while (r.pos < r.len) {
      const [n, wt] = r.tag();
      if (n === 1 && wt === WireType.LengthDelimited) {
        const t = new BinaryReader(r.bytes());
        while (t.pos < t.len) {
          const [m, mwt] = t.tag();
          if (m === 1 && mwt === WireType.LengthDelimited) apiVersion = t.string();
          else if (m === 2 && mwt === WireType.LengthDelimited) kind = t.string();
          else t.skip(mwt, m);
        }
      } else if (n === 2 && wt === WireType.LengthDelimited) raw = r.bytes();
      else if (n === 3 && wt === WireType.LengthDelimited) contentEncoding = r.string();
      else r.skip(wt, n);
    }
    if (contentEncoding !== '') return { code: 415, message: `the protobuf body has contentEncoding ${JSON.stringify(contentEncoding)}; only unencoded bodies are accepted` };
    if (kind === '') return { code: 400, message: 'the protobuf body names no kind (runtime.Unknown typeMeta.kind is empty)' };
    const key = messageForKind(apiVersion, kind);
    if (!key) return { code: 400, message: `no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in podsim's protobuf decoder` };
    const object = readMessage(raw, key, 0);
    return { apiVersion, kind, object: key === 'meta.DeleteOptions' ? { kind, apiVersion, ...object } : { apiVersion, kind, ...object } };
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    return { code: 400, message: e instanceof DecodeError ? `protobuf body: ${msg}` : `malformed protobuf body: ${msg}` };
  }
}
