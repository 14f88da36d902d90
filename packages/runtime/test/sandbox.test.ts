/**
 * Sandboxes (spec §8: StopPodSandbox force-stops what still runs and frees the IP, idempotent;
 * RemovePodSandbox kills and removes its containers, idempotent), container lifecycle errors,
 * list filters, name reservation and IP allocation.
 */
import test from 'ava';
import { RuntimeDriver, S, containerConfig, sandboxConfig } from './fakeHost.js';

test('StopPodSandbox SIGKILLs running containers at once, answers a pending StopContainer, frees the IP; a second call is a no-op', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const sb = d.runPod('p', { 'podsim.dev/on-sigterm': 'ignore' });
  const app = d.startContainer(sb, 'p', 'app', { 'podsim.dev/on-sigterm': 'ignore' });
  const side = d.startContainer(sb, 'p', 'sidecar', { 'podsim.dev/on-sigterm': 'ignore' });
  const done = d.startContainer(sb, 'p', 'job', { 'podsim.dev/crash': '1s:0' });
  d.runFor(2 * S);
  t.is(d.status(done).reason, 'Completed');
  t.is(d.sync({ type: 'PodSandboxStatus', podSandboxId: sb }).status?.network?.ip, '10.244.0.2');

  const stopApp = d.call({ type: 'StopContainer', containerId: app, timeout: 30 });
  d.runFor(5 * S);
  const t1 = d.now;
  t.is(d.sync({ type: 'StopPodSandbox', podSandboxId: sb }).error, undefined);
  for (const id of [app, side]) {
    t.deepEqual(
      d.proc(id, 'cri.signal').map((r) => r.data!.signal),
      id === app ? ['SIGTERM', 'SIGKILL'] : ['SIGKILL'],
    );
    t.is(d.proc(id, 'cri.signal').at(-1)!.t, t1);
    t.like(d.status(id), { state: 'CONTAINER_EXITED', exitCode: 137, reason: 'Error', finishedAt: t1 });
  }
  t.deepEqual(d.answer(stopApp)?.at, t1);
  t.is(d.proc(done, 'cri.signal').length, 0, 'an exited container gets no signal');
  const st = d.sync({ type: 'PodSandboxStatus', podSandboxId: sb }).status!;
  t.is(st.state, 'SANDBOX_NOTREADY');
  t.is(st.network, undefined);

  d.runFor(S);
  const before = d.traces.length;
  t.is(d.sync({ type: 'StopPodSandbox', podSandboxId: sb }).error, undefined);
  t.deepEqual(
    d.traces.slice(before).map((r) => r.kind),
    ['cri.call'],
  );
  t.is(d.sync({ type: 'StopPodSandbox', podSandboxId: 'nope' }).error?.code, 'NotFound');
  t.is(d.sync({ type: 'PodSandboxStatus', podSandboxId: 'nope' }).error?.code, 'NotFound');
});

test('no container can be created or started in a stopped sandbox', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const sb = d.runPod('p');
  d.startContainer(sb, 'p', 'app');
  const created = d.createContainer(sb, 'p', 'late');
  d.sync({ type: 'StopPodSandbox', podSandboxId: sb });
  t.regex(d.sync({ type: 'StartContainer', containerId: created }).error?.message ?? '', /is not running/);
  const r = d.sync({ type: 'CreateContainer', podSandboxId: sb, config: containerConfig('x'), sandboxConfig: sandboxConfig('p') });
  t.is(r.error?.code, 'Unknown');
  t.is(d.status(created).state, 'CONTAINER_CREATED');
});

test('RemovePodSandbox kills and removes its containers, releases the names; idempotent', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const sb = d.runPod('p');
  const app = d.startContainer(sb, 'p', 'app', { 'podsim.dev/on-sigterm': 'ignore' });
  const other = d.runPod('q');
  const keep = d.startContainer(other, 'q', 'app');
  d.runFor(S);
  // The sandbox name (pod, namespace, uid, attempt) is reserved until removal.
  t.regex(d.sync({ type: 'RunPodSandbox', config: sandboxConfig('p') }).error?.message ?? '', /name .* is reserved/);
  t.is(d.sync({ type: 'RemovePodSandbox', podSandboxId: sb }).error, undefined);
  t.deepEqual(
    d.proc(app).map((r) => [r.kind, r.data!.signal ?? r.data!.exitCode ?? '']),
    [['cri.start', ''], ['cri.signal', 'SIGKILL'], ['cri.exit', 137]],
  );
  t.is(d.sync({ type: 'ContainerStatus', containerId: app }).error?.code, 'NotFound');
  t.deepEqual(
    d.sync({ type: 'ListContainers' }).containers.map((c) => c.id),
    [keep],
  );
  t.deepEqual(
    d.sync({ type: 'ListPodSandbox' }).items.map((s) => s.id),
    [other],
  );
  t.is(d.sync({ type: 'RemovePodSandbox', podSandboxId: sb }).error, undefined);
  t.is(d.sync({ type: 'RemoveContainer', containerId: app }).error, undefined);
  const again = d.sync({ type: 'RunPodSandbox', config: sandboxConfig('p') });
  t.is(again.error, undefined);
  t.not(again.podSandboxId, sb);
});

