/**
 * printPod / printNode / printReplicaSet / printDeployment rows (spec §3 and
 * pkg/printers/internalversion/printers.go), Table assembly and column definitions.
 */
import test from 'ava';
import type { ContainerStatus, Deployment, Node, Pod, ReplicaSet } from '@podsim/api';
import { Clock } from '@podsim/api';
import { POD_COLUMNS, printDeployment, printNode, printPod, printReplicaSet, toTable } from '../src/printers.js';

const clock = new Clock();
const S = 1_000_000;
/** 2025-01-01T00:00:00Z + s seconds. */
const ts = (s: number) => clock.format(s * S);

function pod(over: { status?: Pod['status']; spec?: Partial<Pod['spec']>; meta?: Partial<Pod['metadata']> } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-1', namespace: 'default', creationTimestamp: ts(0), ...over.meta },
    spec: { containers: [{ name: 'c' }], nodeName: 'node-1', ...over.spec },
    status: over.status ?? { phase: 'Running' },
  };
}

function cs(name: string, state: ContainerStatus['state'], extra: Partial<ContainerStatus> = {}): ContainerStatus {
  return { name, state, lastState: {}, ready: false, restartCount: 0, image: 'busybox', imageID: '', ...extra };
}

const running = (name = 'c', ready = true) => cs(name, { running: { startedAt: ts(1) } }, { ready });

/** [READY, STATUS, RESTARTS, AGE] of printPod at `nowS`. */
function row(p: Pod, nowS: number): unknown[] {
  return printPod(p, nowS * S, clock).cells.slice(1, 5);
}

