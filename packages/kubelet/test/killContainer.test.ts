/**
 * Timing tests of the kuberuntime kill path (killPod → killContainer, spec §7) against the real
 * CRI runtime actor over the engine: cases C01, C02, C04, C05, C16. A small test actor starts the
 * pod's containers through CRI, then at T0 runs `killPod` with the grace the pod worker would
 * pass (calculateEffectiveGracePeriod, always set as the override in 1.22). Times are read
 * from the runtime's `cri.signal` / `cri.exit` records, relative to T0.
 */
import test from 'ava';
import type { Actor, ActorContext, Pod, TraceRecord } from '@podsim/api';
import { LocalSimulation } from '@podsim/sim';
import { createActor as createRuntime } from '@podsim/runtime/actor/runtimeActor';
import { actorEnv } from '../src/actor/kubeletActor.js';
import { EventRecorder } from '../src/events.js';
import { killPod, MINIMUM_GRACE_PERIOD_IN_SECONDS } from '../src/kuberuntime/killPod.js';
import { containerConfig, podSandboxConfig } from '../src/kuberuntime/syncPod.js';
import { calculateEffectiveGracePeriod } from '../src/podWorkers.js';
import type { RuntimePod } from '../src/container.js';

const S = 1_000_000;
const T0 = 5 * S;
const NODE = 'n1';

function mkPod(tgps: number, containers: Pod['spec']['containers'], annotations: Record<string, string>): Pod {
  return { metadata: { name: 'p', namespace: 'ns', uid: 'uid-p', annotations }, spec: { containers, terminationGracePeriodSeconds: tgps, nodeName: NODE } };
}

/** Starts `pod` through CRI, then at T0 kills it as syncTerminatingPod would, with `deleted` = the pod as the kubelet holds it at kill time. */
function killerActor(pod: Pod, deleted: Pod, override: number | undefined): () => Actor {
  return () => {
    let ctx!: ActorContext;
    const { env, fireTimer } = actorEnv(() => ctx, NODE);
    const running: { id: string; name: string; state: 'running' }[] = [];
    let sandbox = '';
    return {
      start(c) {
        ctx = c;
        const sb = podSandboxConfig(pod, 0);
        env.cri({ type: 'RunPodSandbox', config: sb }, (r) => {
          sandbox = r.podSandboxId!;
          for (const ct of pod.spec.containers) {
            env.cri({ type: 'CreateContainer', podSandboxId: sandbox, config: containerConfig(pod, ct, 0), sandboxConfig: sb }, (cr) => {
              running.push({ id: cr.containerId!, name: ct.name, state: 'running' });
              env.cri({ type: 'StartContainer', containerId: cr.containerId! }, () => {});
            });
          }
        });
        env.setTimer(T0, () => {
          const rp: RuntimePod = { uid: 'uid-p', name: 'p', namespace: 'ns', containers: running, sandboxes: [{ id: sandbox, state: 'SANDBOX_READY' }] };
          const recorder = new EventRecorder(env, NODE, false, 5, 10);
          killPod({ env, recorder, traceContainerSpans: true, spans: { next: 0 } }, deleted, rp, override, (r) => env.trace('test.killPodDone', r.error ?? 'ok', { error: r.error }));
        });
      },
      receive() {},
      onTimer(c, _p, id) {
        ctx = c;
        fireTimer(id);
      },
    };
  };
}

interface Outcome {
  traces: TraceRecord[];
  /** seconds after T0 of the first `signal` for `container`, or undefined */
  signal(container: string, signal: string): number | undefined;
  exit(container: string): { at: number; code: number } | undefined;
  at(kind: string, msgIncludes?: string): number | undefined;
}

function run(pod: Pod, deleted: Pod, override: number | undefined, untilS = 200): Outcome {
  const sim = new LocalSimulation({
    seed: 3,
    actors: [
      { id: `kubelet/${NODE}`, factory: killerActor(pod, deleted, override) },
      { id: `runtime/${NODE}`, factory: createRuntime, config: { nodeName: NODE, preloadedImages: ['nginx'] } },
    ],
  });
  sim.runUntil(untilS * S);
  const traces = sim.traces();
  const rel = (t: number) => (t - T0) / S;
  return {
    traces,
    signal: (container, signal) => {
      const r = traces.find((x) => x.kind === 'cri.signal' && x.data?.container === container && x.data?.signal === signal);
      return r ? rel(r.t) : undefined;
    },
    exit: (container) => {
      const r = traces.find((x) => x.kind === 'cri.exit' && x.data?.container === container);
      return r ? { at: rel(r.t), code: r.data!.exitCode as number } : undefined;
    },
    at: (kind, inc) => {
      const r = traces.find((x) => x.kind === kind && (inc === undefined || x.msg.includes(inc)));
      return r ? rel(r.t) : undefined;
    },
  };
}

/** The pod as the apiserver leaves it after a DELETE with `grace` (dts/dgps set). */
const deletedWith = (p: Pod, grace: number): Pod => ({ ...p, metadata: { ...p.metadata, deletionTimestamp: '2025-01-01T00:00:05Z', deletionGracePeriodSeconds: grace } });
/** The override the pod worker passes for that pod (first termination). */
const workerGrace = (p: Pod) => calculateEffectiveGracePeriod(0, p, undefined).gracePeriod;

const near = (actual: number | undefined, expected: number, tolS = 0.01) => actual !== undefined && Math.abs(actual - expected) <= tolS;

