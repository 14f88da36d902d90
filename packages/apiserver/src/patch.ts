/**
 * PATCH mechanics of k8s.io/apiserver v0.22.8 `pkg/endpoints/handlers/patch.go`
 * (applyPatchToCurrentObject): JSON merge patch (RFC 7386), JSON patch (RFC 6902), and the
 * parts of strategic merge patch (`k8s.io/apimachinery/pkg/util/strategicpatch`) that kubectl
 * and the kubelet send — lists merged by their patchMergeKey (containers, env, ports,
 * volumeMounts, conditions, …), `$patch: replace|delete`, `$retainKeys`,
 * `$setElementOrder/<list>`, `$deleteFromPrimitiveList/<list>`, merge-strategy primitive lists
 * (finalizers). Server-side apply is approximated by a strategic merge of the applied object.
 * All functions return a new value and never mutate their inputs.
 */
import { deepClone, isPlainObject } from './objects.js';

/**
 * A patch failure: `code` is the HTTP code the handler answers: 400 or 422, or 500 for an error
 * upstream's `interpretStrategicMergePatchError` passes through unconverted (an unknown
 * `$patch` directive, a `$patch: delete` list item without its merge key), which
 * `ErrorToAPIStatus` answers as a 500 with no reason.
 */
export interface PatchError {
  readonly patchError: string;
  readonly code: 400 | 422 | 500;
}

/** Go's `fmt` `%v` of a decoded JSON value (maps with sorted keys, as fmt prints them). */
function goValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (isPlainObject(v)) return `map[${Object.keys(v).sort().map((k) => `${k}:${goValue(v[k])}`).join(' ')}]`;
  if (typeof v === 'number') return goFloat(v);
  return String(v);
}

/** `%v` of a float64 (`%g` with the shortest representation: 1e+21, 1.5, 100000). */
function goFloat(n: number): string {
  const exp = n === 0 ? 0 : Math.floor(Math.log10(Math.abs(n)));
  if (exp < -4 || exp >= 21) return n.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  return String(n);
}

/** `mergepatch.ErrBadPatchType`: `unknown patch type: <t> in map: <m>` (`%s` of a non-string is `%!s(float64=5)`). */
function badPatchType(t: unknown, m: Record<string, unknown>): PatchError {
  const ts = typeof t === 'string' ? t : `%!s(${typeof t === 'number' ? 'float64' : typeof t === 'boolean' ? 'bool' : isPlainObject(t) ? 'map[string]interface {}' : Array.isArray(t) ? '[]interface {}' : '<nil>'}=${goValue(t)})`;
  return { patchError: `unknown patch type: ${ts} in map: ${goValue(m)}`, code: 500 };
}

export function isPatchError(x: unknown): x is PatchError {
  return isPlainObject(x) && typeof x.patchError === 'string';
}

// ---- RFC 7386 -----------------------------------------------------------------------------------

/** JSON merge patch: objects merge recursively, `null` deletes, everything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return deepClone(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

// ---- RFC 6902 -----------------------------------------------------------------------------------

interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  from?: string;
  value?: unknown;
}

function parsePointer(p: string): string[] | undefined {
  if (p === '') return [];
  if (!p.startsWith('/')) return undefined;
  return p
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function getAt(doc: unknown, parts: string[]): { ok: boolean; value?: unknown } {
  let cur = doc;
  for (const part of parts) {
    if (Array.isArray(cur)) {
      const i = Number(part);
      if (!/^\d+$/.test(part) || i >= cur.length) return { ok: false };
      cur = cur[i];
    } else if (isPlainObject(cur)) {
      if (!(part in cur)) return { ok: false };
      cur = cur[part];
    } else return { ok: false };
  }
  return { ok: true, value: cur };
}

/**
 * Applies one op in place on `doc` (a private copy). Returns an error text or undefined, worded
 * as evanphx/json-patch v4 (`Patch.add` / `replace` / `remove` / `move` / `copy` / `test`, errors
 * wrapped with `ErrMissing` "missing value", `ErrInvalidIndex`, `ErrTestFailed`), which the
 * apiserver's jsonPatcher returns as the 422's message.
 */
