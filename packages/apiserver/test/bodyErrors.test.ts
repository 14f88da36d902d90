/**
 * Request bodies kube-apiserver v1.22.8 refuses that podsim stored (found by the bad-input trial).
 *
 * metav1.Time fields as kube-apiserver v1.22.8 decodes them: `time.Parse(time.RFC3339, …)` in
 * metav1.Time's UnmarshalJSON, so a body with `timeAdded: "garbage"` is a 400 with Go 1.16's
 * ParseError text. podsim stored any string before (found by the bad-input trial: a Node taint
 * with `timeAdded: "garbage"` was stored and printed back). A strategic merge patch with an
 * unknown `$patch` directive is strategicpatch's ErrBadPatchType, answered as a 500.
 */
import test from 'ava';
import type { Node, Status } from '@podsim/api';
import { rfc3339ParseError } from '../src/rfc3339.js';
import { Harness } from './helpers.js';

test('rfc3339ParseError words each failure as Go 1.16 time.Parse(time.RFC3339, s) does', (t) => {
  const L = '"2006-01-02T15:04:05Z07:00"';
  const rows: [string, string | undefined][] = [
    ['2021-03-04T05:06:07Z', undefined],
    ['2021-03-04T05:06:07.123456789Z', undefined],
    ['2021-03-04T5:06:07+02:00', undefined],
    ['2020-02-29T00:00:00-08:00', undefined],
    ['garbage', `parsing time "garbage" as ${L}: cannot parse "garbage" as "2006"`],
    ['', `parsing time "" as ${L}: cannot parse "" as "2006"`],
    ['2021/03/04T05:06:07Z', `parsing time "2021/03/04T05:06:07Z" as ${L}: cannot parse "/03/04T05:06:07Z" as "-"`],
    ['2021-3-04T05:06:07Z', `parsing time "2021-3-04T05:06:07Z" as ${L}: cannot parse "3-04T05:06:07Z" as "01"`],
    ['2021-13-04T05:06:07Z', 'parsing time "2021-13-04T05:06:07Z": month out of range'],
    ['2021-02-30T05:06:07Z', 'parsing time "2021-02-30T05:06:07Z": day out of range'],
    ['2021-03-04 05:06:07Z', `parsing time "2021-03-04 05:06:07Z" as ${L}: cannot parse " 05:06:07Z" as "T"`],
    ['2021-03-04T24:06:07Z', 'parsing time "2021-03-04T24:06:07Z": hour out of range'],
    ['2021-03-04T05:60:07Z', 'parsing time "2021-03-04T05:60:07Z": minute out of range'],
    ['2021-03-04T05:06:07', `parsing time "2021-03-04T05:06:07" as ${L}: cannot parse "" as "Z07:00"`],
    ['2021-03-04T05:06:07,5Z', `parsing time "2021-03-04T05:06:07,5Z" as ${L}: cannot parse ",5Z" as "Z07:00"`],
    ['2021-03-04T05:06:07Zjunk', 'parsing time "2021-03-04T05:06:07Zjunk": extra text: junk'],
  ];
  for (const [v, want] of rows) t.is(rfc3339ParseError(v), want, v);
});

const node = (timeAdded: unknown) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n9' }, spec: { taints: [{ key: 'k', value: 'v', effect: 'NoExecute', timeAdded }] } }) as unknown as Node;

test('bug: a Node taint with timeAdded "garbage" was stored — now 400 with time.Parse\'s message; a real time is stored', (t) => {
  const h = new Harness();
  const bad = h.req({ type: 'ApiCreate', resource: 'nodes', object: node('garbage') });
  t.is(bad.code, 400);
  t.is((bad.body as Status).message, 'Node in version "v1" cannot be handled as a Node: parsing time "garbage" as "2006-01-02T15:04:05Z07:00": cannot parse "garbage" as "2006"');
  t.is(h.req({ type: 'ApiGet', resource: 'nodes', name: 'n9' }).code, 404);
  const ok = h.req({ type: 'ApiCreate', resource: 'nodes', object: node('2021-03-04T05:06:07Z') });
  t.is(ok.code, 201, JSON.stringify(ok.body));
});

test('bug: a strategic merge patch with an unknown $patch directive was applied (200); now the 500 with no reason that ErrorToAPIStatus gives ErrBadPatchType, and nothing is stored', (t) => {
  const h = new Harness();
  h.createPod('p', { nodeName: 'node-1' }, { labels: { a: '1' } });
  const r = h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', patchType: 'strategic', patch: { metadata: { labels: { $patch: 'nope', b: '2' } } } });
  t.is(r.code, 500);
  const st = r.body as Status;
  t.is(st.message, 'unknown patch type: nope in map: map[$patch:nope b:2]');
  t.is(st.reason, undefined);
  t.deepEqual((h.get('p').body as { metadata: { labels: Record<string, string> } }).metadata.labels, { a: '1' });
});

