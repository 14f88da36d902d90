/**
 * Protobuf request bodies (`application/vnd.kubernetes.protobuf`, what kubectl create / run /
 * drain send): fixtures built here with @bufbuild/protobuf's BinaryWriter the way Go's generated
 * Marshal writes them (every non-pointer field, zero or not; `k8s\0` + runtime.Unknown), decoded
 * into the objects the JSON path yields, and the 400 / 415 answers for bodies that do not decode.
 */
import test from 'ava';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { decodeProtobufBody, isProtobufError, PROTOBUF_MAGIC } from '../src/serve/protobuf.js';
import { route, type HttpRequestIn, type Outcome } from '../src/serve/http.js';

// ---- a tiny message builder over BinaryWriter --------------------------------------------------

type Field = [number, 'string', string] | [number, 'varint', number] | [number, 'msg', Field[]] | [number, 'bytes', Uint8Array];

function message(fields: Field[]): Uint8Array {
  const w = new BinaryWriter();
  for (const [n, kind, v] of fields) {
    if (kind === 'string') w.tag(n, WireType.LengthDelimited).string(v);
    else if (kind === 'varint') w.tag(n, WireType.Varint).int64(v);
    else if (kind === 'bytes') w.tag(n, WireType.LengthDelimited).bytes(v);
    else w.tag(n, WireType.LengthDelimited).bytes(message(v));
  }
  return w.finish();
}

const str = (n: number, v: string): Field => [n, 'string', v];
const int = (n: number, v: number): Field => [n, 'varint', v];
const msg = (n: number, ...v: Field[]): Field => [n, 'msg', v];
const entry = (n: number, k: string, v: string): Field => msg(n, str(1, k), str(2, v));

/** `k8s\0` + runtime.Unknown{typeMeta{apiVersion, kind}, raw, contentEncoding, contentType}. */
function body(apiVersion: string, kind: string, raw: Field[], contentEncoding = ''): Buffer {
  const unknown = message([msg(1, str(1, apiVersion), str(2, kind)), [2, 'bytes', message(raw)], str(3, contentEncoding), str(4, '')]);
  return Buffer.concat([PROTOBUF_MAGIC, unknown]);
}

/** ObjectMeta as Go writes it: every string field, generation 0 and an empty creationTimestamp. */
function objectMeta(name: string, namespace = '', labels: Record<string, string> = {}): Field {
  return msg(1, str(1, name), str(2, ''), str(3, namespace), str(4, ''), str(5, ''), str(6, ''), int(7, 0), msg(8), ...Object.entries(labels).map(([k, v]) => entry(11, k, v)), str(15, ''));
}

function decoded(b: Buffer): Record<string, unknown> {
  const d = decodeProtobufBody(b);
  if (isProtobufError(d)) throw new Error(`${d.code} ${d.message}`);
  return d.object;
}

// ---- decoding -----------------------------------------------------------------------------------

test('kubectl create namespace demo: a Namespace with only zero values besides the name decodes as the JSON body would', (t) => {
  const b = body('v1', 'Namespace', [objectMeta('demo'), msg(2), msg(3, str(1, ''))]);
  t.deepEqual(decoded(b), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' }, spec: {}, status: {} });
});

test('kubectl create deployment web2 --replicas=2: selector, template, containers, strategy {} and status {}', (t) => {
  const container = msg(2, str(1, 'nginx'), str(2, 'nginx'), str(5, ''), msg(8), str(13, ''), str(14, ''), int(16, 0), int(17, 0), int(18, 0), str(20, ''));
  const podSpec = msg(2, container, str(3, ''), str(6, ''), str(8, ''), str(9, ''), str(10, ''), int(11, 0), int(12, 0), int(13, 0), str(16, ''), str(17, ''), str(19, ''));
  const spec = msg(2, int(1, 2), msg(2, entry(1, 'app', 'web2')), msg(3, objectMeta('', '', { app: 'web2' }), podSpec), msg(4, str(1, '')), int(5, 0), int(7, 0));
  const b = body('apps/v1', 'Deployment', [objectMeta('web2', '', { app: 'web2' }), spec, msg(3, int(1, 0), int(2, 0), int(3, 0))]);
  t.deepEqual(decoded(b), {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web2', labels: { app: 'web2' } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web2' } },
      template: { metadata: { labels: { app: 'web2' } }, spec: { containers: [{ name: 'nginx', image: 'nginx', resources: {} }] } },
      strategy: {},
    },
    status: {},
  });
});

