/**
 * Process behaviour over time: crashes (once per attempt unless asked), readiness / liveness /
 * startup probe results (start-up time, not-ready windows, draining after SIGTERM, hanging), and
 * image pulls (simulated time, cached per image, shared by concurrent pulls).
 */
import test from 'ava';
import type { cri } from '@podsim/api';
import { RuntimeDriver, S, containerConfig, sandboxConfig } from './fakeHost.js';

test('crash after 3 m with exit 1; the restarted container (attempt 1) does not crash again', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const ann = { 'podsim.dev/crash': '3m:1' };
  const sb = d.runPod('p', ann);
  const first = d.startContainer(sb, 'p', 'app', ann, 0);
  const t0 = d.now;
  d.runUntil(t0 + 179 * S);
  t.is(d.status(first).state, 'CONTAINER_RUNNING');
  d.runUntil(t0 + 181 * S);
  t.like(d.status(first), { state: 'CONTAINER_EXITED', exitCode: 1, reason: 'Error', finishedAt: t0 + 180 * S });
  t.deepEqual(
    d.proc(first, 'cri.exit').map((r) => r.data!.cause),
    ['crash'],
  );
  const second = d.startContainer(sb, 'p', 'app', ann, 1);
  d.runFor(3600 * S);
  t.is(d.status(second).state, 'CONTAINER_RUNNING');
});

test('crash-attempts: always crashes on every attempt; a crash during StopContainer answers it', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const ann = { 'podsim.dev/crash': '10s:2', 'podsim.dev/crash-attempts': 'always', 'podsim.dev/on-sigterm': 'ignore' };
  const sb = d.runPod('p', ann);
  for (let attempt = 0; attempt < 3; attempt++) {
    const id = d.startContainer(sb, 'p', 'app', ann, attempt);
    const start = d.now;
    const stop = d.call({ type: 'StopContainer', containerId: id, timeout: 30 });
    d.runFor(60 * S);
    t.like(d.status(id), { exitCode: 2, finishedAt: start + 10 * S });
    t.is(d.answer(stop)!.at, start + 10 * S);
    t.deepEqual(
      d.proc(id, 'cri.signal').map((r) => r.data!.signal),
      ['SIGTERM'],
    );
  }
});

test('a crash with code 0 is a normal completion (reason Completed)', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const sb = d.runPod('p');
  const id = d.startContainer(sb, 'p', 'job', { 'podsim.dev/job.crash': 'uniform(1s,2s):0' });
  d.runFor(3 * S);
  t.like(d.status(id), { state: 'CONTAINER_EXITED', exitCode: 0, reason: 'Completed' });
});

function probe(d: RuntimeDriver, containerId: string, kind: cri.ProbeContainer['probe'], handler: cri.ProbeContainer['handler'] = 'httpGet') {
  const r = d.sync({ type: 'ProbeContainer', containerId, probe: kind, handler });
  if (r.error) throw new Error(r.error.message);
  return r.success;
}

test('readiness over time: not ready during start-up, ready after, not ready inside the windows; startup and liveness pass after start-up', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const ann = { 'podsim.dev/startup': '5s', 'podsim.dev/not-ready': '30s-40s,2m-' };
  const sb = d.runPod('p', ann);
  const id = d.startContainer(sb, 'p', 'app', ann);
  const t0 = d.now;
  const at = (s: number) => {
    d.runUntil(t0 + s * S);
    return [probe(d, id, 'readiness'), probe(d, id, 'readiness', 'tcpSocket'), probe(d, id, 'startup'), probe(d, id, 'liveness')];
  };
  t.deepEqual(at(0), [false, false, false, false]);
  t.deepEqual(at(4.9), [false, false, false, false]);
  t.deepEqual(at(5), [true, true, true, true]);
  t.deepEqual(at(30), [false, false, true, true]);
  t.deepEqual(at(39.9), [false, false, true, true]);
  t.deepEqual(at(40), [true, true, true, true]);
  t.deepEqual(at(120), [false, false, true, true]);
  t.deepEqual(at(3600), [false, false, true, true]);
});

