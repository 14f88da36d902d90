/**
 * Pair test over the engine (LocalSimulation): a scripted caller plays the kubelet's killPod
 * (spec §7.2–7.3) against the runtime actor. Pod p, TGPS 30, three containers:
 *   a — ignores SIGTERM (C16 container a): TERM at the kill, KILL 30 s later, exit 137;
 *   b — traps TERM and exits 0 (C16 container b): exit 0 at the TERM;
 *   c — preStop `sleep 10`, then exits 25 s after TERM (C02 variant B): hook 0→10, TERM at ~10,
 *       exit 0 at ~35.
 * StopPodSandbox comes after every StopContainer answered (invariant 7).
 */
import test from 'ava';
import type { Actor, ActorContext, Message, TraceRecord, cri } from '@podsim/api';
import { LocalSimulation } from '@podsim/sim';
import { createActor } from '../src/index.js';
import { S, containerConfig, sandboxConfig } from './fakeHost.js';

const RT = 'runtime/node-1';
const DELETE_AT = 10 * S;
const ANN = {
  'podsim.dev/a.on-sigterm': 'ignore',
  'podsim.dev/b.on-sigterm': 'exit',
  'podsim.dev/c.on-sigterm': 'exit:25s:0',
  'podsim.dev/startup': '2s',
};

/** The scripted kubelet: create and start the pod, then at DELETE_AT kill it like killPodWithSyncResult. */
function scriptedKubelet(): Actor {
  const ids: Record<string, string> = {};
  let sandbox = '';
  const call = <R extends cri.CriResult>(ctx: ActorContext, body: cri.CriRequest, then: (r: R) => void) =>
    ctx.request<R>(RT, body as Message, (r) => {
      if (r.type === 'RequestTimedOut') throw new Error(`${body.type} timed out`);
      ctx.trace('caller.reply', body.type, { call: body.type, error: r.error?.code });
      then(r);
    });
  return {
    start(ctx) {
      const config = sandboxConfig('p', ANN);
      call<cri.RunPodSandboxResult>(ctx, { type: 'RunPodSandbox', config }, (r) => {
        sandbox = r.podSandboxId!;
        call(ctx, { type: 'PullImage', image: { image: 'nginx:1.21' }, sandboxConfig: config }, () => {
          for (const name of ['a', 'b', 'c']) {
            call<cri.CreateContainerResult>(ctx, { type: 'CreateContainer', podSandboxId: sandbox, config: containerConfig(name, ANN), sandboxConfig: config }, (cr) => {
              ids[name] = cr.containerId!;
              call(ctx, { type: 'StartContainer', containerId: cr.containerId! }, () => {});
            });
          }
        });
      });
      ctx.setTimer(DELETE_AT, 'kill');
    },
    receive() {},
    onTimer(ctx) {
      let running = 3;
      const containerKilled = () => {
        if (--running > 0) return;
        call(ctx, { type: 'StopPodSandbox', podSandboxId: sandbox }, () => {
          for (const name of ['a', 'b', 'c']) {
            call<cri.ContainerStatusResult>(ctx, { type: 'ContainerStatus', containerId: ids[name] }, (s) => {
              ctx.trace('caller.status', name, { container: name, exitCode: s.status!.exitCode, reason: s.status!.reason, finishedAt: s.status!.finishedAt });
            });
          }
        });
      };
      call(ctx, { type: 'StopContainer', containerId: ids.a, timeout: 30 }, containerKilled);
      call(ctx, { type: 'StopContainer', containerId: ids.b, timeout: 30 }, containerKilled);
      call(ctx, { type: 'ExecSync', containerId: ids.c, cmd: ['/bin/sh', '-c', 'sleep 10'], timeout: 0 }, () =>
        call(ctx, { type: 'StopContainer', containerId: ids.c, timeout: 30 }, containerKilled),
      );
    },
  };
}

function run(seed: number) {
  const sim = new LocalSimulation({
    seed,
    actors: [
      { id: 'kubelet/node-1', factory: scriptedKubelet },
      { id: RT, factory: createActor, config: { nodeName: 'node-1', imagePullUs: 3 * S } },
    ],
  });
  sim.runUntil(120 * S);
  return { traces: sim.traces(), digest: sim.digest() };
}

