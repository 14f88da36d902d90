/**
 * `podsim serve` over real sockets, without kubectl: robustness of the HTTP facade (malformed and
 * oversized bodies, unknown paths and verbs, a client that disconnects mid-watch, the wall-clock
 * bound on every request, shutdown) and the watch resourceVersion semantics kubectl relies on.
 */
import test from 'ava';
import { request } from 'node:http';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { servePlan } from '../src/serve/servePlan.js';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function call(base: string, method: string, path: string, opts: { headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

function json<T = Record<string, unknown>>(r: Reply): T {
  return JSON.parse(r.body) as T;
}

const POD = (name: string) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'raw' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });

async function waitFor(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** An open watch stream: its parsed events so far, and a way to cut the connection. */
function openWatch(base: string, path: string, headers: Record<string, string> = {}) {
  const events: { type: string; object: { metadata?: { name?: string; resourceVersion?: string } } }[] = [];
  let buf = '';
  let ended = false;
  let status = 0;
  const req = request(`${base}${path}`, { headers }, (res) => {
    status = res.statusCode ?? 0;
    res.setEncoding('utf8');
    res.on('data', (c: string) => {
      buf += c;
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        events.push(JSON.parse(buf.slice(0, i)));
        buf = buf.slice(i + 1);
      }
    });
    res.on('end', () => (ended = true));
    res.on('error', () => (ended = true));
  });
  req.on('error', () => (ended = true));
  req.end();
  return { events, ended: () => ended, status: () => status, destroy: () => req.destroy() };
}

let server: RunningServer;
let base: string;

test.before(async () => {
  const plan = servePlan({ nodes: 1, epochUnixSeconds: 1_735_689_600 });
  server = await startServer(plan, { speed: 50, maxBodyBytes: 64 * 1024 });
  base = server.url;
});

test.after.always(async () => {
  await server?.close();
});

test.serial('malformed JSON, unknown paths and bad verbs get Status errors and the server keeps serving', async (t) => {
  const bad = await call(base, 'POST', '/api/v1/namespaces/default/pods', { headers: { 'Content-Type': 'application/json' }, body: '{"kind": "Pod", ' });
  t.is(bad.status, 400);
  t.like(json(bad), { kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400 });
  const yaml = await call(base, 'POST', '/api/v1/namespaces/default/pods', { headers: { 'Content-Type': 'application/yaml' }, body: 'metadata: [unclosed' });
  t.is(yaml.status, 400);
  const invalid = await call(base, 'POST', '/api/v1/namespaces/default/pods', {
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bad' }, spec: {} }),
  });
  t.is(invalid.status, 422);
  t.like(json(invalid), { kind: 'Status', reason: 'Invalid', message: 'Pod "bad" is invalid: spec.containers: Required value', details: { name: 'bad', kind: 'Pod' } });
  const unknown = await call(base, 'GET', '/apis/batch/v1/namespaces/default/cronjobs');
  t.is(unknown.status, 404);
  t.like(json(unknown), { kind: 'Status', reason: 'NotFound', message: 'the server could not find the requested resource' });
  const verb = await call(base, 'PUT', '/api/v1/namespaces/default/pods');
  t.is(verb.status, 405);
  t.like(json(verb), { kind: 'Status', reason: 'MethodNotAllowed' });
  const accept = await call(base, 'GET', '/api/v1/nodes', { headers: { Accept: 'application/vnd.kubernetes.protobuf' } });
  t.is(accept.status, 406);
  const media = await call(base, 'PATCH', '/api/v1/nodes/node-1', { headers: { 'Content-Type': 'text/plain' }, body: 'x' });
  t.is(media.status, 415);
  // Still serving, with the right headers.
  const v = await call(base, 'GET', '/version');
  t.is(v.status, 200);
  t.is(v.headers['content-type'], 'application/json');
  t.is(json(v).minor, '32');
});

