/**
 * The actor shell on the in-thread engine: replies, watch multicasts after the reply,
 * `api.write` / `api.request` traces, namespaces at start, service time, and a crashed watcher
 * re-watching.
 */
import test from 'ava';
import type { Actor, ActorContext, ApiRequest, ApiResult, ApiWatchEvent, Envelope, Message, Pod, TraceRecord } from '@podsim/api';
import { LocalSimulation } from '@podsim/sim';
import { createActor } from '../src/actor/apiserverActor.js';

interface Script {
  readonly at: number;
  readonly req: ApiRequest;
}

/** A client that sends scripted requests and traces every reply and watch event it receives. */
function client(script: readonly Script[]): () => Actor {
  return () => ({
    start(ctx) {
      script.forEach((s, i) => ctx.setTimer(s.at, i));
    },
    receive(ctx: ActorContext, env: Envelope) {
      const ev = env.body as ApiWatchEvent;
      if (ev.type === 'ApiWatchEvent') {
        const o = ev.event.object as Pod;
        ctx.trace('test.event', `${ev.watchIds.join('+')} ${ev.event.type} ${o.metadata?.name ?? ''} rv=${o.metadata?.resourceVersion ?? ''}`);
      }
    },
    onTimer(ctx, payload) {
      const s = script[payload as number];
      ctx.request<ApiResult>('apiserver', s.req as Message, (r) => {
        const res = r as ApiResult;
        ctx.trace('test.reply', `${s.req.type} ${res.code}`, { body: res.body });
      });
    },
  });
}

const pod = (name: string, nodeName?: string): Pod => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], nodeName } });

function run(script: readonly Script[], config: Record<string, unknown> = {}, untilUs = 10_000_000) {
  const sim = new LocalSimulation({
    seed: 1,
    actors: [
      { id: 'apiserver', factory: createActor, config: { freezeObjects: true, ...config } },
      { id: 'kubectl', factory: client(script) },
    ],
    latency: { default: { minUs: 100, jitterUs: 0 } },
  });
  sim.runUntil(untilUs);
  return sim.traces();
}

const msgs = (tr: TraceRecord[], kind: string) => tr.filter((r) => r.kind === kind).map((r) => r.msg);

test('requests are answered through ctx.reply; the reply precedes the watch events the write caused', (t) => {
  const tr = run([
    { at: 1_000, req: { type: 'ApiWatch', resource: 'pods', namespace: 'default', watchId: 'w' } },
    { at: 2_000, req: { type: 'ApiCreate', resource: 'pods', namespace: 'default', object: pod('p', 'node-1') } },
    { at: 3_000, req: { type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'p', options: { gracePeriodSeconds: 0 } } },
  ]);
  const seen = tr.filter((r) => r.actor === 'kubectl').map((r) => r.msg.replace(/ rv=\d+/, ''));
  t.deepEqual(seen, ['ApiWatch 200', 'ApiCreate 201', 'w ADDED p', 'ApiDelete 200', 'w MODIFIED p', 'w DELETED p']);
});

test('api.write per storage write and api.request per request, with the convention fields', (t) => {
  const tr = run([
    { at: 1_000, req: { type: 'ApiCreate', resource: 'pods', namespace: 'default', object: pod('p', 'node-1') } },
    { at: 2_000, req: { type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'p', options: { gracePeriodSeconds: 7 } } },
    { at: 3_000, req: { type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'p', options: { gracePeriodSeconds: 9 } } },
  ]);
  const writes = tr.filter((r) => r.kind === 'api.write');
  // Bootstrap namespaces, then the pod's create and one graceful update; the second delete wrote nothing.
  t.deepEqual(writes.map((w) => w.msg), ['ADDED namespaces default rv=2', 'ADDED namespaces kube-node-lease rv=3', 'ADDED namespaces kube-system rv=4', 'ADDED namespaces kube-public rv=5', 'ADDED pods default/p rv=6', 'MODIFIED pods default/p rv=7']);
  t.like(writes[5].data, { event: 'MODIFIED', resource: 'pods', namespace: 'default', name: 'p', rv: '7', deletionTimestamp: '2025-01-01T00:00:07Z', deletionGracePeriodSeconds: 7, phase: 'Pending', nodeName: 'node-1' });
  t.is(typeof writes[5].data!.uid, 'string');
  const reqs = tr.filter((r) => r.kind === 'api.request');
  t.deepEqual(reqs.map((r) => r.data), [
    { verb: 'create', resource: 'pods', namespace: 'default', name: 'p', code: 201, client: 'kubectl' },
    { verb: 'delete', resource: 'pods', namespace: 'default', name: 'p', code: 200, client: 'kubectl', gracePeriodSeconds: 7 },
    { verb: 'delete', resource: 'pods', namespace: 'default', name: 'p', code: 200, client: 'kubectl', gracePeriodSeconds: 9 },
  ]);
});

