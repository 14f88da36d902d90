import test from 'ava';
import { EventCorrelator, eventName, type Event } from '../src/index.js';

const S = 1_000_000;

function ev(message: string, reason = 'FailedKillPod', name = 'p'): Event {
  return {
    metadata: { name: `${name}.x`, namespace: 'default' },
    involvedObject: { kind: 'Pod', namespace: 'default', name, uid: 'u1', apiVersion: 'v1' },
    reason,
    message,
    source: { component: 'kubelet', host: 'n1' },
    firstTimestamp: 't0',
    lastTimestamp: 't0',
    count: 1,
    type: 'Warning',
  };
}

test('an identical event is a patch of the first one: same name and firstTimestamp, count + 1, new lastTimestamp', (t) => {
  const c = new EventCorrelator();
  const first = c.correlate(ev('boom'), 0, 'T0', 'p.a');
  t.like(first, { skip: false, event: { metadata: { name: 'p.x' }, count: 1 } });
  t.false('patch' in first && first.patch !== undefined);
  const again = c.correlate({ ...ev('boom'), metadata: { name: 'p.y', namespace: 'default' }, firstTimestamp: 'T1', lastTimestamp: 'T1' }, 10 * S, 'T1', 'p.b');
  t.like(again, { skip: false, event: { metadata: { name: 'p.x' }, firstTimestamp: 't0', count: 2 }, patch: { count: 2, lastTimestamp: 'T1', message: 'boom' } });
  // A different message is a different Event.
  t.like(c.correlate(ev('other'), 11 * S, 'T2', 'p.c'), { skip: false, event: { count: 1 } });
});

test('the 10th distinct message within 10 minutes is combined; later ones patch the combined Event; the window resets after 10 minutes', (t) => {
  const c = new EventCorrelator({ spamBurst: 1000 });
  for (let i = 0; i < 9; i++) t.like(c.correlate(ev(`m${i}`), i * S, 'T', `p.${i}`), { event: { message: `m${i}`, count: 1 } });
  const tenth = c.correlate(ev('m9'), 9 * S, 'T9', 'p.9');
  t.like(tenth, { skip: false, event: { metadata: { name: 'p.9' }, message: '(combined from similar events): m9', count: 1, firstTimestamp: 'T9' } });
  const eleventh = c.correlate(ev('m10'), 10 * S, 'T10', 'p.10');
  t.like(eleventh, { event: { metadata: { name: 'p.9' }, message: '(combined from similar events): m10', count: 2 }, patch: { count: 2 } });
  // 10 minutes and 1 s later the aggregate record is fresh again.
  t.like(c.correlate(ev('m11'), 10 * S + 601 * S, 'T', 'p.11'), { event: { message: 'm11', count: 1 } });
});

test('the spam filter lets 25 events of one object through, then one per 5 minutes', (t) => {
  const c = new EventCorrelator();
  let passed = 0;
  for (let i = 0; i < 30; i++) if (!c.correlate(ev(`m${i % 3}`), i, 'T', `p.${i}`).skip) passed++;
  t.is(passed, 25);
  t.true(c.correlate(ev('m0'), 299 * S, 'T', 'p.x').skip);
  t.false(c.correlate(ev('m0'), 301 * S, 'T', 'p.y').skip);
  // Another object has its own bucket.
  t.false(c.correlate(ev('m0', 'FailedKillPod', 'q'), 301 * S, 'T', 'q.1').skip);
});

test('eventName is <name>.<hex unix ns>, unique within one µs', (t) => {
  const a = eventName('web', 1_700_000_000, 1_500_000, -1n);
  t.is(a.name, `web.${((1_700_000_000n * 1_000_000n + 1_500_000n) * 1000n).toString(16)}`);
  const b = eventName('web', 1_700_000_000, 1_500_000, a.ns);
  t.is(b.ns, a.ns + 1n);
});
