/**
 * Pod status as the kubelet computes it: `generateAPIPodStatus`, `convertToAPIContainerStatuses`
 * and `getPhase` (`pkg/kubelet/kubelet_pods.go`), `ShouldContainerBeRestarted`
 * (`pkg/kubelet/container/helpers.go`) and the Ready / ContainersReady / Initialized conditions
 * (`pkg/kubelet/status/generate.go`), v1.23.13 read, believed equal in 1.22.8 (spec §9).
 * Pure: everything the kubelet knows is passed in. Times in the result are RFC 3339.
 */
import type { Clock, Container, ContainerStatus, Pod, PodCondition, PodPhase, PodSpec, PodStatus } from '@podsim/api';
import { findContainerStatusByName, type RuntimeContainerStatus, type RuntimePodStatus } from '../container.js';

export const CONTAINER_CREATING = 'ContainerCreating';
export const POD_INITIALIZING = 'PodInitializing';

/** `ShouldContainerBeRestarted`. */
export function shouldContainerBeRestarted(container: Container, pod: Pod, podStatus: RuntimePodStatus): boolean {
  if (pod.metadata.deletionTimestamp !== undefined) return false;
  const s = findContainerStatusByName(podStatus, container.name);
  if (!s) return true;
  if (s.state === 'running') return false;
  if (s.state === 'unknown' || s.state === 'created') return true;
  const policy = pod.spec.restartPolicy ?? 'Always';
  if (policy === 'Never') return false;
  if (policy === 'OnFailure' && s.exitCode === 0) return false;
  return true;
}

