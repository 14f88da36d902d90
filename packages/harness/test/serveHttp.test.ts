/**
 * The HTTP → apiserver-protocol translation of `podsim serve` (src/serve/http.ts), without
 * sockets: what kubectl's requests (spec/kubectl-rest.md) become, content negotiation, and the
 * Status errors for requests podsim cannot serve.
 */
import test from 'ava';
import { route, negotiate, type HttpRequestIn, type Outcome } from '../src/serve/http.js';
import { AGGREGATED_V2 } from '../src/serve/discovery.js';

const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const DISCOVERY_ACCEPT = `${AGGREGATED_V2},application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json`;

function req(method: string, url: string, headers: Record<string, string> = {}, body = ''): HttpRequestIn {
  return { method, url, headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])), body: Buffer.from(body) };
}

function go(r: HttpRequestIn): Outcome {
  return route(r, '127.0.0.1:1');
}

function statusOf(o: Outcome): { code: number; reason?: string; message?: string } {
  if (o.kind !== 'reply') throw new Error(`expected a reply, got ${o.kind}`);
  const b = o.body as { code: number; reason?: string; message?: string };
  return { code: o.status, reason: b.reason, message: b.message };
}

test('/version reports minor 32 (the dispatcher runs kubectl 1.32) and the simulated v1.22.8', (t) => {
  const o = go(req('GET', '/version?timeout=5s'));
  t.is(o.kind, 'reply');
  const body = (o as { body: { major: string; minor: string; gitVersion: string } }).body;
  t.deepEqual([body.major, body.minor], ['1', '32']);
  t.true(body.gitVersion.startsWith('v1.22.8'));
});

