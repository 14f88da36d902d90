/**
 * `kubeGenericRuntimeManager.SyncPod` (`pkg/kubelet/kuberuntime/kuberuntime_manager.go`) far
 * enough for real workloads: `computePodActions` (new sandbox when none is ready, start
 * containers that are missing or should be restarted per restartPolicy), CrashLoopBackOff via
 * `doBackOff` (10 s doubling to 300 s, keyed per container, measured from the last exit),
 * `EnsureImageExists` (ImageStatus, PullImage with Pulling/Pulled events), CreateContainer and
 * StartContainer with Created/Started events, and the restart of a running container whose
 * liveness or startup probe failed (killed with reason Unhealthy / a probe-specific message,
 * grace override nil). Containers start one after another; no init containers, no postStart hooks.
 */
import type { Container, cri, Pod } from '@podsim/api';
import { BEHAVIOR_PREFIX } from '@podsim/api';
import {
  CONTAINER_HASH_ANNOTATION,
  CONTAINER_PRESTOP_HANDLER_ANNOTATION,
  CONTAINER_RESTART_COUNT_ANNOTATION,
  convertPodStatusToRunningPod,
  findContainerStatusByName,
  KUBERNETES_CONTAINER_NAME_LABEL,
  CONTAINER_PORTS_ANNOTATION,
  KUBERNETES_POD_NAME_LABEL,
  KUBERNETES_POD_NAMESPACE_LABEL,
  KUBERNETES_POD_UID_LABEL,
  POD_DELETION_GRACE_PERIOD_ANNOTATION,
  POD_TERMINATION_GRACE_PERIOD_ANNOTATION,
  type RuntimeContainerStatus,
  type RuntimePodStatus,
} from '../container.js';
import { shouldContainerBeRestarted } from '../status/generateStatus.js';
import { killContainer, killPod, podSyncResult, REASON_LIVENESS_PROBE, REASON_STARTUP_PROBE, type KillDeps, type PodSyncResult, type SyncResult } from './killPod.js';
import { join } from './runtimeStatus.js';

export const ERR_CRASH_LOOP_BACK_OFF = 'CrashLoopBackOff';
export const ERR_IMAGE_PULL = 'ErrImagePull';
export const ERR_IMAGE_PULL_BACK_OFF = 'ImagePullBackOff';
export const ERR_CREATE_CONTAINER = 'CreateContainerError';
export const ERR_RUN_CONTAINER = 'RunContainerError';

/** `flowcontrol.Backoff` without jitter (the kubelet's container backoff). Times in µs. */
export class Backoff {
  private readonly entries = new Map<string, { backoff: number; lastUpdate: number }>();
  constructor(
    private readonly initialUs: number,
    private readonly maxUs: number,
  ) {}

  private expired(eventTime: number, lastUpdate: number): boolean {
    return eventTime - lastUpdate > 2 * this.maxUs;
  }

  /** `IsInBackOffSince(id, eventTime)`. */
  isInBackOffSince(id: string, eventTime: number, now: number): boolean {
    const e = this.entries.get(id);
    if (!e || this.expired(now, e.lastUpdate)) return false;
    return now - eventTime < e.backoff;
  }

  /** `Next(id, eventTime)`. */
  next(id: string, eventTime: number, now: number): void {
    const e = this.entries.get(id);
    if (!e || this.expired(eventTime, e.lastUpdate)) this.entries.set(id, { backoff: this.initialUs, lastUpdate: now });
    else this.entries.set(id, { backoff: Math.min(e.backoff * 2, this.maxUs), lastUpdate: now });
  }

  /** `Get(id)`: the current backoff, µs. */
  get(id: string): number {
    return this.entries.get(id)?.backoff ?? 0;
  }

  /** `GC`: drops entries idle for 2 × max. */
  gc(now: number): void {
    for (const [k, e] of this.entries) if (now - e.lastUpdate > 2 * this.maxUs) this.entries.delete(k);
  }
}

/** The liveness and startup results computePodActions reads (`livenessManager.Get`, `startupManager.Get`). */
export interface ProbeResults {
  liveness(containerId: string): 'Success' | 'Failure' | 'Unknown' | undefined;
  startup(containerId: string): 'Success' | 'Failure' | 'Unknown' | undefined;
}

export interface RuntimeSyncDeps extends KillDeps {
  readonly backoff: Backoff;
  /** Probe results; none = no container ever failed a probe. */
  readonly probes?: ProbeResults;
}

