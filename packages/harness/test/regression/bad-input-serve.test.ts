/**
 * Bad input to `podsim serve` that used to end the whole simulation (every later request then
 * got 503 and the server exited): each request here must get a 4xx Status and the server must
 * keep serving. Found by sending raw HTTP (curl) to a running `podsim serve`.
 */
import test from 'ava';
import { request } from 'node:http';
import { route, type HttpRequestIn } from '../../src/serve/http.js';
import { jsonShapeProblem } from '../../src/jsonShape.js';
import { startServer, type RunningServer } from '../../src/serve/server.js';
import { servePlan } from '../../src/serve/servePlan.js';

interface Reply {
  status: number;
  body: string;
}

function call(base: string, method: string, path: string, contentType: string, body: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers: { 'Content-Type': contentType } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const nested = (depth: number) =>
  `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"deep"},"spec":{"containers":[{"name":"a","image":"x"}]},"extra":${'['.repeat(depth)}${']'.repeat(depth)}}`;

let server: RunningServer;

test.before(async () => {
  server = await startServer(servePlan({ nodes: 1, epochUnixSeconds: 1_735_689_600 }), { speed: 50 });
});

test.after.always(async () => {
  await server?.close();
});

test.serial('bug: PATCH {"spec":{"containers":"x"}} killed podsim serve (apiserver threw) — now 422 and the server keeps serving', async (t) => {
  const pod = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'x' }] } });
  t.is((await call(server.url, 'POST', '/api/v1/namespaces/default/pods', 'application/json', pod)).status, 201);
  const r = await call(server.url, 'PATCH', '/api/v1/namespaces/default/pods/p', 'application/strategic-merge-patch+json', '{"spec":{"containers":"x"}}');
  t.is(r.status, 422);
  t.regex(r.body, /cannot unmarshal string into Go struct field Pod\.spec\.containers of type \[\]v1\.Container/);
  const ports = await call(server.url, 'POST', '/api/v1/namespaces/default/pods', 'application/json', pod.replace('"image":"x"', '"image":"x","ports":[null]').replace('"p"', '"q"'));
  t.is(ports.status, 422);
  t.is((await call(server.url, 'GET', '/api/v1/namespaces/default/pods/p', 'application/json', '')).status, 200);
});

test.serial('bug: a YAML body with a self-referencing alias (a: &a [*a]) overflowed the apiserver stack and killed the server — now 400', async (t) => {
  const r = await call(server.url, 'POST', '/api/v1/namespaces/default/pods', 'application/yaml', 'a: &a [*a, *a]\nb: [*a, *a]\n');
  t.is(r.status, 400);
  t.regex(r.body, /an alias refers to the node that contains it/);
  t.is((await call(server.url, 'GET', '/version', 'application/json', '')).status, 200);
});

test.serial('bug: a JSON body nested 5000 levels deep overflowed the engine (simulation failed) — now 400 past 512 levels', async (t) => {
  const r = await call(server.url, 'POST', '/api/v1/namespaces/default/pods', 'application/json', nested(5000));
  t.is(r.status, 400);
  t.regex(r.body, /nested deeper than 512 levels/);
  t.is((await call(server.url, 'POST', '/api/v1/namespaces/default/pods', 'application/json', nested(100))).status, 201);
  t.is((await call(server.url, 'GET', '/api/v1/namespaces/default/pods/deep', 'application/json', '')).status, 200);
});

test('jsonShapeProblem: DAGs (aliases used twice) are fine, cycles and depth are not; a million levels do not overflow the check', (t) => {
  const shared = { a: 1 };
  t.is(jsonShapeProblem({ x: shared, y: [shared, shared] }), undefined);
  const cyc: Record<string, unknown> = { a: [] };
  (cyc.a as unknown[]).push(cyc);
  t.deepEqual(jsonShapeProblem(cyc)?.path, '.a[0]');
  let deep: unknown = [];
  for (let i = 0; i < 1_000_000; i++) deep = [deep];
  t.regex(jsonShapeProblem(deep)!.message, /deeper than 512/);
});

test('route: a DELETE whose DeleteOptions body is a YAML cycle is a 400 before it reaches the apiserver', (t) => {
  const req: HttpRequestIn = { method: 'DELETE', url: '/api/v1/namespaces/default/pods/p', headers: { 'content-type': 'application/yaml' }, body: Buffer.from('x: &x {y: *x}\n') };
  const o = route(req, '127.0.0.1:1');
  t.is(o.kind, 'reply');
  t.is((o as { status: number }).status, 400);
});