function applyOp(root: { doc: unknown }, op: JsonPatchOp): string | undefined {
  const parts = parsePointer(op.path);
  if (!parts) return `invalid JSON pointer ${JSON.stringify(op.path)}`;
  /** `verb` names the operation in the message; `dest` marks move/copy's destination. */
  const setAt = (ps: string[], value: unknown, insert: boolean, verb: string, dest = false): string | undefined => {
    if (ps.length === 0) {
      root.doc = value;
      return undefined;
    }
    const parent = getAt(root.doc, ps.slice(0, -1));
    const last = ps[ps.length - 1];
    const missingPath = () =>
      dest ? `${verb} operation does not apply: doc is missing destination path: ${op.path}: missing value` : verb === 'add' ? `add operation does not apply: doc is missing path: "${op.path}": missing value` : `${verb} operation does not apply: doc is missing path: ${op.path}: missing value`;
    if (!parent.ok) return missingPath();
    if (Array.isArray(parent.value)) {
      const arr = parent.value;
      const i = last === '-' ? arr.length : Number(last);
      if (!(i >= 0 && i <= arr.length) || (!insert && i >= arr.length)) {
        if (!insert) return `${verb} operation does not apply: doc is missing key: ${op.path}: missing value`;
        return `unable to access invalid index: ${last}: invalid index referenced`;
      }
      if (insert) arr.splice(i, 0, value);
      else arr[i] = value;
      return undefined;
    }
    if (isPlainObject(parent.value)) {
      if (!insert && !(last in parent.value)) return `${verb} operation does not apply: doc is missing key: ${op.path}: missing value`;
      parent.value[last] = value;
      return undefined;
    }
    return missingPath();
  };
  const removeAt = (ps: string[], path: string): { err?: string; value?: unknown } => {
    if (ps.length === 0) return { err: 'cannot remove the whole document' };
    const parent = getAt(root.doc, ps.slice(0, -1));
    const last = ps[ps.length - 1];
    if (!parent.ok || !(Array.isArray(parent.value) || isPlainObject(parent.value))) return { err: `remove operation does not apply: doc is missing path: "${path}": missing value` };
    if (Array.isArray(parent.value)) {
      const i = Number(last);
      if (!(i >= 0 && i < parent.value.length)) return { err: `unable to access invalid index: ${last}: invalid index referenced` };
      return { value: parent.value.splice(i, 1)[0] };
    }
    if (last in parent.value) {
      const v = parent.value[last];
      delete parent.value[last];
      return { value: v };
    }
    return { err: `unable to remove nonexistent key: ${last}: missing value` };
  };
  switch (op.op) {
    case 'add':
      return setAt(parts, deepClone(op.value), true, 'add');
    case 'replace':
      return setAt(parts, deepClone(op.value), false, 'replace');
    case 'remove':
      return removeAt(parts, op.path).err;
    case 'test': {
      const got = getAt(root.doc, parts);
      if (!got.ok || JSON.stringify(got.value) !== JSON.stringify(op.value)) return `testing value ${op.path} failed: test failed`;
      return undefined;
    }
    case 'move':
    case 'copy': {
      const from = parsePointer(op.from ?? '');
      if (!from) return `invalid JSON pointer ${JSON.stringify(op.from)}`;
      const src = getAt(root.doc, from);
      if (!src.ok) return `${op.op} operation does not apply: doc is missing from path: ${op.from}: missing value`;
      if (op.op === 'move') {
        const r = removeAt(from, op.from ?? '');
        if (r.err) return r.err;
        return setAt(parts, r.value, true, 'move', true);
      }
      return setAt(parts, deepClone(src.value), true, 'copy', true);
    }
    default:
      return `Unexpected kind: ${String((op as { op: unknown }).op)}`;
  }
}