/**
 * `generatePodSandboxConfig`: pod labels + identity labels, all pod annotations, the port mappings
 * of every container, and (`generatePodSandboxLinuxConfig` → `namespacesForPod`) the node's
 * network namespace for a hostNetwork pod.
 */
export function podSandboxConfig(pod: Pod, attempt: number): cri.PodSandboxConfig {
  const m = pod.metadata;
  const portMappings: cri.PortMapping[] = pod.spec.containers.flatMap((c) =>
    (c.ports ?? []).map((p) => ({
      protocol: (p.protocol ?? 'TCP') as 'TCP' | 'UDP' | 'SCTP',
      containerPort: p.containerPort,
      ...(p.hostPort !== undefined ? { hostPort: p.hostPort } : {}),
      ...(p.hostIP !== undefined ? { hostIp: p.hostIP } : {}),
    })),
  );
  return {
    metadata: { name: m.name!, namespace: m.namespace ?? 'default', uid: m.uid!, attempt },
    hostname: m.name,
    labels: { ...m.labels, [KUBERNETES_POD_NAME_LABEL]: m.name!, [KUBERNETES_POD_NAMESPACE_LABEL]: m.namespace ?? 'default', [KUBERNETES_POD_UID_LABEL]: m.uid! },
    annotations: { ...m.annotations },
    ...(portMappings.length > 0 ? { portMappings } : {}),
    ...(pod.spec.hostNetwork ? { linux: { securityContext: { namespaceOptions: { network: 'NODE' as const } } } } : {}),
  };
}

/**
 * The hash of each container spec object already hashed. A pod's spec objects are immutable
 * (watch bodies are shared and, under PODSIM_FREEZE, frozen), so the hash of one object never
 * changes; each periodic resync's computePodActions hashed every running container again.
 */
const containerHashes = new WeakMap<Container, string>();

/** `kubecontainer.HashContainer`: a hash of the container's spec (podsim: 32-bit over its JSON). */
export function hashContainer(c: Container): string {
  let hash = containerHashes.get(c);
  if (hash === undefined) {
    const s = JSON.stringify(c);
    let h = 0;
    for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
    hash = (h >>> 0).toString(16);
    containerHashes.set(c, hash);
  }
  return hash;
}

/** `generateContainerConfig`: kubelet labels/annotations plus the pod's `podsim.dev/*` behaviour annotations. */
export function containerConfig(pod: Pod, c: Container, restartCount: number): cri.ContainerConfig {
  const m = pod.metadata;
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.annotations ?? {})) if (k.startsWith(BEHAVIOR_PREFIX)) annotations[k] = v;
  annotations[CONTAINER_HASH_ANNOTATION] = hashContainer(c);
  annotations[CONTAINER_RESTART_COUNT_ANNOTATION] = String(restartCount);
  if (pod.spec.terminationGracePeriodSeconds !== undefined) annotations[POD_TERMINATION_GRACE_PERIOD_ANNOTATION] = String(pod.spec.terminationGracePeriodSeconds);
  if (m.deletionGracePeriodSeconds !== undefined) annotations[POD_DELETION_GRACE_PERIOD_ANNOTATION] = String(m.deletionGracePeriodSeconds);
  if (c.lifecycle?.preStop) annotations[CONTAINER_PRESTOP_HANDLER_ANNOTATION] = JSON.stringify(c.lifecycle.preStop);
  if (c.ports !== undefined) annotations[CONTAINER_PORTS_ANNOTATION] = JSON.stringify(c.ports);
  return {
    metadata: { name: c.name, attempt: restartCount },
    image: { image: c.image ?? '' },
    ...(c.command ? { command: c.command } : {}),
    ...(c.args ? { args: c.args } : {}),
    labels: { [KUBERNETES_POD_NAME_LABEL]: m.name!, [KUBERNETES_POD_NAMESPACE_LABEL]: m.namespace ?? 'default', [KUBERNETES_POD_UID_LABEL]: m.uid!, [KUBERNETES_CONTAINER_NAME_LABEL]: c.name },
    annotations,
  };
}

/** One entry of `ContainersToKill` (`containerToKillInfo`). */
export interface ContainerToKill {
  readonly containerId: string;
  readonly name: string;
  readonly message: string;
  readonly reason: string;
}

/** The plan `computePodActions` makes. */
export interface PodActions {
  readonly killPod: boolean;
  readonly createSandbox: boolean;
  readonly sandboxId: string | undefined;
  readonly attempt: number;
  readonly containersToStart: readonly Container[];
  readonly containersToKill: readonly ContainerToKill[];
  /** The init container to start next (`NextInitContainerToStart`); regular containers wait until every init container succeeded. */
  readonly nextInitContainerToStart?: Container;
}

