/**
 * The `expect:` kinds added for the reported cases (examples/cases), on hand-written traces: timing
 * windows per container, relative to another event of the same pod (`after:`), over every pod
 * (`pod: "*"`, `of: each | first | last`); grace sequences (request, deletionGracePeriodSeconds,
 * killPod, StopContainer); pod / process counts; ReplicaSet status.replicas; kubectl output.
 * Each passes on the trace and fails on a changed expectation.
 */
import test from 'ava';
import type { TraceRecord } from '@podsim/api';
import { TraceModel } from '../src/checkers/model.js';
import { evaluateExpectations } from '../src/expect/evaluate.js';
import type { ExpectSpec } from '../src/scenario/schema.js';

const S = 1_000_000;
type R = { t: number; actor: string; kind: string; data?: Record<string, unknown> };

/** Pods p (two containers a, b; grace 30 → kubelet 30) and q, deleted at 10 s; an RS written 3, 2, 3. */
function trace(): R[] {
  const p = { resource: 'pods', namespace: 'default', name: 'p', uid: 'u1' };
  const q = { resource: 'pods', namespace: 'default', name: 'q', uid: 'u2' };
  const ca = { containerId: 'ca', podUid: 'u1', pod: 'p', container: 'a' };
  const cb = { containerId: 'cb', podUid: 'u1', pod: 'p', container: 'b' };
  const cq = { containerId: 'cq', podUid: 'u2', pod: 'q', container: 'b' };
  const rs = { resource: 'replicasets', namespace: 'default', name: 'web', uid: 'r1' };
  const k = 'kubelet/n1';
  return [
    { t: 0, actor: 'apiserver', kind: 'api.write', data: { ...rs, event: 'ADDED', rv: '1', statusReplicas: 0 } },
    { t: 0, actor: 'apiserver', kind: 'api.write', data: { ...p, event: 'ADDED', rv: '2' } },
    { t: 0, actor: 'apiserver', kind: 'api.write', data: { ...q, event: 'ADDED', rv: '3' } },
    { t: 1 * S, actor: 'runtime/n1', kind: 'cri.start', data: ca },
    { t: 1 * S, actor: 'runtime/n1', kind: 'cri.start', data: cb },
    { t: 1 * S, actor: 'runtime/n1', kind: 'cri.start', data: cq },
    { t: 2 * S, actor: 'apiserver', kind: 'api.write', data: { ...rs, event: 'MODIFIED', rv: '4', statusReplicas: 3 } },
    { t: 9 * S, actor: 'driver', kind: 'driver.step', data: { index: 3, id: 'del', step: 'delete', ph: 'B', span: 1 } },
    { t: 10 * S, actor: 'apiserver', kind: 'api.request', data: { verb: 'delete', resource: 'pods', namespace: 'default', name: 'p', code: 200, client: 'driver' } },
    { t: 10 * S, actor: 'apiserver', kind: 'api.write', data: { ...p, event: 'MODIFIED', rv: '5', deletionTimestamp: 'x', deletionGracePeriodSeconds: 30 } },
    { t: 10 * S, actor: 'apiserver', kind: 'api.request', data: { verb: 'delete', resource: 'pods', namespace: 'default', name: 'q', code: 200, client: 'driver', gracePeriodSeconds: 1 } },
    { t: 10 * S, actor: 'apiserver', kind: 'api.write', data: { ...q, event: 'MODIFIED', rv: '6', deletionTimestamp: 'x', deletionGracePeriodSeconds: 1 } },
    { t: 10 * S, actor: 'apiserver', kind: 'api.write', data: { ...rs, event: 'MODIFIED', rv: '7', statusReplicas: 2 } },
    { t: 10 * S, actor: 'driver', kind: 'driver.step', data: { index: 3, id: 'del', step: 'delete', ph: 'E', span: 1, ok: true, output: ['pod "p" deleted', 'pod "q" deleted'] } },
    { t: 10.5 * S, actor: k, kind: 'kubelet.killPod', data: { podUid: 'u1', pod: 'default/p', gracePeriod: 30, ph: 'B', span: 1 } },
    { t: 10.5 * S, actor: k, kind: 'kubelet.killContainer', data: { podUid: 'u1', pod: 'default/p', containerId: 'ca', container: 'a', gracePeriod: 30, ph: 'B', span: 2 } },
    { t: 10.5 * S, actor: k, kind: 'kubelet.killContainer', data: { podUid: 'u1', pod: 'default/p', containerId: 'cb', container: 'b', gracePeriod: 30, ph: 'B', span: 3 } },
    { t: 10.6 * S, actor: 'runtime/n1', kind: 'cri.signal', data: { ...ca, signal: 'SIGTERM' } },
    { t: 10.6 * S, actor: 'runtime/n1', kind: 'cri.signal', data: { ...cb, signal: 'SIGTERM' } },
    { t: 10.6 * S, actor: 'runtime/n1', kind: 'cri.exit', data: { ...cb, exitCode: 0 } },
    { t: 10.6 * S, actor: k, kind: 'kubelet.killContainer', data: { podUid: 'u1', pod: 'default/p', containerId: 'cb', container: 'b', gracePeriod: 30, ph: 'E', span: 3 } },
    { t: 10.7 * S, actor: 'runtime/n1', kind: 'cri.signal', data: { ...cq, signal: 'SIGTERM' } },
    { t: 10.7 * S, actor: 'runtime/n1', kind: 'cri.exit', data: { ...cq, exitCode: 0 } },
    { t: 11 * S, actor: 'apiserver', kind: 'api.write', data: { ...rs, event: 'MODIFIED', rv: '8', statusReplicas: 3 } },
    { t: 12 * S, actor: 'apiserver', kind: 'api.write', data: { ...q, event: 'MODIFIED', rv: '9', deletionTimestamp: 'x', deletionGracePeriodSeconds: 0 } },
    { t: 12 * S, actor: 'apiserver', kind: 'api.write', data: { ...q, event: 'DELETED', rv: '10', deletionTimestamp: 'x', deletionGracePeriodSeconds: 0 } },
    { t: 40.6 * S, actor: 'runtime/n1', kind: 'cri.signal', data: { ...ca, signal: 'SIGKILL' } },
    { t: 40.6 * S, actor: 'runtime/n1', kind: 'cri.exit', data: { ...ca, exitCode: 137 } },
    { t: 40.6 * S, actor: k, kind: 'kubelet.killContainer', data: { podUid: 'u1', pod: 'default/p', containerId: 'ca', container: 'a', gracePeriod: 30, ph: 'E', span: 2 } },
    { t: 40.7 * S, actor: k, kind: 'kubelet.killPod', data: { podUid: 'u1', pod: 'default/p', gracePeriod: 30, ph: 'E', span: 1 } },
    { t: 42 * S, actor: 'apiserver', kind: 'api.write', data: { ...p, event: 'MODIFIED', rv: '11', deletionTimestamp: 'x', deletionGracePeriodSeconds: 0 } },
    { t: 42 * S, actor: 'apiserver', kind: 'api.write', data: { ...p, event: 'DELETED', rv: '12', deletionTimestamp: 'x', deletionGracePeriodSeconds: 0 } },
  ];
}