const podCases: Array<[string, Pod, number, unknown[]]> = [
  ['pending, no statuses', pod({ status: { phase: 'Pending' }, spec: { nodeName: undefined } }), 0, ['0/1', 'Pending', '0', '0s']],
  ['ContainerCreating', pod({ status: { phase: 'Pending', containerStatuses: [cs('c', { waiting: { reason: 'ContainerCreating' } })] } }), 17, ['0/1', 'ContainerCreating', '0', '17s']],
  ['running and ready', pod({ status: { phase: 'Running', containerStatuses: [running()] } }), 42 * 3600, ['1/1', 'Running', '0', '42h']],
  ['running, not ready', pod({ status: { phase: 'Running', containerStatuses: [running('c', false)] } }), 60, ['0/1', 'Running', '0', '60s']],
  [
    'restarted: RESTARTS shows the last restart, `1 (2m52s ago)`',
    pod({
      status: {
        phase: 'Running',
        containerStatuses: [running('c', true)].map((c) => ({ ...c, restartCount: 1, lastState: { terminated: { exitCode: 1, finishedAt: ts(100) } } })),
      },
    }),
    272,
    ['1/1', 'Running', '1 (2m52s ago)', '4m32s'],
  ],
  [
    'CrashLoopBackOff wins over the running sibling (last-to-first walk)',
    pod({
      spec: { containers: [{ name: 'a' }, { name: 'b' }] },
      status: { phase: 'Running', containerStatuses: [cs('a', { waiting: { reason: 'CrashLoopBackOff' } }, { restartCount: 3 }), running('b')] },
    }),
    3 * 3600 + 5 * 60,
    ['1/2', 'CrashLoopBackOff', '3', '3h5m'],
  ],
  ['terminated Completed', pod({ status: { phase: 'Succeeded', containerStatuses: [cs('c', { terminated: { exitCode: 0, reason: 'Completed' } })] } }), 5, ['0/1', 'Completed', '0', '5s']],
  ['terminated Error', pod({ status: { phase: 'Failed', containerStatuses: [cs('c', { terminated: { exitCode: 137, reason: 'Error' } })] } }), 5, ['0/1', 'Error', '0', '5s']],
  ['terminated without reason, by signal', pod({ status: { phase: 'Failed', containerStatuses: [cs('c', { terminated: { exitCode: 137, signal: 9 } })] } }), 5, ['0/1', 'Signal:9', '0', '5s']],
  ['terminated without reason, exit code', pod({ status: { phase: 'Failed', containerStatuses: [cs('c', { terminated: { exitCode: 2 } })] } }), 5, ['0/1', 'ExitCode:2', '0', '5s']],
  [
    'Completed + a running container + Ready condition → Running',
    pod({
      spec: { containers: [{ name: 'a' }, { name: 'b' }] },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [running('a'), cs('b', { terminated: { exitCode: 0, reason: 'Completed' } })] },
    }),
    5,
    ['1/2', 'Running', '0', '5s'],
  ],
  [
    'Completed + a running container, not Ready → NotReady',
    pod({
      spec: { containers: [{ name: 'a' }, { name: 'b' }] },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }], containerStatuses: [running('a'), cs('b', { terminated: { exitCode: 0, reason: 'Completed' } })] },
    }),
    5,
    ['1/2', 'NotReady', '0', '5s'],
  ],
  [
    'init container running → Init:0/2',
    pod({
      spec: { initContainers: [{ name: 'i1' }, { name: 'i2' }] },
      status: { phase: 'Pending', initContainerStatuses: [cs('i1', { running: {} }), cs('i2', { waiting: { reason: 'PodInitializing' } })] },
    }),
    5,
    ['0/1', 'Init:0/2', '0', '5s'],
  ],
  [
    'second init container waiting → Init:1/2 (first one done)',
    pod({
      spec: { initContainers: [{ name: 'i1' }, { name: 'i2' }] },
      status: { phase: 'Pending', initContainerStatuses: [cs('i1', { terminated: { exitCode: 0, reason: 'Completed' } }), cs('i2', { waiting: { reason: 'PodInitializing' } })] },
    }),
    5,
    ['0/1', 'Init:1/2', '0', '5s'],
  ],
  [
    'init container CrashLoopBackOff → Init:CrashLoopBackOff, its restarts counted',
    pod({ spec: { initContainers: [{ name: 'i1' }] }, status: { phase: 'Pending', initContainerStatuses: [cs('i1', { waiting: { reason: 'CrashLoopBackOff' } }, { restartCount: 4 })] } }),
    5,
    ['0/1', 'Init:CrashLoopBackOff', '4', '5s'],
  ],
  ['init container failed with reason → Init:Error', pod({ spec: { initContainers: [{ name: 'i1' }] }, status: { phase: 'Pending', initContainerStatuses: [cs('i1', { terminated: { exitCode: 1, reason: 'Error' } })] } }), 5, ['0/1', 'Init:Error', '0', '5s']],
  ['init container killed by signal → Init:Signal:9', pod({ spec: { initContainers: [{ name: 'i1' }] }, status: { phase: 'Pending', initContainerStatuses: [cs('i1', { terminated: { exitCode: 137, signal: 9 } })] } }), 5, ['0/1', 'Init:Signal:9', '0', '5s']],
  ['init container exit code → Init:ExitCode:3', pod({ spec: { initContainers: [{ name: 'i1' }] }, status: { phase: 'Pending', initContainerStatuses: [cs('i1', { terminated: { exitCode: 3 } })] } }), 5, ['0/1', 'Init:ExitCode:3', '0', '5s']],
  [
    'deletionTimestamp → Terminating regardless of containers; READY stays 1/1',
    pod({ meta: { deletionTimestamp: ts(40), deletionGracePeriodSeconds: 30 }, status: { phase: 'Running', containerStatuses: [running()] } }),
    12,
    ['1/1', 'Terminating', '0', '12s'],
  ],
  [
    'deletionTimestamp + reason NodeLost → Unknown',
    pod({ meta: { deletionTimestamp: ts(40) }, status: { phase: 'Running', reason: 'NodeLost', containerStatuses: [running()] } }),
    12,
    ['1/1', 'Unknown', '0', '12s'],
  ],
  ['status.reason overrides the phase (Evicted)', pod({ status: { phase: 'Failed', reason: 'Evicted' } }), 5, ['0/1', 'Evicted', '0', '5s']],
  ['a creationTimestamp in the future by more than 1 s → <invalid>', pod({ meta: { creationTimestamp: ts(100) } }), 97, ['0/1', 'Running', '0', '<invalid>']],
  ['no creationTimestamp → <unknown>', pod({ meta: { creationTimestamp: undefined } }), 5, ['0/1', 'Running', '0', '<unknown>']],
];

for (const [name, p, nowS, want] of podCases) {
  test(`printPod: ${name}`, (t) => {
    t.deepEqual(row(p, nowS), want);
  });
}

test('printPod wide columns: IP, NODE, NOMINATED NODE, READINESS GATES', (t) => {
  const p = pod({
    spec: { readinessGates: [{ conditionType: 'example.com/lb' }, { conditionType: 'example.com/x' }] },
    status: { phase: 'Running', podIPs: [{ ip: '10.0.0.9' }], conditions: [{ type: 'example.com/lb', status: 'True' }] },
  });
  t.deepEqual(printPod(p, 0, clock).cells.slice(5), ['10.0.0.9', 'node-1', '<none>', '1/2']);
  const bare = pod({ spec: { nodeName: undefined }, status: { phase: 'Pending' } });
  t.deepEqual(printPod(bare, 0, clock).cells.slice(5), ['<none>', '<none>', '<none>', '<none>']);
});