/** RFC 6902 JSON patch. */
export function jsonPatch(target: unknown, patch: unknown): unknown | PatchError {
  if (!Array.isArray(patch)) return { patchError: 'json: cannot unmarshal object into Go value of type jsonpatch.Patch', code: 400 };
  const root = { doc: deepClone(target) };
  for (const op of patch as JsonPatchOp[]) {
    const err = applyOp(root, op);
    if (err) return { patchError: err, code: 422 };
  }
  return root.doc;
}

// ---- strategic merge patch ----------------------------------------------------------------------

/** patchMergeKey of each list field that merges (`patchStrategy:"merge"`) in the types podsim serves. */
export const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  imagePullSecrets: 'name',
  env: 'name',
  ports: 'containerPort',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  conditions: 'type',
  ownerReferences: 'uid',
  addresses: 'type',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
  podIPs: 'ip',
};

/** Primitive lists with `patchStrategy:"merge"` (union semantics). */
const MERGE_PRIMITIVE_LISTS = new Set(['finalizers']);

function mergeList(field: string, original: unknown, patch: unknown[], order: unknown[] | undefined): unknown[] | PatchError {
  const key = MERGE_KEYS[field];
  if (MERGE_PRIMITIVE_LISTS.has(field)) {
    const out = Array.isArray(original) ? [...original] : [];
    for (const v of patch) if (!out.includes(v)) out.push(v);
    return out;
  }
  if (!key) return deepClone(patch);
  // `$patch: replace` anywhere in the list replaces it with the other items.
  let replace = false;
  for (const p of patch) {
    if (isPlainObject(p) && p.$patch === 'replace') {
      replace = true;
      break;
    }
  }
  if (replace) return patch.filter((p) => !(isPlainObject(p) && p.$patch === 'replace')).map((p) => deepClone(p));
  const out: unknown[] = Array.isArray(original) ? [...original] : [];
  // mergeSliceWithSpecialElements: delete and replace are the only directives in a list item.
  for (const item of patch) {
    if (!isPlainObject(item) || !('$patch' in item)) continue;
    const d = item.$patch;
    if (d === 'delete' && !(key in item)) return { patchError: `map: ${goValue(item)} does not contain declared merge key: ${key}`, code: 500 };
    if (d === 'merge') return { patchError: 'merging lists cannot yet be specified in the patch', code: 500 };
    if (d !== 'delete' && d !== 'replace') return badPatchType(d, item);
  }
  for (const item of patch) {
    if (!isPlainObject(item)) return { patchError: `unable to find api field in struct for the list ${field}`, code: 400 };
    const k = item[key];
    let idx = -1;
    for (let i = 0; i < out.length; i++) {
      const o = out[i];
      if (isPlainObject(o) && o[key] === k) {
        idx = i;
        break;
      }
    }
    if (item.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) {
      const merged = strategicMergePatch(out[idx], item);
      if (isPatchError(merged)) return merged;
      out[idx] = merged;
    } else {
      const fresh = strategicMergePatch(undefined, item);
      if (isPatchError(fresh)) return fresh;
      out.push(fresh);
    }
  }
  if (order) {
    // The items the order names first, sorted by the position of the first order entry with
    // their merge key (a stable sort: ties keep their place), then the others in place.
    const positions = out.map((o) => orderPosition(order, key, o));
    const inOrder: number[] = [];
    const rest: unknown[] = [];
    for (let i = 0; i < out.length; i++) {
      if (positions[i] >= 0) inOrder.push(i);
      else rest.push(out[i]);
    }
    inOrder.sort((a, b) => positions[a] - positions[b]);
    const sorted: unknown[] = inOrder.map((i) => out[i]);
    for (const o of rest) sorted.push(o);
    return sorted;
  }
  return out;
}

/** Index of the first entry of `order` with `o`'s merge key value (-1: none, or `o` is not an object). */
function orderPosition(order: readonly unknown[], key: string, o: unknown): number {
  if (!isPlainObject(o)) return -1;
  const v = o[key];
  for (let i = 0; i < order.length; i++) {
    const x = order[i];
    if (isPlainObject(x) && x[key] === v) return i;
  }
  return -1;
}

