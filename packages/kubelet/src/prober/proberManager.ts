/**
 * Container probing: `pkg/kubelet/prober/prober_manager.go`, `worker.go` and `prober.go`
 * (v1.22.8). One worker per container and probe type (readiness, liveness, startup): after a
 * random fraction of the period it probes every `periodSeconds`, exec probes through `ExecSync`
 * and httpGet/tcpSocket through the runtime's `ProbeContainer`; a result counts once it repeats
 * `successThreshold` / `failureThreshold` times, and goes to that type's results manager
 * (`readinessManager`, `livenessManager`, `startupManager`), whose changes the kubelet hears.
 * Kept from `worker.doProbe`: the initial values (readiness Failure, liveness Success, startup
 * Unknown), `onHold` after a liveness/startup Failure until a new container ID, liveness and
 * readiness waiting for `started`, the startup worker idling once started, and the quiet stop of
 * liveness/startup once the pod has a deletionTimestamp (readiness keeps probing until
 * HandlePodCleanups removes the terminating pod's workers, see kubelet.ts). Each failed
 * probe records an `Unhealthy` event, as `prober.probe` does. Simplifications: no
 * `runProbeWithRetries` (one attempt per tick), no Warning result, httpGet/tcpSocket outputs are
 * fixed strings.
 */
import type { Container, Pod, PodStatus, Probe } from '@podsim/api';
import type { KubeletEnv } from '../env.js';

/** `probeType`. */
export type ProbeType = 'readiness' | 'liveness' | 'startup';
export const PROBE_TYPES: readonly ProbeType[] = ['readiness', 'liveness', 'startup'];

/** `results.Result`. */
export type ProbeResult = 'Success' | 'Failure' | 'Unknown';

const INITIAL_VALUE: Readonly<Record<ProbeType, ProbeResult>> = { readiness: 'Failure', liveness: 'Success', startup: 'Unknown' };
const PROBE_TITLE: Readonly<Record<ProbeType, string>> = { readiness: 'Readiness', liveness: 'Liveness', startup: 'Startup' };

interface Worker {
  readonly pod: Pod;
  readonly container: Container;
  readonly probeType: ProbeType;
  readonly spec: Probe;
  containerId: string;
  lastResult: ProbeResult | undefined;
  resultRun: number;
  onHold: boolean;
  timer: number | undefined;
  stopped: boolean;
}

export interface ProberDeps {
  readonly env: KubeletEnv;
  /** `statusManager.GetPodStatus`. */
  getPodStatus(uid: string): PodStatus | undefined;
  /**
   * The kubelet's current pod object for the UID, if any. Upstream's worker keeps the pointer
   * AddPod got, and the config source (`checkAndUpdatePod`) overwrites that object's spec,
   * deletionTimestamp and status in place, so the worker sees later updates; podsim's objects
   * are immutable, hence this lookup.
   */
  getPod?(uid: string): Pod | undefined;
  /**
   * A result changed (`resultsManager.Updates()` of the worker's type). `pod` is the pod the
   * worker was created with; the kubelet looks the current one up by UID.
   */
  onResult(probeType: ProbeType, pod: Pod, containerId: string, result: ProbeResult): void;
  /** `recorder.Eventf` for the `Unhealthy` events; `fieldPath` is `spec.containers{name}`. */
  event(pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string, fieldPath: string): void;
}

function probeOf(c: Container, t: ProbeType): Probe | undefined {
  return t === 'readiness' ? c.readinessProbe : t === 'liveness' ? c.livenessProbe : c.startupProbe;
}

export class ProberManager {
  private readonly workers = new Map<string, Worker>();
  /** Per probe type: containerId → result (`readinessManager`, `livenessManager`, `startupManager`). */
  private readonly results: Readonly<Record<ProbeType, Map<string, ProbeResult>>> = { readiness: new Map(), liveness: new Map(), startup: new Map() };
  private readonly byPod = new Map<string, string[]>();

  constructor(private readonly deps: ProberDeps) {}

