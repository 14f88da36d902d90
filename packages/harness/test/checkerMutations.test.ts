/**
 * The checker mutation pass (issue #25 item 6): for every invariant checker, a planted bug that it
 * must catch in a real run, and the same run judged with that checker switched off (compile.ts
 * `disabledInvariants`, a generic switch that names the checker, so this file does not depend on
 * how any checker is written) must no longer report it — when the checker is the only one that
 * catches the bug, the verdict flips from FAIL to PASS. A checker whose test still passed with the
 * checker disabled would guard nothing.
 *
 * The planted bugs are small edits of the trace of one real run (the bug as the trace would show
 * it: a DELETED while the container runs, a SIGTERM inside the preStop wait, …), judged by
 * `judge` exactly as `podsim run` judges. Bugs planted in the kubelet itself (`plantedBugs`) run
 * for real: `skipPreStopWait` (prestop-before-sigterm) and `skipReclaimCheck` (three checkers)
 * here, `skipUidPrecondition` (final-delete-own-uid, found by `podsim explore`) in explore.test.ts.
 */
import test from 'ava';
import type { TraceRecord } from '@podsim/api';
import { INVARIANT_IDS } from '../src/checkers/invariants.js';
import { STATEFULSET_INVARIANTS } from '../src/checkers/statefulSetInvariants.js';
import { compileScenario } from '../src/scenario/compile.js';
import { loadScenarioText } from '../src/scenario/load.js';
import { runPlan, type EngineResult } from '../src/engine.js';
import { judge } from '../src/run.js';

const S = 1_000_000;

/** One pod, preStop `sleep 2`, exits 1 s after SIGTERM; deleted at 12 s and watched with kubectl get -w. */
const TEXT = `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
steps:
  - apply: all
  - sleep: 10s
  - watch: start
  - sleep: 2s
  - id: del
    delete: { kind: pod, name: app }
  - wait: { for: gone, name: app, timeout: 1m }
  - sleep: 1s
  - watch: stop
expect:
  counts: { podsAtEnd: 0 }
---
apiVersion: v1
kind: Pod
metadata:
  name: app
  annotations: { podsim.dev/on-sigterm: "exit:1s:0" }
spec:
  terminationGracePeriodSeconds: 30
  containers:
    - name: app
      image: nginx:1.21
      lifecycle: { preStop: { exec: { command: [sleep, "2"] } } }
`;

const load = () => loadScenarioText('checker-mutations.yaml', TEXT);
let base: Promise<EngineResult> | undefined;
/** The real run, once. */
const baseRun = () => (base ??= runPlan(compileScenario(load()), { engine: 'local' }));

type Rec = { -readonly [K in keyof TraceRecord]: TraceRecord[K] } & { data: Record<string, unknown> };

/** Helpers over a mutable copy of the trace. */
class Trace {
  readonly r: Rec[];
  constructor(records: readonly TraceRecord[]) {
    this.r = structuredClone(records) as Rec[];
  }
  /** The first record of `kind` whose data has every field of `where`. */
  find(kind: string, where: Record<string, unknown> = {}): Rec {
    const hit = this.r.find((x) => x.kind === kind && Object.entries(where).every(([k, v]) => x.data?.[k] === v));
    if (!hit) throw new Error(`no ${kind} record with ${JSON.stringify(where)}`);
    return hit;
  }
  /** The pod's status write after its container exited (MODIFIED, still deletionGracePeriodSeconds 30). */
  statusAfterExit(): Rec {
    const exit = this.find('cri.exit');
    const hit = this.r.find((x) => x.kind === 'api.write' && x.t > exit.t && x.data.resource === 'pods' && x.data.event === 'MODIFIED' && x.data.deletionGracePeriodSeconds === 30);
    if (!hit) throw new Error('no status write after the exit');
    return hit;
  }
  /** The MODIFIED written by the kubelet's final DELETE (deletionGracePeriodSeconds 0). */
  forceModified(): Rec {
    return this.find('api.write', { event: 'MODIFIED', resource: 'pods', deletionGracePeriodSeconds: 0 });
  }
  remove(rec: Rec): void {
    this.r.splice(this.r.indexOf(rec), 1);
  }
  add(rec: Omit<Rec, 'seq' | 'msg'> & { msg?: string }): void {
    this.r.push({ seq: 1e9 + this.r.length, msg: rec.kind, ...rec } as Rec);
  }
  /** Records in (t, actor, seq) order, as the engine hands them to the model. */
  records(): TraceRecord[] {
    return [...this.r].sort((a, b) => a.t - b.t || (a.actor < b.actor ? -1 : a.actor > b.actor ? 1 : a.seq - b.seq));
  }
}

