/**
 * Typed decoding (src/decode.ts): request bodies and patched objects whose fields have the wrong
 * JSON type are answered with a Status, as kube-apiserver's Go decoder answers them — they used
 * to reach defaulting / validation and throw inside the apiserver actor, which failed the whole
 * simulation (and took `podsim serve` down with it).
 */
import test from 'ava';
import type { ApiResult, Pod } from '@podsim/api';
import { ApiServer } from '../src/apiServer.js';
import { decodeTyped, decodeTypedCopy } from '../src/decode.js';
import { deepClone } from '../src/objects.js';
import { Harness, status } from './helpers.js';

function patchPod(h: Harness, patchType: 'strategic' | 'merge' | 'json', patch: unknown): ApiResult {
  return h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', patchType, patch });
}

test('bug: strategic patch {spec: {containers: "x"}} threw in the apiserver ("Cannot create property imagePullPolicy on string") — now 422 on field patch', (t) => {
  const h = new Harness();
  h.createPod('p');
  const r = patchPod(h, 'strategic', { spec: { containers: 'x' } });
  t.is(r.code, 422);
  t.is(status(r).reason, 'Invalid');
  t.is(status(r).details?.causes?.[0]?.field, 'patch');
  t.regex(status(r).message!, /^Pod "p" is invalid: patch: Invalid value: "spec.containers": json: cannot unmarshal string into Go struct field Pod\.spec\.containers of type \[\]v1\.Container$/);
  // The pod is unchanged and the server keeps answering.
  t.is((h.get('p').body as Pod).spec.containers[0].image, 'busybox:1.36');
});

test('bug: json patch adding ports [null] threw ("Cannot read properties of null (reading protocol)") — null becomes an empty ContainerPort, then validation answers', (t) => {
  const h = new Harness();
  h.createPod('p');
  const r = patchPod(h, 'json', [{ op: 'add', path: '/spec/containers/0/ports', value: [null] }]);
  t.is(r.code, 422);
  t.regex(status(r).message!, /spec\.containers\[0\]\.ports\[0\]\.containerPort: Invalid value: \w+: must be between 1 and 65535/);
});

test('bug: merge patch labels: "x" was stored as a string label map — now 422; finalizers: "abc" no longer validated letter by letter', (t) => {
  const h = new Harness();
  h.createPod('p');
  const labels = patchPod(h, 'merge', { metadata: { labels: 'x' } });
  t.is(labels.code, 422);
  t.regex(status(labels).message!, /cannot unmarshal string into Go struct field Pod\.metadata\.labels of type map\[string\]string/);
  const fin = patchPod(h, 'merge', { metadata: { finalizers: 'abc' } });
  t.is(fin.code, 422);
  t.regex(status(fin).message!, /Pod\.metadata\.finalizers of type \[\]string/);
  t.is(h.writes.filter((w) => w.type !== 'ADDED').length, 0);
});

