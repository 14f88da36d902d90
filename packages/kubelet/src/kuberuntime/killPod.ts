/**
 * The kuberuntime kill path (spec §7): `kubeGenericRuntimeManager.KillPod` →
 * `killPodWithSyncResult` → `killContainersWithSyncResult` (one goroutine per running container,
 * all in parallel) → `killContainer`; then `StopPodSandbox` for every sandbox once all container
 * kills returned (`pkg/kubelet/kuberuntime/kuberuntime_manager.go`, `kuberuntime_container.go`).
 *
 * killContainer keeps the v1.22.8 order: base grace from dgps, else TGPS (start 2); `Killing`
 * event; preStop (exec via ExecSync, httpGet simulated) waited for at most that grace, the hook
 * running on after the wait is cut; grace −= whole elapsed seconds; floor
 * `minimumGracePeriodInSeconds` 2; **then the override replaces all of that**; StopContainer.
 * The pod worker always passes an override, hence C01/C02 (up to 2 × grace) and C05 (1 s, not 2).
 */
import {
  parseBehaviorAnnotations,
  resolveContainerBehavior,
  sampleUs,
  type LifecycleHandler,
  type Pod,
} from '@podsim/api';
import type { KubeletEnv } from '../env.js';
import type { EventRecorder } from '../events.js';
import { restoreSpecsFromContainerAnnotations, type RuntimePod } from '../container.js';
import { join } from './runtimeStatus.js';

export const MINIMUM_GRACE_PERIOD_IN_SECONDS = 2;
/** `reasonLivenessProbe` / `reasonStartupProbe` / `reasonUnknown` of `kuberuntime_container.go`. */
export const REASON_LIVENESS_PROBE = 'LivenessProbe';
export const REASON_STARTUP_PROBE = 'StartupProbe';
export const REASON_UNKNOWN = 'Unknown';

/** One step of a multi-step sync (`kubecontainer.SyncResult`). */
export interface SyncResult {
  readonly action: 'KillContainer' | 'KillPodSandbox' | 'StartContainer' | 'CreatePodSandbox' | 'ConfigPodSandbox';
  readonly target: string;
  readonly error?: string;
}

/** `kubecontainer.PodSyncResult`: per-step results; `error` aggregates the failed steps. */
export interface PodSyncResult {
  readonly results: readonly SyncResult[];
  readonly error: string | undefined;
}

export function podSyncResult(results: readonly SyncResult[]): PodSyncResult {
  const failed = results.filter((r) => r.error !== undefined);
  return { results, error: failed.length === 0 ? undefined : failed.map((r) => `failed to "${r.action}" for "${r.target}": ${r.error}`).join('; ') };
}

export interface KillDeps {
  readonly env: KubeletEnv;
  readonly recorder: EventRecorder;
  readonly traceContainerSpans: boolean;
  /** Span ids for the kill traces, unique per kubelet (not per thread: traces must not depend on placement). */
  readonly spans: { next: number };
  /** Test-only planted bug (KubeletConfig.plantedBugs `skipPreStopWait`): StopContainer at once, without waiting for the preStop hook. */
  readonly skipPreStopWait?: boolean;
  /**
   * Feature gate ProbeTerminationGracePeriod (beta and off by default in 1.22,
   * `pkg/features/kube_features.go`): a probe-level terminationGracePeriodSeconds replaces the
   * pod's for a container killed after that probe failed.
   */
  readonly probeTerminationGracePeriod?: boolean;
}
const podKey = (p: Pod) => `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`;

/**
 * `KillPod(pod, runningPod, gracePeriodOverride)`. `gracePeriodOverride` in seconds (undefined
 * = nil). `done` gets the per-step results once every container kill and sandbox stop returned.
 */