test('C01: preStop that never returns + app ignoring TERM → TERM@60, KILL@120, exit 137 (2 × grace)', (t) => {
  const pod = mkPod(60, [{ name: 'app', image: 'nginx', lifecycle: { preStop: { exec: { command: ['sh', '-c', 'sleep infinity'] } } } }], { 'podsim.dev/on-sigterm': 'ignore' });
  const del = deletedWith(pod, 60);
  const o = run(pod, del, workerGrace(del), 300);
  t.true(near(o.at('kubelet.preStop', 'E timedOut'), 60), `preStop wait cut at ${o.at('kubelet.preStop', 'E')}`);
  t.true(near(o.signal('app', 'SIGTERM'), 60), `TERM at ${o.signal('app', 'SIGTERM')}`);
  t.true(near(o.signal('app', 'SIGKILL'), 120), `KILL at ${o.signal('app', 'SIGKILL')}`);
  t.is(o.exit('app')?.code, 137);
  const stop = o.traces.find((r) => r.kind === 'kubelet.killContainer' && r.data?.ph === 'E');
  t.is(stop?.data?.gracePeriod, 60, 'StopContainer timeout is the full grace, not the 2 s floor');
});

test('C02: 10 s preStop is added to the 30 s grace: A ignores TERM → TERM@10 KILL@40; B exits 0 25 s after TERM → exit@35', (t) => {
  const hook = { preStop: { exec: { command: ['sh', '-c', 'sleep 10'] } } };
  const a = mkPod(30, [{ name: 'app', image: 'nginx', lifecycle: hook }], { 'podsim.dev/on-sigterm': 'ignore' });
  const oa = run(a, deletedWith(a, 30), 30);
  t.true(near(oa.signal('app', 'SIGTERM'), 10));
  t.true(near(oa.signal('app', 'SIGKILL'), 40));
  t.is(oa.exit('app')?.code, 137);
  const b = mkPod(30, [{ name: 'app', image: 'nginx', lifecycle: hook }], { 'podsim.dev/on-sigterm': 'exit:25s:0' });
  const ob = run(b, deletedWith(b, 30), 30);
  t.true(near(ob.signal('app', 'SIGTERM'), 10));
  t.is(ob.signal('app', 'SIGKILL'), undefined);
  t.true(near(ob.exit('app')?.at, 35));
  t.is(ob.exit('app')?.code, 0);
});

test('C04: force delete (dgps 0) still kills with TGPS on the node: TERM@0, KILL@30', (t) => {
  const pod = mkPod(30, [{ name: 'app', image: 'nginx' }], { 'podsim.dev/on-sigterm': 'ignore' });
  const forced = deletedWith(pod, 0);
  t.is(workerGrace(forced), 30);
  const o = run(pod, forced, workerGrace(forced));
  t.true(near(o.signal('app', 'SIGTERM'), 0));
  t.true(near(o.signal('app', 'SIGKILL'), 30));
  t.is(o.exit('app')?.code, 137);
});

test('C05: grace 1 is passed as 1 (the override replaces the 2 s floor): TERM@0, KILL@1; without an override it would be 2', (t) => {
  const pod = mkPod(30, [{ name: 'app', image: 'nginx' }], { 'podsim.dev/on-sigterm': 'ignore' });
  const del = deletedWith(pod, 1);
  const o = run(pod, del, workerGrace(del));
  t.true(near(o.signal('app', 'SIGKILL'), 1), `KILL at ${o.signal('app', 'SIGKILL')}`);
  // A nil override (pre-1.22 API-delete path, or syncPod's "cannot run" kill) floors at minimumGracePeriodInSeconds.
  const nil = run(pod, del, undefined);
  t.true(near(nil.signal('app', 'SIGKILL'), MINIMUM_GRACE_PERIOD_IN_SECONDS));
});

test('C16: shell PID 1 ignores TERM → KILL@30 exit 137; a trapping container exits 0 at once; StopPodSandbox only after both', (t) => {
  const pod = mkPod(30, [{ name: 'a', image: 'nginx' }, { name: 'b', image: 'nginx' }], { 'podsim.dev/a.on-sigterm': 'ignore', 'podsim.dev/b.on-sigterm': 'exit:0s:0' });
  const del = deletedWith(pod, 30);
  const o = run(pod, del, workerGrace(del));
  t.true(near(o.signal('a', 'SIGTERM'), 0));
  t.true(near(o.signal('b', 'SIGTERM'), 0));
  t.true(near(o.exit('b')?.at, 0));
  t.is(o.exit('b')?.code, 0);
  t.true(near(o.exit('a')?.at, 30));
  t.is(o.exit('a')?.code, 137);
  const sandboxStop = o.traces.find((r) => r.kind === 'cri.call' && r.msg.startsWith('StopPodSandbox') && r.t > T0);
  t.truthy(sandboxStop);
  t.true((sandboxStop!.t - T0) / S >= 30, 'invariant 7: sandbox stopped after every container kill returned');
  t.true(near(o.at('test.killPodDone'), 30, 0.05));
});

test('a StopContainer error fails killPod with a per-step result, and the sandbox is still stopped', (t) => {
  const pod = mkPod(30, [{ name: 'app', image: 'nginx' }], {});
  const del = deletedWith(pod, 30);
  const sim = new LocalSimulation({
    seed: 1,
    actors: [
      { id: `kubelet/${NODE}`, factory: killerActor(pod, del, 30) },
      {
        id: `runtime/${NODE}`,
        factory: createRuntime,
        config: { nodeName: NODE, preloadedImages: ['nginx'], faults: [{ call: 'StopContainer', error: { code: 'Unknown', message: 'boom' } }] },
      },
    ],
  });
  sim.runUntil(60 * S);
  const done = sim.traces().find((r) => r.kind === 'test.killPodDone');
  t.regex(String(done?.data?.error), /failed to "KillContainer" for "app".*boom/);
  t.truthy(sim.traces().find((r) => r.kind === 'cri.call' && r.msg.startsWith('StopPodSandbox')));
});
