/**
 * Unknown fields in a JSON / YAML request body, found against podsim's table of the k8s.io/api
 * v0.22.8 types (protobufSchema.ts) — what Go's typed decoding does to them. kube-apiserver v1.22
 * always drops them (the typed structs have nowhere to keep them); since v1.25 it also honours
 * `?fieldValidation=` (apiserver `pkg/endpoints/handlers/rest.go`, strict decoding with
 * sigs.k8s.io/json): `Strict` refuses the body with `strict decoding error: unknown field
 * "spec.foo"`, `Warn` drops them with a `Warning: unknown field "spec.foo"` header, `Ignore` (or
 * none) drops them silently.
 *
 * podsim advertises `fieldValidation` in its OpenAPI v3 (so kubectl ≥ 1.25 validates server-side
 * by default, sending `Strict`) and honours it: a v1.22 cluster refuses the same typo with
 * kubectl's client-side validation against `/openapi/v2` instead (which podsim serves too,
 * openapiV2.ts) — a different message, the same outcome: nothing is created.
 */
import { inlinesTypeMeta, messagePackage, PROTO_MESSAGES } from './protobufSchema.js';

/** `metav1.FieldValidation*`. */
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

interface FieldType {
  /** A message key of PROTO_MESSAGES, or undefined for a scalar. */
  readonly message?: string;
  readonly repeated: boolean;
  readonly map: boolean;
}

const fieldsOf = new Map<string, ReadonlyMap<string, FieldType>>();

/** JSON name → type of every field of `key`, embedded (`...`) structs inlined. */
function fields(key: string): ReadonlyMap<string, FieldType> {
  const f = fieldsOf.get(key);
  if (f) return f;
  const m = new Map<string, FieldType>();
  for (const text of Object.values(PROTO_MESSAGES[key] ?? {})) {
    const [name, typeText] = text.split(' ');
    let t = typeText.replace(/^\*/, '');
    const repeated = t.startsWith('[]');
    if (repeated) t = t.slice(2);
    const map = t.startsWith('map[string]');
    if (map) t = t.slice('map[string]'.length);
    const message = PROTO_MESSAGES[t] ? t : undefined;
    if (name === '...') {
      if (message) for (const [n, ft] of fields(message)) m.set(n, ft);
    } else m.set(name, { message, repeated, map });
  }
  fieldsOf.set(key, m);
  return m;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return x !== null && typeof x === 'object' && !Array.isArray(x);
}

/** One unknown field: where it is (segments: keys, list indexes) and the fields its parent message has. */
export interface UnknownField {
  readonly path: ReadonlyArray<string | number>;
  /** The path as the strict decoder names it: `spec.containers[0].imagePullPolicyy`, a map entry as `[key]`. */
  readonly text: string;
  /** JSON names of the fields the parent type does have (for "did you mean" hints). */
  readonly known: readonly string[];
}

/**
 * The fields of `obj` (a body of message `rootKey`, e.g. `core.Pod`) that the type does not
 * have, in document order; with `remove`, they are deleted from `obj` in place. A kind's
 * `apiVersion` and `kind` belong to it (at the top, and wherever a nested kind inlines TypeMeta).
 * In a patch (`patch`), keys starting with `$` are strategic-merge-patch directives, not fields.
 * An unknown `rootKey` finds nothing. Shared by `podsim serve` (fieldValidation) and the
 * scenario loader, so both refuse the same typos.
 */
export function findUnknownFields(obj: Record<string, unknown>, rootKey: string, opts: { patch?: boolean; remove?: boolean } = {}): UnknownField[] {
  if (!PROTO_MESSAGES[rootKey]) return [];
  const unknown: UnknownField[] = [];
  const walk = (o: Record<string, unknown>, key: string, path: ReadonlyArray<string | number>, text: string, top: boolean) => {
    const f = fields(key);
    const typeMeta = top || inlinesTypeMeta(key);
    for (const k of Object.keys(o)) {
      if (typeMeta && (k === 'apiVersion' || k === 'kind')) continue;
      if (opts.patch && k.startsWith('$')) continue;
      const p = [...path, k];
      const t = text ? `${text}.${k}` : k;
      const ft = f.get(k);
      if (!ft) {
        unknown.push({ path: p, text: t, known: [...f.keys(), ...(typeMeta ? ['apiVersion', 'kind'] : [])] });
        if (opts.remove) delete o[k];
        continue;
      }
      if (!ft.message) continue;
      const v = o[k];
      const msg = ft.message;
      if (ft.repeated && Array.isArray(v)) {
        v.forEach((e, i) => {
          if (isObject(e)) walk(e, msg, [...p, i], `${t}[${i}]`, false);
        });
      } else if (ft.map && isObject(v)) {
        for (const [mk, mv] of Object.entries(v)) if (isObject(mv)) walk(mv, msg, [...p, mk], `${t}[${mk}]`, false);
      } else if (isObject(v)) walk(v, msg, p, t, false);
    }
  };
  walk(obj, rootKey, [], '', true);
  return unknown;
}

/**
 * Removes the fields of `obj` that its type does not have, in place (see
 * {@link findUnknownFields}), and returns their paths as the strict decoder names them
 * (`spec.containers[0].imagePullPolicyy`; a map entry as `[key]`).
 */
export function pruneUnknownFields(obj: Record<string, unknown>, rootKey: string, patch = false): string[] {
  return findUnknownFields(obj, rootKey, { patch, remove: true }).map((u) => u.text);
}

/** The PROTO_MESSAGES key of a served kind of `group` (`''` = core). */
export function rootMessage(group: string, kind: string): string {
  return `${messagePackage(group)}.${kind}`;
}

/** `strict decoding error: unknown field "a", unknown field "b"` (sigs.k8s.io/json's strict errors joined). */
export function strictDecodingError(unknown: readonly string[]): string {
  return `strict decoding error: ${unknown.map((p) => `unknown field ${JSON.stringify(p)}`).join(', ')}`;
}