test('discovery is aggregated v2 only when Accept asks for it, with that exact Content-Type', (t) => {
  const agg = go(req('GET', '/api?timeout=32s', { Accept: DISCOVERY_ACCEPT })) as Extract<Outcome, { kind: 'reply' }>;
  t.is(agg.contentType, AGGREGATED_V2);
  const core = agg.body as { kind: string; items: { versions: { resources: { resource: string; shortNames?: string[] }[] }[] }[] };
  t.is(core.kind, 'APIGroupDiscoveryList');
  t.deepEqual(core.items[0].versions[0].resources.find((r) => r.resource === 'pods')?.shortNames, ['po']);
  const apps = go(req('GET', '/apis', { Accept: DISCOVERY_ACCEPT })) as Extract<Outcome, { kind: 'reply' }>;
  t.is((apps.body as { items: { metadata: { name: string } }[] }).items[0].metadata.name, 'apps');

  // kubectl 1.28 asks only for v2beta1: legacy discovery, plain JSON.
  const old = go(req('GET', '/api', { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json' })) as Extract<
    Outcome,
    { kind: 'reply' }
  >;
  t.is(old.contentType, undefined);
  t.is((old.body as { kind: string }).kind, 'APIVersions');
  const groups = go(req('GET', '/apis')) as Extract<Outcome, { kind: 'reply' }>;
  t.is((groups.body as { kind: string }).kind, 'APIGroupList');
  const v1 = go(req('GET', '/apis/apps/v1')) as Extract<Outcome, { kind: 'reply' }>;
  const names = (v1.body as { resources: { name: string; group?: string }[] }).resources.map((r) => r.name);
  t.true(names.includes('deployments/scale'));
});

test('openapi v3 stub has a PATCH with fieldValidation per kind; openapi v2 is JSON, or gnostic protobuf when asked', (t) => {
  const doc = go(req('GET', '/openapi/v3/apis/apps/v1')) as Extract<Outcome, { kind: 'reply' }>;
  const op = (doc.body as { paths: Record<string, { patch: { parameters: { name: string }[]; 'x-kubernetes-group-version-kind': { kind: string } } }> }).paths[
    '/apis/apps/v1/namespaces/{namespace}/deployments/{name}'
  ].patch;
  t.is(op['x-kubernetes-group-version-kind'].kind, 'Deployment');
  t.true(op.parameters.some((p) => p.name === 'fieldValidation'));
  const v2 = go(req('GET', '/openapi/v2?timeout=32s')) as Extract<Outcome, { kind: 'reply' }>;
  t.is(v2.status, 200);
  t.is((v2.body as { swagger: string }).swagger, '2.0');
  const pb = go(req('GET', '/openapi/v2?timeout=32s', { Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' })) as Extract<Outcome, { kind: 'reply' }>;
  t.is(pb.contentType, 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
  t.true(pb.body instanceof Uint8Array);
});

test('kubectl get pods: a Table list with every column (wide) — kubectl hides priority-1 columns itself', (t) => {
  const o = go(req('GET', '/api/v1/namespaces/default/pods?limit=500', { Accept: TABLE_ACCEPT }));
  t.deepEqual(o, { kind: 'api', format: 'json', request: { type: 'ApiList', resource: 'pods', namespace: 'default', asTable: true, wide: true } });
  const all = go(req('GET', '/api/v1/pods?labelSelector=app%3Dweb&includeObject=Object', { Accept: TABLE_ACCEPT }));
  t.deepEqual(all, {
    kind: 'api',
    format: 'json',
    request: { type: 'ApiList', resource: 'pods', labelSelector: 'app=web', asTable: true, wide: true, includeObject: 'Object' },
  });
  const yaml = go(req('GET', '/apis/apps/v1/namespaces/default/deployments/web', { Accept: 'application/yaml' }));
  t.deepEqual(yaml, { kind: 'api', format: 'yaml', request: { type: 'ApiGet', resource: 'deployments', namespace: 'default', name: 'web' } });
});

test('watches: get -w from the list RV, the informer with a field selector, the /watch/ prefix', (t) => {
  t.deepEqual(go(req('GET', '/api/v1/namespaces/default/pods?resourceVersion=42&watch=true', { Accept: TABLE_ACCEPT })), {
    kind: 'watch',
    request: { type: 'ApiWatch', resource: 'pods', namespace: 'default', asTable: true, wide: true, resourceVersion: '42' },
  });
  t.deepEqual(
    go(req('GET', '/api/v1/namespaces/default/pods?allowWatchBookmarks=true&fieldSelector=metadata.name%3Dweb-1&resourceVersion=7&timeoutSeconds=412&watch=true')),
    {
      kind: 'watch',
      request: { type: 'ApiWatch', resource: 'pods', namespace: 'default', fieldSelector: 'metadata.name=web-1', resourceVersion: '7' },
      timeoutSeconds: 412,
    },
  );
  t.deepEqual(go(req('GET', '/api/v1/watch/namespaces/default/pods/web-1')), {
    kind: 'watch',
    request: { type: 'ApiWatch', resource: 'pods', namespace: 'default', fieldSelector: 'metadata.name=web-1' },
  });
});

test('kubectl delete: DeleteOptions from the body, the query overrides', (t) => {
  const o = go(req('DELETE', '/api/v1/namespaces/default/pods/web-1', { 'Content-Type': 'application/json' }, '{"gracePeriodSeconds":5,"propagationPolicy":"Background"}\n'));
  t.deepEqual(o, { kind: 'api', format: 'json', request: { type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'web-1', options: { gracePeriodSeconds: 5, propagationPolicy: 'Background' } } });
  const q = go(req('DELETE', '/api/v1/namespaces/default/pods/web-1?gracePeriodSeconds=0', { 'Content-Type': 'application/json' }, '{"gracePeriodSeconds":30}'));
  t.is((q as { request: { options: { gracePeriodSeconds: number } } }).request.options.gracePeriodSeconds, 0);
  t.is(statusOf(go(req('DELETE', '/api/v1/namespaces/default/pods/web-1', { 'Content-Type': 'application/json' }, '{"gracePeriodSeconds":"soon"}'))).code, 400);
});

test('PATCH: the Content-Type picks the patch type; scale goes to the subresource', (t) => {
  const types: [string, string][] = [
    ['application/strategic-merge-patch+json', 'strategic'],
    ['application/merge-patch+json', 'merge'],
    ['application/json-patch+json', 'json'],
    ['application/apply-patch+yaml', 'apply'],
  ];
  for (const [ct, pt] of types) {
    const body = pt === 'json' ? '[{"op":"add","path":"/metadata/labels/a","value":"b"}]' : pt === 'apply' ? 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n' : '{"metadata":{}}';
    const o = go(req('PATCH', '/api/v1/namespaces/default/pods/p?fieldManager=kubectl', { 'Content-Type': ct }, body));
    t.is(o.kind, 'api', ct);
    t.is((o as { request: { patchType: string } }).request.patchType, pt);
  }
  const scale = go(req('PATCH', '/apis/apps/v1/namespaces/default/deployments/web/scale', { 'Content-Type': 'application/merge-patch+json' }, '{"spec":{"replicas":3}}'));
  t.like(scale, { kind: 'api', request: { type: 'ApiPatch', resource: 'deployments', name: 'web', subresource: 'scale', patch: { spec: { replicas: 3 } } } });
});

test('Status errors: 404 path, 405 verb, 406 Accept, 415 media type, 400 malformed or mismatched body', (t) => {
  const cases: [HttpRequestIn, number, string][] = [
    [req('GET', '/api/v1/namespaces/default/foos'), 404, 'NotFound'],
    [req('GET', '/apis/batch/v1/cronjobs'), 404, 'NotFound'],
    [req('GET', '/apis/batch/v2/jobs'), 404, 'NotFound'],
    [req('GET', '/api/v1/pods/web-1'), 404, 'NotFound'],
    [req('GET', '/api/v1/namespaces/default/pods/web-1/log'), 404, 'NotFound'],
    [req('PUT', '/version'), 405, 'MethodNotAllowed'],
    [req('DELETE', '/api/v1/namespaces/default/pods'), 405, 'MethodNotAllowed'],
    [req('OPTIONS', '/api/v1/namespaces/default/pods/web-1'), 405, 'MethodNotAllowed'],
    [req('POST', '/api/v1/pods', { 'Content-Type': 'application/json' }, '{}'), 405, 'MethodNotAllowed'],
    [req('GET', '/api/v1/namespaces/default/pods', { Accept: 'application/vnd.kubernetes.protobuf' }), 406, 'NotAcceptable'],
    [req('GET', '/version', { Accept: 'text/html' }), 406, 'NotAcceptable'],
    [req('POST', '/api/v1/namespaces/default/pods', { 'Content-Type': 'application/cbor' }, 'x'), 415, 'UnsupportedMediaType'],
    [req('POST', '/api/v1/namespaces/default/pods', { 'Content-Type': 'application/vnd.kubernetes.protobuf' }, 'x'), 400, 'BadRequest'],
    [req('PATCH', '/api/v1/namespaces/default/pods/p', { 'Content-Type': 'application/json' }, '{}'), 415, 'UnsupportedMediaType'],
    [req('POST', '/api/v1/namespaces/default/pods', { 'Content-Type': 'application/json' }, '{"kind":'), 400, 'BadRequest'],
    [req('POST', '/api/v1/namespaces/default/pods', { 'Content-Type': 'application/yaml' }, 'a: [1,'), 400, 'BadRequest'],
    [req('POST', '/api/v1/namespaces/default/pods', { 'Content-Type': 'application/json' }, '[1,2]'), 400, 'BadRequest'],
    [req('POST', '/api/v1/namespaces/default/pods', { 'Content-Type': 'application/json' }, ''), 400, 'BadRequest'],
    [req('POST', '/api/v1/namespaces/default/pods', { 'Content-Type': 'application/json' }, '{"apiVersion":"apps/v1","kind":"Deployment"}'), 400, 'BadRequest'],
    [req('POST', '/api/v1/namespaces/default/pods', { 'Content-Type': 'application/json' }, '{"kind":"Pod","metadata":{"namespace":"other"}}'), 400, 'BadRequest'],
    [req('PATCH', '/api/v1/namespaces/default/pods/p', { 'Content-Type': 'application/merge-patch+json' }, '[]'), 400, 'BadRequest'],
    [req('GET', '/api/v1/namespaces/default/pods?dryRun=Maybe'), 400, 'BadRequest'],
  ];
  for (const [r, code, reason] of cases) {
    const s = statusOf(go(r));
    t.is(s.code, code, `${r.method} ${r.url}`);
    t.is(s.reason, reason, `${r.method} ${r.url}`);
    t.truthy(s.message, `${r.method} ${r.url} has a message`);
  }
});

test('negotiate: first acceptable media range wins; protobuf-first kubectl Accept gets JSON', (t) => {
  t.deepEqual(negotiate('application/vnd.kubernetes.protobuf,application/json', true), { format: 'json', table: false });
  t.deepEqual(negotiate(TABLE_ACCEPT, true), { format: 'json', table: true });
  t.deepEqual(negotiate(TABLE_ACCEPT, false), { format: 'json', table: false });
  t.deepEqual(negotiate('', true), { format: 'json', table: false });
  t.deepEqual(negotiate('*/*', true), { format: 'json', table: false });
  t.is(negotiate('application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io', true), undefined);
});

test('bug: ?fieldManager= over 128 bytes or with a control character was stored; now 422 as ValidateFieldManager', (t) => {
  const pod = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'fm' }, spec: { containers: [{ name: 'a', image: 'nginx' }] } });
  const long = statusOf(go(req('POST', `/api/v1/namespaces/default/pods?fieldManager=${'x'.repeat(200)}`, { 'Content-Type': 'application/json' }, pod)));
  t.deepEqual(long, { code: 422, reason: 'Invalid', message: 'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: must have at most 128 bytes' });
  const nul = statusOf(go(req('PATCH', '/api/v1/namespaces/default/pods/fm?fieldManager=a%00b', { 'Content-Type': 'application/apply-patch+yaml' }, pod)));
  t.is(nul.code, 422);
  t.regex(nul.message ?? '', /^PatchOptions\.meta\.k8s\.io "" is invalid: fieldManager: Invalid value: .*invalid character U\+0000 \(at position 1\)$/);
  t.not(go(req('POST', `/api/v1/namespaces/default/pods?fieldManager=${'x'.repeat(128)}`, { 'Content-Type': 'application/json' }, pod)).kind, 'reply', '128 bytes is fine (goes to the apiserver)');
});