test('readiness after SIGTERM: kept by default, lost with ready-after-sigterm false; every probe fails once exited', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const sb = d.runPod('p');
  const keeps = d.startContainer(sb, 'p', 'keeps', { 'podsim.dev/on-sigterm': 'exit:10s' });
  const drains = d.startContainer(sb, 'p', 'drains', { 'podsim.dev/on-sigterm': 'exit:10s', 'podsim.dev/ready-after-sigterm': 'false' });
  d.runFor(S);
  for (const id of [keeps, drains]) d.call({ type: 'StopContainer', containerId: id, timeout: 30 });
  d.runFor(S);
  t.true(probe(d, keeps, 'readiness'));
  t.false(probe(d, drains, 'readiness'));
  t.true(probe(d, drains, 'liveness'));
  d.runFor(10 * S);
  for (const kind of ['readiness', 'liveness', 'startup'] as const) t.false(probe(d, keeps, kind));
});

test('unhealthy-after: liveness and readiness fail from then on, on the first attempt only', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const ann = { 'podsim.dev/unhealthy-after': '1m' };
  const sb = d.runPod('p', ann);
  const id = d.startContainer(sb, 'p', 'app', ann);
  d.runFor(59 * S);
  t.true(probe(d, id, 'liveness'));
  d.runFor(S);
  t.false(probe(d, id, 'liveness'));
  t.false(probe(d, id, 'readiness'));
  t.true(probe(d, id, 'startup'));
  t.is(d.status(id).state, 'CONTAINER_RUNNING', 'a hung process keeps running');
  const restarted = d.startContainer(sb, 'p', 'app', ann, 1);
  d.runFor(120 * S);
  t.true(probe(d, restarted, 'liveness'));
});

test('image pull takes the configured time once; later pulls of the same image are instant; concurrent pulls share it', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 3 * S, images: { 'docker.io/library/redis:6': { pullUs: 8 * S, sizeBytes: 123 } } });
  const status = (image: string) => d.sync({ type: 'ImageStatus', image: { image } }).image;
  t.is(status('nginx'), undefined);
  const a = d.call({ type: 'PullImage', image: { image: 'nginx' } });
  d.runFor(S);
  const b = d.call({ type: 'PullImage', image: { image: 'docker.io/library/nginx:latest' } });
  const r = d.call({ type: 'PullImage', image: { image: 'redis:6' } });
  d.runFor(20 * S);
  t.is(d.answer(a)!.at, 3 * S);
  t.is(d.answer(b)!.at, 3 * S);
  t.is(d.answer(r)!.at, 9 * S);
  const ref = (d.answer(a)!.body as cri.PullImageResult).imageRef;
  t.regex(ref ?? '', /^sha256:[0-9a-f]{64}$/);
  t.is((d.answer(b)!.body as cri.PullImageResult).imageRef, ref);
  t.deepEqual(status('library/nginx:latest'), { id: ref, size: 50_000_000 });
  t.is(status('redis:6')?.size, 123);
  const again = d.call({ type: 'PullImage', image: { image: 'nginx' } });
  t.is(d.answer(again)!.at, d.now);
});

test('podsim.dev/image-pull in the sandbox config sets the pull time; a container cannot be created before its image is pulled', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 3 * S });
  const sb = d.runPod('p');
  const early = d.sync({ type: 'CreateContainer', podSandboxId: sb, config: containerConfig('app'), sandboxConfig: sandboxConfig('p') });
  t.is(early.error?.code, 'NotFound');
  const k = d.call({ type: 'PullImage', image: { image: 'nginx:1.21' }, sandboxConfig: sandboxConfig('p', { 'podsim.dev/image-pull': '45s' }) });
  d.runFor(60 * S);
  t.is(d.answer(k)!.at, 45 * S);
  t.truthy(d.createContainer(sb, 'p', 'app'));
  const bad = d.sync({ type: 'PullImage', image: { image: 'busybox' }, sandboxConfig: sandboxConfig('p', { 'podsim.dev/image-pull': 'slow' }) });
  t.is(bad.error?.code, 'InvalidArgument');
  t.regex(bad.error!.message, /podsim.dev\/image-pull: invalid value "slow"/);
});
