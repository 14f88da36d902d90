/**
 * The StatefulSet invariants (WC §6.1–§6.4) against hand-written traces: a serial OrderedReady
 * scale-down is clean; a POST while the old object holds the name, a delete past an unhealthy or
 * higher pod, two controller-caused terminations at once, and an action by a set being deleted
 * each trip their checker.
 */
import test from 'ava';
import type { TraceRecord } from '@podsim/api';
import { TraceModel } from '../src/checkers/model.js';
import { checkInvariants } from '../src/checkers/invariants.js';
import { STATEFULSET_INVARIANTS } from '../src/checkers/statefulSetInvariants.js';

const S = 1_000_000;
type R = { t: number; actor: string; kind: string; data: Record<string, unknown> };
let rv = 100;
const pod = (t: number, name: string, event: string, o: { uid?: string; ready?: boolean; dt?: boolean; phase?: string } = {}): R => ({
  t,
  actor: 'apiserver',
  kind: 'api.write',
  data: {
    resource: 'pods',
    namespace: 'ns',
    name,
    uid: o.uid ?? `u-${name}`,
    event,
    rv: String(++rv),
    phase: o.phase ?? 'Running',
    nodeName: 'n1',
    ...(o.ready === false ? {} : { ready: true }),
    ...(o.dt ? { deletionTimestamp: '2025-01-01T00:01:00Z' } : {}),
  },
});
const set = (t: number, replicas: number, o: { policy?: string; dt?: boolean } = {}): R => ({
  t,
  actor: 'apiserver',
  kind: 'api.write',
  data: { resource: 'statefulsets', namespace: 'ns', name: 'web', uid: 'sts', event: t === 0 ? 'ADDED' : 'MODIFIED', rv: String(++rv), specReplicas: replicas, podManagementPolicy: o.policy ?? 'OrderedReady', ...(o.dt ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}) },
});
const act = (t: number, op: 'create' | 'delete', ordinal: number, o: { why?: string; uid?: string; code?: number } = {}): R => ({
  t,
  actor: 'kube-controller-manager',
  kind: `controller.sts.${op}`,
  data: { namespace: 'ns', statefulset: 'web', pod: `web-${ordinal}`, ordinal, code: o.code ?? (op === 'create' ? 201 : 200), ...(o.why ? { why: o.why } : {}), ...(o.uid ? { uid: o.uid } : {}) },
});

/** Three healthy pods (created in order), then a serial scale-down to 0. */
function good(): R[] {
  return [
    set(0, 3),
    pod(1 * S, 'web-0', 'ADDED'),
    act(1 * S, 'create', 0, { uid: 'u-web-0' }),
    pod(3 * S, 'web-1', 'ADDED'),
    act(3 * S, 'create', 1, { uid: 'u-web-1' }),
    pod(5 * S, 'web-2', 'ADDED'),
    act(5 * S, 'create', 2, { uid: 'u-web-2' }),
    set(10 * S, 0),
    pod(10.1 * S, 'web-2', 'MODIFIED', { dt: true }),
    act(10.1 * S, 'delete', 2, { why: 'condemned', uid: 'u-web-2' }),
    pod(40 * S, 'web-2', 'DELETED', { dt: true }),
    pod(40.1 * S, 'web-1', 'MODIFIED', { dt: true }),
    act(40.1 * S, 'delete', 1, { why: 'condemned', uid: 'u-web-1' }),
    pod(70 * S, 'web-1', 'DELETED', { dt: true }),
    pod(70.1 * S, 'web-0', 'MODIFIED', { dt: true }),
    act(70.1 * S, 'delete', 0, { why: 'condemned', uid: 'u-web-0' }),
    pod(100 * S, 'web-0', 'DELETED', { dt: true }),
  ];
}

function violations(records: R[]): string[] {
  const sorted = records
    .map((r, i) => ({ ...r, i }))
    .sort((a, b) => a.t - b.t || a.i - b.i)
    .map((r, seq) => ({ t: r.t, actor: r.actor, seq, kind: r.kind, msg: r.kind, data: r.data }) as TraceRecord);
  return [...new Set(checkInvariants(new TraceModel(sorted), { epochUnixSeconds: 1735689600 }).map((v) => v.invariant))].sort();
}

test('a serial OrderedReady scale-down is clean', (t) => {
  t.deepEqual(violations(good()), []);
});

test('a POST of web-1 while the terminating old web-1 holds the name trips sts-one-object-per-name', (t) => {
  const r = good().slice(0, 7);
  r.push(pod(8 * S, 'web-1', 'MODIFIED', { dt: true }), act(8.1 * S, 'create', 1, { code: 500 }));
  t.deepEqual(violations(r), ['sts-one-object-per-name']);
});

test('creating web-2 while web-1 is not ready trips sts-ordered-ready', (t) => {
  const r = [set(0, 3), pod(1 * S, 'web-0', 'ADDED'), act(1 * S, 'create', 0, { uid: 'u-web-0' }), pod(3 * S, 'web-1', 'ADDED', { ready: false, phase: 'Pending' }), act(3 * S, 'create', 1, { uid: 'u-web-1' }), pod(6 * S, 'web-2', 'ADDED'), act(6 * S, 'create', 2, { uid: 'u-web-2' })];
  t.deepEqual(violations(r), ['sts-ordered-ready']);
});

test('deleting web-1 while web-2 still terminates trips sts-ordered-ready and sts-one-terminating', (t) => {
  const r = good().filter((x) => !(x.kind === 'api.write' && x.data.name === 'web-2' && x.data.event === 'DELETED'));
  t.deepEqual(violations(r), ['sts-one-terminating', 'sts-ordered-ready']);
});

test('the same deletes under Parallel are clean', (t) => {
  const r = good()
    .filter((x) => !(x.kind === 'api.write' && x.data.name === 'web-2' && x.data.event === 'DELETED'))
    .map((x) => (x.data.resource === 'statefulsets' ? { ...x, data: { ...x.data, podManagementPolicy: 'Parallel' } } : x));
  t.deepEqual(violations(r), []);
});

test('a create by a set being deleted trips sts-deleting-inert', (t) => {
  const r = [set(0, 3), pod(1 * S, 'web-0', 'ADDED'), act(1 * S, 'create', 0, { uid: 'u-web-0' }), set(2 * S, 3, { dt: true }), pod(5 * S, 'web-1', 'ADDED'), act(5 * S, 'create', 1, { uid: 'u-web-1' })];
  t.deepEqual(violations(r), ['sts-deleting-inert']);
});

test('every StatefulSet checker is tripped by a broken trace above', (t) => {
  t.deepEqual(STATEFULSET_INVARIANTS.map((i) => i.id).sort(), ['sts-deleting-inert', 'sts-one-object-per-name', 'sts-one-terminating', 'sts-ordered-ready']);
});
