/**
 * Readiness probing: `pkg/kubelet/prober/prober_manager.go` and `worker.go` (readiness only;
 * liveness/startup probes are not modelled). One worker per container with a readinessProbe:
 * after a random fraction of the period it probes every `periodSeconds`, from
 * `initialDelaySeconds` after the container started, exec probes through `ExecSync` and
 * httpGet/tcpSocket through the runtime's `ProbeContainer`; a result counts once it repeats
 * `successThreshold` / `failureThreshold` times. Changes go to the kubelet as readiness updates.
 */
import type { Container, Pod, PodStatus } from '@podsim/api';
import type { KubeletEnv } from '../env.js';

interface Worker {
  readonly pod: Pod;
  readonly container: Container;
  containerId: string;
  lastResult: boolean | undefined;
  resultRun: number;
  timer: number | undefined;
  stopped: boolean;
}

export interface ProberDeps {
  readonly env: KubeletEnv;
  /** `statusManager.GetPodStatus`. */
  getPodStatus(uid: string): PodStatus | undefined;
  /** A readiness result changed (`readinessManager.Updates()`). */
  onReadiness(pod: Pod, containerId: string, ready: boolean): void;
}

export class ProberManager {
  private readonly workers = new Map<string, Worker>();
  /** containerId → result (`readinessManager`). */
  private readonly results = new Map<string, boolean>();
  private readonly byPod = new Map<string, string[]>();

  constructor(private readonly deps: ProberDeps) {}

  /** `AddPod`: starts a worker per container with a readinessProbe. */
  addPod(pod: Pod): void {
    const uid = pod.metadata.uid!;
    for (const c of pod.spec.containers) {
      if (!c.readinessProbe) continue;
      const key = `${uid}/${c.name}`;
      if (this.workers.has(key)) continue;
      const w: Worker = { pod, container: c, containerId: '', lastResult: undefined, resultRun: 0, timer: undefined, stopped: false };
      this.workers.set(key, w);
      const keys = this.byPod.get(uid) ?? [];
      keys.push(key);
      this.byPod.set(uid, keys);
      const period = (c.readinessProbe.periodSeconds ?? 10) * 1_000_000;
      w.timer = this.deps.env.setTimer(Math.floor(this.deps.env.stream('probe-start').float() * period), () => this.tick(w, period));
    }
  }

  /** `RemovePod`: stops the pod's workers and forgets their results. */
  removePod(uid: string): void {
    for (const key of this.byPod.get(uid) ?? []) {
      const w = this.workers.get(key);
      if (!w) continue;
      w.stopped = true;
      if (w.timer !== undefined) this.deps.env.cancelTimer(w.timer);
      if (w.containerId) this.results.delete(w.containerId);
      this.workers.delete(key);
    }
    this.byPod.delete(uid);
  }

  /** `CleanupPods`: removes workers of pods not in `keep`. */
  cleanupPods(keep: ReadonlySet<string>): void {
    for (const uid of [...this.byPod.keys()]) if (!keep.has(uid)) this.removePod(uid);
  }

  /** Readiness for `probeManager.UpdatePodStatus`: the result, false before the first, undefined without a probe. */
  readiness(uid: string, containerName: string, containerId: string): boolean | undefined {
    const r = this.results.get(containerId);
    if (r !== undefined) return r;
    return this.workers.has(`${uid}/${containerName}`) ? false : undefined;
  }

  private set(w: Worker, ready: boolean): void {
    const prev = this.results.get(w.containerId);
    this.results.set(w.containerId, ready);
    if (prev !== ready) this.deps.onReadiness(w.pod, w.containerId, ready);
  }

  private tick(w: Worker, period: number): void {
    if (w.stopped) return;
    w.timer = undefined;
    this.doProbe(w, (keepGoing) => {
      if (keepGoing && !w.stopped) w.timer = this.deps.env.setTimer(period, () => this.tick(w, period));
    });
  }

  /** `doProbe`. */
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
      if (w.containerId) this.results.delete(w.containerId);
      w.containerId = cid;
      w.lastResult = undefined;
      w.resultRun = 0;
      this.set(w, false);
    }
    if (!c.state.running) {
      this.set(w, false);
      return next(!c.state.terminated || w.pod.spec.restartPolicy !== 'Never');
    }
    const probe = w.container.readinessProbe!;
    const startedAt = c.state.running.startedAt ? env.clock.parse(c.state.running.startedAt) ?? 0 : 0;
    if (Math.floor((env.now() - startedAt) / 1_000_000) < (probe.initialDelaySeconds ?? 0)) return next(true);
    const onResult = (ok: boolean | undefined) => {
      if (ok === undefined || w.stopped) return next(true); // a prober error is thrown away
      if (w.lastResult === ok) w.resultRun++;
      else {
        w.lastResult = ok;
        w.resultRun = 1;
      }
      if ((!ok && w.resultRun < (probe.failureThreshold ?? 3)) || (ok && w.resultRun < (probe.successThreshold ?? 1))) return next(true);
      this.set(w, ok);
      next(true);
    };
    if (probe.exec) {
      env.cri({ type: 'ExecSync', containerId: cid, cmd: probe.exec.command ?? [], timeout: probe.timeoutSeconds ?? 1 }, (r) => onResult(r.error ? undefined : r.exitCode === 0));
    } else if (probe.httpGet || probe.tcpSocket) {
      env.cri({ type: 'ProbeContainer', containerId: cid, probe: 'readiness', handler: probe.httpGet ? 'httpGet' : 'tcpSocket' }, (r) => onResult(r.error ? false : r.success));
    } else {
      onResult(undefined);
    }
  }
}