const of = (traces: TraceRecord[], kind: string, container: string) => traces.filter((r) => r.kind === kind && r.data?.container === container);
const callAt = (traces: TraceRecord[], call: string, containerId?: string) =>
  traces.find((r) => r.kind === 'cri.call' && r.data!.call === call && (containerId === undefined || r.data!.containerId === containerId))!.t;

test('killPod against the runtime actor: TERM/KILL/exit virtual times and exit codes', (t) => {
  const { traces } = run(1);
  const id = (c: string) => of(traces, 'cri.start', c)[0].data!.containerId as string;
  // Pull 3 s: the containers start after it.
  for (const c of ['a', 'b', 'c']) t.true(of(traces, 'cri.start', c)[0].t > 3 * S);

  const stopA = callAt(traces, 'StopContainer', id('a'));
  const stopB = callAt(traces, 'StopContainer', id('b'));
  // One link latency (100–150 µs) after the kill timer.
  for (const x of [stopA, stopB]) t.true(x >= DELETE_AT + 100 && x <= DELETE_AT + 150, `${x}`);

  const sig = (c: string) => of(traces, 'cri.signal', c).map((r) => [r.data!.signal, r.t]);
  const exit = (c: string) => of(traces, 'cri.exit', c).map((r) => [r.data!.exitCode, r.data!.reason, r.t]);
  t.deepEqual(sig('a'), [['SIGTERM', stopA], ['SIGKILL', stopA + 30 * S]]);
  t.deepEqual(exit('a'), [[137, 'Error', stopA + 30 * S]]);
  t.deepEqual(sig('b'), [['SIGTERM', stopB]]);
  t.deepEqual(exit('b'), [[0, 'Completed', stopB]]);

  const exec = of(traces, 'cri.exec', 'c');
  t.deepEqual(exec.map((r) => r.data!.ph), ['B', 'E']);
  t.is(exec[1].t - exec[0].t, 10 * S);
  const stopC = callAt(traces, 'StopContainer', id('c'));
  // The hook's reply travels back, then StopContainer travels out: 200–300 µs.
  t.true(stopC - exec[1].t >= 200 && stopC - exec[1].t <= 300);
  t.deepEqual(sig('c'), [['SIGTERM', stopC]]);
  t.deepEqual(exit('c'), [[0, 'Completed', stopC + 25 * S]]);

  // Invariant 7: StopPodSandbox only after every StopContainer was answered (the last is c's, at +35 s).
  const sandboxStop = callAt(traces, 'StopPodSandbox');
  const lastExit = Math.max(...traces.filter((r) => r.kind === 'cri.exit').map((r) => r.t));
  t.is(lastExit, stopC + 25 * S);
  t.true(sandboxStop >= lastExit + 200);
  // Invariant 6: no SIGKILL earlier than 30 s after a SIGTERM of the same container.
  for (const k of traces.filter((r) => r.kind === 'cri.signal' && r.data!.signal === 'SIGKILL')) {
    const term = traces.find((r) => r.kind === 'cri.signal' && r.data!.signal === 'SIGTERM' && r.data!.containerId === k.data!.containerId)!;
    t.true(k.t - term.t >= 30 * S);
  }
  t.deepEqual(
    traces.filter((r) => r.kind === 'caller.status').map((r) => [r.data!.container, r.data!.exitCode, r.data!.reason]),
    [['a', 137, 'Error'], ['b', 0, 'Completed'], ['c', 0, 'Completed']],
  );
  t.false(traces.some((r) => r.kind === 'caller.reply' && r.data!.error !== undefined));
});

test('the same seed gives the same trace and digest; process records carry the pod identity', (t) => {
  const r1 = run(5);
  const r2 = run(5);
  t.deepEqual(r1.traces, r2.traces);
  t.is(r1.digest, r2.digest);
  const exit = r1.traces.find((r) => r.kind === 'cri.exit')!;
  t.like(exit.data, { podUid: 'uid-p', pod: 'p', namespace: 'default' });
  t.regex(exit.data!.containerId as string, /^[0-9a-f]{64}$/);
  t.not(run(6).digest, r1.digest);
});
