/**
 * Pair tests of the pod source's reflector (client-go `ListAndWatch`): the watch ends after
 * minWatchTimeout × (1 + rand) and resumes from the last resourceVersion without losing or
 * repeating events; a broken connection (fault `disconnect`: an engine partition plus the
 * kubelet's `apiConnectionLossesUs`) is survived, and a deletion that happened while the kubelet
 * could not hear about it is carried out once it can; an expired resourceVersion (410) relists.
 * A bare partition without the connection loss is the "dropped watch event" gap.
 */
import test from 'ava';
import { checkInvariants, mkPod, runPair, S, type PairRun } from './pairHarness.js';

const gone = (run: PairRun, name: string) => run.first('client.watch', (r) => r.data?.type === 'DELETED' && r.data?.name === name);
const reflector = (run: PairRun, kind: string, pred: (msg: string) => boolean = () => true) =>
  run.all(kind, (r) => r.actor === 'kubelet/n1' && pred(r.msg)).map((r) => r.t / S);

test('the pod watch times out after minWatchTimeout × (1 + rand) and resumes from the last resourceVersion: events are neither lost nor repeated', (t) => {
  const run = runPair({
    steps: [
      { at: 1 * S, create: mkPod('a') },
      { at: 25 * S, create: mkPod('b') },
      { at: 47 * S, delete: 'a' },
      { at: 61 * S, delete: 'b' },
    ],
    kubelet: { minWatchTimeoutUs: 5 * S },
    untilS: 90,
  });
  const rewatches = reflector(run, 'reflector.watch', (m) => m.includes('(timeout)'));
  t.true(rewatches.length >= 8, `re-watches at ${rewatches.join(', ')}`);
  for (let i = 1; i < rewatches.length; i++) {
    const gap = rewatches[i] - rewatches[i - 1];
    t.true(gap >= 5 && gap <= 10, `watch lasted ${gap}s, want 5–10 s`);
  }
  t.is(reflector(run, 'reflector.list').length, 1, 'no relist: resuming from the last resourceVersion is enough');
  // Each pod started once and was stopped once: no event was lost (b was seen, both deletions
  // were carried out) and none was applied twice (a repeated ADDED would not start a second
  // container, but a repeated DELETE op would show as a second killPod).
  t.is(run.all('cri.start').length, 2);
  t.is(run.all('kubelet.killPod', (r) => r.data?.ph === 'B').length, 2);
  t.true(gone(run, 'a')! < 50, `a gone at ${gone(run, 'a')}`);
  t.true(gone(run, 'b')! < 64, `b gone at ${gone(run, 'b')}`);
  t.deepEqual(checkInvariants(run), []);
});

test('disconnect: a delete during a broken connection is carried out once the kubelet can relist (request timeout, then LIST)', (t) => {
  const steps = [
    { at: 1 * S, create: mkPod('p') },
    { at: 12 * S, delete: 'p' },
  ];
  const partition = { kind: 'partition' as const, a: 'kubelet/n1', b: 'apiserver', startUs: 10 * S, endUs: 30 * S };
  const run = runPair({ steps, faults: [partition], kubelet: { apiConnectionLossesUs: [10 * S] }, untilS: 120 });
  t.deepEqual(reflector(run, 'reflector.watch'), [10], 'the watch ends with the connection and is requested again at once');
  // The re-watch was lost in the partition: the 60 s request timeout fails it, the reflector
  // relists after 800 ms and finds the pod Terminating.
  const relists = reflector(run, 'reflector.list', (m) => m.includes('retry'));
  t.true(relists.length === 1 && Math.abs(relists[0] - 70.8) < 0.1, `relist at ${relists.join(', ')}`);
  const term = run.first('cri.signal', (r) => r.data?.signal === 'SIGTERM')!;
  t.true(term > 70.8 && term < 72, `SIGTERM at ${term}`);
  t.true(gone(run, 'p')! > term && gone(run, 'p')! < term + 3, `gone at ${gone(run, 'p')}`);
  t.deepEqual(checkInvariants(run), []);
});

test('a bare partition (watch events dropped mid-stream) is recovered only by the watch timeout: the re-watch from the last resourceVersion replays the lost MODIFIED', (t) => {
  const steps = [
    { at: 1 * S, create: mkPod('p') },
    { at: 12 * S, delete: 'p' },
  ];
  const partition = { kind: 'partition' as const, a: 'kubelet/n1', b: 'apiserver', startUs: 10 * S, endUs: 30 * S };
  // Watches never end: the MODIFIED that set deletionTimestamp is lost for good (the known gap).
  const never = runPair({ steps, faults: [partition], kubelet: { minWatchTimeoutUs: 0 }, untilS: 200 });
  t.is(gone(never, 'p'), undefined);
  t.is(never.all('cri.signal').length, 0);
  // With the 5–10 min watch timeout the re-watch from the last resourceVersion replays it.
  const run = runPair({ steps, faults: [partition], untilS: 900 });
  const rewatch = reflector(run, 'reflector.watch', (m) => m.includes('(timeout)'))[0];
  t.true(rewatch >= 300 && rewatch <= 601, `first re-watch at ${rewatch}`);
  const term = run.first('cri.signal', (r) => r.data?.signal === 'SIGTERM')!;
  t.true(term > rewatch && term < rewatch + 1, `SIGTERM at ${term}`);
  t.deepEqual(checkInvariants(run), []);
});

test('a re-watch from a resourceVersion that left the watch cache gets 410 Expired and relists', (t) => {
  // Pods for another node are written meanwhile: this kubelet's watch sees none of them, but
  // they push its last resourceVersion out of a tiny watch cache.
  const elsewhere = (name: string) => {
    const p = mkPod(name);
    return { ...p, spec: { ...p.spec, nodeName: 'n2' } };
  };
  const run = runPair({
    steps: [
      { at: 1 * S, create: mkPod('p') },
      { at: 20 * S, create: elsewhere('x1') },
      { at: 21 * S, create: elsewhere('x2') },
      { at: 22 * S, create: elsewhere('x3') },
      { at: 40 * S, delete: 'p' },
    ],
    apiserver: { historySize: 2 },
    kubelet: { minWatchTimeoutUs: 10 * S },
    untilS: 60,
  });
  const relists = reflector(run, 'reflector.list', (m) => m.includes('410'));
  t.true(relists.length >= 1, 'a watch ended with 410');
  t.true(reflector(run, 'reflector.list', (m) => m.includes('retry')).length >= 1, 'and the reflector listed again');
  const g = gone(run, 'p');
  t.true(g !== undefined && g > 40 && g < 43, `gone at ${g}`);
  t.deepEqual(checkInvariants(run), []);
});

test('startDelayUs: the kubelet process starts (first LIST, first container) only once its node boots; a pod bound earlier waits for it', (t) => {
  const run = runPair({ steps: [{ at: 1 * S, create: mkPod('early') }], kubelet: { startDelayUs: 7 * S }, untilS: 30 });
  const lists = reflector(run, 'reflector.list');
  t.true(lists.length >= 1 && lists[0] >= 7, `first LIST at ${lists.join(', ')}`);
  const started = run.first('cri.start')!;
  t.true(started >= 7 && started < 9, `container started at ${started}`);
  const now = runPair({ steps: [{ at: 1 * S, create: mkPod('early') }], untilS: 30 });
  t.true(now.first('cri.start')! < 3, `without the delay the container starts at ${now.first('cri.start')}`);
});