function evaluate(expect: ExpectSpec) {
  const records = trace().map((r, seq) => ({ ...r, seq, msg: r.kind }) as TraceRecord);
  return evaluateExpectations(new TraceModel(records), { pods: ['p', 'q'], ...expect }, { del: 3 });
}

/** Every result of `expect` passes, and of `broken` fails. */
function passesAndFails(t: import('ava').ExecutionContext, expect: ExpectSpec, broken: ExpectSpec): void {
  const ok = evaluate(expect);
  t.true(ok.length > 0);
  for (const r of ok) t.true(r.ok, `${r.expected}: ${r.actual}`);
  const bad = evaluate(broken);
  t.true(bad.length > 0 && bad.every((r) => !r.ok), bad.map((r) => `${r.expected}: ${r.actual}`).join('\n'));
}

test('timings per container and relative to another event of the same pod', (t) => {
  passesAndFails(
    t,
    {
      timings: [
        { pod: 'p', container: 'b', event: 'exit', since: 'del', within: [1 * S, 2 * S] },
        { pod: 'p', container: 'a', event: 'KILL', after: 'TERM', within: [30 * S, 30 * S] },
        { pod: 'p', event: 'gone', after: 'terminating', within: [32 * S, 32 * S] },
      ],
    },
    {
      timings: [
        { pod: 'p', container: 'a', event: 'exit', since: 'del', within: [1 * S, 2 * S] },
        { pod: 'p', container: 'b', event: 'KILL', after: 'TERM', within: [30 * S, 30 * S] },
        { pod: 'p', event: 'gone', after: 'terminating', within: [0, 2 * S] },
      ],
    },
  );
});

