/**
 * The unfiltered ListPodSandbox / ListContainers answers are kept while nothing changes (the PLEG
 * lists every second): they must still show every add, state change and removal at once, and be
 * the very same array while nothing changed. The oracle is the filtered path with an empty filter
 * (`filter: {}`), which walks every record on each call.
 */
import test from 'ava';
import { RuntimeDriver, S } from './fakeHost.js';

function lists(d: RuntimeDriver) {
  return {
    sandboxes: d.sync({ type: 'ListPodSandbox' }).items ?? [],
    containers: d.sync({ type: 'ListContainers' }).containers ?? [],
    sandboxesWalked: d.sync({ type: 'ListPodSandbox', filter: {} }).items ?? [],
    containersWalked: d.sync({ type: 'ListContainers', filter: {} }).containers ?? [],
  };
}

test('unfiltered lists follow every sandbox and container change, and are one shared array while nothing changes', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const states = (): string[] => {
    const l = lists(d);
    t.deepEqual(l.sandboxes, l.sandboxesWalked);
    t.deepEqual(l.containers, l.containersWalked);
    const again = lists(d);
    t.is(again.sandboxes, l.sandboxes, 'unchanged runtime: the same sandbox list');
    t.is(again.containers, l.containers, 'unchanged runtime: the same container list');
    return [...l.sandboxes.map((s) => `${s.metadata.name}:${s.state}`), ...l.containers.map((c) => `${c.metadata.name}:${c.state}`)];
  };
  t.deepEqual(states(), []);
  const a = d.runPod('a');
  t.deepEqual(states(), ['a:SANDBOX_READY']);
  const pull = d.call({ type: 'PullImage', image: { image: 'nginx:1.21' } });
  while (!d.answer(pull)) d.runFor(100_000);
  t.deepEqual(states(), ['a:SANDBOX_READY']);
  const app = d.createContainer(a, 'a', 'app');
  t.deepEqual(states(), ['a:SANDBOX_READY', 'app:CONTAINER_CREATED']);
  d.sync({ type: 'StartContainer', containerId: app });
  t.deepEqual(states(), ['a:SANDBOX_READY', 'app:CONTAINER_RUNNING']);
  const b = d.runPod('b');
  const job = d.startContainer(b, 'b', 'job', { 'podsim.dev/crash': '1s:0' });
  t.deepEqual(states(), ['a:SANDBOX_READY', 'b:SANDBOX_READY', 'app:CONTAINER_RUNNING', 'job:CONTAINER_RUNNING']);
  d.runFor(2 * S); // the job exits on its own timer
  t.deepEqual(states(), ['a:SANDBOX_READY', 'b:SANDBOX_READY', 'app:CONTAINER_RUNNING', 'job:CONTAINER_EXITED']);
  d.sync({ type: 'RemoveContainer', containerId: job });
  t.deepEqual(states(), ['a:SANDBOX_READY', 'b:SANDBOX_READY', 'app:CONTAINER_RUNNING']);
  d.sync({ type: 'StopPodSandbox', podSandboxId: a });
  t.deepEqual(states(), ['a:SANDBOX_NOTREADY', 'b:SANDBOX_READY', 'app:CONTAINER_EXITED']);
  d.sync({ type: 'RemovePodSandbox', podSandboxId: a });
  t.deepEqual(states(), ['b:SANDBOX_READY']);
});

test('ContainerStatus / PodSandboxStatus answer with the previous reply while nothing in it changed, and a new one at each change', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const pod = d.runPod('c');
  const job = d.startContainer(pod, 'c', 'job', { 'podsim.dev/crash': '1s:3' });
  const cs = () => d.sync({ type: 'ContainerStatus', containerId: job });
  const ss = () => d.sync({ type: 'PodSandboxStatus', podSandboxId: pod });
  const running = cs();
  t.is(cs(), running, 'unchanged container: the same reply');
  t.is(running.status?.state, 'CONTAINER_RUNNING');
  const ready = ss();
  t.is(ss(), ready, 'unchanged sandbox: the same reply');
  t.is(ready.status?.state, 'SANDBOX_READY');
  t.truthy(ready.status?.network?.ip);
  d.runFor(2 * S); // the job exits with code 3 on its own timer
  const exited = cs();
  t.not(exited, running);
  t.like(exited.status, { state: 'CONTAINER_EXITED', exitCode: 3 });
  t.true((exited.status?.finishedAt ?? 0) > 0);
  t.is(cs(), exited);
  t.is(running.status?.state, 'CONTAINER_RUNNING', 'an earlier reply is never changed');
  d.sync({ type: 'StopPodSandbox', podSandboxId: pod });
  const stopped = ss();
  t.not(stopped, ready);
  t.is(stopped.status?.state, 'SANDBOX_NOTREADY');
  t.is(stopped.status?.network, undefined);
  t.is(ss(), stopped);
  t.is(ready.status?.state, 'SANDBOX_READY');
});