  /** `AddPod`: starts a worker per container and probe it has (readiness, liveness, startup). */
  addPod(pod: Pod): void {
    const uid = pod.metadata.uid!;
    for (const c of pod.spec.containers) {
      for (const probeType of PROBE_TYPES) {
        const spec = probeOf(c, probeType);
        if (!spec) continue;
        const key = `${uid}/${c.name}/${probeType}`;
        if (this.workers.has(key)) continue;
        const w: Worker = { pod, container: c, probeType, spec, containerId: '', lastResult: undefined, resultRun: 0, onHold: false, timer: undefined, stopped: false };
        this.workers.set(key, w);
        const keys = this.byPod.get(uid) ?? [];
        keys.push(key);
        this.byPod.set(uid, keys);
        const period = (spec.periodSeconds ?? 10) * 1_000_000;
        w.timer = this.deps.env.setTimer(Math.floor(this.deps.env.stream('probe-start').float() * period), () => this.tick(w, period));
      }
    }
  }

  /** `RemovePod`: stops the pod's workers and forgets their results. */
  removePod(uid: string): void {
    for (const key of this.byPod.get(uid) ?? []) {
      const w = this.workers.get(key);
      if (w) this.stopWorker(key, w);
    }
    this.byPod.delete(uid);
  }

  /** `CleanupPods(desiredPods)`: removes the workers of pods `keep` does not accept (in the order they were added). */
  cleanupPods(keep: (uid: string) => boolean): void {
    // removePod deletes only the entry being visited, which a Map iteration allows.
    for (const uid of this.byPod.keys()) if (!keep(uid)) this.removePod(uid);
  }

  /** Has the pod a worker for that container and probe type (`getWorker`)? */
  hasWorker(uid: string, containerName: string, probeType: ProbeType): boolean {
    return this.workers.has(`${uid}/${containerName}/${probeType}`);
  }

  /** `resultsManager.Get(containerID)` of one probe type. */
  get(probeType: ProbeType, containerId: string): ProbeResult | undefined {
    return this.results[probeType].get(containerId);
  }

  /**
   * Readiness as `probeManager.UpdatePodStatus` computes it for a running, started container:
   * the result (Success = true), else whether no readiness worker exists.
   */
  readiness(uid: string, containerName: string, containerId: string): boolean {
    const r = this.results.readiness.get(containerId);
    if (r !== undefined) return r === 'Success';
    return !this.hasWorker(uid, containerName, 'readiness');
  }

  /**
   * `started` as `probeManager.UpdatePodStatus` computes it for a running container: the
   * startup result (Success = true), else whether no startup worker exists.
   */
  started(uid: string, containerName: string, containerId: string): boolean {
    const r = this.results.startup.get(containerId);
    if (r !== undefined) return r === 'Success';
    return !this.hasWorker(uid, containerName, 'startup');
  }

  private stopWorker(key: string, w: Worker): void {
    w.stopped = true;
    if (w.timer !== undefined) this.deps.env.cancelTimer(w.timer);
    w.timer = undefined;
    // The deferred clean-up of `worker.run`: forget the result of the last container.
    if (w.containerId) this.results[w.probeType].delete(w.containerId);
    this.workers.delete(key);
  }

  /** `resultsManager.Set`: an update goes out only when the cached result changes. */
  private set(w: Worker, result: ProbeResult): void {
    const m = this.results[w.probeType];
    const prev = m.get(w.containerId);
    m.set(w.containerId, result);
    if (prev !== result) this.deps.onResult(w.probeType, w.pod, w.containerId, result);
  }

  private tick(w: Worker, period: number): void {
    if (w.stopped) return;
    w.timer = undefined;
    this.doProbe(w, (keepGoing) => {
      if (w.stopped) return;
      if (keepGoing) w.timer = this.deps.env.setTimer(period, () => this.tick(w, period));
      else {
        // The worker's goroutine ends: it removes itself and its result.
        const key = `${w.pod.metadata.uid!}/${w.container.name}/${w.probeType}`;
        this.stopWorker(key, w);
        const keys = this.byPod.get(w.pod.metadata.uid!)?.filter((k) => k !== key);
        if (keys && keys.length > 0) this.byPod.set(w.pod.metadata.uid!, keys);
        else this.byPod.delete(w.pod.metadata.uid!);
      }
    });
  }

