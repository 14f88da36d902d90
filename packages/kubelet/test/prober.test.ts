/**
 * The prober workers (`pkg/kubelet/prober/worker.go` doProbe, v1.22.8) as pure machines on a
 * fake env: liveness and startup thresholds, onHold until a new container, liveness waiting for
 * the startup probe, the quiet stop for an already-deleted pod; and the liveness restart plan of
 * computePodActions with the grace killContainer gives it (ProbeTerminationGracePeriod gate).
 */
import test from 'ava';
import type { ContainerStatus, Pod, PodStatus, Probe } from '@podsim/api';
import { Clock } from '@podsim/api';
import { ProberManager, type ProbeResult, type ProbeType } from '../src/prober/proberManager.js';
import { computePodActions } from '../src/kuberuntime/syncPod.js';
import { killContainer } from '../src/kuberuntime/killPod.js';
import { EventRecorder } from '../src/events.js';
import { emptyPodStatus, type RuntimeContainerStatus } from '../src/container.js';
import { FakeEnv, S } from './fakeEnv.js';

const clock = new Clock();

function mkPod(probes: { livenessProbe?: Probe; startupProbe?: Probe; readinessProbe?: Probe }, extra: Partial<Pod['metadata']> = {}, restartPolicy: 'Always' | 'Never' = 'Always'): Pod {
  return {
    metadata: { name: 'p', namespace: 'ns', uid: 'u', ...extra },
    spec: { containers: [{ name: 'app', image: 'nginx', ...probes }], restartPolicy, terminationGracePeriodSeconds: 30 },
  };
}

/** A prober over a fake env whose runtime answers httpGet probes with `answer(type, containerId, now)`. */
function rig(pod: Pod, answer: (t: ProbeType, cid: string, now: number) => boolean, current: () => Pod = () => pod) {
  const env = new FakeEnv((req, reply) => {
    if (req.type === 'ProbeContainer') reply({ type: 'ProbeContainerResult', success: answer(req.probe, req.containerId, env.t) });
  });
  env.latencyUs = 1000;
  const updates: { t: number; type: ProbeType; cid: string; result: ProbeResult }[] = [];
  const events: string[] = [];
  let containerId = 'c1';
  let startedAt = 0;
  const prober: ProberManager = new ProberManager({
    env,
    getPodStatus: (): PodStatus => {
      const cs: ContainerStatus = {
        name: 'app',
        image: 'nginx',
        imageID: '',
        restartCount: 0,
        ready: false,
        lastState: {},
        containerID: `containerd://${containerId}`,
        state: { running: { startedAt: clock.format(startedAt) } },
        started: prober.started('u', 'app', containerId),
      };
      return { phase: 'Running', containerStatuses: [cs] };
    },
    getPod: () => current(),
    onResult: (type, _pod, cid, result) => updates.push({ t: env.t, type, cid, result }),
    event: (_pod, _type, reason, message) => events.push(`${reason}: ${message}`),
  });
  prober.addPod(pod);
  const probesOf = (t: ProbeType) => env.criCalls.filter((c) => c.req.type === 'ProbeContainer' && c.req.probe === t);
  return {
    env,
    prober,
    updates,
    events,
    probesOf,
    /** A new container replaces the old one (what a restart does). */
    restart(id: string) {
      containerId = id;
      startedAt = env.t;
    },
  };
}

const http = { httpGet: { path: '/healthz', port: 8080 } };

test('liveness: Failure is set only after failureThreshold failures in a row, then the worker is on hold until a new container', (t) => {
  // Healthy for 35 s, then every liveness probe fails.
  const r = rig(mkPod({ livenessProbe: { ...http, periodSeconds: 10, failureThreshold: 3 } }), (_t, cid, now) => cid !== 'c1' || now < 35 * S);
  r.env.runUntil(100 * S);
  const failures = r.updates.filter((u) => u.type === 'liveness' && u.result === 'Failure');
  t.is(failures.length, 1);
  // The probes land every 10 s after a random offset; the third failing one is 2 periods after the first.
  const firstFailingProbe = r.probesOf('liveness').find((c) => c.t >= 35 * S)!.t;
  t.true(failures[0].t >= firstFailingProbe + 20 * S && failures[0].t < firstFailingProbe + 21 * S);
  t.deepEqual(r.events.filter((e) => e.startsWith('Unhealthy')).length, 3);
  t.is(r.prober.get('liveness', 'c1'), 'Failure');
  // On hold: no probe after the Failure, however long we wait.
  t.false(r.probesOf('liveness').some((c) => c.t > failures[0].t));
  // A new container: the initial value Success, and probing resumes.
  r.restart('c2');
  r.env.runUntil(130 * S);
  t.is(r.prober.get('liveness', 'c2'), 'Success');
  t.true(r.probesOf('liveness').some((c) => c.t > 100 * S && (c.req as { containerId: string }).containerId === 'c2'));
});