test('create / update bodies with wrong types are 400 BadRequest naming the field (Go decoder text)', (t) => {
  const h = new Harness();
  const cases: Array<[unknown, RegExp]> = [
    [{ containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 'http' }] }] }, /Pod\.spec\.containers\[0\]\.ports\[0\]\.containerPort of type int32/],
    [{ containers: [{ name: 'c', image: 'x' }], terminationGracePeriodSeconds: 1.5 }, /cannot unmarshal number 1\.5 into Go struct field Pod\.spec\.terminationGracePeriodSeconds of type int64/],
    [{ containers: [{ name: 'c', image: 5 }] }, /Pod\.spec\.containers\[0\]\.image of type string/],
    [{ containers: 'c' }, /Pod\.spec\.containers of type \[\]v1\.Container/],
    // A null element before the mismatch: the valid-body walk (no paths) zeroes it, the second walk names the same field.
    [{ containers: [{ name: 'c', image: 'x', ports: [null, { containerPort: 'http' }] }] }, /Pod\.spec\.containers\[0\]\.ports\[1\]\.containerPort of type int32/],
    [{ containers: [{ name: 'c', image: 'x', lifecycle: { preStop: { exec: { command: 'sleep 5' } } } }] }, /preStop\.exec\.command of type \[\]string/],
  ];
  for (const [spec, re] of cases) {
    const r = h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'default', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'q' }, spec } as never });
    t.is(r.code, 400, JSON.stringify(spec));
    t.regex(status(r).message!, /^Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal /);
    t.regex(status(r).message!, re);
  }
  const dep = h.req({
    type: 'ApiCreate',
    resource: 'deployments',
    namespace: 'default',
    object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 3e9 } } as never,
  });
  t.is(dep.code, 400);
  t.regex(status(dep).message!, /cannot unmarshal number 3000000000 into Go struct field Deployment\.spec\.replicas of type int32/);
  h.createPod('p');
  const put = h.req({ type: 'ApiUpdate', resource: 'pods', namespace: 'default', name: 'p', object: { metadata: { name: 'p', annotations: { a: 1 } }, spec: {} } as never });
  t.is(put.code, 400);
  t.regex(status(put).message!, /Pod\.metadata\.annotations\["a"\] of type string/);
});

test('scale and binding bodies are type-checked too (a string replicas / target no longer reach the registry)', (t) => {
  const h = new Harness();
  const d = h.req({
    type: 'ApiCreate',
    resource: 'replicasets',
    namespace: 'default',
    object: {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'rs' },
      spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
    } as never,
  });
  t.is(d.code, 201);
  const put = h.req({ type: 'ApiUpdate', resource: 'replicasets', namespace: 'default', name: 'rs', subresource: 'scale', object: { metadata: { name: 'rs' }, spec: { replicas: 'three' } } as never });
  t.is(put.code, 400);
  t.regex(status(put).message!, /Scale\.spec\.replicas of type int32/);
  const patch = h.req({ type: 'ApiPatch', resource: 'replicasets', namespace: 'default', name: 'rs', subresource: 'scale', patchType: 'merge', patch: { spec: { replicas: [3] } } });
  t.is(patch.code, 422);
  h.createPod('p');
  const bind = h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'default', name: 'p', subresource: 'binding', object: { metadata: { name: 'p' }, target: 'node-1' } as never });
  t.is(bind.code, 400);
  t.regex(status(bind).message!, /Binding\.target of type v1\.ObjectReference/);
});

