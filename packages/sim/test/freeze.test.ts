/**
 * The deep-freeze test mode (src/freeze.ts, `PODSIM_FREEZE=1`): on one thread a delivered body
 * is the sender's object itself, so a receiver that mutates it (or a sender that changes it
 * after sending) would silently change what other actors see. With the mode on that throws and
 * fails the run naming the actor; with it off the run goes on.
 */
import test from 'ava';
import type { Actor, Message } from '@podsim/api';
import { DEFAULT_EPOCH_UNIX_SECONDS } from '@podsim/api';
import { HostCore, SimulationError, deepFreezeBody, freezeModeFromEnv } from '../src/index.js';

interface Note extends Message {
  type: 'Note';
  inner: { n: number; list: number[] };
}

/** `a` sends one Note to `b` at 10 µs; then, if `mutateAfterSend`, changes it at 500 µs. */
const sender =
  (mutateAfterSend: boolean) =>
  (): Actor => {
    let sent: Note | undefined;
    return {
      start(ctx) {
        ctx.setTimer(10);
      },
      receive() {},
      onTimer(ctx) {
        if (!sent) {
          sent = { type: 'Note', inner: { n: 1, list: [1] } };
          ctx.send('b', sent);
          if (mutateAfterSend) ctx.setTimer(500);
        } else {
          sent.inner.list.push(2);
        }
      },
    };
  };

/** `b` traces what it got; if `mutate`, changes the nested object of the body it received. */
const receiver =
  (mutate: boolean) =>
  (): Actor => ({
    receive(ctx, env) {
      const note = env.body as Note;
      if (mutate) note.inner.n = 2;
      ctx.trace('note', String(note.inner.n));
    },
  });

function run(freezeBodies: boolean, o: { receiverMutates?: boolean; senderMutates?: boolean }): unknown {
  const core = new HostCore({
    seed: 1,
    epochUnixSeconds: DEFAULT_EPOCH_UNIX_SECONDS,
    allActorIds: ['a', 'b'],
    local: [
      { id: 'a', factory: sender(o.senderMutates ?? false) },
      { id: 'b', factory: receiver(o.receiverMutates ?? false) },
    ],
    latency: { default: { minUs: 100, jitterUs: 0 } },
    freezeBodies,
  });
  core.start();
  try {
    core.runUntil(10_000);
    return core.drainTraces().map((r) => `${r.actor} ${r.kind} ${r.msg}`);
  } catch (err) {
    if (err instanceof SimulationError) return err.failure;
    throw err;
  }
}

test('freeze mode: a receiver that mutates a delivered body fails the run naming the actor and message', (t) => {
  const f = run(true, { receiverMutates: true }) as { kind: string; actor: string; messageType: string; message: string };
  t.like(f, { kind: 'ActorThrew', actor: 'b', messageType: 'Note' });
  t.regex(f.message, /read only property 'n'/);
  // Production (mode off): the same actor runs on, having changed the sender's object.
  t.deepEqual(run(false, { receiverMutates: true }), ['b note 2']);
});

test('freeze mode: a sender that changes a body after sending it fails the run', (t) => {
  const f = run(true, { senderMutates: true }) as { kind: string; actor: string; messageType: string };
  t.like(f, { kind: 'ActorThrew', actor: 'a', messageType: 'timer' });
  t.deepEqual(run(false, { senderMutates: true }), ['b note 1']);
});

test('freeze mode: a well-behaved run is the same with and without it', (t) => {
  t.deepEqual(run(true, {}), run(false, {}));
  t.deepEqual(run(true, {}), ['b note 1']);
});

test('PODSIM_FREEZE=1 turns the mode on; anything else leaves it off', (t) => {
  t.true(freezeModeFromEnv({ PODSIM_FREEZE: '1' }));
  t.false(freezeModeFromEnv({ PODSIM_FREEZE: '0' }));
  t.false(freezeModeFromEnv({}));
  const v = deepFreezeBody({ a: { b: [1, { c: 2 }] } });
  t.true(Object.isFrozen(v.a.b[1]));
});