test('bug: an Endpoints address without an ip (or a null address) threw inside the apiserver (the run failed, serve died); now the 422 of IsValidIP("") (found by the bad-input trial)', (t) => {
  for (const addresses of [[{ hostname: 'a' }], [{ ip: null }], [null], [{}]]) {
    const h = new Harness();
    const r = h.req({ type: 'ApiCreate', resource: 'endpoints', namespace: 'default', object: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'manual' }, subsets: [{ addresses, ports: [{ port: 80 }] }] } as never });
    t.is(r.code, 422, JSON.stringify(addresses));
    t.regex((r.body as Status).message ?? '', /subsets\[0\]\.addresses\[0\]\.ip: Invalid value: "": must be a valid IP address/);
  }
});

test('bug: sessionAffinityConfig: 5 threw in defaulting, and timeoutSeconds "abc" was stored (affinity silently off); both are now the decoder\'s 400, as v1.SessionAffinityConfig is typed (found by the bad-input trial)', (t) => {
  const svc = (sessionAffinityConfig: unknown) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, sessionAffinity: 'ClientIP', sessionAffinityConfig, ports: [{ port: 80 }] } }) as never;
  const h = new Harness();
  const five = h.req({ type: 'ApiCreate', resource: 'services', namespace: 'default', object: svc(5) });
  t.is(five.code, 400);
  t.is((five.body as Status).message, 'Service in version "v1" cannot be handled as a Service: json: cannot unmarshal number 5 into Go struct field Service.spec.sessionAffinityConfig of type v1.SessionAffinityConfig');
  const abc = h.req({ type: 'ApiCreate', resource: 'services', namespace: 'default', object: svc({ clientIP: { timeoutSeconds: 'abc' } }) });
  t.is(abc.code, 400);
  t.regex((abc.body as Status).message ?? '', /cannot unmarshal string into Go struct field Service\.spec\.sessionAffinityConfig\.clientIP\.timeoutSeconds of type int32/);
  t.is(h.req({ type: 'ApiCreate', resource: 'services', namespace: 'default', object: svc({ clientIP: { timeoutSeconds: 600 } }) }).code, 201);
});

test('a sessionAffinityConfig with sessionAffinity None is Forbidden, as ValidateService answers (it was stored; fresh-user trial)', (t) => {
  const h = new Harness();
  const r = h.req({ type: 'ApiCreate', resource: 'services', namespace: 'default', object: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'b' }, spec: { selector: { app: 'b' }, sessionAffinityConfig: { clientIP: { timeoutSeconds: 100 } }, ports: [{ port: 80 }] } } as never });
  t.is(r.code, 422);
  t.regex((r.body as Status).message ?? '', /spec\.sessionAffinityConfig: Forbidden: must not be set when session affinity is None/);
});

test('Endpoints addresses that are special IPs are refused as validateNonSpecialIP answers (0.0.0.0, loopback, link-local, link-local multicast; all were stored; bad-input trial)', (t) => {
  const rows: [string, string][] = [
    ['0.0.0.0', 'may not be unspecified (0.0.0.0)'],
    ['127.0.0.1', 'may not be in the loopback range (127.0.0.0/8)'],
    ['169.254.1.1', 'may not be in the link-local range (169.254.0.0/16)'],
    ['224.0.0.1', 'may not be in the link-local multicast range (224.0.0.0/24)'],
  ];
  for (const [ip, msg] of rows) {
    const h = new Harness();
    const r = h.req({ type: 'ApiCreate', resource: 'endpoints', namespace: 'default', object: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'm' }, subsets: [{ addresses: [{ ip }], ports: [{ port: 80 }] }] } as never });
    t.is(r.code, 422, ip);
    t.true(((r.body as Status).message ?? '').includes(`subsets[0].addresses[0].ip: Invalid value: "${ip}": ${msg}`), (r.body as Status).message);
  }
  const ok = new Harness().req({ type: 'ApiCreate', resource: 'endpoints', namespace: 'default', object: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'm' }, subsets: [{ addresses: [{ ip: '192.168.10.7' }, { ip: '224.0.1.1' }], ports: [{ port: 80 }] }] } as never });
  t.is(ok.code, 201);
});
