/**
 * hostNetwork pods: the kubelet hands the runtime the pod's network namespace mode (NODE) and port
 * mappings (`generatePodSandboxConfig`) and each container's ports (`io.kubernetes.container.ports`,
 * labels.go `newContainerAnnotations`), so a replacement on the same node cannot bind the port a
 * force-deleted pod's container still holds. Pinned on C04
 * (examples/cases/C04-force-delete-container-keeps-running.yaml).
 */
import test from 'ava';
import type { Pod } from '@podsim/api';
import { containerConfig, podSandboxConfig } from '../src/kuberuntime/syncPod.js';
import { CONTAINER_PORTS_ANNOTATION } from '../src/container.js';
import { checkInvariants, mkPod, runPair, S } from './pairHarness.js';

const hostPod = (name: string, annotations: Record<string, string> = {}): Pod => {
  const p = mkPod(name, { annotations, containers: [{ name: 'app', image: 'nginx', ports: [{ containerPort: 8080 }] }] });
  return { ...p, spec: { ...p.spec, hostNetwork: true } };
};

test('generatePodSandboxConfig: NODE network namespace and port mappings for hostNetwork; container ports as an annotation', (t) => {
  const pod = { ...hostPod('p'), metadata: { ...hostPod('p').metadata, uid: 'u1' } };
  const sb = podSandboxConfig(pod, 0);
  t.is(sb.linux?.securityContext?.namespaceOptions?.network, 'NODE');
  t.deepEqual(sb.portMappings, [{ protocol: 'TCP', containerPort: 8080 }]);
  t.deepEqual(JSON.parse(containerConfig(pod, pod.spec.containers[0], 0).annotations[CONTAINER_PORTS_ANNOTATION]!), [{ containerPort: 8080 }]);
  const plain = { ...mkPod('q'), metadata: { ...mkPod('q').metadata, uid: 'u2' } };
  t.is(podSandboxConfig(plain, 0).linux, undefined);
  t.is(podSandboxConfig(plain, 0).portMappings, undefined);
  t.false(CONTAINER_PORTS_ANNOTATION in containerConfig(plain, plain.spec.containers[0], 0).annotations);
});

test('a force-deleted hostNetwork pod keeps its port for the full grace: the replacement exits 1 and restarts until the old container is SIGKILLed (C04)', (t) => {
  const run = runPair({
    steps: [
      { at: 1 * S, create: hostPod('old', { 'podsim.dev/on-sigterm': 'ignore' }) },
      { at: 10 * S, delete: 'old', options: { gracePeriodSeconds: 0 } },
      { at: 10.5 * S, create: hostPod('new') },
    ],
    untilS: 90,
  });
  // `first` answers in virtual seconds, records carry µs.
  const kill = run.first('cri.signal', (r) => r.data?.pod === 'old' && r.data?.signal === 'SIGKILL')! * S;
  t.true(Math.abs(kill - 40 * S) < 1.5 * S, `old SIGKILLed at ${kill / S}`);
  const newExits = run.all('cri.exit', (r) => r.data?.pod === 'new');
  t.true(newExits.length >= 1, 'the replacement failed to start at least once');
  t.true(newExits.every((r) => r.data?.exitCode === 1 && r.data?.cause === 'bind' && r.t < kill));
  const starts = run.all('cri.start', (r) => r.data?.pod === 'new');
  const last = starts[starts.length - 1];
  t.true(last.t > kill, 'the replacement runs only after the old container died');
  t.is(run.all('cri.exit', (r) => r.data?.pod === 'new' && r.t > kill).length, 0);
  t.deepEqual(checkInvariants(run, { forceDeleted: ['old'] }), []);
});