/** `isInitContainerFailed`: exited non-zero, or in an unknown state. */
function isInitContainerFailed(s: RuntimeContainerStatus): boolean {
  return (s.state === 'exited' && s.exitCode !== 0) || s.state === 'unknown';
}

/**
 * `findNextInitContainerToRun(pod, podStatus)` → (status of a failed init container, next init
 * container to run, done). Done when there are none, when a regular container already runs, or
 * when the last init container exited 0; a failed one (newest first) is run again.
 */
export function findNextInitContainerToRun(pod: Pod, podStatus: RuntimePodStatus): { failed: RuntimeContainerStatus | undefined; next: Container | undefined; done: boolean } {
  const inits = pod.spec.initContainers ?? [];
  if (inits.length === 0) return { failed: undefined, next: undefined, done: true };
  for (const c of pod.spec.containers) {
    if (findContainerStatusByName(podStatus, c.name)?.state === 'running') return { failed: undefined, next: undefined, done: true };
  }
  for (let i = inits.length - 1; i >= 0; i--) {
    const s = findContainerStatusByName(podStatus, inits[i].name);
    if (s && isInitContainerFailed(s)) return { failed: s, next: inits[i], done: false };
  }
  for (let i = inits.length - 1; i >= 0; i--) {
    const s = findContainerStatusByName(podStatus, inits[i].name);
    if (!s) continue;
    if (s.state === 'running') return { failed: undefined, next: undefined, done: false };
    if (s.state === 'exited') {
      if (i === inits.length - 1) return { failed: undefined, next: undefined, done: true };
      return { failed: undefined, next: inits[i + 1], done: false };
    }
  }
  return { failed: undefined, next: inits[0], done: false };
}

/**
 * `computePodActions`. Init containers run one at a time,
 * in order, before any regular container; a failed one is retried unless restartPolicy is Never
 * (then the pod is killed). A running
 * container whose liveness result (else startup result) is Failure is killed and, unless the
 * restartPolicy is Never, started again; when that leaves no container to keep and none to
 * start, the whole pod is killed instead. A running container whose spec hash differs from the
 * one it was started with (`containerChanged`: e.g. `kubectl set image`) is killed with "Container
 * c definition changed, will be restarted" and started again whatever the restartPolicy.
 */
export function computePodActions(pod: Pod, podStatus: RuntimePodStatus, probes?: ProbeResults): PodActions {
  const ready = podStatus.sandboxStatuses.find((s) => s.state === 'SANDBOX_READY');
  const newest = podStatus.sandboxStatuses[0];
  const createSandbox = ready === undefined || ready !== newest;
  const attempt = newest ? newest.attempt + 1 : 0;
  if (createSandbox) {
    // A Never pod whose containers already ran gets no new sandbox: it is done.
    if ((pod.spec.restartPolicy ?? 'Always') === 'Never' && newest !== undefined && podStatus.containerStatuses.length > 0) {
      return { killPod: true, createSandbox: false, sandboxId: undefined, attempt, containersToStart: [], containersToKill: [] };
    }
    // A new sandbox runs the init containers again from the first one.
    const inits = pod.spec.initContainers ?? [];
    if (inits.length > 0) return { killPod: true, createSandbox: true, sandboxId: undefined, attempt, containersToStart: [], containersToKill: [], nextInitContainerToStart: inits[0] };
    const toStart = pod.spec.containers.filter((c) => {
      const s = findContainerStatusByName(podStatus, c.name);
      return !(s && s.state === 'exited' && pod.spec.restartPolicy === 'OnFailure' && s.exitCode === 0);
    });
    return { killPod: true, createSandbox: true, sandboxId: undefined, attempt, containersToStart: toStart, containersToKill: [] };
  }
  const init = findNextInitContainerToRun(pod, podStatus);
  if (!init.done) {
    const base = { createSandbox: false, sandboxId: ready!.id, attempt: ready!.attempt, containersToStart: [], containersToKill: [] };
    if (init.next === undefined) return { ...base, killPod: false };
    if (init.failed !== undefined && (pod.spec.restartPolicy ?? 'Always') === 'Never') return { ...base, killPod: true, sandboxId: undefined };
    return { ...base, killPod: false, nextInitContainerToStart: init.next };
  }
  const toStart: Container[] = [];
  const toKill: ContainerToKill[] = [];
  const restart = (pod.spec.restartPolicy ?? 'Always') !== 'Never';
  let keepCount = 0;
  for (const c of pod.spec.containers) {
    const s = findContainerStatusByName(podStatus, c.name);
    if (!s || s.state !== 'running') {
      if (shouldContainerBeRestarted(c, pod, podStatus)) toStart.push(c);
      continue;
    }
    let message: string;
    let reason: string;
    let restartIt = restart;
    if (s.hash !== undefined && s.hash !== hashContainer(c)) {
      message = `Container ${c.name} definition changed`;
      reason = '';
      // Restart regardless of the restart policy because the container spec changed.
      restartIt = true;
    } else if (probes?.liveness(s.id) === 'Failure') {
      message = `Container ${c.name} failed liveness probe`;
      reason = REASON_LIVENESS_PROBE;
    } else if (probes?.startup(s.id) === 'Failure') {
      message = `Container ${c.name} failed startup probe`;
      reason = REASON_STARTUP_PROBE;
    } else {
      keepCount++;
      continue;
    }
    if (restartIt) {
      message += ', will be restarted';
      toStart.push(c);
    }
    toKill.push({ containerId: s.id, name: c.name, message, reason });
  }
  if (toKill.length > 0 && keepCount === 0 && toStart.length === 0) {
    // Nothing left to run: kill the whole pod (its sandbox too), as upstream does.
    return { killPod: true, createSandbox: false, sandboxId: undefined, attempt: ready!.attempt, containersToStart: [], containersToKill: [] };
  }
  return { killPod: false, createSandbox: false, sandboxId: ready!.id, attempt: ready!.attempt, containersToStart: toStart, containersToKill: toKill };
}