test('RemoveContainer kills a running container forcibly; its name can then be reused', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const sb = d.runPod('p');
  const app = d.startContainer(sb, 'p', 'app', { 'podsim.dev/on-sigterm': 'ignore' });
  t.regex(d.sync({ type: 'CreateContainer', podSandboxId: sb, config: containerConfig('app'), sandboxConfig: sandboxConfig('p') }).error?.message ?? '', /reserved/);
  d.runFor(S);
  t.is(d.sync({ type: 'RemoveContainer', containerId: app }).error, undefined);
  t.deepEqual(
    d.proc(app, 'cri.exit').map((r) => [r.t, r.data!.exitCode]),
    [[d.now, 137]],
  );
  t.truthy(d.createContainer(sb, 'p', 'app'));
});

test('StartContainer twice fails; unknown ids are NotFound where CRI says so, removals are idempotent', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const sb = d.runPod('p');
  const app = d.startContainer(sb, 'p', 'app');
  t.is(d.sync({ type: 'StartContainer', containerId: app }).error?.message, 'container is in CONTAINER_RUNNING state');
  t.is(d.sync({ type: 'StartContainer', containerId: 'x' }).error?.code, 'NotFound');
  t.is(d.sync({ type: 'ContainerStatus', containerId: 'x' }).error?.code, 'NotFound');
  t.is(d.sync({ type: 'ExecSync', containerId: 'x', cmd: ['true'], timeout: 0 }).error?.code, 'NotFound');
  t.is(d.sync({ type: 'ProbeContainer', containerId: 'x', probe: 'readiness', handler: 'httpGet' }).error?.code, 'NotFound');
  t.is(d.sync({ type: 'CreateContainer', podSandboxId: 'x', config: containerConfig('a'), sandboxConfig: sandboxConfig('p') }).error?.code, 'NotFound');
  t.is(d.sync({ type: 'RemoveContainer', containerId: 'x' }).error, undefined);
  t.is(d.sync({ type: 'RemovePodSandbox', podSandboxId: 'x' }).error, undefined);
});

test('a container with a bad behaviour annotation is refused with InvalidArgument naming it', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0, preloadedImages: ['nginx:1.21'] });
  const sb = d.runPod('p');
  const r = d.sync({
    type: 'CreateContainer',
    podSandboxId: sb,
    config: containerConfig('app', { 'podsim.dev/app.on-sigterm': 'exit:soon' }),
    sandboxConfig: sandboxConfig('p'),
  });
  t.is(r.error?.code, 'InvalidArgument');
  t.regex(r.error!.message, /^annotation podsim.dev\/app.on-sigterm: invalid value "exit:soon"/);
});

test('ListContainers and ListPodSandbox filters: id, state, sandbox, labels', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const a = d.runPod('a');
  const b = d.runPod('b');
  const a1 = d.startContainer(a, 'a', 'one');
  const a2 = d.startContainer(a, 'a', 'two', { 'podsim.dev/crash': '1s' });
  const b1 = d.startContainer(b, 'b', 'one');
  d.runFor(2 * S);
  d.sync({ type: 'StopPodSandbox', podSandboxId: b });
  const list = (filter: object) => d.sync({ type: 'ListContainers', filter }).containers.map((c) => c.id);
  t.deepEqual(list({}), [a1, a2, b1]);
  t.deepEqual(list({ podSandboxId: a }), [a1, a2]);
  t.deepEqual(list({ state: 'CONTAINER_RUNNING' }), [a1]);
  t.deepEqual(list({ state: 'CONTAINER_EXITED' }), [a2, b1]);
  t.deepEqual(list({ id: a2 }), [a2]);
  t.deepEqual(list({ labelSelector: { 'io.kubernetes.container.name': 'one' } }), [a1, b1]);
  const pods = (filter: object) => d.sync({ type: 'ListPodSandbox', filter }).items.map((s) => s.id);
  t.deepEqual(pods({ state: 'SANDBOX_READY' }), [a]);
  t.deepEqual(pods({ labelSelector: { 'io.kubernetes.pod.name': 'b' } }), [b]);
  t.deepEqual(pods({ id: a }), [a]);
});

test('sandbox IPs come from the pod CIDR in order, and a freed IP is not reused at once', (t) => {
  const d = new RuntimeDriver({ podCidr: '10.1.2.0/29' });
  const ip = (id: string) => d.sync({ type: 'PodSandboxStatus', podSandboxId: id }).status?.network?.ip;
  const ids = ['a', 'b', 'c'].map((n) => d.runPod(n));
  t.deepEqual(ids.map(ip), ['10.1.2.2', '10.1.2.3', '10.1.2.4']);
  d.sync({ type: 'StopPodSandbox', podSandboxId: ids[0] });
  t.deepEqual([d.runPod('d'), d.runPod('e'), d.runPod('f')].map(ip), ['10.1.2.5', '10.1.2.6', '10.1.2.2']);
  const full = d.sync({ type: 'RunPodSandbox', config: sandboxConfig('g') });
  t.regex(full.error?.message ?? '', /no IP addresses available in range 10.1.2.0\/29/);
});

test('the runtime refuses an invalid configuration with every problem named', (t) => {
  const err = t.throws(
    () =>
      new RuntimeDriver({
        podCidr: '10.0.0.0/33',
        execDefaultUs: -1,
        faults: [{ call: 'StopPodSandbox' }, { call: 'StartContainer', error: { code: 'Nope' as 'Unknown', message: 'x' }, attempts: 0 }],
      }),
  );
  t.regex(err!.message, /podCidr "10.0.0.0\/33"/);
  t.regex(err!.message, /execDefaultUs must be a non-negative integer/);
  t.regex(err!.message, /faults\[0\] needs an error or a delayUs/);
  t.regex(err!.message, /faults\[1\].error.code must be one of/);
  t.regex(err!.message, /faults\[1\].attempts must be a positive integer/);
});