test('kubectl create pdb web --selector=app=web --max-unavailable=1 / --min-available=50%: a policy/v1 PodDisruptionBudget', (t) => {
  const status = msg(3, int(1, 0), int(3, 0), int(4, 0), int(5, 0), int(6, 0));
  const byCount = body('policy/v1', 'PodDisruptionBudget', [objectMeta('web'), msg(2, msg(2, entry(1, 'app', 'web')), msg(3, int(1, 0), int(2, 1), str(3, ''))), status]);
  t.deepEqual(decoded(byCount), {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'web' },
    spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1 },
    status: {},
  });
  const byPercent = body('policy/v1', 'PodDisruptionBudget', [objectMeta('web'), msg(2, msg(1, int(1, 1), int(2, 0), str(3, '50%')), msg(2, entry(1, 'app', 'web'))), status]);
  t.deepEqual((decoded(byPercent).spec as Record<string, unknown>).minAvailable, '50%');
});

test('pointers keep zero values (replicas 0, grace 0) and Quantity, IntOrString, Time, inlined VolumeSource / Handler take their JSON forms', (t) => {
  const probe = msg(11, msg(1, msg(1, str(1, 'true'))), int(2, 5)); // readinessProbe: Handler{exec} inlined, initialDelaySeconds 5
  const container = msg(
    2,
    str(1, 'c'),
    msg(8, msg(1, str(1, 'cpu'), msg(2, str(1, '500m'))), msg(1, str(1, 'memory'), msg(2, str(1, '64Mi')))), // resources.limits: two map entries
    probe,
    msg(6, str(1, 'http'), int(2, 0), int(3, 8080), str(4, 'TCP')), // ports: hostPort 0 dropped
  );
  const volume = msg(1, str(1, 'scratch'), msg(2, msg(2, str(1, '')))); // emptyDir {}
  const podSpec = msg(2, volume, container, int(4, 0)); // terminationGracePeriodSeconds: 0 (a *int64)
  const strategy = msg(4, str(1, 'RollingUpdate'), msg(2, msg(1, int(1, 1), str(3, '25%')), msg(2, int(1, 0), int(2, 1))));
  const meta = msg(1, str(1, 'w'), msg(8, int(1, 1735689600)), msg(9, int(1, 1735689630), int(2, 5)), int(10, 0));
  const b = body('apps/v1', 'Deployment', [meta, msg(2, int(1, 0), msg(3, msg(1), podSpec), strategy, int(6, 0))]);
  const o = decoded(b) as { metadata: unknown; spec: Record<string, unknown> };
  t.deepEqual(o.metadata, { name: 'w', creationTimestamp: '2025-01-01T00:00:00Z', deletionTimestamp: '2025-01-01T00:00:30Z', deletionGracePeriodSeconds: 0 });
  t.is(o.spec.replicas, 0);
  t.is(o.spec.revisionHistoryLimit, 0);
  t.deepEqual(o.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: 1 } });
  t.deepEqual(o.spec.template, {
    metadata: {},
    spec: {
      volumes: [{ name: 'scratch', emptyDir: {} }],
      containers: [
        {
          name: 'c',
          resources: { limits: { cpu: '500m', memory: '64Mi' } },
          readinessProbe: { exec: { command: ['true'] }, initialDelaySeconds: 5 },
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
        },
      ],
      terminationGracePeriodSeconds: 0,
    },
  });
});