/** `getPhase(spec, initContainerStatuses + containerStatuses)`. */
export function getPhase(spec: PodSpec, info: readonly ContainerStatus[]): PodPhase {
  let pendingInitialization = 0;
  let failedInitialization = 0;
  for (const c of spec.initContainers ?? []) {
    const s = info.find((x) => x.name === c.name);
    if (!s) pendingInitialization++;
    else if (s.state.running) pendingInitialization++;
    else if (s.state.terminated) {
      if (s.state.terminated.exitCode !== 0) failedInitialization++;
    } else if (s.state.waiting) {
      if (s.lastState.terminated) {
        if (s.lastState.terminated.exitCode !== 0) failedInitialization++;
      } else pendingInitialization++;
    } else pendingInitialization++;
  }
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const c of spec.containers) {
    const s = info.find((x) => x.name === c.name);
    if (!s) {
      unknown++;
      continue;
    }
    if (s.state.running) running++;
    else if (s.state.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state.waiting) {
      if (s.lastState.terminated) stopped++;
      else waiting++;
    } else unknown++;
  }
  const policy = spec.restartPolicy ?? 'Always';
  if (failedInitialization > 0 && policy === 'Never') return 'Failed';
  if (pendingInitialization > 0 || waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

/** What generateAPIPodStatus needs besides the pod and the runtime status. */
export interface StatusInputs {
  readonly clock: Clock;
  readonly hostIP: string;
  /** The status manager's cached status of the pod, if any (else pod.status is used). */
  readonly oldStatus: PodStatus | undefined;
  /**
   * Readiness of a running, started container (`probeManager.UpdatePodStatus`): its readiness
   * result, or true when it has no readiness probe. Undefined = every container is ready.
   */
  readonly readiness?: (containerName: string, containerId: string) => boolean;
  /**
   * `started` of a running container: its startup result, or true when it has no startup
   * probe. Undefined = every running container has started.
   */
  readonly started?: (containerName: string, containerId: string) => boolean;
  /** `reasonCache`: why the last sync could not start a container (CrashLoopBackOff, ErrImagePull, …). */
  readonly reason: (containerName: string) => { reason: string; message: string } | undefined;
}

function convertContainerStatus(cs: RuntimeContainerStatus, clock: Clock): ContainerStatus {
  const cid = `containerd://${cs.id}`;
  const base = { name: cs.name, restartCount: cs.restartCount, image: cs.image, imageID: cs.imageRef, containerID: cid, ready: false, lastState: {} };
  if (cs.state === 'running') return { ...base, state: { running: { startedAt: clock.format(cs.startedAt) } } };
  if (cs.state === 'created' || cs.state === 'exited') {
    return {
      ...base,
      state: {
        terminated: {
          exitCode: cs.exitCode,
          ...(cs.reason ? { reason: cs.reason } : {}),
          ...(cs.message ? { message: cs.message } : {}),
          ...(cs.startedAt > 0 ? { startedAt: clock.format(cs.startedAt) } : {}),
          ...(cs.finishedAt > 0 ? { finishedAt: clock.format(cs.finishedAt) } : {}),
          containerID: cid,
        },
      },
    };
  }
  return { ...base, state: { waiting: {} } };
}

/**
 * `convertToAPIContainerStatuses(pod, podStatus, previous, containers, hasInitContainers,
 * isInitContainer)`, sorted by name (init containers keep their spec order, as upstream sorts
 * only regular ones). A pod with init containers waits in PodInitializing, not ContainerCreating.
 */
export function convertToAPIContainerStatuses(
  pod: Pod,
  podStatus: RuntimePodStatus,
  previous: readonly ContainerStatus[] | undefined,
  inputs: StatusInputs,
  isInitContainer = false,
): ContainerStatus[] {
  const containers = isInitContainer ? (pod.spec.initContainers ?? []) : pod.spec.containers;
  const defaultWaiting = (pod.spec.initContainers ?? []).length > 0 ? POD_INITIALIZING : CONTAINER_CREATING;
  const oldStatuses = new Map<string, ContainerStatus>();
  for (const s of previous ?? []) oldStatuses.set(s.name, s);
  const statuses = new Map<string, ContainerStatus>();
  for (const c of containers) {
    let status: ContainerStatus = { name: c.name, image: c.image ?? '', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: defaultWaiting } }, lastState: {} };
    const old = oldStatuses.get(c.name);
    if (old) {
      if (old.state.terminated) status = old;
      else status = { ...status, restartCount: old.restartCount, lastState: old.lastState };
    }
    statuses.set(c.name, status);
  }
  // A container that was running and vanished from the runtime is shown as stopped (137), not waiting.
  for (const c of containers) {
    if (podStatus.containerStatuses.some((s) => s.name === c.name)) continue;
    const old = oldStatuses.get(c.name);
    if (!old || old.state.terminated || !old.state.running) continue;
    const status = statuses.get(c.name)!;
    if (status.state.waiting?.reason !== defaultWaiting || status.lastState.terminated) continue;
    statuses.set(c.name, {
      ...status,
      lastState: { terminated: { reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was deleted.  The container used to be Running', exitCode: 137 } },
      restartCount: pod.metadata.deletionTimestamp === undefined ? status.restartCount + 1 : status.restartCount,
    });
  }
  const seen = new Map<string, number>();
  for (const cs of podStatus.containerStatuses) {
    if (!statuses.has(cs.name)) continue;
    const n = seen.get(cs.name) ?? 0;
    if (n >= 2) continue;
    const s = convertContainerStatus(cs, inputs.clock);
    if (n === 0) statuses.set(cs.name, s);
    else statuses.set(cs.name, { ...statuses.get(cs.name)!, lastState: s.state });
    seen.set(cs.name, n + 1);
  }
  for (const c of containers) {
    if (!shouldContainerBeRestarted(c, pod, podStatus)) continue;
    const r = inputs.reason(c.name);
    if (!r) continue;
    const s = statuses.get(c.name)!;
    statuses.set(c.name, { ...s, lastState: s.state.terminated ? s.state : s.lastState, state: { waiting: { reason: r.reason, message: r.message } } });
  }
  const out = isInitContainer ? containers.map((c) => statuses.get(c.name)!) : [...statuses.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // probeManager.UpdatePodStatus: an init container is ready once it exited 0.
  if (isInitContainer) return out.map((s) => ({ ...s, ready: s.state.terminated?.exitCode === 0 }));
  // probeManager.UpdatePodStatus: a running container has started once its startup probe
  // succeeded (at once without one); only a started container can be ready.
  return out.map((s) => {
    const id = s.containerID ?? '';
    const cid = id.startsWith('containerd://') ? id.slice('containerd://'.length) : id;
    const started = s.state.running !== undefined && (inputs.started?.(s.name, cid) ?? true);
    const ready = started && (inputs.readiness?.(s.name, cid) ?? true);
    return { ...s, started, ready };
  });
}

/** `GenerateContainersReadyCondition`. */
export function generateContainersReadyCondition(spec: PodSpec, statuses: readonly ContainerStatus[], phase: PodPhase): PodCondition {
  const unknown: string[] = [];
  const unready: string[] = [];
  for (const c of spec.containers) {
    const s = statuses.find((x) => x.name === c.name);
    if (!s) unknown.push(c.name);
    else if (!s.ready) unready.push(c.name);
  }
  if (phase === 'Succeeded' && unknown.length === 0) return { type: 'ContainersReady', status: 'False', reason: 'PodCompleted' };
  const parts: string[] = [];
  if (unknown.length > 0) parts.push(`containers with unknown status: [${unknown.join(' ')}]`);
  if (unready.length > 0) parts.push(`containers with unready status: [${unready.join(' ')}]`);
  if (parts.length > 0) return { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: parts.join(', ') };
  return { type: 'ContainersReady', status: 'True' };
}

/** `GeneratePodInitializedCondition(spec, initContainerStatuses, phase)`. */
export function generatePodInitializedCondition(spec: PodSpec, statuses: readonly ContainerStatus[], phase: PodPhase): PodCondition {
  const inits = spec.initContainers ?? [];
  if (inits.length === 0) return { type: 'Initialized', status: 'True' };
  const unknown: string[] = [];
  const unready: string[] = [];
  for (const c of inits) {
    const s = statuses.find((x) => x.name === c.name);
    if (!s) unknown.push(c.name);
    else if (!s.ready) unready.push(c.name);
  }
  if (phase === 'Succeeded' && unknown.length === 0) return { type: 'Initialized', status: 'True', reason: 'PodCompleted' };
  const parts: string[] = [];
  if (unknown.length > 0) parts.push(`containers with incomplete status: [${unknown.join(' ')}]`);
  if (unready.length > 0) parts.push(`containers with unready status: [${unready.join(' ')}]`);
  if (parts.length > 0) return { type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: parts.join(', ') };
  return { type: 'Initialized', status: 'True' };
}

/** `GeneratePodReadyCondition` (no readiness gates in podsim). */
export function generatePodReadyCondition(containersReady: PodCondition): PodCondition {
  if (containersReady.status !== 'True') return { ...containersReady, type: 'Ready' };
  return { type: 'Ready', status: 'True' };
}

/** `v1qos.GetPodQOS`, simplified to requests/limits presence. */
export function getPodQOS(spec: PodSpec): string {
  let any = false;
  let guaranteed = true;
  for (const c of spec.containers) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    if (Object.keys(req).length > 0 || Object.keys(lim).length > 0) any = true;
    for (const k of ['cpu', 'memory']) if (lim[k] === undefined || (req[k] !== undefined && req[k] !== lim[k])) guaranteed = false;
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** `generateAPIPodStatus(pod, podStatus)`. */
export function generateAPIPodStatus(pod: Pod, podStatus: RuntimePodStatus, inputs: StatusInputs): PodStatus {
  const old = inputs.oldStatus ?? pod.status ?? {};
  const containerStatuses = convertToAPIContainerStatuses(pod, podStatus, old.containerStatuses, inputs);
  const hasInit = (pod.spec.initContainers ?? []).length > 0;
  const initContainerStatuses = hasInit ? convertToAPIContainerStatuses(pod, podStatus, old.initContainerStatuses, inputs, true) : [];
  let phase = getPhase(pod.spec, [...initContainerStatuses, ...containerStatuses]);
  // A terminal phase is never reverted.
  if (old.phase === 'Failed' || old.phase === 'Succeeded') phase = old.phase;
  if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') phase = pod.status.phase;
  const s: PodStatus = { phase };
  if (phase === old.phase) {
    const reason = old.reason || pod.status?.reason;
    const message = old.message || pod.status?.message;
    if (reason) s.reason = reason;
    if (message) s.message = message;
  }
  const containersReady = generateContainersReadyCondition(pod.spec, containerStatuses, phase);
  s.conditions = [
    generatePodInitializedCondition(pod.spec, initContainerStatuses, phase),
    generatePodReadyCondition(containersReady),
    containersReady,
    { type: 'PodScheduled', status: 'True' },
  ];
  s.hostIP = inputs.hostIP;
  if (podStatus.ips.length > 0) {
    s.podIP = podStatus.ips[0];
    s.podIPs = podStatus.ips.map((ip) => ({ ip }));
  } else if (old.podIP) {
    s.podIP = old.podIP;
    s.podIPs = old.podIPs;
  }
  if (old.startTime) s.startTime = old.startTime;
  if (hasInit) s.initContainerStatuses = initContainerStatuses;
  s.containerStatuses = containerStatuses;
  s.qosClass = getPodQOS(pod.spec);
  return s;
}