/** The last write of node-1 in the trace (at or before t). */
const lastNode = (x: Trace, t = Infinity) => x.r.filter((r) => r.kind === 'api.write' && r.data.resource === 'nodes' && r.data.name === 'node-1' && r.t <= t).at(-1)!;

let extraRv = 0;
/** Adds an api.write at t whose resourceVersion fits between its neighbours' (monotonic-resource-versions stays quiet). */
function write(x: Trace, t: number, data: Record<string, unknown>): void {
  const before = Math.max(0, ...x.r.filter((r) => r.kind === 'api.write' && r.t <= t).map((r) => Number(r.data.rv)));
  x.add({ t, actor: 'apiserver', kind: 'api.write', data: { ...data, rv: String(before + ++extraRv / 1e4) } });
}

/** node-1 as last written before t, re-written at t by `client` with `taints` (node-lifecycle checkers). */
function nodeAt(x: Trace, t: number, client: string, taints: string[], conditions?: unknown[]): void {
  const n = lastNode(x, t);
  write(x, t, { ...n.data, event: 'MODIFIED', client, taints, ...(conditions ? { conditions } : {}) });
}

/** A taint-manager DELETE of the pod `app` at t: the apiserver's request record and the manager's own. */
function taintManagerDelete(x: Trace, t: number): void {
  x.add({ t, actor: 'apiserver', kind: 'api.request', data: { verb: 'delete', resource: 'pods', namespace: 'default', name: 'app', code: 200, client: 'kube-controller-manager' } });
  x.add({ t: t + 200, actor: 'kube-controller-manager', kind: 'controller.taintManager.delete', data: { namespace: 'default', pod: 'app', code: 200, attempt: 0 } });
}

const UNREACHABLE_NE = 'node.kubernetes.io/unreachable:NoExecute';

