/**
 * A small volume manager: `pkg/kubelet/volumemanager` as far as deletion needs it. Volumes of a
 * pod are mounted when it first syncs; once its worker is terminated (the desired-state
 * populator notices within `reconcilerLoopSleepPeriod` 100 ms) each volume is unmounted, an
 * attempt taking `unmountUs`; attempts that fail (C18: before `failUntilUs`) are retried with
 * the exponential backoff of nestedpendingoperations (0.5 s doubling, cap 2m2s).
 * `WaitForUnmount` polls every 300 ms up to `podAttachAndMountTimeout` (2m3s), then errors.
 */
import type { Pod } from '@podsim/api';
import type { KubeletEnv } from '../env.js';
import type { VolumeUnmountModel } from '../kubeletConfig.js';

const RECONCILER_LOOP_SLEEP_US = 100_000;
const POLL_US = 300_000;
const INITIAL_BACKOFF_US = 500_000;
const MAX_BACKOFF_US = 122_000_000;

interface PodVolumes {
  readonly mounted: Set<string>;
  unmountStartedAt: number;
  readonly pod: Pod;
}

export class VolumeManager {
  private readonly pods = new Map<string, PodVolumes>();

  constructor(
    private readonly env: KubeletEnv,
    private readonly defaultModel: VolumeUnmountModel,
    private readonly byName: Readonly<Record<string, VolumeUnmountModel>>,
    private readonly waitTimeoutUs: number,
  ) {}

  /** `WaitForAttachAndMount` (instant in podsim): the pod's volumes are mounted. */
  mount(pod: Pod): void {
    const uid = pod.metadata.uid!;
    if (this.pods.has(uid)) return;
    const vols = pod.spec.volumes ?? [];
    if (vols.length === 0) return;
    this.pods.set(uid, { mounted: new Set(vols.map((v) => v.name)), unmountStartedAt: -1, pod });
  }

  /** `podVolumesExist`. */
  podVolumesExist(uid: string): boolean {
    const p = this.pods.get(uid);
    return p !== undefined && p.mounted.size > 0;
  }

  /** The pod's worker is terminated: the populator removes it and the reconciler starts unmounting. */
  podTerminated(uid: string): void {
    const p = this.pods.get(uid);
    if (!p || p.unmountStartedAt >= 0) return;
    p.unmountStartedAt = this.env.now() + RECONCILER_LOOP_SLEEP_US;
    for (const name of p.mounted) this.env.setTimer(RECONCILER_LOOP_SLEEP_US, () => this.attempt(uid, name, INITIAL_BACKOFF_US));
  }

  private attempt(uid: string, name: string, backoffUs: number): void {
    const p = this.pods.get(uid);
    if (!p || !p.mounted.has(name)) return;
    const m = { ...this.defaultModel, ...this.byName[name] };
    this.env.setTimer(m.unmountUs ?? 0, () => {
      const failing = m.failUntilUs !== undefined && this.env.now() - p.unmountStartedAt < m.failUntilUs;
      if (failing) {
        this.env.count('kubelet.unmountFailed');
        if (this.env.tracing('kubelet.volume')) {
          this.env.trace('kubelet.volume', `UnmountVolume.TearDown failed ${name}: ${m.error ?? 'device or resource busy'}`, { podUid: uid, volume: name });
        }
        this.env.setTimer(backoffUs, () => this.attempt(uid, name, Math.min(backoffUs * 2, MAX_BACKOFF_US)));
        return;
      }
      p.mounted.delete(name);
      if (p.mounted.size === 0) this.pods.delete(uid);
    });
  }

  /** `WaitForUnmount(pod)`: `done(undefined)` once unmounted, or an error after the timeout. */
  waitForUnmount(pod: Pod, done: (err: string | undefined) => void): void {
    const uid = pod.metadata.uid!;
    const deadline = this.env.now() + this.waitTimeoutUs;
    const poll = () => {
      if (!this.podVolumesExist(uid)) return done(undefined);
      if (this.env.now() >= deadline) {
        const left = [...(this.pods.get(uid)?.mounted ?? [])];
        return done(`mounted volumes=[${left.join(' ')}]: timed out waiting for the condition`);
      }
      this.env.setTimer(Math.min(POLL_US, deadline - this.env.now()), poll);
    };
    poll();
  }
}