test('answers instantly by default; with serviceTimeUs requests queue FIFO behind one processor', (t) => {
  const script: Script[] = [0, 1, 2].map((i) => ({ at: 1_000, req: { type: 'ApiCreate', resource: 'pods', namespace: 'default', object: pod(`p${i}`) } }));
  const instant = run(script).filter((r) => r.kind === 'test.reply').map((r) => r.t);
  t.deepEqual(instant, [1_200, 1_200, 1_200]);
  const slow = run(script, { serviceTimeUs: 5_000 }).filter((r) => r.kind === 'test.reply').map((r) => r.t);
  t.deepEqual(slow, [1_000 + 100 + 5_000 + 100, 1_000 + 100 + 10_000 + 100, 1_000 + 100 + 15_000 + 100]);
});

test('historySize from config bounds watch-from-RV (410 Expired as an ERROR event)', (t) => {
  const script: Script[] = [
    ...[0, 1, 2, 3].map((i) => ({ at: 1_000 + i, req: { type: 'ApiCreate', resource: 'pods', namespace: 'default', object: pod(`p${i}`) } as ApiRequest })),
    { at: 5_000, req: { type: 'ApiWatch', resource: 'pods', watchId: 'w', resourceVersion: '3' } },
  ];
  const tr = run(script, { historySize: 2 });
  t.deepEqual(msgs(tr, 'test.event'), ['w ERROR  rv=']);
  t.deepEqual(msgs(tr, 'test.reply').slice(-1), ['ApiWatch 200']);
});

test('a watcher that crashes and restarts simply re-watches with the same id; events resume once', (t) => {
  const watcher = (): Actor => ({
    start(ctx) {
      ctx.request('apiserver', { type: 'ApiWatch', resource: 'pods', watchId: 'pods', fieldSelector: 'spec.nodeName=node-1' } as Message, () => {});
    },
    receive(ctx, env) {
      const ev = env.body as ApiWatchEvent;
      if (ev.type === 'ApiWatchEvent') ctx.trace('test.event', `${ctx.incarnation} ${ev.event.type} ${(ev.event.object as Pod).metadata.name}`);
    },
  });
  const sim = new LocalSimulation({
    seed: 3,
    actors: [
      { id: 'apiserver', factory: createActor, config: {} },
      { id: 'kubelet/node-1', factory: watcher },
      {
        id: 'kubectl',
        factory: client([
          { at: 1_000, req: { type: 'ApiCreate', resource: 'pods', namespace: 'default', object: pod('a', 'node-1') } },
          { at: 3_000_000, req: { type: 'ApiCreate', resource: 'pods', namespace: 'default', object: pod('b', 'node-1') } },
        ]),
      },
    ],
    latency: { default: { minUs: 100, jitterUs: 0 } },
    faults: [{ kind: 'crash', actor: 'kubelet/node-1', atUs: 1_000_000, restartAfterUs: 1_000_000 }],
  });
  sim.runUntil(5_000_000);
  const tr = sim.traces();
  // Incarnation 2 re-watched at its start (no RV): it gets "a" as ADDED, then "b" once.
  t.deepEqual(msgs(tr, 'test.event'), ['1 ADDED a', '2 ADDED a', '2 ADDED b']);
});

test('same seed, same trace digest', (t) => {
  const script: Script[] = [
    { at: 1_000, req: { type: 'ApiCreate', resource: 'pods', namespace: 'default', object: { metadata: { generateName: 'web-' }, spec: { containers: [{ name: 'c', image: 'i' }] } } as Pod } },
  ];
  const a = run(script);
  const b = run(script);
  t.deepEqual(a, b);
  const name = (a.find((r) => r.kind === 'test.reply')!.data!.body as Pod).metadata.name!;
  t.regex(name, /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
});