/** [checker, planted bug, mutation of the trace, the checkers that catch it]. */
const PLANTED: Array<[string, string, (x: Trace) => void, string[]]> = [
  [
    'kubelet-restart-keeps-running-pods',
    'the kubelet restarts 1 s after the container started and its new incarnation SIGTERMs the running, undeleted pod (issue #27 item 1)',
    (x) => {
      const start = x.find('cri.start');
      x.add({ t: start.t + 1 * S, actor: 'kubelet/node-1', kind: 'engine.crash', data: {} });
      x.add({ t: start.t + 2 * S, actor: 'kubelet/node-1', kind: 'engine.restart', data: {} });
      x.add({ t: start.t + 2 * S + 1000, actor: start.actor, kind: 'cri.signal', data: { containerId: start.data.containerId, signal: 'SIGTERM' } });
    },
    ['kubelet-restart-keeps-running-pods'],
  ],
  [
    'no-removal-while-running',
    'the pod is removed while its container still runs (the exit comes after DELETED)',
    (x) => {
      const deleted = x.find('api.write', { event: 'DELETED', resource: 'pods' });
      x.find('cri.exit').t = deleted.t + 10;
    },
    ['no-removal-while-running'],
  ],
  [
    'final-delete-gated',
    "the kubelet's final DELETE carries gracePeriodSeconds 5, not 0",
    (x) => (x.find('api.request', { verb: 'delete', client: 'kubelet/node-1' }).data.gracePeriodSeconds = 5),
    ['final-delete-gated'],
  ],
  [
    'grace-only-shrinks-apiserver',
    'the status update after the container exited raises deletionGracePeriodSeconds 30 → 40',
    (x) => (x.statusAfterExit().data.deletionGracePeriodSeconds = 40),
    ['grace-only-shrinks-apiserver'],
  ],
  [
    'second-delete-idempotent',
    'a second DELETE without grace writes the Terminating object',
    (x) => {
      const w = x.statusAfterExit();
      x.add({ t: w.t, actor: 'apiserver', kind: 'api.request', data: { verb: 'delete', resource: 'pods', namespace: 'default', name: 'app', code: 200, client: 'driver' } });
    },
    ['second-delete-idempotent'],
  ],
  [
    'grace-only-shrinks-kubelet',
    'a second killPod of the same kubelet incarnation with grace 45 after 30, without a force delete',
    (x) => {
      const kp = x.find('kubelet.killPod', { ph: 'B' });
      x.add({ t: 14.5 * S, actor: 'kubelet/node-1', kind: 'kubelet.killPod', data: { ...kp.data, gracePeriod: 45, span: 901 } });
      x.add({ t: 14.6 * S, actor: 'kubelet/node-1', kind: 'kubelet.killPod', data: { ...kp.data, gracePeriod: 45, ph: 'E', span: 901 } });
    },
    ['grace-only-shrinks-kubelet'],
  ],
  [
    'prestop-before-sigterm',
    'SIGTERM is sent while the preStop hook is still being waited for',
    (x) => (x.find('kubelet.preStop', { ph: 'E' }).t = x.find('cri.signal', { signal: 'SIGTERM' }).t + 10),
    ['prestop-before-sigterm'],
  ],
  [
    'no-early-sigkill',
    'SIGKILL 0.5 s after SIGTERM although StopContainer was given 30 s',
    (x) => {
      const term = x.find('cri.signal', { signal: 'SIGTERM' });
      const exit = x.find('cri.exit');
      x.add({ t: term.t + 0.5 * S, actor: term.actor, kind: 'cri.signal', data: { ...term.data, signal: 'SIGKILL' } });
      Object.assign(exit, { t: term.t + 0.5 * S + 1, data: { ...exit.data, exitCode: 137, reason: 'Error', cause: 'SIGKILL' } });
    },
    ['no-early-sigkill'],
  ],
  [
    'one-sync-at-a-time',
    'syncTerminatedPod begins before syncTerminatingPod ended',
    (x) => (x.find('kubelet.sync', { work: 'TerminatedPodWork', ph: 'B' }).t = x.find('kubelet.sync', { work: 'TerminatingPodWork', ph: 'E' }).t - 100),
    ['one-sync-at-a-time'],
  ],
  [
    'no-starts-once-terminating',
    'a container starts after the pod worker began terminating the pod',
    (x) => {
      const start = x.find('cri.start');
      const side = { ...start.data, containerId: 'side-1', container: 'side' };
      x.add({ t: 13 * S, actor: start.actor, kind: 'cri.start', data: side });
      x.add({ t: 13.5 * S, actor: start.actor, kind: 'cri.exit', data: { ...side, exitCode: 0, reason: 'Completed' } });
    },
    ['no-starts-once-terminating'],
  ],
  [
    'deletion-via-modified',
    'the kubelet-driven DELETED follows no MODIFIED with deletionGracePeriodSeconds 0',
    (x) => x.remove(x.forceModified()),
    ['deletion-via-modified'],
  ],
  [
    'monotonic-resource-versions',
    "the DELETED event's resourceVersion goes back to 9",
    (x) => (x.find('api.write', { event: 'DELETED', resource: 'pods' }).data.rv = '9'),
    ['monotonic-resource-versions'],
  ],
  [
    'printing-terminating',
    'kubectl get -w prints Running for a pod with a deletionTimestamp',
    (x) => {
      const row = x.r.find((r) => r.kind === 'driver.watch' && r.data.deletionTimestamp !== undefined)!;
      row.data.cells = (row.data.cells as string[]).map((c) => (c === 'Terminating' ? 'Running' : c));
    },
    ['printing-terminating'],
  ],
  [
    'finalizers-block-removal',
    'the DELETE removes a pod that still has a finalizer',
    (x) => (x.forceModified().data.finalizers = ['example.com/keep']),
    ['finalizers-block-removal'],
  ],
  [
    'exit-codes-follow-signal',
    'the container exits 137 after SIGTERM only',
    (x) => (x.find('cri.exit').data.exitCode = 137),
    ['exit-codes-follow-signal'],
  ],
  [
    'final-delete-after-terminated',
    'the final DELETE follows a syncTerminatingPod that failed',
    (x) => (x.find('kubelet.sync', { work: 'TerminatingPodWork', ph: 'E' }).data.error = 'killPod failed'),
    ['final-delete-after-terminated'],
  ],
  [
    'final-delete-own-uid',
    "the kubelet's final DELETE was meant for another UID of the same name, and removed this one",
    // The UID precondition the apiserver traced for the kubelet's DELETE names an older pod.
    (x) => (x.find('api.request', { verb: 'delete', client: 'kubelet/node-1' }).data.preconditionUid = 'uid-of-the-pod-before'),
    ['final-delete-own-uid'],
  ],
  // Services and kube-proxy (issue #18; checkers/trafficInvariants.ts): the pod `app` behind a Service `s`.
  ['endpoints-exclude-terminating', 'an Endpoints object written 6 s after the DELETE still lists the terminating pod', (x) => svc(x, (p) => [ep(p.term + 6 * S, [p.uid])]), ['endpoints-exclude-terminating']],
  ['slice-terminating-not-ready', 'the EndpointSlice marks the terminating pod ready', (x) => svc(x, (p) => [slice(p.term + S, [[p.uid, true, true, true]])]), ['slice-terminating-not-ready']],
  ['endpoint-object-size', 'an Endpoints object with 1001 addresses', (x) => svc(x, () => [ep(S, Array.from({ length: 1001 }, (_, i) => `other-${i}`))]), ['endpoint-object-size']],
  ['slice-drops-deleted-pods', 'the EndpointSlice lists the pod 6 s after it was DELETED', (x) => svc(x, (p) => [slice(p.deleted + 6 * S, [[p.uid, false, false, true]])]), ['slice-drops-deleted-pods']],
  [
    'proxy-routes-ready-only',
    "a node's rules target the pod 6 s after its slice marked it not ready",
    (x) => svc(x, (p) => [slice(p.term, [[p.uid, false, true, true]]), sync(p.term + 6 * S, [['10.224.0.2', p.uid]])]),
    ['proxy-routes-ready-only'],
  ],
  ['proxy-sync-rate', 'three syncs within 20 µs on one node (burst 2, min sync 1 s)', (x) => svc(x, () => [sync(S, []), sync(S + 10, []), sync(S + 20, [])]), ['proxy-sync-rate']],
  [
    'proxy-xlb-local-only',
    "node-1's ETP Local node-port chain sends external traffic to a pod on another node",
    // A Ready pod `elsewhere` on node-2, in the slice and node-1's cluster rules (correct), and in node-1's XLB chain (wrong).
    (x) =>
      svc(x, () => [
        svcRec(2, 'runtime/node-2', 'cri.network', { podUid: 'elsewhere', pod: 'q', ip: '10.224.1.9', up: true }),
        slice(2, [['elsewhere', true, true, false]]),
        svcRec(3, 'kube-proxy/node-1', 'proxy.sync', { node: 'node-1', startUs: 2, services: { 'default/s': { clusterIP: '10.96.0.10', targets: [['10.224.1.9', 'elsewhere']], reject: false, nodePorts: [30080], local: ['10.224.1.9'] } } }),
      ]),
    ['proxy-xlb-local-only'],
  ],
  [
    'node-unknown-after-grace',
    "the node's Ready condition is written Unknown 5 s after the kubelet's last lease renewal",
    (x) => {
      const lease = x.r.filter((r) => r.kind === 'api.write' && r.data.resource === 'leases').at(-1)!;
      // The controller's update as the trace carries it: its writer, the kubelet's heartbeats kept.
      const conditions = (lastNode(x).data.conditions as string[][]).map((c) => (c[0] === 'Ready' ? ['Ready', 'Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.', c[4]] : c));
      x.add({ t: lease.t + 5 * S, actor: 'apiserver', kind: 'api.write', data: { event: 'MODIFIED', resource: 'nodes', namespace: '', name: 'node-1', uid: 'n1', rv: '999999', nodeReady: 'Unknown', nodeReadyReason: 'NodeStatusUnknown', nodeReadyMessage: 'Kubelet stopped posting node status.', taints: [], client: 'kube-controller-manager', conditions } });
    },
    ['node-unknown-after-grace'],
  ],
  [
    'noexecute-condition-taints-exclusive',
    'the node keeps both unreachable:NoExecute and not-ready:NoExecute to the end of the run',
    (x) => {
      // The node's last write (its registration or a status PATCH) shows both taints; none follows.
      const w = x.r.filter((r) => r.kind === 'api.write' && r.data.resource === 'nodes').at(-1)!;
      w.data.taints = ['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/not-ready:NoExecute'];
    },
    ['noexecute-condition-taints-exclusive'],
  ],
  [
    'controller-delete-no-grace-override',
    'the controller manager deletes a pod with gracePeriodSeconds 5 (a taint-manager eviction must use the pod\'s own grace)',
    (x) => {
      const d = x.find('api.request', { verb: 'delete', resource: 'pods', client: 'driver' });
      x.add({ t: d.t + 1, actor: 'apiserver', kind: 'api.request', data: { ...d.data, client: 'kube-controller-manager', gracePeriodSeconds: 5 } });
    },
    ['controller-delete-no-grace-override'],
  ],
  [
    'kubelet-node-create-once',
    "the kubelet's Node CREATE succeeds a second time 10 s later, with no kubelet restart",
    (x) => {
      const c = x.find('api.request', { verb: 'create', resource: 'nodes', client: 'kubelet/node-1' });
      x.add({ t: c.t + 10 * S, actor: 'apiserver', kind: 'api.request', data: { ...c.data, code: 201 } });
    },
    ['kubelet-node-create-once'],
  ],
  [
    'no-node-lost-reason',
    'a pod status write carries reason NodeLost (the legacy eviction path, not 1.22 taint mode)',
    (x) => {
      x.statusAfterExit().data.reason = 'NodeLost';
    },
    ['no-node-lost-reason'],
  ],
  // The rest of node-lifecycle §8 (checkers/nodeLifecycleInvariants.ts).
  [
    'nlc-status-writes',
    "the node lifecycle controller re-writes node-1 with its Ready lastHeartbeatTime advanced by 10 s",
    (x) => {
      const n = lastNode(x, 11 * S);
      const conditions = (n.data.conditions as string[][]).map((c) => (c[0] === 'Ready' ? [c[0], c[1], c[2], c[3], new Date(Date.parse(c[4]) + 10_000).toISOString().replace('.000Z', 'Z')] : c));
      nodeAt(x, 11 * S, 'kube-controller-manager', [], conditions);
    },
    ['nlc-status-writes'],
  ],
  [
    'noexecute-taint-limiter-zero',
    "node-1 gets unreachable:NoExecute 1 s after its zone's limiter went to 0 (PartialDisruption)",
    (x) => {
      x.add({ t: 10 * S, actor: 'kube-controller-manager', kind: 'controller.nodelifecycle.zone', data: { zone: '', state: 'PartialDisruption', qps: 0 } });
      nodeAt(x, 11 * S, 'kube-controller-manager', [UNREACHABLE_NE]);
    },
    ['noexecute-taint-limiter-zero'],
  ],
  [
    'noexecute-taint-zone-rate',
    'node-2 and node-1 of one zone get unreachable:NoExecute 1 s apart (limiter 0.1/s)',
    (x) => {
      const n = lastNode(x, 10 * S);
      write(x, 10 * S, { ...n.data, event: 'ADDED', name: 'node-2', uid: 'n2', client: 'kubelet/node-2' });
      write(x, 10.5 * S, { ...n.data, event: 'MODIFIED', name: 'node-2', uid: 'n2', client: 'kube-controller-manager', taints: [UNREACHABLE_NE] });
      nodeAt(x, 11.5 * S, 'kube-controller-manager', [UNREACHABLE_NE]);
    },
    ['noexecute-taint-zone-rate'],
  ],
  [
    'taint-manager-spares-tolerating-pods',
    "the taint manager deletes app, which tolerates everything forever (operator: Exists), 0.5 s after node-1's unreachable:NoExecute",
    (x) => {
      x.find('api.write', { resource: 'pods', event: 'ADDED' }).data.tolerations = [['', 'Exists', '', '', null]];
      nodeAt(x, 11 * S, 'kube-controller-manager', [UNREACHABLE_NE]);
      taintManagerDelete(x, 11.5 * S);
    },
    // It had no deletion scheduled either.
    ['taint-manager-deadline-kept', 'taint-manager-spares-tolerating-pods'],
  ],
  [
    'taint-manager-deadline-kept',
    "the taint manager deletes app 0.5 s after node-1's unreachable:NoExecute, not after its 300 s DefaultTolerationSeconds",
    (x) => {
      nodeAt(x, 11 * S, 'kube-controller-manager', [UNREACHABLE_NE]);
      taintManagerDelete(x, 11.5 * S);
    },
    ['taint-manager-deadline-kept'],
  ],
  [
    'podgc-force-delete-justified',
    'the controller manager force-deletes app (grace 0) while its node exists and the pod runs',
    (x) => x.add({ t: 11 * S, actor: 'apiserver', kind: 'api.request', data: { verb: 'delete', resource: 'pods', namespace: 'default', name: 'app', code: 200, client: 'kube-controller-manager', gracePeriodSeconds: 0 } }),
    ['podgc-force-delete-justified'],
  ],
  [
    'rs-replacement-after-deletion',
    'ReplicaSet web (replicas 1) owns the running app and creates web-x at 11 s, before app has a deletionTimestamp',
    (x) => {
      const added = x.find('api.write', { resource: 'pods', event: 'ADDED' });
      added.data.owner = 'ReplicaSet/web';
      write(x, added.t, { event: 'ADDED', resource: 'replicasets', namespace: 'default', name: 'web', uid: 'rs1', statusReplicas: 0, specReplicas: 1 });
      const wx = { resource: 'pods', namespace: 'default', name: 'web-x', uid: 'ux', phase: 'Pending' };
      write(x, 11 * S, { ...wx, event: 'ADDED', tolerations: [], owner: 'ReplicaSet/web' });
      // The driver force-deletes it at once (so the run's podsAtEnd 0 still holds).
      const dts = new Date(Date.parse('2025-01-01T00:00:11Z')).toISOString().replace('.000Z', 'Z');
      x.add({ t: 11.1 * S, actor: 'apiserver', kind: 'api.request', data: { verb: 'delete', resource: 'pods', namespace: 'default', name: 'web-x', code: 200, client: 'driver', gracePeriodSeconds: 0 } });
      write(x, 11.1 * S, { ...wx, event: 'MODIFIED', deletionTimestamp: dts, deletionGracePeriodSeconds: 0 });
      write(x, 11.1 * S, { ...wx, event: 'DELETED', deletionTimestamp: dts, deletionGracePeriodSeconds: 0 });
    },
    ['rs-replacement-after-deletion'],
  ],
];