export function killPod(deps: KillDeps, pod: Pod, runningPod: RuntimePod, gracePeriodOverride: number | undefined, done: (r: PodSyncResult) => void): void {
  const { env } = deps;
  const span = ++deps.spans.next;
  const uid = runningPod.uid || pod.metadata.uid!;
  const traced = env.tracing('kubelet.killPod');
  // The spec grace rides along (data only, not digested): the grace-only-shrinks-kubelet checker
  // allows a grace to grow only back to it, after a force delete (calculateEffectiveGracePeriod).
  const tgps = pod.spec.terminationGracePeriodSeconds;
  if (traced) {
    env.trace('kubelet.killPod', `killPod ${podKey(pod)} grace=${gracePeriodOverride ?? 'nil'} B`, {
      podUid: uid,
      pod: podKey(pod),
      gracePeriod: gracePeriodOverride,
      ...(tgps !== undefined ? { terminationGracePeriodSeconds: tgps } : {}),
      ph: 'B',
      span,
    });
  }
  const results: SyncResult[] = [];
  const containersDone = join(runningPod.containers.length, () => {
    // StopPodSandbox for each sandbox, one after another, after every container returned.
    const sandboxes = runningPod.sandboxes;
    const next = (i: number) => {
      if (i >= sandboxes.length) {
        const r = podSyncResult(results);
        if (traced) env.trace('kubelet.killPod', `killPod ${podKey(pod)} E${r.error ? ' error' : ''}`, { podUid: uid, pod: podKey(pod), gracePeriod: gracePeriodOverride, ph: 'E', span });
        return done(r);
      }
      env.cri({ type: 'StopPodSandbox', podSandboxId: sandboxes[i].id }, (res) => {
        const err = res.error && res.error.code !== 'NotFound' ? res.error.message : undefined;
        results.push({ action: 'KillPodSandbox', target: sandboxes[i].id, ...(err !== undefined ? { error: err } : {}) });
        next(i + 1);
      });
    };
    next(0);
  });
  for (const c of runningPod.containers) {
    killContainer(deps, pod, c.id, c.name, '', gracePeriodOverride, (err) => {
      results.push({ action: 'KillContainer', target: c.name, ...(err !== undefined ? { error: err } : {}) });
      containersDone();
    });
  }
}

interface KillSpec {
  readonly pod: Pod;
  readonly preStop: LifecycleHandler | undefined;
  readonly dgps: number | undefined;
  readonly tgps: number | undefined;
  /** The probe-level terminationGracePeriodSeconds for this kill's reason, if any. */
  readonly probeTgps?: number | undefined;
}

/**
 * `killContainer(pod, containerID, containerName, message, reason, gracePeriodOverride)`.
 * `reason` is {@link REASON_LIVENESS_PROBE}, {@link REASON_STARTUP_PROBE} or (default)
 * {@link REASON_UNKNOWN}. `done(undefined)` on success (also when the container was already
 * gone), else the error.
 */
export function killContainer(
  deps: KillDeps,
  pod: Pod,
  containerId: string,
  containerName: string,
  message: string,
  gracePeriodOverride: number | undefined,
  done: (err: string | undefined) => void,
  reason: string = REASON_UNKNOWN,
): void {
  // `GetContainerSpec`: regular containers, then init containers.
  const spec = pod.spec.containers.find((c) => c.name === containerName) ?? pod.spec.initContainers?.find((c) => c.name === containerName);
  if (spec) {
    const probe = reason === REASON_LIVENESS_PROBE ? spec.livenessProbe : reason === REASON_STARTUP_PROBE ? spec.startupProbe : undefined;
    const probeTgps = deps.probeTerminationGracePeriod ? probe?.terminationGracePeriodSeconds : undefined;
    return killWithSpec(deps, { pod, preStop: spec.lifecycle?.preStop, dgps: pod.metadata.deletionGracePeriodSeconds, tgps: pod.spec.terminationGracePeriodSeconds, probeTgps }, containerId, containerName, message, gracePeriodOverride, done);
  }
  // restoreSpecsFromContainerLabels: the pod spec is unknown (orphan after a kubelet restart).
  deps.env.cri({ type: 'ContainerStatus', containerId }, (res) => {
    if (!res.status) return done(`failed to get containerStatus ${containerId}: ${res.error?.message ?? 'unknown'}`);
    const r = restoreSpecsFromContainerAnnotations(res.status.annotations);
    const restoredPod: Pod = {
      ...pod,
      metadata: { ...pod.metadata, annotations: { ...res.status.annotations, ...pod.metadata.annotations }, ...(r.deletionGracePeriodSeconds !== undefined ? { deletionGracePeriodSeconds: r.deletionGracePeriodSeconds } : {}) },
    };
    killWithSpec(deps, { pod: restoredPod, preStop: r.preStop, dgps: r.deletionGracePeriodSeconds, tgps: r.terminationGracePeriodSeconds }, containerId, containerName, message, gracePeriodOverride, done);
  });
}