  /** `worker.doProbe`: `next(keepGoing)`. */
  private doProbe(w: Worker, next: (keepGoing: boolean) => void): void {
    const env = this.deps.env;
    const uid = w.pod.metadata.uid!;
    const status = this.deps.getPodStatus(uid);
    if (!status) return next(true);
    if (status.phase === 'Failed' || status.phase === 'Succeeded') return next(false);
    const c = status.containerStatuses?.find((s) => s.name === w.container.name);
    if (!c || !c.containerID) return next(true);
    const cid = c.containerID.replace(/^containerd:\/\//, '');
    if (w.containerId !== cid) {
      if (w.containerId) this.results[w.probeType].delete(w.containerId);
      w.containerId = cid;
      this.set(w, INITIAL_VALUE[w.probeType]);
      // A new container: resume probing.
      w.onHold = false;
    }
    if (w.onHold) return next(true);
    if (!c.state.running) {
      this.set(w, 'Failure');
      return next(!c.state.terminated || w.pod.spec.restartPolicy !== 'Never');
    }
    // Graceful shutdown: once the kubelet has seen the deletion, liveness and startup set a
    // last Success ("quiet shutdown") and stop; readiness goes on.
    const pod = this.deps.getPod?.(uid) ?? w.pod;
    if (pod.metadata.deletionTimestamp !== undefined && (w.probeType === 'liveness' || w.probeType === 'startup')) {
      this.set(w, 'Success');
      return next(false);
    }
    const probe = w.spec;
    const startedAt = c.state.running.startedAt ? env.clock.parse(c.state.running.startedAt) ?? 0 : 0;
    if (Math.floor((env.now() - startedAt) / 1_000_000) < (probe.initialDelaySeconds ?? 0)) return next(true);
    if (c.started === true) {
      // The startup worker idles once the container started (and resumes for a new container).
      if (w.probeType === 'startup') return next(true);
    } else if (w.probeType !== 'startup') {
      // Liveness and readiness wait for the container to have started.
      return next(true);
    }
    const onResult = (result: ProbeResult | undefined, output: string) => {
      if (w.stopped) return next(true);
      // A prober error: the result is thrown away.
      if (result === undefined) return next(true);
      if (result === 'Failure') {
        this.deps.event(w.pod, 'Warning', 'Unhealthy', `${PROBE_TITLE[w.probeType]} probe failed: ${output}`, `spec.containers{${w.container.name}}`);
      }
      if (w.lastResult === result) w.resultRun++;
      else {
        w.lastResult = result;
        w.resultRun = 1;
      }
      if ((result === 'Failure' && w.resultRun < (probe.failureThreshold ?? 3)) || (result === 'Success' && w.resultRun < (probe.successThreshold ?? 1))) return next(true);
      this.set(w, result);
      if ((w.probeType === 'liveness' || w.probeType === 'startup') && result === 'Failure') {
        // The container will be restarted: stop probing until a new container ID shows up.
        w.onHold = true;
        w.resultRun = 0;
      }
      next(true);
    };
    runProbe(env, w.probeType, probe, cid, onResult);
  }
}

/**
 * `prober.runProbe`: exec through `ExecSync` (exit 0 = Success; a timeout is a Failure, as with
 * the ExecProbeTimeout gate on by default in 1.22; any other CRI error a prober error), httpGet
 * and tcpSocket through `ProbeContainer`. `done(result, output)`, result undefined = error.
 */
export function runProbe(env: KubeletEnv, probeType: ProbeType, probe: Probe, containerId: string, done: (result: ProbeResult | undefined, output: string) => void): void {
  if (probe.exec) {
    const cmd = probe.exec.command ?? [];
    const timeout = probe.timeoutSeconds ?? 1;
    env.cri({ type: 'ExecSync', containerId, cmd, timeout }, (r) => {
      if (r.error) {
        if (r.error.code === 'DeadlineExceeded') return done('Failure', `command ${JSON.stringify(cmd.join(' '))} timed out`);
        return done(undefined, r.error.message);
      }
      done(r.exitCode === 0 ? 'Success' : 'Failure', `${r.stdout ?? ''}${r.stderr ?? ''}`);
    });
  } else if (probe.httpGet || probe.tcpSocket) {
    const handler = probe.httpGet ? 'httpGet' : 'tcpSocket';
    env.cri({ type: 'ProbeContainer', containerId, probe: probeType, handler }, (r) => {
      const ok = !r.error && r.success;
      const output = handler === 'httpGet' ? 'HTTP probe failed with statuscode: 503' : 'dial tcp: connect: connection refused';
      done(ok ? 'Success' : 'Failure', ok ? '' : output);
    });
  } else {
    done(undefined, 'missing probe handler');
  }
}