test('timings over every pod: each, first, last', (t) => {
  passesAndFails(
    t,
    {
      timings: [
        { pod: '*', event: 'gone', since: 'del', within: [2 * S, 33 * S] },
        { pod: '*', of: 'first', event: 'gone', since: 'del', within: [2 * S, 3 * S] },
        { pod: '*', of: 'last', event: 'gone', since: 'del', within: [32 * S, 33 * S] },
        // Pods without the reference event are left out; both have a TERM here.
        { pod: '*', event: 'TERM', after: 'running', within: [9.6 * S, 9.7 * S] },
      ],
    },
    {
      timings: [
        { pod: '*', event: 'gone', since: 'del', within: [2 * S, 4 * S] },
        { pod: '*', of: 'first', event: 'gone', since: 'del', within: [0, 1 * S] },
        { pod: '*', of: 'last', event: 'gone', since: 'del', within: [0, 30 * S] },
        { pod: '*', event: 'KILL', after: 'TERM', within: [30 * S, 30 * S] },
      ],
    },
  );
});

test('grace sequences: the requests, deletionGracePeriodSeconds, killPod, StopContainer', (t) => {
  passesAndFails(
    t,
    {
      grace: [
        { pod: 'p', request: [null], deletionGracePeriodSeconds: [30, 0], killPod: [30], stopContainer: [30] },
        { pod: 'q', request: [1], deletionGracePeriodSeconds: [1, 0], killPod: [] },
      ],
    },
    {
      grace: [
        { pod: 'p', request: [30], deletionGracePeriodSeconds: [30], killPod: [1], stopContainer: [28] },
        { pod: 'q', request: [null], deletionGracePeriodSeconds: [0], killPod: [1] },
      ],
    },
  );
});

test('counts, ReplicaSet status.replicas (whole history or since a step) and kubectl output', (t) => {
  passesAndFails(
    t,
    {
      counts: { maxPods: 2, podsAtEnd: 0, runningAtEnd: 0 },
      replicaSets: [
        { statusReplicas: [0, 3, 2, 3] },
        { name: 'web', since: 'del', statusReplicas: [3, 2, 3] },
      ],
      output: [{ step: 'del', contains: ['pod "p" deleted', 'pod "q"'] }],
    },
    {
      counts: { maxPods: 3, podsAtEnd: 1, runningAtEnd: 1 },
      replicaSets: [{ name: 'web', since: 'del', statusReplicas: [3] }],
      output: [{ step: 'del', contains: ['pod "q" deleted', 'pod "p" deleted'] }],
    },
  );
});

test('a value just outside its window is printed with the milliseconds that put it there', (t) => {
  const x = { resource: 'pods', namespace: 'default', name: 'x', uid: 'ux' };
  const records = [
    { t: 0, actor: 'apiserver', kind: 'api.write', data: { ...x, event: 'ADDED', rv: '1' } },
    { t: 1 * S, actor: 'apiserver', kind: 'api.write', data: { ...x, event: 'MODIFIED', rv: '2', deletionTimestamp: 'x', deletionGracePeriodSeconds: 30 } },
    { t: 9_002_354, actor: 'apiserver', kind: 'api.write', data: { ...x, event: 'DELETED', rv: '3', deletionTimestamp: 'x', deletionGracePeriodSeconds: 0 } },
  ].map((r, seq) => ({ ...r, seq, msg: r.kind }) as TraceRecord);
  const m = new TraceModel(records);
  const [late] = evaluateExpectations(m, { pods: ['x'], timings: [{ pod: 'x', event: 'gone', after: 'terminating', within: [5 * S, 8 * S] }] }, {});
  t.false(late.ok);
  t.is(late.actual, 'gone after 8.002s (x)');
  // When even milliseconds would round the value onto the window, microseconds are shown.
  const [edge] = evaluateExpectations(m, { pods: ['x'], timings: [{ pod: '*', of: 'last', event: 'gone', after: 'terminating', within: [5 * S, 8.0023 * S] }] }, {});
  t.false(edge.ok);
  t.regex(edge.actual, /^gone after 8\.002354s \(x,/);
  // Inside the window the short form stays.
  const [inside] = evaluateExpectations(m, { pods: ['x'], timings: [{ pod: 'x', event: 'gone', after: 'terminating', within: [5 * S, 9 * S] }] }, {});
  t.true(inside.ok);
  t.is(inside.actual, 'gone after 8s (x)');
});
