/**
 * Checkers touched by the reboot work (issue #15): `kubelet-node-create-once` (spec NL §8.13) —
 * a second Node CREATE by a kubelet is fine only after a restart; `printing-terminating` — a pod
 * not being deleted may print `Unknown` (a container's terminated reason after a reboot, NL §3.10)
 * but never `Terminating`, and one being deleted prints Terminating (or Unknown for NodeLost).
 */
import test from 'ava';
import type { TraceRecord } from '@podsim/api';
import { TraceModel } from '../src/checkers/model.js';
import { checkInvariants } from '../src/checkers/invariants.js';

const S = 1_000_000;
const EPOCH = 1735689600;
type R = { t: number; actor: string; kind: string; data?: Record<string, unknown> };

function check(records: R[], id: string) {
  const sorted = records.map((r, seq) => ({ t: r.t, actor: r.actor, seq, kind: r.kind, msg: r.kind, data: r.data }) as TraceRecord);
  return checkInvariants(new TraceModel(sorted), { epochUnixSeconds: EPOCH }).filter((v) => v.invariant === id);
}

const create = (t: number): R => ({ t, actor: 'apiserver', kind: 'api.request', data: { verb: 'create', resource: 'nodes', name: 'n1', code: 201, client: 'kubelet/n1' } });

test('kubelet-node-create-once: a second successful Node CREATE without a restart is a violation; after a restart it is not', (t) => {
  const v = check([create(1 * S), create(30 * S)], 'kubelet-node-create-once');
  t.is(v.length, 1);
  t.is(v[0].message, 'kubelet/n1 created Node n1 again at 30s (first at 1s) without a restart in between');
  const restarted = check([create(1 * S), { t: 20 * S, actor: 'kubelet/n1', kind: 'engine.crash' }, { t: 25 * S, actor: 'kubelet/n1', kind: 'engine.restart' }, create(30 * S)], 'kubelet-node-create-once');
  t.deepEqual(restarted, []);
  // A 409 AlreadyExists (the restarted kubelet reconciling its existing Node) is no CREATE.
  t.deepEqual(check([create(1 * S), { ...create(30 * S), data: { ...create(0).data, code: 409 } }], 'kubelet-node-create-once'), []);
});

const row = (t: number, status: string, deletionTimestamp: string | undefined): R => ({
  t,
  actor: 'driver',
  kind: 'driver.watch',
  data: { watchId: 'w', columns: ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'], cells: ['web', '0/1', status, '0', '30s'], deletionTimestamp, creationTimestamp: '2025-01-01T00:00:00Z' },
});

test('printing-terminating: Unknown without a deletionTimestamp (after a reboot) is fine; Terminating without one, or Running with one, is not', (t) => {
  t.deepEqual(check([row(30 * S, 'Unknown', undefined)], 'printing-terminating'), []);
  t.is(check([row(30 * S, 'Terminating', undefined)], 'printing-terminating').length, 1);
  t.is(check([row(30 * S, 'Running', '2025-01-01T00:00:40Z')], 'printing-terminating').length, 1);
  t.deepEqual(check([row(30 * S, 'Terminating', '2025-01-01T00:00:40Z')], 'printing-terminating'), []);
});
