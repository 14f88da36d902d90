/**
 * The invariant checkers against hand-written traces: a correct graceful deletion (spec §1) is
 * clean, and each broken variant trips exactly the invariant it breaks.
 */
import test from 'ava';
import type { TraceRecord } from '@podsim/api';
import { TraceModel } from '../src/checkers/model.js';
import { INVARIANT_IDS, checkInvariants } from '../src/checkers/invariants.js';
import { STATEFULSET_INVARIANTS } from '../src/checkers/statefulSetInvariants.js';
import { evaluateExpectations } from '../src/expect/evaluate.js';

const S = 1_000_000;
const EPOCH = 1735689600; // 2025-01-01T00:00:00Z
const ts = (sec: number) => new Date((EPOCH + sec) * 1000).toISOString().replace('.000Z', 'Z');

type R = { t: number; actor: string; kind: string; data?: Record<string, unknown>; msg?: string };

const DEFAULT_TOLERATIONS = [
  ['node.kubernetes.io/not-ready', 'Exists', '', 'NoExecute', 300],
  ['node.kubernetes.io/unreachable', 'Exists', '', 'NoExecute', 300],
];

/** A correct run: pod p created, started, deleted with grace 30, exits on SIGTERM, kubelet deletes it. */
function good(): R[] {
  const pod = { resource: 'pods', namespace: 'default', name: 'p', uid: 'u1' };
  const cont = { containerId: 'c1', podUid: 'u1', pod: 'p', namespace: 'default', container: 'app' };
  const k = 'kubelet/node-1';
  return [
    // DefaultTolerationSeconds' two tolerations and no owner, as the apiserver traces a new pod.
    { t: 0, actor: 'apiserver', kind: 'api.write', data: { ...pod, event: 'ADDED', rv: '10', phase: 'Pending', tolerations: DEFAULT_TOLERATIONS, owner: '' } },
    { t: 1 * S, actor: 'apiserver', kind: 'api.write', data: { ...pod, event: 'MODIFIED', rv: '11', phase: 'Pending', nodeName: 'node-1' } },
    { t: 1.5 * S, actor: k, kind: 'kubelet.sync', data: { podUid: 'u1', pod: 'default/p', work: 'SyncPodWork', ph: 'B', span: 1 } },
    { t: 2 * S, actor: 'runtime/node-1', kind: 'cri.start', data: cont },
    { t: 2.1 * S, actor: k, kind: 'kubelet.sync', data: { podUid: 'u1', pod: 'default/p', work: 'SyncPodWork', ph: 'E', span: 1 } },
    { t: 3 * S, actor: 'apiserver', kind: 'api.write', data: { ...pod, event: 'MODIFIED', rv: '12', phase: 'Running', nodeName: 'node-1' } },
    { t: 5 * S, actor: 'driver', kind: 'driver.watch', data: { watchId: 'w', event: 'ADDED', columns: ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'], cells: ['p', '1/1', 'Running', '0', '5s'], creationTimestamp: ts(0) } },
    { t: 10 * S, actor: 'apiserver', kind: 'api.write', data: { ...pod, event: 'MODIFIED', rv: '20', phase: 'Running', nodeName: 'node-1', deletionTimestamp: ts(40), deletionGracePeriodSeconds: 30 } },
    { t: 10 * S, actor: 'apiserver', kind: 'api.request', data: { verb: 'delete', resource: 'pods', namespace: 'default', name: 'p', code: 200, client: 'driver' } },
    { t: 10 * S + 200, actor: 'driver', kind: 'driver.watch', data: { watchId: 'w', event: 'MODIFIED', cells: ['p', '1/1', 'Terminating', '0', '10s'], creationTimestamp: ts(0), deletionTimestamp: ts(40) } },
    { t: 10.5 * S, actor: k, kind: 'kubelet.sync', data: { podUid: 'u1', pod: 'default/p', work: 'TerminatingPodWork', ph: 'B', span: 2 } },
    { t: 10.5 * S, actor: k, kind: 'kubelet.killPod', data: { podUid: 'u1', pod: 'default/p', gracePeriod: 30, ph: 'B', span: 3 } },
    { t: 10.5 * S, actor: k, kind: 'kubelet.killContainer', data: { podUid: 'u1', pod: 'default/p', containerId: 'c1', container: 'app', gracePeriod: 30, ph: 'B', span: 4 } },
    { t: 10.6 * S, actor: 'runtime/node-1', kind: 'cri.signal', data: { ...cont, signal: 'SIGTERM' } },
    { t: 12 * S, actor: 'runtime/node-1', kind: 'cri.exit', data: { ...cont, exitCode: 0, reason: 'Completed' } },
    { t: 12 * S + 100, actor: k, kind: 'kubelet.killContainer', data: { podUid: 'u1', pod: 'default/p', containerId: 'c1', container: 'app', gracePeriod: 30, ph: 'E', span: 4 } },
    { t: 12.1 * S, actor: k, kind: 'kubelet.killPod', data: { podUid: 'u1', pod: 'default/p', gracePeriod: 30, ph: 'E', span: 3 } },
    { t: 12.1 * S, actor: k, kind: 'kubelet.sync', data: { podUid: 'u1', pod: 'default/p', work: 'TerminatingPodWork', ph: 'E', span: 2 } },
    { t: 13 * S, actor: k, kind: 'kubelet.sync', data: { podUid: 'u1', pod: 'default/p', work: 'TerminatedPodWork', ph: 'B', span: 5 } },
    { t: 13.5 * S, actor: k, kind: 'kubelet.sync', data: { podUid: 'u1', pod: 'default/p', work: 'TerminatedPodWork', ph: 'E', span: 5 } },
    { t: 14 * S, actor: 'apiserver', kind: 'api.write', data: { ...pod, event: 'MODIFIED', rv: '40', phase: 'Running', nodeName: 'node-1', deletionTimestamp: ts(10), deletionGracePeriodSeconds: 0 } },
    { t: 14 * S, actor: 'apiserver', kind: 'api.write', data: { ...pod, event: 'DELETED', rv: '41', phase: 'Running', nodeName: 'node-1', deletionTimestamp: ts(10), deletionGracePeriodSeconds: 0 } },
    { t: 14 * S, actor: 'apiserver', kind: 'api.request', data: { verb: 'delete', resource: 'pods', namespace: 'default', name: 'p', code: 200, client: k, gracePeriodSeconds: 0 } },
    { t: 14 * S + 200, actor: k, kind: 'kubelet.finalDelete', data: { podUid: 'u1', pod: 'default/p', namespace: 'default', code: 200 } },
  ];
}

function violations(records: R[]): string[] {
  const sorted = records
    .map((r, i) => ({ ...r, i }))
    .sort((a, b) => a.t - b.t || a.i - b.i)
    .map((r, seq) => ({ t: r.t, actor: r.actor, seq, kind: r.kind, msg: r.msg ?? r.kind, data: r.data }) as TraceRecord);
  return [...new Set(checkInvariants(new TraceModel(sorted), { epochUnixSeconds: EPOCH }).map((v) => v.invariant))].sort();
}

const at = (records: R[], pred: (r: R) => boolean) => records.findIndex(pred);

/** A node write's writer and conditions (the trace carries both): the kubelet's Ready, heartbeat at 10 s. */
const byKubelet = (ready: string) => ({ client: 'kubelet/node-1', conditions: [['Ready', ready, 'KubeletReady', 'kubelet is posting ready status', ts(10)]] });
const UNREACHABLE_NE = 'node.kubernetes.io/unreachable:NoExecute';
/** A write of node-1 at t seconds. */
const nodeW = (t: number, rv: string, event: string, taints: string[], extra: Record<string, unknown>): R => ({
  t: t * S,
  actor: 'apiserver',
  kind: 'api.write',
  data: { event, resource: 'nodes', namespace: '', name: 'node-1', uid: 'n1', rv, nodeReady: 'True', taints, ...extra },
});
/** A taint-manager DELETE of p at t seconds: the apiserver's request record and the manager's own. */
const tmDelete = (t: number): R[] => [
  { t: t * S, actor: 'apiserver', kind: 'api.request', data: { verb: 'delete', resource: 'pods', namespace: 'default', name: 'p', code: 200, client: 'kube-controller-manager' } },
  { t: t * S + 200, actor: 'kube-controller-manager', kind: 'controller.taintManager.delete', data: { namespace: 'default', pod: 'p', code: 200, attempt: 0 } },
];
/** The node lifecycle controller's Unknown update of that condition (heartbeat kept). */
const byNlc = () => ({ client: 'kube-controller-manager', conditions: [['Ready', 'Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.', ts(10)]] });

test('a correct graceful deletion is clean', (t) => {
  t.deepEqual(violations(good()), []);
});

const broken: Array<[string, (r: R[]) => void, string[]]> = [
  [
    'the kubelet deletes while the container still runs',
    (r) => r.splice(at(r, (x) => x.kind === 'cri.exit'), 1),
    ['final-delete-gated', 'no-removal-while-running'],
  ],
  [
    'deletionGracePeriodSeconds grows',
    (r) => r.splice(at(r, (x) => x.kind === 'api.write' && x.data?.rv === '40'), 0, { t: 11 * S, actor: 'apiserver', kind: 'api.write', data: { ...r[0].data, event: 'MODIFIED', rv: '30', nodeName: 'node-1', deletionTimestamp: ts(50), deletionGracePeriodSeconds: 40 } }),
    ['grace-only-shrinks-apiserver'],
  ],
  [
    'a shorter grace that does not move deletionTimestamp back',
    (r) => r.splice(at(r, (x) => x.kind === 'api.write' && x.data?.rv === '40'), 0, { t: 11 * S, actor: 'apiserver', kind: 'api.write', data: { ...r[0].data, event: 'MODIFIED', rv: '30', nodeName: 'node-1', deletionTimestamp: ts(40), deletionGracePeriodSeconds: 5 } }),
    ['grace-only-shrinks-apiserver'],
  ],
  [
    'a second DELETE without grace writes the object',
    (r) => {
      r.push({ t: 11 * S, actor: 'apiserver', kind: 'api.request', data: { verb: 'delete', resource: 'pods', namespace: 'default', name: 'p', code: 200, client: 'driver' } });
      r.push({ t: 11 * S, actor: 'apiserver', kind: 'api.write', data: { ...r[0].data, event: 'MODIFIED', rv: '30', nodeName: 'node-1', deletionTimestamp: ts(40), deletionGracePeriodSeconds: 30 } });
    },
    ['second-delete-idempotent'],
  ],
  [
    'SIGKILL 0.4 s after SIGTERM with a 30 s timeout',
    (r) => {
      r.splice(at(r, (x) => x.kind === 'cri.exit'), 1, { t: 11 * S, actor: 'runtime/node-1', kind: 'cri.signal', data: { containerId: 'c1', podUid: 'u1', pod: 'p', container: 'app', signal: 'SIGKILL' } }, { t: 11 * S, actor: 'runtime/node-1', kind: 'cri.exit', data: { containerId: 'c1', podUid: 'u1', pod: 'p', container: 'app', exitCode: 137 } });
    },
    ['no-early-sigkill'],
  ],
  [
    'exit 137 without a SIGKILL',
    (r) => ((r[at(r, (x) => x.kind === 'cri.exit')].data as Record<string, unknown>).exitCode = 137),
    ['exit-codes-follow-signal'],
  ],
  [
    'a kill grace that grows within one kubelet incarnation',
    (r) => r.push({ t: 12.5 * S, actor: 'kubelet/node-1', kind: 'kubelet.killPod', data: { podUid: 'u1', pod: 'default/p', gracePeriod: 45, ph: 'B', span: 9 } }),
    ['grace-only-shrinks-kubelet'],
  ],
  [
    'syncTerminatedPod overlapping syncTerminatingPod',
    (r) => (r[at(r, (x) => x.kind === 'kubelet.sync' && x.data?.span === 5 && x.data.ph === 'B')].t = 12 * S),
    ['one-sync-at-a-time'],
  ],
  [
    'syncPod after syncTerminatingPod',
    (r) => {
      r.push({ t: 12.5 * S, actor: 'kubelet/node-1', kind: 'kubelet.sync', data: { podUid: 'u1', pod: 'default/p', work: 'SyncPodWork', ph: 'B', span: 7 } });
      r.push({ t: 12.6 * S, actor: 'kubelet/node-1', kind: 'kubelet.sync', data: { podUid: 'u1', pod: 'default/p', work: 'SyncPodWork', ph: 'E', span: 7 } });
    },
    ['one-sync-at-a-time'],
  ],
  [
    'a container started after termination began',
    (r) => r.push({ t: 11 * S, actor: 'runtime/node-1', kind: 'cri.start', data: { containerId: 'c2', podUid: 'u1', pod: 'p', container: 'side' } }, { t: 11.5 * S, actor: 'runtime/node-1', kind: 'cri.exit', data: { containerId: 'c2', podUid: 'u1', pod: 'p', container: 'side', exitCode: 0 } }),
    ['no-starts-once-terminating'],
  ],
  [
    'DELETED without a MODIFIED that set deletionTimestamp',
    (r) => {
      r.splice(at(r, (x) => x.kind === 'api.write' && x.data?.rv === '20'), 1);
      r.splice(at(r, (x) => x.kind === 'api.write' && x.data?.rv === '40'), 1);
    },
    ['deletion-via-modified'],
  ],
  [
    'a resourceVersion that goes backwards',
    (r) => ((r[at(r, (x) => x.kind === 'api.write' && x.data?.rv === '41')].data as Record<string, unknown>).rv = '9'),
    ['monotonic-resource-versions'],
  ],
  [
    'a kubelet restart stops the running container of a pod nobody deleted',
    (r) => {
      const cont = { containerId: 'c1', podUid: 'u1', pod: 'p', namespace: 'default', container: 'app' };
      r.push(
        { t: 4 * S, actor: 'kubelet/node-1', kind: 'engine.crash' },
        { t: 6 * S, actor: 'kubelet/node-1', kind: 'engine.restart' },
        { t: 7 * S, actor: 'runtime/node-1', kind: 'cri.signal', data: { ...cont, signal: 'SIGTERM' } },
        { t: 8 * S, actor: 'runtime/node-1', kind: 'cri.exit', data: { ...cont, exitCode: 0, reason: 'Completed' } },
      );
    },
    ['kubelet-restart-keeps-running-pods'],
  ],
  [
    'a row printed Terminating without a deletionTimestamp, and an AGE not from creationTimestamp',
    (r) => {
      const row = r[at(r, (x) => x.kind === 'driver.watch' && x.data?.event === 'ADDED')].data as Record<string, unknown>;
      row.cells = ['p', '1/1', 'Terminating', '0', '2s'];
      row.deletionTimestamp = undefined;
    },
    ['printing-terminating'],
  ],
  [
    'a DELETE removes a pod that has finalizers',
    (r) => ((r[at(r, (x) => x.kind === 'api.write' && x.data?.rv === '40')].data as Record<string, unknown>).finalizers = ['example.com/keep']),
    ['finalizers-block-removal'],
  ],
  [
    'the final DELETE before syncTerminatingPod finished',
    (r) => (r[at(r, (x) => x.kind === 'kubelet.sync' && x.data?.span === 2 && x.data.ph === 'E')].data = { podUid: 'u1', pod: 'default/p', work: 'TerminatingPodWork', ph: 'E', span: 2, error: 'killPod failed' }),
    ['final-delete-after-terminated'],
  ],
  [
    "the kubelet's final DELETE (meant for u1) removes a pod recreated under the same name",
    (r) => {
      // The user force-deleted p (u1) and created p again (u2) between the kubelet's GET and its DELETE.
      const i = at(r, (x) => x.kind === 'api.write' && x.data?.rv === '40');
      const u2 = { resource: 'pods', namespace: 'default', name: 'p', uid: 'u2', nodeName: 'node-1' };
      r.splice(
        i,
        2,
        { t: 13.7 * S, actor: 'apiserver', kind: 'api.write', data: { ...r[0].data, event: 'MODIFIED', rv: '35', phase: 'Running', nodeName: 'node-1', deletionTimestamp: ts(10), deletionGracePeriodSeconds: 0 } },
        { t: 13.7 * S, actor: 'apiserver', kind: 'api.write', data: { ...r[0].data, event: 'DELETED', rv: '36', phase: 'Running', nodeName: 'node-1', deletionTimestamp: ts(10), deletionGracePeriodSeconds: 0 } },
        { t: 13.7 * S, actor: 'apiserver', kind: 'api.request', data: { verb: 'delete', resource: 'pods', namespace: 'default', name: 'p', code: 200, client: 'driver', gracePeriodSeconds: 0 } },
        { t: 13.8 * S, actor: 'apiserver', kind: 'api.write', data: { ...u2, event: 'ADDED', rv: '37', phase: 'Pending' } },
        { t: 14 * S, actor: 'apiserver', kind: 'api.write', data: { ...u2, event: 'MODIFIED', rv: '40', phase: 'Pending', deletionTimestamp: ts(14), deletionGracePeriodSeconds: 0 } },
        { t: 14 * S, actor: 'apiserver', kind: 'api.write', data: { ...u2, event: 'DELETED', rv: '41', phase: 'Pending', deletionTimestamp: ts(14), deletionGracePeriodSeconds: 0 } },
      );
    },
    ['final-delete-own-uid'],
  ],
  // Services and kube-proxy (issue #18): pod u1 (terminating at 10 s, DELETED at 14 s) behind Service s.
  ['the Endpoints written 6 s after the DELETE still lists the pod', (r) => r.push(svcR(0), epR(16 * S, ['u1'])), ['endpoints-exclude-terminating']],
  ['the slice marks the terminating pod ready', (r) => r.push(svcR(0), sliceR(11 * S, [['u1', true, true, true]])), ['slice-terminating-not-ready']],
  ['an Endpoints object with 1001 addresses', (r) => r.push(svcR(0), epR(S, Array.from({ length: 1001 }, (_, i) => `x${i}`))), ['endpoint-object-size']],
  ['the endpoints controller writes an Endpoints object with 1001 addresses', (r) => r.push(svcR(0), { ...epR(S, Array.from({ length: 1001 }, (_, i) => `x${i}`)), data: { ...epR(S, []).data, addresses: Array.from({ length: 1001 }, (_, i) => `x${i}`), client: 'kube-controller-manager' } }), ['endpoint-object-size']],
  // Bug (breaker): a user's 2000-address Endpoints of a selector-less Service failed the run; v1.22's API takes it.
  ['(none:) a user writes an Endpoints object with 2000 addresses', (r) => r.push(svcR(0), { ...epR(S, []), data: { ...epR(S, []).data, addresses: Array.from({ length: 2000 }, (_, i) => `10.0.${i >> 8}.${i & 255}`), client: 'driver' } }), []],
  ['the slice lists the pod 6 s after it was DELETED', (r) => r.push(svcR(0), sliceR(20 * S, [['u1', false, false, true]])), ['slice-drops-deleted-pods']],
  ["a node's rules target the pod 6 s after its slice marked it not ready", (r) => r.push(svcR(0), sliceR(10 * S, [['u1', false, true, true]]), syncR(16 * S, [['10.224.0.2', 'u1']])), ['proxy-routes-ready-only']],
  ['three syncs within 20 µs on one node', (r) => r.push(syncR(S, []), syncR(S + 10, []), syncR(S + 20, [])), ['proxy-sync-rate']],
  [
    "node-1's ETP Local chain lists a pod that runs on node-2",
    (r) => r.push(svcR(0), { t: 2 * S, actor: 'runtime/node-2', kind: 'cri.network', data: { podUid: 'u9', pod: 'q', ip: '10.224.1.9', up: true } }, sliceR(2 * S, [['u9', true, true, false]]), xlbR(3 * S, [['10.224.1.9', 'u9']], ['10.224.1.9'])),
    ['proxy-xlb-local-only'],
  ],
  ["node-1's ETP Local chain lists an IP that is not among its Ready targets", (r) => r.push(xlbR(3 * S, [], ['10.224.0.7'])), ['proxy-xlb-local-only']],
  [
    'a node turns Unknown 10 s after it was registered',
    (r) => {
      r.push({ t: 15 * S, actor: 'apiserver', kind: 'api.write', data: { event: 'ADDED', resource: 'nodes', namespace: '', name: 'node-1', uid: 'n1', rv: '50', nodeReady: 'True', taints: [], ...byKubelet('True') } });
      r.push({ t: 25 * S, actor: 'apiserver', kind: 'api.write', data: { event: 'MODIFIED', resource: 'nodes', namespace: '', name: 'node-1', uid: 'n1', rv: '51', nodeReady: 'Unknown', nodeReadyReason: 'NodeStatusUnknown', nodeReadyMessage: 'Kubelet stopped posting node status.', taints: [], ...byNlc() } });
    },
    ['node-unknown-after-grace'],
  ],
  [
    'a node turns Unknown 50 s after its lease, but with the kubelet NotReady reason',
    (r) => {
      r.push({ t: 15 * S, actor: 'apiserver', kind: 'api.write', data: { event: 'ADDED', resource: 'leases', namespace: 'kube-node-lease', name: 'node-1', uid: 'l1', rv: '50' } });
      r.push({ t: 65 * S, actor: 'apiserver', kind: 'api.write', data: { event: 'MODIFIED', resource: 'nodes', namespace: '', name: 'node-1', uid: 'n1', rv: '51', nodeReady: 'Unknown', nodeReadyReason: 'KubeletNotReady', nodeReadyMessage: 'x', taints: [], client: 'kube-controller-manager', conditions: [['Ready', 'Unknown', 'KubeletNotReady', 'x', ts(10)]] } });
    },
    ['node-unknown-after-grace'],
  ],
  [
    'a node keeps both NoExecute condition taints for 5 s',
    (r) => {
      const both = ['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/not-ready:NoExecute'];
      r.push({ t: 15 * S, actor: 'apiserver', kind: 'api.write', data: { event: 'ADDED', resource: 'nodes', namespace: '', name: 'node-1', uid: 'n1', rv: '50', nodeReady: 'True', taints: both, ...byKubelet('True') } });
      r.push({ t: 20 * S, actor: 'apiserver', kind: 'api.write', data: { event: 'MODIFIED', resource: 'nodes', namespace: '', name: 'node-1', uid: 'n1', rv: '51', nodeReady: 'True', taints: [], ...byKubelet('True') } });
    },
    ['noexecute-condition-taints-exclusive'],
  ],
  [
    'the controller manager deletes a pod with a grace override',
    (r) => r.push({ t: 10 * S, actor: 'apiserver', kind: 'api.request', data: { verb: 'delete', resource: 'pods', namespace: 'default', name: 'p', code: 200, client: 'kube-controller-manager', gracePeriodSeconds: 10 } }),
    ['controller-delete-no-grace-override'],
  ],
  [
    'a kubelet creates its Node twice without a restart in between',
    (r) => {
      const create = (t: number): R => ({ t, actor: 'apiserver', kind: 'api.request', data: { verb: 'create', resource: 'nodes', name: 'node-9', code: 201, client: 'kubelet/node-9' } });
      r.push(create(1 * S), create(20 * S));
    },
    ['kubelet-node-create-once'],
  ],
  // The rest of node-lifecycle §8 (checkers/nodeLifecycleInvariants.ts): node-1 registers at 0.5 s.
  [
    "the node lifecycle controller advances node-1's Ready lastHeartbeatTime",
    (r) => r.push(nodeW(0.5, '10.5', 'ADDED', [], byKubelet('True')), nodeW(2, '11.5', 'MODIFIED', [], { client: 'kube-controller-manager', conditions: [['Ready', 'True', 'KubeletReady', 'kubelet is posting ready status', ts(20)]] })),
    ['nlc-status-writes'],
  ],
  [
    "node-1 gets unreachable:NoExecute while its zone's limiter is 0",
    (r) => {
      r.push({ t: 4 * S, actor: 'kube-controller-manager', kind: 'controller.nodelifecycle.zone', data: { zone: '', state: 'PartialDisruption', qps: 0 } });
      r.push(nodeW(0.5, '10.5', 'ADDED', [], byKubelet('True')), nodeW(5, '12.5', 'MODIFIED', [UNREACHABLE_NE], { client: 'kube-controller-manager', conditions: [] }));
    },
    ['noexecute-taint-limiter-zero'],
  ],
  [
    'node-2 and node-1 of one zone get unreachable:NoExecute 1 s apart',
    (r) => {
      const n2 = (t: number, rv: string, event: string, taints: string[]) => ({ ...nodeW(t, rv, event, taints, { client: 'kube-controller-manager', conditions: [] }), data: { ...nodeW(t, rv, event, taints, { client: 'kube-controller-manager', conditions: [] }).data, name: 'node-2', uid: 'n2' } });
      r.push(nodeW(0.5, '10.5', 'ADDED', [], byKubelet('True')), n2(0.6, '10.6', 'ADDED', []), n2(5, '12.5', 'MODIFIED', [UNREACHABLE_NE]));
      r.push(nodeW(6, '12.6', 'MODIFIED', [UNREACHABLE_NE], { client: 'kube-controller-manager', conditions: byKubelet('True').conditions }));
    },
    ['noexecute-taint-zone-rate'],
  ],
  [
    'the taint manager deletes p, which tolerates everything forever, 1 s after its node got unreachable:NoExecute',
    (r) => {
      r[0].data!.tolerations = [['', 'Exists', '', '', null]];
      r.push(nodeW(0.5, '10.5', 'ADDED', [], byKubelet('True')), nodeW(5, '12.5', 'MODIFIED', [UNREACHABLE_NE], { client: 'kube-controller-manager', conditions: byKubelet('True').conditions }), ...tmDelete(6));
    },
    ['taint-manager-deadline-kept', 'taint-manager-spares-tolerating-pods'],
  ],
  [
    'the taint manager deletes p 1 s after its node got unreachable:NoExecute (tolerationSeconds 300)',
    (r) => r.push(nodeW(0.5, '10.5', 'ADDED', [], byKubelet('True')), nodeW(5, '12.5', 'MODIFIED', [UNREACHABLE_NE], { client: 'kube-controller-manager', conditions: byKubelet('True').conditions }), ...tmDelete(6)),
    ['taint-manager-deadline-kept'],
  ],
  [
    'p (tolerationSeconds 1) sits 8 s on its node after unreachable:NoExecute and the taint manager never deletes it',
    (r) => {
      r[0].data!.tolerations = [['node.kubernetes.io/unreachable', 'Exists', '', 'NoExecute', 1]];
      r.push(nodeW(0.5, '10.5', 'ADDED', [], byKubelet('True')), nodeW(5, '12.5', 'MODIFIED', [UNREACHABLE_NE], { client: 'kube-controller-manager', conditions: byKubelet('True').conditions }));
    },
    ['taint-manager-deadline-kept'],
  ],
  [
    'master disruption mode is entered at 3 s but node-1 keeps unreachable:NoExecute to the end',
    (r) => {
      r.push(nodeW(0.5, '10.5', 'ADDED', [], byKubelet('True')), nodeW(2, '11.5', 'MODIFIED', [UNREACHABLE_NE], { client: 'kube-controller-manager', conditions: byKubelet('True').conditions }));
      r.push({ t: 3 * S, actor: 'kube-controller-manager', kind: 'controller.nodelifecycle.disruption', data: { mode: 'enter' } });
      // The taint manager's deletion of p (tolerationSeconds 300) is not due before the run ends.
    },
    ['noexecute-taint-limiter-zero'],
  ],
  [
    'the controller manager force-deletes p while its node was never confirmed gone',
    (r) => r.push({ t: 5 * S, actor: 'apiserver', kind: 'api.request', data: { verb: 'delete', resource: 'pods', namespace: 'default', name: 'p', code: 200, client: 'kube-controller-manager', gracePeriodSeconds: 0 } }),
    ['podgc-force-delete-justified'],
  ],
  [
    'ReplicaSet web (replicas 1) owns the running p and creates web-x before p has a deletionTimestamp',
    (r) => {
      r[0].data!.owner = 'ReplicaSet/web';
      r.push({ t: 0.2 * S, actor: 'apiserver', kind: 'api.write', data: { event: 'ADDED', resource: 'replicasets', namespace: 'default', name: 'web', uid: 'rs1', rv: '10.2', statusReplicas: 0, specReplicas: 1 } });
      r.push({ t: 5 * S, actor: 'apiserver', kind: 'api.write', data: { event: 'ADDED', resource: 'pods', namespace: 'default', name: 'web-x', uid: 'ux', rv: '12.5', phase: 'Pending', tolerations: [], owner: 'ReplicaSet/web' } });
    },
    ['rs-replacement-after-deletion'],
  ],
  [
    'a pod write carries status.reason NodeLost',
    (r) => (r[at(r, (x) => x.kind === 'api.write' && x.data?.rv === '20')].data!.reason = 'NodeLost'),
    ['no-node-lost-reason'],
  ],
];

/** Services records (no rv: they stay out of the pod-write checkers' view). */
const svcR = (t: number): R => ({ t, actor: 'apiserver', kind: 'api.write', data: { event: 'ADDED', resource: 'services', namespace: 'default', name: 's', uid: 's1' } });
const epR = (t: number, addresses: string[]): R => ({ t, actor: 'apiserver', kind: 'api.write', data: { event: 'MODIFIED', resource: 'endpoints', namespace: 'default', name: 's', uid: 'e1', addresses, notReadyAddresses: [] } });
const sliceR = (t: number, endpoints: [string, boolean, boolean, boolean][]): R => ({
  t,
  actor: 'apiserver',
  kind: 'api.write',
  data: { event: 'MODIFIED', resource: 'endpointslices', namespace: 'default', name: 's-1', uid: 'sl1', service: 's', managedBy: 'endpointslice-controller.k8s.io', endpoints },
});
/** A sync of node-1 giving default/s node ports and this ETP Local chain (`local` IPs). */
const xlbR = (t: number, targets: [string, string][], local: string[]): R => ({
  t,
  actor: 'kube-proxy/node-1',
  kind: 'proxy.sync',
  data: { node: 'node-1', startUs: t - 1000, services: { 'default/s': { clusterIP: '10.96.0.10', targets, reject: targets.length === 0, nodePorts: [30080], local } } },
});
const syncR = (t: number, targets: [string, string][]): R => ({
  t,
  actor: 'kube-proxy/node-1',
  kind: 'proxy.sync',
  data: { node: 'node-1', startUs: t - 1000, minSyncPeriodUs: S, burstSyncs: 2, services: { 'default/s': { clusterIP: '10.96.0.10', targets, reject: targets.length === 0 } } },
});

for (const [title, mutate, want] of broken) {
  test(`detects: ${title}`, (t) => {
    const r = structuredClone(good());
    mutate(r);
    t.deepEqual(violations(r), want);
  });
}

test('every checker is exercised by a broken trace above', (t) => {
  const covered = new Set(broken.flatMap(([, , w]) => w));
  // The StatefulSet checkers have their own broken traces (statefulSetCheckers.test.ts).
  const sts = new Set(STATEFULSET_INVARIANTS.map((i) => i.id));
  t.deepEqual(INVARIANT_IDS.filter((id) => !covered.has(id) && !sts.has(id)), ['prestop-before-sigterm']);
});

test('a SIGTERM while the preStop hook is still being waited for is a violation', (t) => {
  const r = good();
  const i = at(r, (x) => x.kind === 'cri.signal');
  r.splice(i, 0, { t: 10.5 * S, actor: 'kubelet/node-1', kind: 'kubelet.preStop', data: { podUid: 'u1', container: 'app', ph: 'B', span: 8 } });
  r.push({ t: 11 * S, actor: 'kubelet/node-1', kind: 'kubelet.preStop', data: { podUid: 'u1', container: 'app', ph: 'E', span: 8 } });
  t.deepEqual(violations(r), ['prestop-before-sigterm']);
  r[r.length - 1].t = 10.55 * S;
  t.deepEqual(violations(r), []);
});

test('a preStop wait cut short by a kubelet crash ends at the crash: the restarted kubelet re-runs the hook and its SIGTERM is no violation', (t) => {
  // restart-prestop.yaml: delete at 5 s, preStop `sleep 20`, kubeletRestart at 6 s for 3 s; the
  // new kubelet waited for the hook again from 9 s and sent SIGTERM at 29 s, which the checker
  // blamed on the crashed incarnation's preStop span (never ended).
  const r = good();
  const i = at(r, (x) => x.kind === 'cri.signal');
  r.splice(i, 0, { t: 10.5 * S, actor: 'kubelet/node-1', kind: 'kubelet.preStop', data: { podUid: 'u1', container: 'app', ph: 'B', span: 8 } });
  r.splice(i + 1, 0, { t: 10.52 * S, actor: 'kubelet/node-1', kind: 'engine.crash' });
  t.deepEqual(violations(r), []);
  // Without the crash, the same unended span still guards its container.
  r.splice(i + 1, 1);
  t.deepEqual(violations(r), ['prestop-before-sigterm']);
});

test('a client DELETE that the apiserver turned into grace 0 (spec terminationGracePeriodSeconds 0, C06) is a force delete, not a removal while running', (t) => {
  // The pod's container still runs when the object goes: the request carried no grace, but the
  // graceful-delete update written just before DELETED has dgps 0 (CheckGracefulDelete took TGPS 0).
  const r = good().filter((x) => x.t < 10 * S);
  const pod = { resource: 'pods', namespace: 'default', name: 'p', uid: 'u1', phase: 'Running', nodeName: 'node-1', deletionTimestamp: ts(10), deletionGracePeriodSeconds: 0 };
  r.push(
    { t: 10 * S, actor: 'apiserver', kind: 'api.write', data: { ...pod, event: 'MODIFIED', rv: '20' } },
    { t: 10 * S, actor: 'apiserver', kind: 'api.write', data: { ...pod, event: 'DELETED', rv: '21' } },
    { t: 10 * S, actor: 'apiserver', kind: 'api.request', data: { verb: 'delete', resource: 'pods', namespace: 'default', name: 'p', code: 200, client: 'driver' } },
  );
  t.deepEqual(violations(r), []);
  // A graceful removal (dgps 30) with the container running is still a violation.
  for (const w of r.filter((x) => x.kind === 'api.write' && x.t === 10 * S)) w.data!.deletionGracePeriodSeconds = 30;
  t.deepEqual(violations(r), ['no-removal-while-running']);
});

test('the kubelet grace may grow back to TGPS once a force delete made dgps 0 (calculateEffectiveGracePeriod; C04 variant B)', (t) => {
  // killPod with grace 10 (`--grace-period=10`) fails and is retried with 30 after `--force`.
  const r = good();
  const k = 'kubelet/node-1';
  const kp = at(r, (x) => x.kind === 'kubelet.killPod' && x.data?.ph === 'B');
  r[kp].data!.gracePeriod = 10;
  r[at(r, (x) => x.kind === 'kubelet.killPod' && x.data?.ph === 'E')].data!.gracePeriod = 10;
  const force = { t: 11 * S, actor: 'apiserver', kind: 'api.write', data: { ...r[0].data, event: 'MODIFIED', rv: '30', phase: 'Running', nodeName: 'node-1', deletionTimestamp: ts(10), deletionGracePeriodSeconds: 0 } };
  const retry = (grace: number) => [
    { t: 12.2 * S, actor: k, kind: 'kubelet.killPod', data: { podUid: 'u1', pod: 'default/p', gracePeriod: grace, terminationGracePeriodSeconds: 30, ph: 'B', span: 10 } },
    { t: 12.3 * S, actor: k, kind: 'kubelet.killPod', data: { podUid: 'u1', pod: 'default/p', gracePeriod: grace, ph: 'E', span: 10 } },
  ];
  t.deepEqual(violations([...r, ...retry(30)]), ['grace-only-shrinks-kubelet'], 'growth without a force delete');
  r.splice(at(r, (x) => x.kind === 'api.write' && x.data?.rv === '40'), 0, force);
  t.deepEqual(violations([...r, ...retry(30)]), []);
});

test('after a force delete the kubelet grace grows back to the spec terminationGracePeriodSeconds only, not beyond (issue #25 item 3)', (t) => {
  // The loose rule allowed any growth once dgps was 0: 10 → 600 passed with a TGPS of 30.
  const r = good();
  const k = 'kubelet/node-1';
  r[at(r, (x) => x.kind === 'kubelet.killPod' && x.data?.ph === 'B')].data!.gracePeriod = 10;
  r.splice(at(r, (x) => x.kind === 'api.write' && x.data?.rv === '40'), 0, { t: 11 * S, actor: 'apiserver', kind: 'api.write', data: { ...r[0].data, event: 'MODIFIED', rv: '30', phase: 'Running', nodeName: 'node-1', deletionTimestamp: ts(10), deletionGracePeriodSeconds: 0 } });
  const retry = (grace: number, tgps: number | undefined) => [
    { t: 12.2 * S, actor: k, kind: 'kubelet.killPod', data: { podUid: 'u1', pod: 'default/p', gracePeriod: grace, ...(tgps !== undefined ? { terminationGracePeriodSeconds: tgps } : {}), ph: 'B', span: 10 } },
    { t: 12.3 * S, actor: k, kind: 'kubelet.killPod', data: { podUid: 'u1', pod: 'default/p', gracePeriod: grace, ph: 'E', span: 10 } },
  ];
  t.deepEqual(violations([...r, ...retry(600, 30)]), ['grace-only-shrinks-kubelet'], '10 → 600 with TGPS 30');
  t.deepEqual(violations([...r, ...retry(29, 30)]), ['grace-only-shrinks-kubelet'], '10 → 29 with TGPS 30');
  t.deepEqual(violations([...r, ...retry(600, 600)]), [], '10 → 600 with TGPS 600');
  // Without a TGPS the kubelet's fallback is the floor, 1: no growth is allowed.
  t.deepEqual(violations([...r, ...retry(30, undefined)]), ['grace-only-shrinks-kubelet'], 'no TGPS');
});

test('a StopContainer timeout is checked as the runtime received it, also when the kubelet crashed before StopContainer returned (issue #27 item 2)', (t) => {
  // checker-no-early-sigkill-crashed-kubelet.yaml: killContainer B says grace 30 (the spec's),
  // the kubelet passed the override 1 and crashed before the E record; the runtime SIGKILLed 1 s
  // after SIGTERM, as StopContainer(1) asks.
  const base = good().filter((x) => x.t < 10.5 * S || x.kind === 'driver.watch');
  const k = 'kubelet/node-1';
  const cont = { containerId: 'c1', podUid: 'u1', pod: 'p', namespace: 'default', container: 'app' };
  const run = (termData: Record<string, unknown>, killAt: number) => [
    ...base,
    { t: 10.5 * S, actor: k, kind: 'kubelet.killPod', data: { podUid: 'u1', pod: 'default/p', gracePeriod: 1, terminationGracePeriodSeconds: 30, ph: 'B', span: 3 } },
    { t: 10.5 * S, actor: k, kind: 'kubelet.killContainer', data: { podUid: 'u1', pod: 'default/p', containerId: 'c1', container: 'app', gracePeriod: 30, ph: 'B', span: 4 } },
    { t: 10.6 * S, actor: 'runtime/node-1', kind: 'cri.signal', data: { ...cont, signal: 'SIGTERM', ...termData } },
    { t: 10.7 * S, actor: k, kind: 'engine.crash' },
    { t: killAt, actor: 'runtime/node-1', kind: 'cri.signal', data: { ...cont, signal: 'SIGKILL' } },
    { t: killAt, actor: 'runtime/node-1', kind: 'cri.exit', data: { ...cont, exitCode: 137 } },
  ];
  t.deepEqual(violations(run({ timeout: 1 }, 11.6 * S)), [], 'SIGKILL exactly 1 s after StopContainer(1)');
  t.deepEqual(violations(run({ timeout: 1 }, 11.5 * S)), ['no-early-sigkill'], 'SIGKILL 0.9 s after StopContainer(1)');
  t.deepEqual(violations(run({ timeout: 30 }, 11.6 * S)), ['no-early-sigkill'], 'SIGKILL 1 s after StopContainer(30)');
  // Without any timeout in the trace (the B record's spec grace is not one), the SIGKILL is unexplained.
  t.deepEqual(violations(run({}, 11.6 * S)), ['no-early-sigkill'], 'no timeout traced');
  // A timeout 0 the runtime received is a grace-only-shrinks-kubelet violation, even without an E record.
  t.deepEqual(violations(run({ timeout: 0.5 }, 11.6 * S)), ['grace-only-shrinks-kubelet'], 'StopContainer(0.5)');
});

test('watch expectations compare (alias, READY, STATUS) rows exactly, or per pod', (t) => {
  const records = good().map((r, seq) => ({ ...r, seq, msg: r.kind }) as TraceRecord);
  const m = new TraceModel(records);
  const [ok] = evaluateExpectations(m, { pods: ['old'], watch: { rows: ['old 1/1 Running', 'old 1/1 Terminating'] } }, {});
  t.true(ok.ok, ok.actual);
  const [bad] = evaluateExpectations(m, { pods: ['old'], watch: { rows: ['old 1/1 Running', 'old 0/1 Terminating'] } }, {});
  t.false(bad.ok);
  t.regex(bad.actual, /row 2: expected "old 0\/1 Terminating", got "old 1\/1 Terminating"/);
  const [ordered] = evaluateExpectations(m, { pods: ['old'], watch: { match: 'ordered', pod: 'old', rows: ['old 1/1 Terminating'] } }, {});
  t.true(ordered.ok, ordered.actual);
});

test("final-delete-own-uid matches the kubelet's DELETE by its UID precondition, not by the next record for a pod of the same name (issue #27 item 3)", (t) => {
  // checker-final-delete-own-uid-crash.yaml: the kubelet's DELETE (precondition u1) removes u1,
  // the kubelet crashes before the reply, and a later pod p (u2) is deleted by its restarted
  // kubelet: the old checker took u2's finalDelete record as what the first DELETE meant.
  const r = good();
  const k = 'kubelet/node-1';
  const req = r[at(r, (x) => x.kind === 'api.request' && x.data?.client === k)];
  req.data!.preconditionUid = 'u1';
  r.splice(at(r, (x) => x.kind === 'kubelet.finalDelete'), 1, { t: 14.1 * S, actor: k, kind: 'engine.crash' }, { t: 16 * S, actor: k, kind: 'engine.restart' });
  const u2 = { resource: 'pods', namespace: 'default', name: 'p', uid: 'u2', nodeName: 'node-1', phase: 'Pending' };
  const later = [
    { t: 20 * S, actor: 'apiserver', kind: 'api.write', data: { ...u2, event: 'ADDED', rv: '50' } },
    { t: 30 * S, actor: 'apiserver', kind: 'api.write', data: { ...u2, event: 'MODIFIED', rv: '60', deletionTimestamp: ts(30), deletionGracePeriodSeconds: 0 } },
    { t: 30 * S, actor: 'apiserver', kind: 'api.write', data: { ...u2, event: 'DELETED', rv: '61', deletionTimestamp: ts(30), deletionGracePeriodSeconds: 0 } },
    { t: 30 * S, actor: 'apiserver', kind: 'api.request', data: { verb: 'delete', resource: 'pods', namespace: 'default', name: 'p', code: 200, client: k, gracePeriodSeconds: 0, preconditionUid: 'u2' } },
    { t: 30.1 * S, actor: k, kind: 'kubelet.finalDelete', data: { podUid: 'u2', pod: 'default/p', namespace: 'default', code: 200 } },
  ];
  t.deepEqual(violations([...r, ...later]).filter((v) => v === 'final-delete-own-uid'), []);
  // A reply lost to a 504: the kubelet's record of it names u1 and is skipped no more.
  const lost = structuredClone(r).filter((x) => x.kind !== 'engine.crash' && x.kind !== 'engine.restart');
  lost.push({ t: 74 * S, actor: k, kind: 'kubelet.finalDelete', data: { podUid: 'u1', pod: 'default/p', namespace: 'default', code: 504 } });
  t.deepEqual(violations([...lost, ...later]).filter((v) => v === 'final-delete-own-uid'), []);
  // Without the precondition in the trace the crash case is still clean: a later incarnation's record is for a later request.
  delete req.data!.preconditionUid;
  t.deepEqual(violations([...r, ...later]).filter((v) => v === 'final-delete-own-uid'), []);
  // A DELETE whose UID precondition names another pod than the one removed is a violation, with or without any kubelet record.
  req.data!.preconditionUid = 'u0';
  t.deepEqual(violations([...r, ...later]).filter((v) => v === 'final-delete-own-uid'), ['final-delete-own-uid']);
});
