/**
 * Injected CRI call faults (runtime config): errors for N attempts or inside a virtual-time
 * window, extra reply delays (a hanging CNI teardown in StopPodSandbox), and selectors by pod,
 * container and image.
 */
import test from 'ava';
import { RuntimeDriver, S } from './fakeHost.js';

test('an error for N attempts: the first two StopPodSandbox calls fail, the third succeeds', (t) => {
  const d = new RuntimeDriver({
    imagePullUs: 0,
    faults: [{ call: 'StopPodSandbox', error: { code: 'Unknown', message: 'failed to destroy network for sandbox: plugin type="calico" failed' }, attempts: 2 }],
  });
  const sb = d.runPod('p');
  const app = d.startContainer(sb, 'p', 'app');
  const codes = [0, 1, 2].map(() => d.sync({ type: 'StopPodSandbox', podSandboxId: sb }).error?.code);
  t.deepEqual(codes, ['Unknown', 'Unknown', undefined]);
  // A failed call has no effect: the container ran until the call that succeeded.
  t.is(d.proc(app, 'cri.signal').length, 1);
  t.is(d.sync({ type: 'PodSandboxStatus', podSandboxId: sb }).status?.state, 'SANDBOX_NOTREADY');
  const calls = d.traces.filter((r) => r.kind === 'cri.call' && r.data!.call === 'StopPodSandbox');
  t.deepEqual(
    calls.map((r) => r.data!.error),
    ['Unknown', 'Unknown', undefined],
  );
});

test('an error inside a window [startUs, endUs): StartContainer fails from 10 s to 20 s only', (t) => {
  const d = new RuntimeDriver({
    preloadedImages: ['nginx:1.21'],
    faults: [{ call: 'StartContainer', error: { code: 'Unavailable', message: 'runtime is restarting' }, startUs: 10 * S, endUs: 20 * S }],
  });
  const sb = d.runPod('p');
  const ids = ['a', 'b', 'c', 'd'].map((n) => d.createContainer(sb, 'p', n));
  const codes: Array<string | undefined> = [];
  for (const [i, at] of [9.999999, 10, 19.999999, 20].entries()) {
    d.runUntil(at * S);
    codes.push(d.sync({ type: 'StartContainer', containerId: ids[i] }).error?.code);
  }
  t.deepEqual(codes, [undefined, 'Unavailable', 'Unavailable', undefined]);
});

test('a hanging CNI teardown: StopPodSandbox kills at once but answers 30 s late; the IP is held until then', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0, faults: [{ call: 'StopPodSandbox', delayUs: 30 * S, attempts: 1 }] });
  const sb = d.runPod('p');
  const app = d.startContainer(sb, 'p', 'app', { 'podsim.dev/on-sigterm': 'ignore' });
  const t0 = d.now;
  const k = d.call({ type: 'StopPodSandbox', podSandboxId: sb });
  t.is(d.proc(app, 'cri.exit')[0].t, t0);
  d.runFor(29 * S);
  t.is(d.answer(k), undefined);
  t.is(d.sync({ type: 'PodSandboxStatus', podSandboxId: sb }).status?.network?.ip, '10.244.0.2');
  d.runFor(S);
  t.is(d.answer(k)?.at, t0 + 30 * S);
  t.is(d.answer(k)?.body.error, undefined);
  t.is(d.sync({ type: 'PodSandboxStatus', podSandboxId: sb }).status?.network, undefined);
});

test('a retry without the delay completes the teardown at once', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0, faults: [{ call: 'StopPodSandbox', delayUs: 60 * S, attempts: 1 }] });
  const sb = d.runPod('p');
  const slow = d.call({ type: 'StopPodSandbox', podSandboxId: sb });
  d.runFor(10 * S);
  t.is(d.sync({ type: 'StopPodSandbox', podSandboxId: sb }).error, undefined);
  t.is(d.sync({ type: 'PodSandboxStatus', podSandboxId: sb }).status?.network, undefined);
  d.runFor(60 * S);
  t.is(d.answer(slow)?.at, 60 * S);
});

test('delay plus error: StopContainer is signalled at once and fails late; selectors pick the pod and container', (t) => {
  const d = new RuntimeDriver({
    imagePullUs: 0,
    faults: [{ call: 'StopContainer', podName: 'p', container: 'app', delayUs: 5 * S, error: { code: 'DeadlineExceeded', message: 'context deadline exceeded' } }],
  });
  const p = d.runPod('p');
  const q = d.runPod('q');
  const pApp = d.startContainer(p, 'p', 'app');
  const pSide = d.startContainer(p, 'p', 'side');
  const qApp = d.startContainer(q, 'q', 'app');
  const t0 = d.now;
  const k = [pApp, pSide, qApp].map((containerId) => d.call({ type: 'StopContainer', containerId, timeout: 30 }));
  d.runFor(10 * S);
  t.like(d.answer(k[0]), { at: t0 + 5 * S, body: { error: { code: 'DeadlineExceeded' } } });
  t.like(d.answer(k[1]), { at: t0, body: { error: undefined } });
  t.like(d.answer(k[2]), { at: t0, body: { error: undefined } });
  // A fault with an error fails the call before it acts: p/app is still running.
  t.is(d.status(pApp).state, 'CONTAINER_RUNNING');
});

test('a delay on StopContainer adds to the wait for the exit', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0, faults: [{ call: 'StopContainer', delayUs: 2 * S }] });
  const sb = d.runPod('p');
  const id = d.startContainer(sb, 'p', 'app', { 'podsim.dev/on-sigterm': 'exit:3s' });
  const t0 = d.now;
  const k = d.call({ type: 'StopContainer', containerId: id, timeout: 30 });
  d.runFor(10 * S);
  t.is(d.proc(id, 'cri.exit')[0].t, t0 + 3 * S);
  t.is(d.answer(k)?.at, t0 + 5 * S);
});

test('an image selector fails only pulls of that image (normalized)', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0, faults: [{ call: 'PullImage', image: 'nginx', error: { code: 'Unknown', message: 'pull access denied' } }] });
  t.is(d.sync({ type: 'PullImage', image: { image: 'docker.io/library/nginx:latest' } }).error?.code, 'Unknown');
  const ok = d.call({ type: 'PullImage', image: { image: 'nginx:1.21' } });
  d.runFor(1);
  t.is(d.answer(ok)?.body.error, undefined);
});
