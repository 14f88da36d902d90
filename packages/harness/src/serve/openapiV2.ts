/**
 * `GET /openapi/v2`: the Swagger 2.0 document of `podsim serve`, built from the same generated
 * schemas as `/openapi/v3` (openapi.ts, from podsim's type table protobufSchema.ts), as
 * kube-apiserver v1.22.8 serves its v2 spec (k8s.io/kube-openapi `pkg/handler`
 * `OpenAPIService.RegisterOpenAPIVersionedService`): JSON by default, and the gnostic
 * `openapi_v2.Document` protobuf (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`),
 * which is what client-go's `OpenAPISchema()` asks for (kubectl `explain
 * --output=plaintext-openapiv2`, and what a v1.22 kubectl validates manifests against).
 *
 * Definitions are named as kube-openapi names them (`io.k8s.api.core.v1.Pod`), each kind with its
 * `x-kubernetes-group-version-kind`; a field that is another type is a `$ref` beside its
 * description (v2 needs no allOf wrapper). `paths` is empty: podsim's routes are described by
 * discovery, and nothing kubectl reads from v2 needs them.
 */
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { componentSchemas } from './openapi.js';

type Schema = Record<string, unknown>;

/**
 * The Content-Type of the protobuf answer. client-go asks for `…spec.v2@v1.0+protobuf`
 * (`openAPIV2mimePb`), but kube-openapi answers with the `.v1.0+` spelling: Go's
 * `mime.ParseMediaType` refuses the `@` ("unexpected content after media subtype").
 */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** Whether an Accept header asks for the protobuf form of `/openapi/v2`. */
export function wantsOpenApiV2Protobuf(accept: string): boolean {
  return /application\/com\.github\.proto-openapi\.spec\.v2[@.]v1\.0\+protobuf/.test(accept);
}

/** A v3 component schema as its v2 definition: `#/definitions/` refs, `allOf: [ref]` unwrapped. */
function toV2(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(toV2);
  if (s === null || typeof s !== 'object') return s;
  const o = s as Schema;
  const out: Schema = {};
  const allOf = o.allOf as Schema[] | undefined;
  if (allOf && allOf.length === 1 && typeof allOf[0].$ref === 'string') out.$ref = allOf[0].$ref;
  for (const [k, v] of Object.entries(o)) {
    if (k === 'allOf' && out.$ref !== undefined) continue;
    if (k === 'default' && out.$ref !== undefined) continue;
    if (k === '$ref') out.$ref = v;
    else if (k === 'properties' || k === 'additionalProperties' || k === 'items') out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as Schema).map(([pk, pv]) => [pk, toV2(pv)])) : toV2(v);
    else out[k] = v;
  }
  if (typeof out.$ref === 'string') out.$ref = out.$ref.replace('#/components/schemas/', '#/definitions/');
  return out;
}

/**
 * The Swagger 2.0 document: every served group's kinds (`groups`, `''` = core, each with its
 * served kinds) and what they reference, one definition per type; a kind's own schema (with its
 * group-version-kind) wins over the copy another group's document references.
 */
export function openApiV2Doc(groups: ReadonlyArray<{ group: string; kinds: readonly string[] }>, version: string): Schema {
  const definitions: Record<string, Schema> = {};
  for (const { group, kinds } of groups) {
    for (const [name, s] of Object.entries(componentSchemas(group, kinds))) {
      if (definitions[name] === undefined || (s['x-kubernetes-group-version-kind'] !== undefined && definitions[name]['x-kubernetes-group-version-kind'] === undefined)) {
        definitions[name] = toV2(s) as Schema;
      }
    }
  }
  const sorted = Object.fromEntries(Object.entries(definitions).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { swagger: '2.0', info: { title: 'Kubernetes (podsim)', version }, paths: {}, definitions: sorted };
}

// ---- gnostic openapi_v2 protobuf (github.com/google/gnostic openapiv2/OpenAPIv2.proto) ----------

function str(w: BinaryWriter, field: number, v: unknown): void {
  if (typeof v === 'string' && v !== '') w.tag(field, WireType.LengthDelimited).string(v);
}

function sub(w: BinaryWriter, field: number, body: (w: BinaryWriter) => void): void {
  w.tag(field, WireType.LengthDelimited).fork();
  body(w);
  w.join();
}

/** `openapi.v2.Schema`: the fields podsim's schemas use. */
function writeSchema(w: BinaryWriter, s: Schema): void {
  str(w, 1, s.$ref); // _ref
  str(w, 2, s.format);
  str(w, 4, s.description);
  for (const r of (s.required as string[] | undefined) ?? []) str(w, 19, r);
  if (s.additionalProperties !== undefined && typeof s.additionalProperties === 'object') {
    sub(w, 21, (a) => sub(a, 1, (x) => writeSchema(x, s.additionalProperties as Schema))); // AdditionalPropertiesItem.schema
  }
  if (typeof s.type === 'string') sub(w, 22, (t) => str(t, 1, s.type)); // TypeItem.value
  if (s.items !== undefined) sub(w, 23, (i) => sub(i, 1, (x) => writeSchema(x, s.items as Schema))); // ItemsItem.schema
  if (s.properties !== undefined) {
    sub(w, 25, (p) => {
      for (const [name, v] of Object.entries(s.properties as Record<string, Schema>)) {
        sub(p, 1, (n) => {
          str(n, 1, name);
          sub(n, 2, (x) => writeSchema(x, v));
        }); // Properties.additional_properties: NamedSchema
      }
    });
  }
  for (const [k, v] of Object.entries(s)) {
    if (!k.startsWith('x-')) continue;
    // NamedAny { name, value: Any { yaml } }: kube-openapi reads vendor extensions from their YAML (JSON is YAML).
    sub(w, 31, (n) => {
      str(n, 1, k);
      sub(n, 2, (a) => str(a, 2, JSON.stringify(v)));
    });
  }
}

/** The document as an `openapi.v2.Document` protobuf message. */
export function encodeOpenApiV2(doc: Schema): Uint8Array {
  const w = new BinaryWriter();
  str(w, 1, doc.swagger);
  const info = doc.info as { title: string; version: string };
  sub(w, 2, (i) => {
    str(i, 1, info.title);
    str(i, 2, info.version);
  });
  sub(w, 8, () => undefined); // paths: empty
  sub(w, 9, (d) => {
    for (const [name, s] of Object.entries(doc.definitions as Record<string, Schema>)) {
      sub(d, 1, (n) => {
        str(n, 1, name);
        sub(n, 2, (x) => writeSchema(x, s));
      }); // Definitions.additional_properties: NamedSchema
    }
  });
  return w.finish();
}