/** A `$`-key that {@link strategicMergePatch} reads as a directive rather than a field. */
function isDirectiveKey(k: string): boolean {
  return k.charCodeAt(0) === 36 && (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/') || k.startsWith('$deleteFromPrimitiveList/'));
}

/**
 * Strategic merge patch of `patch` onto `original` (a new value is returned). Maps merge, `null`
 * deletes a key, lists merge by patchMergeKey where Kubernetes declares one, else replace.
 */
export function strategicMergePatch(original: unknown, patch: unknown): unknown | PatchError {
  if (!isPlainObject(patch)) return deepClone(patch);
  if (patch.$patch === 'delete') return undefined;
  if (patch.$patch === 'replace') {
    const { $patch: _p, ...rest } = patch;
    return deepClone(rest);
  }
  // handleDirectiveInMergeMap: any other directive in a map (even `merge`) is ErrBadPatchType.
  if ('$patch' in patch) return badPatchType(patch.$patch, patch);
  const out: Record<string, unknown> = isPlainObject(original) ? { ...original } : {};
  // Directive keys are rare (the kubelet's `$setElementOrder/conditions`); without any, the
  // directive passes below are skipped.
  let directives = false;
  for (const k in patch) {
    if (isDirectiveKey(k)) {
      directives = true;
      break;
    }
  }
  for (const k in patch) {
    if (directives && isDirectiveKey(k)) continue;
    const v = patch[k];
    if (v === null) {
      delete out[k];
      continue;
    }
    if (Array.isArray(v)) {
      const order = directives ? patch[`$setElementOrder/${k}`] : undefined;
      const merged = mergeList(k, out[k], v, Array.isArray(order) ? order : undefined);
      if (isPatchError(merged)) return merged;
      out[k] = merged;
      continue;
    }
    if (isPlainObject(v)) {
      const merged = strategicMergePatch(out[k], v);
      if (isPatchError(merged)) return merged;
      if (merged === undefined) delete out[k];
      else out[k] = merged;
      continue;
    }
    out[k] = v;
  }
  if (!directives) return out;
  for (const k in patch) {
    const v = patch[k];
    if (k.startsWith('$deleteFromPrimitiveList/') && Array.isArray(v)) {
      const list = k.slice('$deleteFromPrimitiveList/'.length);
      if (Array.isArray(out[list])) out[list] = (out[list] as unknown[]).filter((x) => !v.includes(x));
    }
    if (k.startsWith('$setElementOrder/') && !(k.slice('$setElementOrder/'.length) in patch)) {
      // Only an order directive: reorder the existing list.
      const list = k.slice('$setElementOrder/'.length);
      if (Array.isArray(out[list]) && Array.isArray(v)) {
        const merged = mergeList(list, out[list], [], v);
        if (!isPatchError(merged)) out[list] = merged;
      }
    }
  }
  const retain = patch.$retainKeys;
  if (Array.isArray(retain)) for (const k of Object.keys(out)) if (!retain.includes(k)) delete out[k];
  return out;
}

/** The patch types the API accepts (Content-Type of a PATCH). */
export type PatchKind = 'merge' | 'strategic' | 'json' | 'apply';

/** Applies a decoded patch of `kind` to `current` (the object as JSON). */
export function applyPatch(kind: PatchKind, current: unknown, patch: unknown): unknown | PatchError {
  switch (kind) {
    case 'json':
      return jsonPatch(current, patch);
    case 'merge':
      if (!isPlainObject(patch)) return { patchError: 'json: cannot unmarshal array into Go value of type map[string]interface {}', code: 400 };
      return mergePatch(current, patch);
    case 'strategic':
    case 'apply':
      if (!isPlainObject(patch)) return { patchError: 'json: cannot unmarshal array into Go value of type map[string]interface {}', code: 400 };
      return strategicMergePatch(current, patch);
  }
}