type SliceEp = [string, boolean, boolean, boolean];
/** A Services record: no resourceVersion, so it stays out of the pod-write checkers' view. */
const svcRec = (t: number, actor: string, kind: string, data: Record<string, unknown>) => ({ t, actor, kind, data });
const ep = (t: number, addresses: string[]) => svcRec(t, 'apiserver', 'api.write', { event: 'MODIFIED', resource: 'endpoints', namespace: 'default', name: 's', uid: 'e1', addresses, notReadyAddresses: [] });
const slice = (t: number, endpoints: SliceEp[]) => svcRec(t, 'apiserver', 'api.write', { event: 'MODIFIED', resource: 'endpointslices', namespace: 'default', name: 's-1', uid: 'sl1', service: 's', managedBy: 'endpointslice-controller.k8s.io', endpoints });
const sync = (t: number, targets: [string, string][]) =>
  svcRec(t, 'kube-proxy/node-1', 'proxy.sync', { node: 'node-1', startUs: t - 1000, minSyncPeriodUs: S, burstSyncs: 2, services: { 'default/s': { clusterIP: '10.96.0.10', targets, reject: targets.length === 0 } } });
/** Adds a Service `s` over the run's pod and the records `more` makes from its UID and DELETE / DELETED times. */
function svc(x: Trace, more: (p: { uid: string; term: number; deleted: number }) => ReturnType<typeof svcRec>[]): void {
  const uid = String(x.find('api.write', { resource: 'pods', event: 'ADDED' }).data.uid);
  const term = x.r.find((w) => w.kind === 'api.write' && w.data.resource === 'pods' && w.data.deletionTimestamp !== undefined)!.t;
  const deleted = x.find('api.write', { resource: 'pods', event: 'DELETED' }).t;
  x.add(svcRec(1, 'apiserver', 'api.write', { event: 'ADDED', resource: 'services', namespace: 'default', name: 's', uid: 's1' }));
  for (const r of more({ uid, term, deleted })) x.add(r);
}