/**
 * `SyncPod(pod, podStatus, pullSecrets, backOff)`. `done` gets the per-step results (a backoff
 * shows up as a StartContainer result with error CrashLoopBackOff).
 */
export function syncPodRuntime(deps: RuntimeSyncDeps, pod: Pod, podStatus: RuntimePodStatus, done: (r: PodSyncResult, messages: Map<string, string>) => void): void {
  const { env } = deps;
  const actions = computePodActions(pod, podStatus, deps.probes);
  // Step 1 of SyncPod: a new sandbox replacing an existing one (none READY: after a reboot, its
  // task is gone) is announced; a pod's first sandbox is not.
  if (actions.createSandbox && podStatus.sandboxStatuses.length > 0) {
    deps.recorder.event(pod, 'Normal', 'SandboxChanged', 'Pod sandbox changed, it will be killed and re-created.');
  }
  const results: SyncResult[] = [];
  const messages = new Map<string, string>();
  const finish = () => done(podSyncResult(results), messages);
  // Step 6 starts the next init container, step 7 the regular ones (computePodActions never
  // asks for both in one sync).
  const toStart = () => (actions.nextInitContainerToStart ? [actions.nextInitContainerToStart] : actions.containersToStart);
  const afterKill = () => {
    if (actions.createSandbox) {
      const cfg = podSandboxConfig(pod, actions.attempt);
      env.cri({ type: 'RunPodSandbox', config: cfg }, (r) => {
        if (r.error || !r.podSandboxId) {
          results.push({ action: 'CreatePodSandbox', target: pod.metadata.uid!, error: r.error?.message ?? 'no sandbox id' });
          deps.recorder.event(pod, 'Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${r.error?.message ?? ''}`);
          return finish();
        }
        results.push({ action: 'ConfigPodSandbox', target: r.podSandboxId });
        startContainers(deps, pod, podStatus, r.podSandboxId, cfg, toStart(), results, messages, finish);
      });
    } else if (actions.sandboxId !== undefined) {
      const sandboxId = actions.sandboxId;
      // Step 3 of SyncPod: kill the containers not to keep, all in parallel, grace override nil.
      let killFailed = false;
      const killed = join(actions.containersToKill.length, () => {
        // A failed kill ends this SyncPod; the next sync tries again.
        if (killFailed) return finish();
        // Step 5 of SyncPod always records a ConfigPodSandbox result.
        results.push({ action: 'ConfigPodSandbox', target: sandboxId });
        // generatePodSandboxConfig (a pure function of the pod and the attempt) is only read by
        // the starts; the periodic resync of a running pod starts nothing and skips it.
        const starts = toStart();
        if (starts.length === 0) return finish();
        startContainers(deps, pod, podStatus, sandboxId, podSandboxConfig(pod, actions.attempt), starts, results, messages, finish);
      });
      for (const k of actions.containersToKill) {
        killContainer(deps, pod, k.containerId, k.name, k.message, undefined, (err) => {
          results.push({ action: 'KillContainer', target: k.name, ...(err !== undefined ? { error: err } : {}) });
          if (err !== undefined) killFailed = true;
          killed();
        }, k.reason);
      }
    } else finish();
  };
  const running = convertPodStatusToRunningPod(podStatus);
  if (actions.killPod && (running.containers.length > 0 || running.sandboxes.some((s) => s.state === 'SANDBOX_READY'))) {
    killPod(deps, pod, running, undefined, (r) => {
      results.push(...r.results);
      if (r.error) return finish();
      afterKill();
    });
  } else afterKill();
}

function startContainers(
  deps: RuntimeSyncDeps,
  pod: Pod,
  podStatus: RuntimePodStatus,
  sandboxId: string,
  sandboxConfig: cri.PodSandboxConfig,
  containers: readonly Container[],
  results: SyncResult[],
  messages: Map<string, string>,
  done: () => void,
): void {
  const { env, recorder } = deps;
  const uid = pod.metadata.uid!;
  const fail = (c: Container, reason: string, message: string) => {
    results.push({ action: 'StartContainer', target: c.name, error: reason });
    messages.set(c.name, message);
  };
  const next = (i: number) => {
    if (i >= containers.length) return done();
    const c = containers[i];
    const isInit = (pod.spec.initContainers ?? []).some((x) => x.name === c.name);
    const ref = isInit ? `spec.initContainers{${c.name}}` : `spec.containers{${c.name}}`;
    // doBackOff: only when the newest container of that name has exited (not when it was just
    // killed for a failed probe in this sync), measured from its finish.
    const newest = findContainerStatusByName(podStatus, c.name);
    const exited = newest?.state === 'exited' ? newest : undefined;
    if (exited) {
      const key = `${uid}/${c.name}`;
      if (deps.backoff.isInBackOffSince(key, exited.finishedAt, env.now())) {
        recorder.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container', ref);
        fail(c, ERR_CRASH_LOOP_BACK_OFF, `back-off ${Math.round(deps.backoff.get(key) / 1_000_000)}s restarting failed container=${c.name} pod=${pod.metadata.name}_${pod.metadata.namespace}(${uid})`);
        return next(i + 1);
      }
      deps.backoff.next(key, exited.finishedAt, env.now());
    }
    const prev = findContainerStatusByName(podStatus, c.name);
    const restartCount = prev ? prev.restartCount + 1 : 0;
    const image = c.image ?? '';
    const create = () => {
      env.cri({ type: 'CreateContainer', podSandboxId: sandboxId, config: containerConfig(pod, c, restartCount), sandboxConfig }, (cr) => {
        if (cr.error || !cr.containerId) {
          recorder.event(pod, 'Warning', 'Failed', `Error: ${cr.error?.message ?? 'no container id'}`, ref);
          fail(c, ERR_CREATE_CONTAINER, cr.error?.message ?? '');
          return next(i + 1);
        }
        recorder.event(pod, 'Normal', 'Created', `Created container ${c.name}`, ref);
        env.cri({ type: 'StartContainer', containerId: cr.containerId }, (sr) => {
          if (sr.error) {
            recorder.event(pod, 'Warning', 'Failed', `Error: ${sr.error.message}`, ref);
            fail(c, ERR_RUN_CONTAINER, sr.error.message);
            return next(i + 1);
          }
          recorder.event(pod, 'Normal', 'Started', `Started container ${c.name}`, ref);
          results.push({ action: 'StartContainer', target: c.name });
          next(i + 1);
        });
      });
    };
    // EnsureImageExists.
    env.cri({ type: 'ImageStatus', image: { image } }, (is) => {
      if (is.image && c.imagePullPolicy !== 'Always') {
        recorder.event(pod, 'Normal', 'Pulled', `Container image "${image}" already present on machine`, ref);
        return create();
      }
      recorder.event(pod, 'Normal', 'Pulling', `Pulling image "${image}"`, ref);
      const start = env.now();
      env.cri({ type: 'PullImage', image: { image }, sandboxConfig }, (pr) => {
        if (pr.error) {
          recorder.event(pod, 'Warning', 'Failed', `Failed to pull image "${image}": ${pr.error.message}`, ref);
          fail(c, ERR_IMAGE_PULL, pr.error.message);
          return next(i + 1);
        }
        recorder.event(pod, 'Normal', 'Pulled', `Successfully pulled image "${image}" in ${((env.now() - start) / 1_000_000).toFixed(3)}s`, ref);
        create();
      });
    });
  };
  next(0);
}