test('startup: liveness and readiness do not probe until the startup probe succeeded; started flips once, then the startup worker idles', (t) => {
  const startupUs = 42 * S;
  const r = rig(
    mkPod({ startupProbe: { ...http, periodSeconds: 5, failureThreshold: 30 }, livenessProbe: { ...http, periodSeconds: 10 }, readinessProbe: { ...http, periodSeconds: 10 } }),
    (_t, _cid, now) => now >= startupUs,
  );
  r.env.runUntil(120 * S);
  const startedAt = r.updates.find((u) => u.type === 'startup' && u.result === 'Success')!.t;
  t.true(startedAt >= startupUs && startedAt < startupUs + 6 * S);
  t.true(r.prober.started('u', 'app', 'c1'));
  t.false(r.probesOf('liveness').some((c) => c.t < startedAt));
  t.false(r.probesOf('readiness').some((c) => c.t < startedAt));
  t.true(r.probesOf('liveness').length >= 5);
  // No startup probe after it succeeded.
  t.false(r.probesOf('startup').some((c) => c.t > startedAt));
  // Every failed startup probe records an Unhealthy event; no other probe failed.
  t.true(r.events.every((e) => e.startsWith('Unhealthy: Startup probe failed')));
});

test('startup: failureThreshold failures set Failure (the container will be restarted) and hold the worker', (t) => {
  const r = rig(mkPod({ startupProbe: { ...http, periodSeconds: 5, failureThreshold: 4 }, livenessProbe: { ...http } }), () => false);
  r.env.runUntil(60 * S);
  const f = r.updates.filter((u) => u.type === 'startup' && u.result === 'Failure');
  t.is(f.length, 1);
  t.is(r.probesOf('startup').length, 4);
  t.false(r.prober.started('u', 'app', 'c1'));
  t.is(r.probesOf('liveness').length, 0);
});

test('a pod with a deletionTimestamp: liveness and startup set Success once and stop, readiness keeps probing', (t) => {
  const r = rig(mkPod({ livenessProbe: { ...http }, readinessProbe: { ...http, periodSeconds: 10 } }, { deletionTimestamp: '2025-01-01T00:00:00Z', deletionGracePeriodSeconds: 30 }), () => false);
  r.env.runUntil(60 * S);
  t.is(r.probesOf('liveness').length, 0);
  t.is(r.prober.get('liveness', 'c1'), undefined); // the stopped worker removed its result
  t.false(r.prober.hasWorker('u', 'app', 'liveness'));
  t.true(r.probesOf('readiness').length >= 5);
});

test('deleted while liveness is failing (2 of 3 failures): the worker sees the deletionTimestamp of the current pod, sets Success and stops, no restart', (t) => {
  const pod = mkPod({ livenessProbe: { ...http, periodSeconds: 10, failureThreshold: 3 } });
  let deleted = false;
  const r = rig(pod, () => false, () => (deleted ? { ...pod, metadata: { ...pod.metadata, deletionTimestamp: '2025-01-01T00:00:25Z', deletionGracePeriodSeconds: 30 } } : pod));
  // Let exactly two probes fail, then the DELETE reaches the kubelet.
  while (r.probesOf('liveness').length < 2) r.env.runUntil(r.env.t + S);
  r.env.runUntil(r.env.t + 2 * S);
  deleted = true;
  r.env.runUntil(120 * S);
  t.is(r.probesOf('liveness').length, 2);
  t.false(r.updates.some((u) => u.result === 'Failure'));
  t.false(r.prober.hasWorker('u', 'app', 'liveness'));
});