test('printPod marks Succeeded / Failed rows with the Completed row condition', (t) => {
  t.deepEqual(printPod(pod({ status: { phase: 'Succeeded' } }), 0, clock).conditions, [
    { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
  ]);
  t.is(printPod(pod(), 0, clock).conditions, undefined);
});

test('printNode: STATUS from the Ready condition, SchedulingDisabled, ROLES sorted, wide <unknown> defaults', (t) => {
  const node: Node = {
    metadata: { name: 'node-1', creationTimestamp: ts(0), labels: { 'node-role.kubernetes.io/worker': '', 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/role': 'infra' } },
    spec: { unschedulable: true },
    status: { conditions: [{ type: 'Ready', status: 'False' }], nodeInfo: { kubeletVersion: 'v1.22.8' }, addresses: [{ type: 'InternalIP', address: '10.1.0.1' }] },
  };
  t.deepEqual(printNode(node, 3600 * S, clock).cells, ['node-1', 'NotReady,SchedulingDisabled', 'control-plane,infra,worker', '60m', 'v1.22.8', '10.1.0.1', '<none>', '<unknown>', '<unknown>', '<unknown>']);
  const fresh: Node = { metadata: { name: 'n2', creationTimestamp: ts(0) } };
  t.deepEqual(printNode(fresh, 5 * S, clock).cells.slice(0, 5), ['n2', 'Unknown', '<none>', '5s', '']);
});

test('printReplicaSet: DESIRED CURRENT READY AGE, integers, wide containers/images/selector', (t) => {
  const rs: ReplicaSet = {
    metadata: { name: 'web-5d8f', creationTimestamp: ts(0) },
    spec: { replicas: 3, selector: { matchLabels: { app: 'web', 'pod-template-hash': '5d8f' } }, template: { spec: { containers: [{ name: 'a', image: 'nginx:1.27' }, { name: 'b', image: 'busybox' }] } } },
    status: { replicas: 2, readyReplicas: 1 },
  };
  t.deepEqual(printReplicaSet(rs, 17 * S, clock).cells, ['web-5d8f', 3, 2, 1, '17s', 'a,b', 'nginx:1.27,busybox', 'app=web,pod-template-hash=5d8f']);
});

test('printDeployment: READY n/m, UP-TO-DATE, AVAILABLE, AGE, selector with expressions', (t) => {
  const d: Deployment = {
    metadata: { name: 'web', creationTimestamp: ts(0) },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'edge'] }] },
      template: { spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } },
    },
    status: { readyReplicas: 1, updatedReplicas: 2, availableReplicas: 1 },
  };
  t.deepEqual(printDeployment(d, 42 * 3600 * S, clock).cells, ['web', '1/2', 2, 1, '42h', 'nginx', 'nginx:1.27', 'app=web,tier in (edge,front)']);
});

test('toTable: non-wide drops priority-1 columns and cells; wide keeps all; row.object is PartialObjectMetadata', (t) => {
  const p = pod({ status: { phase: 'Running', containerStatuses: [running()] } });
  p.metadata.resourceVersion = '7';
  const narrow = toTable('pods', [p], '9', 5 * S, clock);
  t.is(narrow.kind, 'Table');
  t.is(narrow.apiVersion, 'meta.k8s.io/v1');
  t.deepEqual(narrow.metadata, { resourceVersion: '9' });
  t.deepEqual(narrow.columnDefinitions.map((c) => c.name), ['Name', 'Ready', 'Status', 'Restarts', 'Age']);
  t.deepEqual(narrow.rows[0].cells, ['web-1', '1/1', 'Running', '0', '5s']);
  t.deepEqual(narrow.rows[0].object, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: p.metadata });
  const wide = toTable('pods', [p], '9', 5 * S, clock, { wide: true, includeObject: 'Object' });
  t.deepEqual(wide.columnDefinitions.map((c) => [c.name, c.priority]), [
    ['Name', 0],
    ['Ready', 0],
    ['Status', 0],
    ['Restarts', 0],
    ['Age', 0],
    ['IP', 1],
    ['Node', 1],
    ['Nominated Node', 1],
    ['Readiness Gates', 1],
  ]);
  t.is(wide.rows[0].cells.length, 9);
  t.is(wide.rows[0].object, p);
  t.is(toTable('pods', [p], '9', 0, clock, { includeObject: 'None' }).rows[0].object, undefined);
});

test('column definitions carry the upstream types, formats and descriptions', (t) => {
  t.deepEqual(POD_COLUMNS[0], {
    name: 'Name',
    type: 'string',
    format: 'name',
    priority: 0,
    description:
      'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: http://kubernetes.io/docs/user-guide/identifiers#names',
  });
  t.is(POD_COLUMNS[3].type, 'string');
  t.is(POD_COLUMNS[3].description, 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.');
});
