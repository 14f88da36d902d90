/**
 * Host-network sandboxes (CRI NamespaceMode NODE): a process listens on its container ports in
 * the node's namespace, so a second process on the same port cannot start while the first one
 * lives. Pinned on C04 (examples/cases/C04-force-delete-container-keeps-running.yaml): after a
 * force delete the old container runs on for the full grace, and the replacement on the same
 * node crash-loops on `bind: address already in use` until the old one is SIGKILLed.
 */
import test from 'ava';
import type { cri } from '@podsim/api';
import { CONTAINER_PORTS_ANNOTATION, EXIT_BIND_FAILED, hostPortsOf } from '../src/criRuntime.js';
import { RuntimeDriver, S, containerConfig, sandboxConfig } from './fakeHost.js';

const hostNet = (name: string): cri.PodSandboxConfig => ({
  ...sandboxConfig(name),
  portMappings: [{ protocol: 'TCP', containerPort: 8080, hostPort: 8080 }],
  linux: { securityContext: { namespaceOptions: { network: 'NODE' } } },
});
const ports = { [CONTAINER_PORTS_ANNOTATION]: JSON.stringify([{ containerPort: 8080, protocol: 'TCP' }]) };

/** RunPodSandbox + PullImage + CreateContainer + StartContainer of `app` with port 8080, in a host-network sandbox or not. */
function start(d: RuntimeDriver, pod: string, host: boolean, behaviour: Record<string, string> = {}): string {
  const cfg = host ? hostNet(pod) : sandboxConfig(pod);
  const sb = d.sync({ type: 'RunPodSandbox', config: cfg }).podSandboxId!;
  const pull = d.call({ type: 'PullImage', image: { image: 'nginx:1.21' } });
  while (!d.answer(pull)) d.runFor(100_000);
  const id = d.sync({ type: 'CreateContainer', podSandboxId: sb, config: containerConfig('app', { ...ports, ...behaviour }), sandboxConfig: cfg }).containerId!;
  if (d.sync({ type: 'StartContainer', containerId: id }).error) throw new Error('StartContainer failed');
  return id;
}

test('a host-network process cannot bind a port another one holds: it exits 1 at once; after the holder dies the port is free', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const old = start(d, 'old', true, { 'podsim.dev/on-sigterm': 'ignore' });
  const stop = d.call({ type: 'StopContainer', containerId: old, timeout: 30 }); // the kubelet's kill after the force delete
  d.runFor(S);
  const fresh = start(d, 'new', true);
  // StartContainer succeeds; the application then fails to listen and exits at once.
  const st = d.status(fresh);
  t.like(st, { state: 'CONTAINER_EXITED', exitCode: EXIT_BIND_FAILED, reason: 'Error', finishedAt: d.now });
  t.is(st.startedAt, st.finishedAt);
  t.is(d.proc(fresh, 'cri.exit')[0].data!.cause, 'bind');
  t.is(d.proc(old, 'cri.exit').length, 0, 'the holder is untouched');

  d.runFor(30 * S); // SIGKILL at the StopContainer deadline frees the port
  t.is(d.status(old).exitCode, 137);
  t.truthy(d.answer(stop));
  const retry = start(d, 'new2', true);
  t.is(d.status(retry).state, 'CONTAINER_RUNNING');
});

test('ports in pod network namespaces never clash, and a process that exits on its own frees its port', (t) => {
  const d = new RuntimeDriver({ imagePullUs: 0 });
  const a = start(d, 'a', false);
  const b = start(d, 'b', false);
  t.is(d.status(a).state, 'CONTAINER_RUNNING');
  t.is(d.status(b).state, 'CONTAINER_RUNNING');

  const crashing = start(d, 'c', true, { 'podsim.dev/crash': '2s:3' });
  d.runFor(3 * S);
  t.is(d.status(crashing).exitCode, 3);
  t.is(d.status(start(d, 'd', true)).state, 'CONTAINER_RUNNING');
});

test('hostPortsOf reads the container ports annotation only for NODE network sandboxes', (t) => {
  const c = containerConfig('app', { [CONTAINER_PORTS_ANNOTATION]: JSON.stringify([{ containerPort: 53, protocol: 'UDP' }, { containerPort: 80 }]) });
  t.deepEqual(hostPortsOf(hostNet('p'), c), ['UDP/53', 'TCP/80']);
  t.deepEqual(hostPortsOf(sandboxConfig('p'), c), []);
  t.deepEqual(hostPortsOf(hostNet('p'), containerConfig('app')), []);
  t.deepEqual(hostPortsOf(hostNet('p'), containerConfig('app', { [CONTAINER_PORTS_ANNOTATION]: 'not json' })), []);
});