test('an exec probe that times out is a Failure (ExecProbeTimeout), not a thrown-away error', (t) => {
  const pod = mkPod({ livenessProbe: { exec: { command: ['sleep', '5'] }, timeoutSeconds: 1, periodSeconds: 10, failureThreshold: 1 } });
  const env = new FakeEnv((req, reply) => {
    if (req.type === 'ExecSync') reply({ type: 'ExecSyncResult', stdout: '', stderr: '', exitCode: -1, error: { code: 'DeadlineExceeded', message: 'timeout' } } as never);
  });
  const updates: ProbeResult[] = [];
  const prober = new ProberManager({
    env,
    getPodStatus: () => ({ phase: 'Running', containerStatuses: [{ name: 'app', image: '', imageID: '', restartCount: 0, ready: false, lastState: {}, containerID: 'containerd://c1', started: true, state: { running: { startedAt: clock.format(0) } } }] }),
    onResult: (_t, _p, _c, result) => updates.push(result),
    event: () => {},
  });
  prober.addPod(pod);
  env.runUntil(30 * S);
  t.deepEqual(updates, ['Success', 'Failure']);
});

function running(id: string, restartCount = 0): RuntimeContainerStatus {
  return { id, name: 'app', state: 'running', createdAt: 1, startedAt: S, finishedAt: 0, exitCode: 0, reason: '', message: '', image: 'nginx', imageRef: 'r', restartCount, podSandboxId: 'sb' };
}
const status = { ...emptyPodStatus('u'), sandboxStatuses: [{ id: 'sb', state: 'SANDBOX_READY' as const, attempt: 0, createdAt: 1 }], containerStatuses: [running('c1', 2)] };

test('computePodActions: a liveness Failure kills the running container and starts it again (Always); under Never the whole pod is killed', (t) => {
  const failing = { liveness: (cid: string) => (cid === 'c1' ? ('Failure' as const) : undefined), startup: () => undefined };
  const a = computePodActions(mkPod({ livenessProbe: http }), status as never, failing);
  t.false(a.killPod);
  t.deepEqual(a.containersToKill, [{ containerId: 'c1', name: 'app', message: 'Container app failed liveness probe, will be restarted', reason: 'LivenessProbe' }]);
  t.deepEqual(a.containersToStart.map((c) => c.name), ['app']);
  const never = computePodActions(mkPod({ livenessProbe: http }, {}, 'Never'), status as never, failing);
  t.true(never.killPod);
  t.is(never.containersToStart.length, 0);
  const startupFailing = computePodActions(mkPod({ startupProbe: http }), status as never, { liveness: () => undefined, startup: () => 'Failure' });
  t.is(startupFailing.containersToKill[0].message, 'Container app failed startup probe, will be restarted');
  // Healthy: nothing to kill, nothing to start.
  const ok = computePodActions(mkPod({ livenessProbe: http }), status as never, { liveness: () => 'Success', startup: () => undefined });
  t.deepEqual([ok.killPod, ok.containersToKill.length, ok.containersToStart.length], [false, 0, 0]);
});

/** The StopContainer timeout killContainer sends for a liveness kill of a pod with TGPS 30 and probe TGPS 5. */
function livenessKillTimeout(gate: boolean): number {
  const env = new FakeEnv((req, reply) => {
    if (req.type === 'StopContainer') reply({ type: 'StopContainerResult' } as never);
  });
  const pod = mkPod({ livenessProbe: { ...http, terminationGracePeriodSeconds: 5 } });
  const recorder = new EventRecorder(env, 'n1', false, 5, 10);
  killContainer({ env, recorder, traceContainerSpans: false, spans: { next: 0 }, probeTerminationGracePeriod: gate }, pod, 'c1', 'app', 'Container app failed liveness probe, will be restarted', undefined, () => {}, 'LivenessProbe');
  env.runUntil(S);
  const stop = env.criCalls.find((c) => c.req.type === 'StopContainer')!.req as { timeout: number };
  return stop.timeout;
}

test('killContainer after a liveness Failure: the pod TGPS (30) with ProbeTerminationGracePeriod off (1.22 default), the probe TGPS (5) with it on', (t) => {
  t.is(livenessKillTimeout(false), 30);
  t.is(livenessKillTimeout(true), 5);
});