test.serial('a body over the cap gets 413 RequestEntityTooLarge; the server keeps serving', async (t) => {
  const huge = Buffer.alloc(256 * 1024, 'a');
  const r = await call(base, 'POST', '/api/v1/namespaces/default/pods', { headers: { 'Content-Type': 'application/json' }, body: huge });
  t.is(r.status, 413);
  t.like(json(r), { kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
  // Without a Content-Length (chunked upload), the cap applies while reading.
  const chunked = await new Promise<number>((resolve, reject) => {
    const req = request(`${base}/api/v1/namespaces/default/pods`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    for (let i = 0; i < 8; i++) req.write(Buffer.alloc(16 * 1024, 'b'));
    req.end();
  });
  t.is(chunked, 413);
  t.is((await call(base, 'GET', '/api/v1/nodes')).status, 200);
});

test.serial('create, then a list-then-watch from the list RV sees only newer events; RV=0 starts with ADDED', async (t) => {
  const created = await call(base, 'POST', '/api/v1/namespaces/default/pods', { headers: { 'Content-Type': 'application/json' }, body: POD('raw-1') });
  t.is(created.status, 201);
  const list = json<{ kind: string; metadata: { resourceVersion: string }; items: unknown[] }>(await call(base, 'GET', '/api/v1/namespaces/default/pods?labelSelector=app%3Draw'));
  t.is(list.kind, 'PodList');
  t.is(typeof list.metadata.resourceVersion, 'string');
  const fromRv = openWatch(base, `/api/v1/namespaces/default/pods?labelSelector=app%3Draw&resourceVersion=${list.metadata.resourceVersion}&watch=true`);
  const fromZero = openWatch(base, '/api/v1/namespaces/default/pods?labelSelector=app%3Draw&resourceVersion=0&watch=true');
  await waitFor('the synthetic ADDED', () => fromZero.events.length > 0);
  t.is(fromZero.events[0].type, 'ADDED');
  t.is(fromZero.events[0].object.metadata?.name, 'raw-1');
  t.is(fromRv.status(), 200);
  t.false(fromRv.events.some((e) => e.type === 'ADDED' && e.object.metadata?.name === 'raw-1'), 'no duplicate ADDED for what the list already had');
  await call(base, 'POST', '/api/v1/namespaces/default/pods', { headers: { 'Content-Type': 'application/json' }, body: POD('raw-2') });
  await waitFor('raw-2 on the RV watch', () => fromRv.events.some((e) => e.object.metadata?.name === 'raw-2'));
  t.is(fromRv.events.find((e) => e.object.metadata?.name === 'raw-2')?.type, 'ADDED');
  t.false(fromRv.ended(), 'the stream stays open');
  fromRv.destroy();
  fromZero.destroy();
});

test.serial('a client that disconnects mid-watch frees its watch (ApiUnwatch): no events for it afterwards', async (t) => {
  // Earlier tests' streams are closed; wait until the gateway has dropped them too.
  await waitFor('no open watches', () => server.gateway.watchCount === 0);
  const before = 0;
  await call(base, 'POST', '/api/v1/namespaces/default/pods', { headers: { 'Content-Type': 'application/json' }, body: POD('raw-3') });
  const w = openWatch(base, '/api/v1/namespaces/default/pods?labelSelector=app%3Draw&watch=true');
  await waitFor('the watch to start', () => w.events.length > 0);
  t.is(server.gateway.watchCount, before + 1);
  w.destroy();
  await waitFor('the gateway to drop the watch', () => server.gateway.watchCount === before);
  // Let the ApiUnwatch reach the apiserver (virtual ms at 50x), then write: nobody may get it.
  await new Promise((r) => setTimeout(r, 200));
  const stray = server.gateway.strayEvents;
  await call(base, 'POST', '/api/v1/namespaces/default/pods', { headers: { 'Content-Type': 'application/json' }, body: POD('raw-4') });
  await call(base, 'DELETE', '/api/v1/namespaces/default/pods/raw-3?gracePeriodSeconds=0');
  await new Promise((r) => setTimeout(r, 200));
  t.is(server.gateway.strayEvents, stray, 'the apiserver no longer sends events to the closed watch');
});

test.serial('timeoutSeconds ends a watch stream', async (t) => {
  const w = openWatch(base, '/api/v1/nodes?watch=true&timeoutSeconds=1');
  await waitFor('the stream to end', () => w.ended(), 5_000);
  t.is(w.status(), 200);
  t.true(w.events.length >= 1);
});

test.serial('every request is bounded in wall time: a simulation too slow to answer gives 504, then shuts down cleanly', async (t) => {
  // 1 virtual µs per 10 wall ms: the apiserver's reply (≥ 200 µs of link latency) cannot come in 300 ms.
  const plan = servePlan({ nodes: 1, epochUnixSeconds: 1_735_689_600 });
  const slow = await startServer(plan, { speed: 0.0001, requestTimeoutMs: 300 });
  try {
    const started = Date.now();
    const r = await call(slow.url, 'GET', '/api/v1/namespaces/default/pods');
    t.is(r.status, 504);
    t.like(json(r), { kind: 'Status', reason: 'Timeout', code: 504 });
    t.true(Date.now() - started < 5_000);
    const w = openWatch(slow.url, '/api/v1/nodes?watch=true');
    await waitFor('the watch to time out', () => w.ended(), 5_000);
    t.is(w.status(), 504);
  } finally {
    await slow.close();
  }
  // After close, the port no longer answers.
  await t.throwsAsync(call(slow.url, 'GET', '/version'));
});

test('bug: serve --scenario ignored the scenario\'s traffic: and expect: without a word; each now gets a warning (fresh-user trial, breaker)', (t) => {
  const plan = servePlan({ scenario: 'examples/rolling-update-traffic.yaml', epochUnixSeconds: 1_735_689_600 });
  t.true(plan.warnings.includes('examples/rolling-update-traffic.yaml: warning: traffic: is not sent under podsim serve (it is evaluated by podsim run)'), plan.warnings.join('\n'));
  t.true(plan.warnings.some((w) => w.endsWith('warning: expect: is not judged under podsim serve (podsim run judges it)')));
  t.deepEqual(servePlan({ nodes: 1, epochUnixSeconds: 1_735_689_600 }).warnings, []);
});