/** The distinct checkers that fail the run, and the verdict, of the mutated trace judged with `disabled` off. */
async function judged(mutate: (x: Trace) => void, disabled: readonly string[] = []) {
  const res = await baseRun();
  const x = new Trace(res.traces);
  mutate(x);
  const plan = compileScenario(load(), { disabledInvariants: disabled });
  const { report } = judge(plan, { ...res, traces: x.records() });
  return { ok: report.ok, caught: [...new Set(report.violations.map((v) => v.invariant))].sort(), report };
}

test('the unmutated run passes: every checker is quiet on it', async (t) => {
  const { ok, caught, report } = await judged(() => {});
  t.deepEqual(caught, []);
  t.true(ok, report.failures.join('\n'));
  t.is(report.invariantsChecked.length, INVARIANT_IDS.length);
});

for (const [id, bug, mutate, catchers] of PLANTED) {
  test(`${id} catches: ${bug}; with ${id} disabled it goes unreported`, async (t) => {
    const on = await judged(mutate);
    t.deepEqual(on.caught, catchers, on.report.failures.join('\n'));
    t.false(on.ok);
    const off = await judged(mutate, [id]);
    t.deepEqual(off.caught, catchers.filter((c) => c !== id));
    t.false(off.report.invariantsChecked.includes(id), 'a disabled checker is not reported as checked');
    // When it is the only checker that catches the bug, the run passes without it.
    if (catchers.length === 1) t.true(off.ok, off.report.failures.join('\n'));
  });
}