test('DeleteOptions and policy Eviction (v1 and v1beta1): grace 0, preconditions, dryRun', (t) => {
  const opts = [int(1, 0), msg(2, str(1, 'uid-1'), str(2, '42')), str(4, 'Background'), str(5, 'All')];
  t.deepEqual(decoded(body('v1', 'DeleteOptions', opts)), {
    kind: 'DeleteOptions',
    apiVersion: 'v1',
    gracePeriodSeconds: 0,
    preconditions: { uid: 'uid-1', resourceVersion: '42' },
    propagationPolicy: 'Background',
    dryRun: ['All'],
  });
  for (const v of ['policy/v1', 'policy/v1beta1']) {
    t.deepEqual(decoded(body(v, 'Eviction', [objectMeta('web-1', 'demo'), msg(2, int(1, 5))])), {
      apiVersion: v,
      kind: 'Eviction',
      metadata: { name: 'web-1', namespace: 'demo' },
      deleteOptions: { gracePeriodSeconds: 5 },
    });
  }
});

test('a zero-valued field Kubernetes 1.22 does not have (a newer kubectl writes them) is skipped; one with data is a 400 naming message and field', (t) => {
  t.deepEqual(decoded(body('v1', 'Namespace', [objectMeta('demo'), msg(2, str(1, 'kubernetes'), msg(9, str(1, ''), int(2, 0)), int(10, 0))])), {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'demo' },
    spec: { finalizers: ['kubernetes'] },
  });
  const d = decodeProtobufBody(body('v1', 'Pod', [objectMeta('p'), msg(2, msg(2, str(1, 'c')), str(99, 'yes'))]));
  t.true(isProtobufError(d));
  t.like(d, { code: 400 });
  t.regex((d as { message: string }).message, /k8s\.io\.api\.core\.v1\.PodSpec has no field 99 \(length-delimited\)/);
});

test('malformed bodies are 400s that say what is wrong; a contentEncoding is 415', (t) => {
  const cases: [Buffer, number, RegExp][] = [
    [Buffer.from('{"kind":"Pod"}'), 400, /magic number/],
    [body('v1', 'ConfigMap', [objectMeta('c')]), 400, /no kind "ConfigMap" is registered for version "v1"/],
    [body('apps/v2', 'Deployment', []), 400, /no kind "Deployment" is registered for version "apps\/v2"/],
    [body('v1', '', []), 400, /names no kind/],
    [body('v1', 'Pod', [objectMeta('p'), msg(2, int(2, 7))]), 400, /PodSpec field 2 \(containers\): expected length-delimited, got varint/],
    [body('v1', 'Pod', [msg(1, msg(8, str(3, 'x')))]), 400, /Timestamp has no field 3/],
    [body('v1', 'Pod', [], 'gzip'), 415, /contentEncoding "gzip"/],
    [Buffer.concat([body('v1', 'Pod', [objectMeta('p')]).subarray(0, 20)]), 400, /malformed protobuf body|premature|range|index/i],
  ];
  for (const [b, code, re] of cases) {
    const d = decodeProtobufBody(b);
    t.true(isProtobufError(d), re.source);
    t.is((d as { code: number }).code, code, re.source);
    t.regex((d as { message: string }).message, re);
  }
});

// ---- through the HTTP facade ----------------------------------------------------------------------