test('bug: DELETE with gracePeriodSeconds 1e300 wrote deletionTimestamp "3.16e+292-03-01T00:00:00Z" — now 422 naming the longest grace the virtual clock can hold', (t) => {
  const h = new Harness();
  h.createPod('p', { nodeName: 'n1' });
  for (const g of [1e300, Number.MAX_SAFE_INTEGER, 1e15]) {
    const r = h.req({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'p', options: { gracePeriodSeconds: g } });
    t.is(r.code, g === 1e300 ? 400 : 422, String(g));
  }
  t.regex(status(h.req({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'p', options: { gracePeriodSeconds: 1e15 } })).message!, /gracePeriodSeconds: Invalid value: 1000000000000000: podsim's virtual clock cannot hold a deletionTimestamp that far ahead: at most 9007199254 seconds/);
  // A huge spec grace is caught on the same path.
  h.createPod('q', { nodeName: 'n1', terminationGracePeriodSeconds: 1e15 });
  t.is(h.req({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'q', options: {} }).code, 422);
  // 2^31 s (68 years) is fine and shrinks like any other grace.
  const big = h.req({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'p', options: { gracePeriodSeconds: 2 ** 31 } });
  t.is(big.code, 200);
  t.is((big.body as Pod).metadata.deletionTimestamp, '2093-01-19T03:14:08Z');
  t.is(h.writes.filter((w) => w.type === 'MODIFIED').length, 1);
});

test('DeleteOptions with wrong types are 400 (preconditions: "x" used to be ignored, dryRun: "All" iterated by letter)', (t) => {
  const h = new Harness();
  h.createPod('p', { nodeName: 'n1' });
  for (const options of [{ preconditions: 'x' }, { gracePeriodSeconds: '5' }, { dryRun: 'All' }, { orphanDependents: 'yes' }, { gracePeriodSeconds: 2.5 }]) {
    const r = h.req({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'p', options: options as never });
    t.is(r.code, 400, JSON.stringify(options));
    t.regex(status(r).message!, /^DeleteOptions in version "v1" cannot be handled as a DeleteOptions: json: cannot unmarshal/);
  }
  t.is((h.get('p').body as Pod).metadata.deletionTimestamp, undefined);
});

test('well-formed objects decode unchanged: null fields and unknown fields pass through', (t) => {
  const api = new ApiServer();
  let n = 0;
  const rctx = { now: 0, clock: api.clock, newId: () => `id${n++}`, uuid: () => `uuid-${n++}` };
  api.bootstrap(rctx);
  const r = api.handle(
    {
      type: 'ApiCreate',
      resource: 'pods',
      namespace: 'default',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: null }, spec: { containers: [{ name: 'c', image: 'x', futureField: { a: 1 } }], nodeSelector: null } } as never,
    },
    'client',
    rctx,
  );
  t.is(r.code, 201);
  const c = (r.body as Pod).spec.containers[0] as unknown as Record<string, unknown>;
  t.deepEqual(c.futureField, { a: 1 });
  t.is((r.body as Pod).spec.nodeSelector, null as never);
});

// Bodies of the kinds the cluster issues added (found by the bad-input trial: each of these threw
// in the apiserver actor and took `podsim serve` down: "ActorThrew in apiserver … forEach is not
// a function"). Each is now a 400 with the Go decoder's words, and the server answers the next
// request.
const tmpl = (spec: Record<string, unknown>) => ({ metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'a', image: 'x' }], ...spec } });
for (const [what, resource, body, message] of [
  ['a Service with ports "80"', 'services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: '80' } }, /cannot unmarshal string into Go struct field Service\.spec\.ports of type \[\]v1\.ServicePort/],
  ['an Endpoints with subsets "x"', 'endpoints', { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'e' }, subsets: 'x' }, /cannot unmarshal string into Go struct field Endpoints\.subsets of type \[\]v1\.EndpointSubset/],
  ['an EndpointSlice with endpoints "x"', 'endpointslices', { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'es' }, addressType: 'IPv4', endpoints: 'x' }, /cannot unmarshal string into Go struct field EndpointSlice\.endpoints of type \[\]v1\.Endpoint/],
  ['a DaemonSet whose template has tolerations "x"', 'daemonsets', { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'd' }, spec: { selector: { matchLabels: { app: 'x' } }, template: tmpl({ tolerations: 'x' }) } }, /cannot unmarshal string into Go struct field DaemonSet\.spec\.template\.spec\.tolerations/],
  ['a Job whose container has env 5', 'jobs', { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'a', image: 'x', env: 5 }] } } } }, /cannot unmarshal number 5 into Go struct field Job\.spec\.template\.spec\.containers\[0\]\.env/],
  ['a Job with ttlSecondsAfterFinished "soon"', 'jobs', { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j2' }, spec: { ttlSecondsAfterFinished: 'soon', template: { spec: { restartPolicy: 'Never', containers: [{ name: 'a', image: 'x' }] } } } }, /cannot unmarshal string into Go struct field Job\.spec\.ttlSecondsAfterFinished of type int32/],
] as const) {
  test(`bug: ${what} threw in the apiserver — now 400, and the server still answers`, (t) => {
    const h = new Harness();
    const r = h.req({ type: 'ApiCreate', resource, namespace: 'default', object: body as never });
    t.is(r.code, 400, JSON.stringify(r.body));
    t.regex(status(r).message!, message);
    const next = h.req({ type: 'ApiList', resource, namespace: 'default' });
    t.is(next.code, 200);
  });
}