test('every checker has a planted bug above, and catches it alone or with the checkers listed', (t) => {
  // The StatefulSet checkers are checked against broken traces (statefulSetCheckers.test.ts) and
  // controller mutations (statefulSet scenario tests), not planted kubelet bugs.
  const sts = new Set(STATEFULSET_INVARIANTS.map((i) => i.id));
  t.deepEqual([...new Set(PLANTED.map(([id]) => id))].sort(), INVARIANT_IDS.filter((id) => !sts.has(id)).sort());
  for (const [id, , , catchers] of PLANTED) t.true(catchers.includes(id), id);
});

test('prestop-before-sigterm catches the kubelet planted bug skipPreStopWait in a real run; with the checker disabled the run passes', async (t) => {
  // The bug in the system itself (kubelet killContainer sends StopContainer without waiting for
  // the hook), not in the trace: SIGTERM ~2 s before the `sleep 2` hook is over.
  const text = TEXT.replace('  nodes: [{ name: node-1 }]', '  nodes: [{ name: node-1 }]\n  kubelet: { plantedBugs: [skipPreStopWait] }');
  const sc = () => loadScenarioText('planted-skip-prestop-wait.yaml', text);
  const res = await runPlan(compileScenario(sc()), { engine: 'local' });
  const on = judge(compileScenario(sc()), res).report;
  t.deepEqual([...new Set(on.violations.map((v) => v.invariant))], ['prestop-before-sigterm'], on.failures.join('\n'));
  t.regex(on.violations[0].message, /^SIGTERM to app\/app at 12\.\d+s while its preStop \(from 12\.\d+s\) was still running$/);
  const off = judge(compileScenario(sc(), { disabledInvariants: ['prestop-before-sigterm'] }), res).report;
  t.true(off.ok, off.failures.join('\n'));
  // Without the planted bug the same file is clean (baseRun), so the bug is what the checker saw.
  t.deepEqual((await judged(() => {})).caught, []);
});