function killWithSpec(
  deps: KillDeps,
  k: KillSpec,
  containerId: string,
  containerName: string,
  message: string,
  gracePeriodOverride: number | undefined,
  done: (err: string | undefined) => void,
): void {
  const { env } = deps;
  const pod = k.pod;
  const uid = pod.metadata.uid!;
  let gracePeriod = MINIMUM_GRACE_PERIOD_IN_SECONDS;
  if (k.dgps !== undefined) gracePeriod = k.dgps;
  else if (k.tgps !== undefined) {
    // The probe-level value counts only under the pod-level one, as upstream's switch nests it.
    gracePeriod = k.probeTgps ?? k.tgps;
  }
  const span = ++deps.spans.next;
  const traced = deps.traceContainerSpans && env.tracing('kubelet.killContainer');
  if (traced) {
    env.trace('kubelet.killContainer', `killContainer ${podKey(pod)}/${containerName} grace=${gracePeriod} B`, { podUid: uid, pod: podKey(pod), containerId, container: containerName, gracePeriod, ph: 'B', span, ...(message ? { message } : {}) });
  }
  deps.recorder.event(pod, 'Normal', 'Killing', message || `Stopping container ${containerName}`, `spec.containers{${containerName}}`);

  const stop = () => {
    if (gracePeriod < MINIMUM_GRACE_PERIOD_IN_SECONDS) gracePeriod = MINIMUM_GRACE_PERIOD_IN_SECONDS;
    // v1.22.8: the override replaces the preStop-reduced, floored value.
    if (gracePeriodOverride !== undefined) gracePeriod = gracePeriodOverride;
    const timeout = gracePeriod;
    env.cri({ type: 'StopContainer', containerId, timeout }, (res) => {
      const err = res.error && res.error.code !== 'NotFound' ? `rpc error: ${res.error.code} desc = ${res.error.message}` : undefined;
      if (traced) {
        env.trace('kubelet.killContainer', `killContainer ${podKey(pod)}/${containerName} timeout=${timeout} E${err ? ' error' : ''}`, { podUid: uid, pod: podKey(pod), containerId, container: containerName, gracePeriod: timeout, ph: 'E', span });
      }
      done(err);
    });
  };
  if (k.preStop && gracePeriod > 0 && deps.skipPreStopWait) {
    // The planted bug: the hook runs (and its wait span stays open) while SIGTERM goes out.
    executePreStopHook(deps, pod, containerId, containerName, k.preStop, gracePeriod, () => {});
    stop();
  } else if (k.preStop && gracePeriod > 0) {
    executePreStopHook(deps, pod, containerId, containerName, k.preStop, gracePeriod, (elapsed) => {
      gracePeriod -= elapsed;
      stop();
    });
  } else {
    stop();
  }
}

/**
 * `executePreStopHook`: runs the hook and waits until it finishes or `gracePeriod` seconds
 * pass; `done` gets the whole seconds elapsed (truncated). A hook cut off keeps running; a
 * failing hook records `FailedPreStopHook` whenever it ends.
 */
export function executePreStopHook(
  deps: KillDeps,
  pod: Pod,
  containerId: string,
  containerName: string,
  handler: LifecycleHandler,
  gracePeriod: number,
  done: (elapsedSeconds: number) => void,
): void {
  const { env } = deps;
  const start = env.now();
  const uid = pod.metadata.uid!;
  const span = ++deps.spans.next;
  const traced = deps.traceContainerSpans && env.tracing('kubelet.preStop');
  if (traced) env.trace('kubelet.preStop', `preStop ${podKey(pod)}/${containerName} B`, { podUid: uid, container: containerName, ph: 'B', span });
  let waiting = true;
  const finishWait = (timedOut: boolean) => {
    if (!waiting) return;
    waiting = false;
    if (traced) env.trace('kubelet.preStop', `preStop ${podKey(pod)}/${containerName} E${timedOut ? ' timedOut' : ''}`, { podUid: uid, container: containerName, ph: 'E', span, timedOut });
    done(Math.floor((env.now() - start) / 1_000_000));
  };
  const timer = env.setTimer(gracePeriod * 1_000_000, () => finishWait(true));
  const hookEnded = (failure: string | undefined) => {
    if (failure !== undefined) deps.recorder.event(pod, 'Warning', 'FailedPreStopHook', failure, `spec.containers{${containerName}}`);
    if (waiting) env.cancelTimer(timer);
    finishWait(false);
  };
  if (handler.exec) {
    const cmd = handler.exec.command ?? [];
    env.cri({ type: 'ExecSync', containerId, cmd, timeout: 0 }, (res) => {
      if (res.error) return hookEnded(`Exec lifecycle hook (${cmd.join(' ')}) for Container "${containerName}" in Pod "${podKey(pod)}" failed - error: ${res.error.message}`);
      if (res.exitCode !== 0) return hookEnded(`Exec lifecycle hook (${cmd.join(' ')}) for Container "${containerName}" in Pod "${podKey(pod)}" failed - error: command '${cmd.join(' ')}' exited with ${res.exitCode}: ${res.stderr}`);
      hookEnded(undefined);
    });
  } else if (handler.httpGet) {
    // The kubelet itself performs the GET against the pod; podsim takes its duration from the
    // container's `podsim.dev/exec-duration` behaviour (0 when unset) and lets it succeed.
    const b = resolveContainerBehavior(parseBehaviorAnnotations(pod.metadata.annotations).behavior, containerName);
    const d = b.execDuration ? sampleUs(b.execDuration, env.stream('prestop-http')) : 0;
    env.setTimer(d, () => hookEnded(undefined));
  } else {
    hookEnded('Cannot run handler: invalid handler');
  }
}
