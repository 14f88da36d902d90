/**
 * Init containers as pure functions (issue #26 item 3): `findNextInitContainerToRun` and
 * `computePodActions` (kuberuntime_manager.go), `getPhase` and `GeneratePodInitializedCondition`
 * over init container statuses (kubelet_pods.go, status/generate.go), v1.22.8.
 */
import test from 'ava';
import type { ContainerStatus, Pod } from '@podsim/api';
import { computePodActions, findNextInitContainerToRun } from '../src/kuberuntime/syncPod.js';
import { generatePodInitializedCondition, getPhase } from '../src/status/generateStatus.js';
import { emptyPodStatus, type RuntimeContainerStatus } from '../src/container.js';
import { podRequests } from '../src/kubelet.js';

const S = 1_000_000;

function pod(restartPolicy: 'Always' | 'Never' = 'Always'): Pod {
  return {
    metadata: { name: 'p', namespace: 'ns', uid: 'u' },
    spec: { restartPolicy, containers: [{ name: 'app', image: 'nginx' }], initContainers: [{ name: 'i1', image: 'busybox' }, { name: 'i2', image: 'busybox' }] },
  };
}

function rc(name: string, state: RuntimeContainerStatus['state'], exitCode = 0, createdAt = 1): RuntimeContainerStatus {
  return { id: `${name}-${createdAt}`, name, state, createdAt, startedAt: S, finishedAt: state === 'exited' ? 2 * S : 0, exitCode, reason: '', message: '', image: 'busybox', imageRef: 'r', restartCount: 0, podSandboxId: 'sb' };
}

function status(...cs: RuntimeContainerStatus[]) {
  return { ...emptyPodStatus('u'), sandboxStatuses: [{ id: 'sb', state: 'SANDBOX_READY' as const, attempt: 0, createdAt: 1 }], containerStatuses: cs };
}

test('findNextInitContainerToRun: first, then the next after an exit 0, wait while one runs, retry a failed one, done after the last or once an app container runs', (t) => {
  const p = pod();
  const next = (s: ReturnType<typeof status>) => {
    const r = findNextInitContainerToRun(p, s);
    return [r.failed?.name, r.next?.name, r.done];
  };
  t.deepEqual(next(status()), [undefined, 'i1', false]);
  t.deepEqual(next(status(rc('i1', 'running'))), [undefined, undefined, false]);
  t.deepEqual(next(status(rc('i1', 'exited', 0))), [undefined, 'i2', false]);
  t.deepEqual(next(status(rc('i2', 'exited', 1), rc('i1', 'exited', 0))), ['i2', 'i2', false]);
  t.deepEqual(next(status(rc('i2', 'exited', 0), rc('i1', 'exited', 0))), [undefined, undefined, true]);
  t.deepEqual(next(status(rc('app', 'running'))), [undefined, undefined, true]);
});

test('computePodActions with init containers: a new sandbox starts i1 only; a failed init container is retried (Always) or the pod killed (Never); regular containers start once init is done', (t) => {
  const fresh = computePodActions(pod(), emptyPodStatus('u'));
  t.deepEqual([fresh.createSandbox, fresh.nextInitContainerToStart?.name, fresh.containersToStart.length], [true, 'i1', 0]);
  const failed = status(rc('i1', 'exited', 1));
  t.is(computePodActions(pod(), failed).nextInitContainerToStart?.name, 'i1');
  const never = computePodActions(pod('Never'), failed);
  t.deepEqual([never.killPod, never.nextInitContainerToStart], [true, undefined]);
  const done = computePodActions(pod(), status(rc('i2', 'exited', 0), rc('i1', 'exited', 0)));
  t.deepEqual([done.nextInitContainerToStart, done.containersToStart.map((c) => c.name)], [undefined, ['app']]);
});

function cs(name: string, state: ContainerStatus['state'], ready = false, lastState: ContainerStatus['lastState'] = {}): ContainerStatus {
  return { name, state, lastState, ready, restartCount: 0, image: '', imageID: '' };
}

test('getPhase and the Initialized condition over init container statuses', (t) => {
  const spec = pod().spec;
  const app = cs('app', { waiting: { reason: 'PodInitializing' } });
  const i1Done = cs('i1', { terminated: { exitCode: 0, reason: 'Completed' } }, true);
  const i2Run = cs('i2', { running: {} });
  t.is(getPhase(spec, [i1Done, i2Run, app]), 'Pending');
  t.deepEqual(generatePodInitializedCondition(spec, [i1Done, i2Run], 'Pending'), { type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: 'containers with unready status: [i2]' });
  t.deepEqual(generatePodInitializedCondition(spec, [i1Done], 'Pending'), { type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [i2]' });
  const i2Done = cs('i2', { terminated: { exitCode: 0, reason: 'Completed' } }, true);
  t.deepEqual(generatePodInitializedCondition(spec, [i1Done, i2Done], 'Running'), { type: 'Initialized', status: 'True' });
  t.is(getPhase(spec, [i1Done, i2Done, cs('app', { running: {} }, true)]), 'Running');
  // A failed init container: Failed under Never, still Pending under Always (it is retried).
  const i1Failed = cs('i1', { terminated: { exitCode: 1, reason: 'Error' } });
  t.is(getPhase(pod('Never').spec, [i1Failed, cs('i2', { waiting: { reason: 'PodInitializing' } }), app]), 'Failed');
  t.is(getPhase(spec, [cs('i1', { waiting: { reason: 'CrashLoopBackOff' } }, false, { terminated: { exitCode: 1 } }), cs('i2', { waiting: { reason: 'PodInitializing' } }), app]), 'Pending');
});

test('admission requests: the sum of the app containers, raised to the largest init container request', (t) => {
  const p: Pod = {
    metadata: { name: 'p' },
    spec: {
      containers: [{ name: 'a', resources: { requests: { cpu: '500m', memory: '1Gi' } } }, { name: 'b', resources: { requests: { cpu: '500m' } } }],
      initContainers: [{ name: 'i1', resources: { requests: { cpu: '2', memory: '256Mi' } } }],
    },
  };
  t.deepEqual(podRequests(p), { cpu: 2, memory: 1024 ** 3 });
});