function req(method: string, url: string, b: Buffer): HttpRequestIn {
  return { method, url, headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/vnd.kubernetes.protobuf,application/json' }, body: b };
}

function apiRequest(o: Outcome): Record<string, unknown> {
  if (o.kind !== 'api') throw new Error(`expected an api request, got ${JSON.stringify(o)}`);
  return o.request as unknown as Record<string, unknown>;
}

test('POST and DELETE with protobuf bodies become the same apiserver requests as JSON; the reply stays JSON', (t) => {
  const create = route(req('POST', '/api/v1/namespaces', body('v1', 'Namespace', [objectMeta('demo')])), '127.0.0.1:1');
  t.like(apiRequest(create), { type: 'ApiCreate', resource: 'namespaces', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } } });
  t.is((create as { format: string }).format, 'json');
  const del = route(req('DELETE', '/api/v1/namespaces/default/pods/p', body('v1', 'DeleteOptions', [int(1, 0)])), '127.0.0.1:1');
  t.like(apiRequest(del), { type: 'ApiDelete', name: 'p', options: { gracePeriodSeconds: 0 } });
  const evict = route(req('POST', '/api/v1/namespaces/demo/pods/web-1/eviction', body('policy/v1', 'Eviction', [objectMeta('web-1', 'demo'), msg(2, int(1, 5))])), '127.0.0.1:1');
  t.like(apiRequest(evict), { type: 'ApiCreate', resource: 'pods', namespace: 'demo', name: 'web-1', subresource: 'eviction', object: { deleteOptions: { gracePeriodSeconds: 5 } } });
});

test('the eviction subresource takes only POST of an Eviction; a bad protobuf body is a 400 Status', (t) => {
  const st = (o: Outcome) => (o.kind === 'reply' ? [o.status, (o.body as { reason: string }).reason] : [0, o.kind]);
  t.deepEqual(st(route(req('POST', '/api/v1/namespaces/demo/pods/p/eviction', body('v1', 'Pod', [objectMeta('p')])), '127.0.0.1:1')), [400, 'BadRequest']);
  t.deepEqual(st(route({ ...req('GET', '/api/v1/namespaces/demo/pods/p/eviction', Buffer.alloc(0)), headers: {} }, '127.0.0.1:1')), [405, 'MethodNotAllowed']);
  t.deepEqual(st(route(req('POST', '/api/v1/namespaces', Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0xff])), '127.0.0.1:1')), [400, 'BadRequest']);
});

// A map entry keyed "__proto__" (a label, an annotation) was assigned with `m[k] = v`, which in
// JavaScript sets the object's prototype instead of a key: the label vanished without a word
// (the JSON path keeps it and validation answers 422 for the invalid key).
test('a map key "__proto__" is kept as a key, as the JSON body would carry it', (t) => {
  const b = body('v1', 'Namespace', [objectMeta('demo', '', { ['__proto__']: 'x', app: 'web' })]);
  const labels = (decoded(b).metadata as { labels: Record<string, string> }).labels;
  t.deepEqual(Object.entries(labels), [
    ['__proto__', 'x'],
    ['app', 'web'],
  ]);
  t.is(Object.getPrototypeOf(labels), Object.prototype);
  t.deepEqual(JSON.parse(JSON.stringify(labels)), JSON.parse('{"__proto__":"x","app":"web"}'));
});

// ... but it must not enter the simulation: copies drop it and the engine's codec renames it, so
// one host thread stored the pod without the label and several answered 422 (placement-dependent).
test('a "__proto__" key is refused before it reaches the apiserver, in a protobuf body and in a JSON body (400 naming where)', (t) => {
  const pb = route(req('POST', '/api/v1/namespaces', body('v1', 'Namespace', [objectMeta('demo', '', { ['__proto__']: 'x' })])), '127.0.0.1:1');
  const json = route(
    { method: 'POST', url: '/api/v1/namespaces', headers: { 'content-type': 'application/json' }, body: Buffer.from('{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"demo","labels":{"__proto__":"x"}}}') },
    '127.0.0.1:1',
  );
  for (const o of [pb, json]) {
    t.is(o.kind, 'reply');
    if (o.kind !== 'reply') continue;
    t.is(o.status, 400);
    t.regex((o.body as { message: string }).message, /at \.metadata\.labels\.__proto__: a key named "__proto__" is not accepted/);
  }
});