test('decodeTypedCopy (one walk that copies and checks) gives what deepClone + decodeTyped gave: same copy, same first mismatch, input untouched', (t) => {
  const gk = { group: '', kind: 'Pod' };
  const valid = {
    apiVersion: 'v1',
    kind: 'Pod',
    unknownTop: { a: [1, null, { b: 2 }] },
    metadata: { name: 'p', labels: { a: 'x', b: null }, finalizers: [null, 'f'], undef: undefined, managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': {} } }, null] },
    spec: {
      containers: [null, { name: 'c', image: 'i', ports: [null, { containerPort: 80 }], resources: { requests: { cpu: '100m', memory: null }, limits: { cpu: 1 } }, extra: { deep: [null] } }],
      nodeSelector: null,
      tolerations: [{ key: 'k', tolerationSeconds: 300 }, undefined],
    },
    status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z', lastProbeTime: null }] },
  };
  const frozen = JSON.parse(JSON.stringify(valid)) as Record<string, unknown>;
  const deepFreeze = (v: unknown): void => {
    if (v !== null && typeof v === 'object') {
      Object.freeze(v);
      for (const x of Object.values(v)) deepFreeze(x);
    }
  };
  for (const body of [valid as Record<string, unknown>, frozen]) {
    const before = JSON.stringify(body);
    deepFreeze(body);
    const expected = deepClone(body);
    t.is(decodeTyped(expected, 'Pod', 'v1', 'body', gk), undefined);
    const got = decodeTypedCopy(body, 'Pod', 'v1', 'body', gk);
    t.is(got.status, undefined);
    t.deepEqual(got.object, expected);
    // Key order too (JSON text), and the input is not touched (it is frozen: a write would throw).
    t.is(JSON.stringify(got.object), JSON.stringify(expected));
    t.is(JSON.stringify(body), before);
    t.not(got.object, body);
  }
  // Two mismatches: the error names the first in the shape's order (spec before status), whatever the body's key order.
  const bad = { status: { phase: 5 }, spec: { containers: [{ name: 1 }] }, metadata: { name: 'p' } };
  for (const mode of ['body', 'patch'] as const) {
    const want = decodeTyped(deepClone(bad), 'Pod', 'v1', mode, gk, 'p');
    t.truthy(want);
    t.deepEqual(decodeTypedCopy(bad, 'Pod', 'v1', mode, gk, 'p').status, want);
  }
  t.regex(decodeTypedCopy(bad, 'Pod', 'v1', 'body', gk).status!.message!, /Pod\.spec\.containers\[0\]\.name of type string/);
  // A kind without a typed shape is copied unchecked.
  const other = { kind: 'Thing', spec: { x: [null] } };
  const c = decodeTypedCopy(other, 'Thing', 'v1', 'body', { group: '', kind: 'Thing' });
  t.deepEqual(c.object, other);
  t.not(c.object, other);
});

test('a pods/status patch that leaves the spec alone keeps the stored spec (shared, not copied; stored objects are frozen here); one that touches it is still decoded', (t) => {
  const h = new Harness();
  h.createPod('p');
  const before = h.get('p').body as Pod;
  const ok = h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', subresource: 'status', patchType: 'strategic', patch: { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } } });
  t.is(ok.code, 200);
  const after = h.get('p').body as Pod;
  t.is(after.status?.phase, 'Running');
  t.is(after.spec, before.spec);
  t.not(after.metadata.resourceVersion, before.metadata.resourceVersion);
  const bad = h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', subresource: 'status', patchType: 'strategic', patch: { spec: { containers: 'x' } } });
  t.is(bad.code, 422);
  t.regex(status(bad).message!, /Go struct field Pod\.spec\.containers of type \[\]v1\.Container/);
});