test('the kubelet planted bug skipReclaimCheck (final DELETE while the container runs) is caught by three checkers; each disabled alone leaves the other two', async (t) => {
  const text = TEXT.replace('  nodes: [{ name: node-1 }]', '  nodes: [{ name: node-1 }]\n  kubelet: { plantedBugs: [skipReclaimCheck] }');
  const sc = () => loadScenarioText('planted-skip-reclaim-check.yaml', text);
  const res = await runPlan(compileScenario(sc()), { engine: 'local' });
  const caught = (disabled: string[]) => [...new Set(judge(compileScenario(sc(), { disabledInvariants: disabled }), res).report.violations.map((v) => v.invariant))].sort();
  const all = ['final-delete-after-terminated', 'final-delete-gated', 'no-removal-while-running'];
  t.deepEqual(caught([]), all);
  for (const id of all) t.deepEqual(caught([id]), all.filter((x) => x !== id), `${id} disabled`);
  const none = judge(compileScenario(sc(), { disabledInvariants: all }), res).report;
  t.true(none.ok, 'only these three checkers guard it');
});

test('disabledInvariants names known checkers only (a typo would disable nothing and pass)', (t) => {
  t.throws(() => compileScenario(load(), { disabledInvariants: ['no-early-sigkil'] }), { message: /unknown invariant "no-early-sigkil"/ });
});
