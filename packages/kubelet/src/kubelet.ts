/**
 * The Kubelet: `pkg/kubelet/kubelet.go` and `kubelet_pods.go` (v1.23.13 read, 1.22 semantics;
 * spec §4, §6, §11). Wires the pod config source, the syncLoop (configCh, plegCh, the 1 s sync
 * ticker, 2 s housekeeping, readiness updates), the pod workers with their three sync
 * functions, the kuberuntime kill and sync paths, PLEG, the status manager, prober, volume and
 * cgroup models, container GC and node registration/status. Everything goes through
 * {@link KubeletEnv}; the actor shell only feeds messages and timers in.
 */
import type { ApiResult, ApiWatchEvent, Node, Pod, PodStatus } from '@podsim/api';
import { parseQuantity } from '@podsim/api';
import { ApiClient } from './apiClient.js';
import { API_SOURCE, ApiserverPodSource } from './config/apiserverSource.js';
import type { PodUpdate } from './config/podStorage.js';
import { convertPodStatusToRunningPod, type RuntimePod, type RuntimePodStatus } from './container.js';
import type { KubeletEnv } from './env.js';
import { EventRecorder } from './events.js';
import type { KubeletConfig } from './kubeletConfig.js';
import { killPod, type KillDeps } from './kuberuntime/killPod.js';
import { NodeLeaseController } from './nodeLease.js';
import { getPodStatus } from './kuberuntime/runtimeStatus.js';
import { Backoff, ERR_CRASH_LOOP_BACK_OFF, ERR_IMAGE_PULL_BACK_OFF, syncPodRuntime, type RuntimeSyncDeps } from './kuberuntime/syncPod.js';
import { GenericPLEG, type PodLifecycleEvent } from './pleg/generic.js';
import { PodCache } from './pleg/podCache.js';
import { PodWorkers, type PodSyncer, type SyncError, type SyncPodType, type WorkerContext } from './podWorkers.js';
import { ProberManager, type ProbeResult, type ProbeType } from './prober/proberManager.js';
import { generateAPIPodStatus } from './status/generateStatus.js';
import { StatusManager } from './status/statusManager.js';
import { VolumeManager } from './volumemanager/volumeManager.js';

/**
 * The node conditions the kubelet posts (`nodestatus.MemoryPressureCondition`,
 * `DiskPressureCondition`, `PIDPressureCondition`, `ReadyCondition`; times added per sync).
 */
const NODE_CONDITIONS = [
  { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
  { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
  { type: 'PIDPressure', status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
  { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
] as const;

export class Kubelet implements PodSyncer {
  readonly client: ApiClient;
  readonly recorder: EventRecorder;
  readonly source: ApiserverPodSource;
  /** `podManager`: the desired pods (UID → pod). */
  readonly podManager = new Map<string, Pod>();
  sourcesReady = false;
  readonly podCache = new PodCache();
  readonly pleg: GenericPLEG;
  readonly podWorkers: PodWorkers;
  readonly statusManager: StatusManager;
  readonly prober: ProberManager;
  readonly volumeManager: VolumeManager;
  /** Pod cgroups that exist (`pcm.Exists`). */
  readonly podCgroups = new Set<string>();
  readonly backoff: Backoff;
  /** `reasonCache`: uid → container → why it could not start. */
  readonly reasonCache = new Map<string, Map<string, { reason: string; message: string }>>();
  private readonly killDeps: KillDeps;
  /** syncPodRuntime's dependencies: the kill path's, the back-off and the probe results (built once, not per sync). */
  private readonly runtimeDeps: RuntimeSyncDeps;
  /**
   * UIDs housekeeping re-checks (see {@link handlePodCleanups}): the only pods whose answer to
   * "a running orphan?" or "a removable pod cgroup?" may have changed since the last pass —
   * those that left the pod manager, whose worker's work type changed, whose runtime pod a relist
   * rebuilt (orphans) or whose cgroup was created (cgroups) — and those found orphaned or
   * waiting for their volumes last time.
   */
  private readonly orphanSuspects = new Set<string>();
  private readonly cgroupSuspects = new Set<string>();
  /** UIDs removed from the pod manager since the last housekeeping (RemoveOrphanedStatuses looks at those). */
  private readonly removedPods = new Set<string>();
  private firstRelistDone = false;
  private nodeRegistered = false;
  private lastNodeStatusReport = -1;
  /** The Node Lease heartbeat (component-helpers lease controller). */
  readonly nodeLease: NodeLeaseController;

  constructor(
    readonly env: KubeletEnv,
    readonly config: KubeletConfig,
    watchIdPrefix: string,
  ) {
    this.client = new ApiClient(env, config.kubeAPIQPS, config.kubeAPIBurst);
    this.recorder = new EventRecorder(env, config.nodeName, config.eventsEnabled, config.eventRecordQPS, config.eventBurst);
    this.killDeps = {
      env,
      recorder: this.recorder,
      traceContainerSpans: config.traceContainerSpans,
      spans: { next: 0 },
      skipPreStopWait: config.plantedBugs.includes('skipPreStopWait'),
      probeTerminationGracePeriod: config.probeTerminationGracePeriod,
    };
    this.backoff = new Backoff(config.crashLoopBackOffInitialUs, config.crashLoopBackOffMaxUs);
    this.source = new ApiserverPodSource(this.client, env, config.nodeName, watchIdPrefix, (u) => this.onConfigUpdates(u), {
      minWatchTimeoutUs: config.minWatchTimeoutUs,
      connectionLossesUs: config.apiConnectionLossesUs,
    });
    this.pleg = new GenericPLEG(
      env,
      this.podCache,
      config.plegRelistPeriodUs,
      (evs) => this.onPlegEvents(evs),
      () => this.onFirstRelist(),
      (uid) => this.orphanSuspects.add(uid),
    );
    this.podWorkers = new PodWorkers(env, this, this.podCache, {
      resyncIntervalUs: config.syncFrequencyUs,
      backOffPeriodUs: config.backOffPeriodUs,
      onPodTerminated: (uid) => {
        this.uncount(uid);
        this.volumeManager.podTerminated(uid);
      },
      onWorkTypeChange: (uid) => this.suspect(uid),
    });
    this.statusManager = new StatusManager({
      env,
      client: this.client,
      getPodByUID: (uid) => this.podManager.get(uid),
      podResourcesAreReclaimed: (pod, status) => this.podResourcesAreReclaimed(pod, status),
      syncPeriodUs: config.statusSyncPeriodUs,
      skipUidPrecondition: config.plantedBugs.includes('skipUidPrecondition'),
      notifiesPodUpdates: true,
    });
    this.prober = new ProberManager({
      env,
      getPodStatus: (uid) => this.statusManager.getPodStatus(uid),
      getPod: (uid) => this.podManager.get(uid),
      onResult: (probeType, pod, cid, result) => this.onProbeResult(probeType, pod, cid, result),
      event: (pod, type, reason, message, fieldPath) => this.recorder.event(pod, type, reason, message, fieldPath),
    });
    this.nodeLease = new NodeLeaseController(
      {
        now: () => env.now(),
        formatMicro: (t) => env.clock.formatMicro(t),
        setTimer: (d, fn) => void env.setTimer(d, fn),
        // Its own stream, so the heartbeat leaves every other kubelet draw unchanged.
        jitter: (d, f) => env.stream('nodeLease').jitter(d, f),
        send: (req, cb) => env.api(req, cb, config.heartbeatTimeoutUs),
        onRepeatedHeartbeatFailure: () => env.count('kubelet.heartbeatFailures'),
        trace: (kind, msg, data) => env.trace(kind, msg, data),
      },
      config.nodeName,
      config.nodeLeaseDurationSeconds,
    );
    this.volumeManager = new VolumeManager(env, config.volumeUnmount, config.volumeUnmountByName, config.waitForUnmountTimeoutUs);
    this.runtimeDeps = {
      ...this.killDeps,
      backoff: this.backoff,
      probes: { liveness: (cid: string) => this.prober.get('liveness', cid), startup: (cid: string) => this.prober.get('startup', cid) },
    };
  }

  // ---- start-up -----------------------------------------------------------------------------

  /** `Run`: node registration, then the pod source; PLEG, status manager and the loops. */
  start(): void {
    this.registerWithAPIServer();
    this.pleg.start();
    this.statusManager.start();
    const every = (period: number, fn: () => void) => {
      const tick = () => {
        fn();
        this.env.setTimer(period, tick);
      };
      this.env.setTimer(period, tick);
    };
    every(this.config.syncLoopPeriodUs, () => this.syncTick());
    every(this.config.housekeepingPeriodUs, () => {
      if (this.sourcesReady) this.handlePodCleanups();
    });
    every(this.config.containerGCPeriodUs, () => this.garbageCollectContainers());
    every(this.config.nodeStatusUpdateFrequencyUs, () => this.syncNodeStatus());
    this.nodeLease.start();
  }

  /** One ApiWatchEvent for this kubelet. */
  handleWatchEvent(ev: ApiWatchEvent): void {
    this.source.handleWatchEvent(ev);
  }

  private onFirstRelist(): void {
    if (this.firstRelistDone) return;
    this.firstRelistDone = true;
    // Pod cgroups live in the kernel and survive a kubelet restart: every pod the runtime has
    // at start-up has one.
    for (const uid of this.pleg.runtimePodUids()) this.addPodCgroup(uid);
  }

  // ---- node --------------------------------------------------------------------------------

  /**
   * `initialNode` (pkg/kubelet/kubelet_node_status.go, v1.22): the well-known labels, then
   * `--node-labels` (which may overwrite them, as upstream's do), `registerWithTaints` as
   * `spec.taints`. Only the registration reads labels and spec; status syncs patch `status`.
   */
  private nodeObject(): Node {
    const now = this.env.clock.format(this.env.now());
    const cap = { ...this.config.capacity };
    const labels = { 'kubernetes.io/hostname': this.config.nodeName, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', ...this.config.nodeLabels };
    const taints = this.config.registerWithTaints.map((t) => ({ ...t }));
    return {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: this.config.nodeName, labels },
      spec: taints.length > 0 ? { taints } : {},
      status: {
        capacity: cap,
        allocatable: cap,
        conditions: NODE_CONDITIONS.map((c) => ({ ...c, lastHeartbeatTime: now, lastTransitionTime: now })),
        addresses: [
          { type: 'InternalIP', address: this.config.nodeIP },
          { type: 'Hostname', address: this.config.nodeName },
        ],
        nodeInfo: { kubeletVersion: 'v1.22.8', containerRuntimeVersion: 'podsim://1.0', operatingSystem: 'linux', architecture: 'amd64' },
      },
    };
  }

  /** `registerWithAPIServer`: create the Node (or find it), then start the pod source. */
  private registerWithAPIServer(): void {
    this.client.request({ type: 'ApiCreate', resource: 'nodes', object: this.nodeObject() }, (res) => {
      if (res.code === 201 || res.code === 200 || res.code === 409) {
        this.nodeRegistered = true;
        this.source.start();
        return;
      }
      this.env.setTimer(1_000_000, () => this.registerWithAPIServer());
    });
  }

  /**
   * `syncNodeStatus` / `tryUpdateNodeStatus` (pkg/kubelet/kubelet_node_status.go, v1.22; spec
   * node-lifecycle §2.3) through the unthrottled heartbeat client: GET the Node, compute its
   * status, and PATCH it when `nodeStatusHasChanged` (conditions compared without heartbeat
   * times, capacity) or `nodeStatusReportFrequency` (5 m) has passed since the last report. The
   * comparison is against the Node as read, so a Ready condition the node lifecycle controller
   * set to Unknown is corrected on the first sync the kubelet can make. Nothing is allocated
   * when the read status already matches and the report is not due.
   */
  private syncNodeStatus(): void {
    if (!this.nodeRegistered) return;
    this.env.api(
      { type: 'ApiGet', resource: 'nodes', name: this.config.nodeName },
      (res: ApiResult) => {
        if (res.code !== 200) return;
        const now = this.env.now();
        const old = (res.body as Node).status;
        const due = this.lastNodeStatusReport < 0 || now - this.lastNodeStatusReport >= this.config.nodeStatusReportFrequencyUs;
        if (!due && !this.nodeStatusHasChanged(old)) return;
        const status = this.nodeObject().status!;
        const oldConds = old?.conditions ?? [];
        const conditions = status.conditions!.map((c) => {
          const o = oldConds.find((x) => x.type === c.type);
          return o && o.status === c.status && o.lastTransitionTime ? { ...c, lastTransitionTime: o.lastTransitionTime } : c;
        });
        this.env.api(
          { type: 'ApiPatch', resource: 'nodes', name: this.config.nodeName, subresource: 'status', patchType: 'strategic', patch: { status: { ...status, conditions } } },
          (p) => {
            if (p.code === 200) this.lastNodeStatusReport = now;
          },
          this.config.heartbeatTimeoutUs,
        );
      },
      this.config.heartbeatTimeoutUs,
    );
  }

  /**
   * `nodeStatusHasChanged` for the fields podsim's kubelet sets: each condition's type, status,
   * reason and message (heartbeat and transition times ignored) and the capacity.
   */
  private nodeStatusHasChanged(old: Node['status']): boolean {
    const conds = old?.conditions;
    if (!conds || conds.length !== NODE_CONDITIONS.length) return true;
    for (let i = 0; i < NODE_CONDITIONS.length; i++) {
      const want = NODE_CONDITIONS[i];
      const c = conds.find((x) => x.type === want.type);
      if (!c || c.status !== want.status || c.reason !== want.reason || c.message !== want.message) return true;
    }
    const cap = old?.capacity ?? {};
    const mine = this.config.capacity;
    for (const k in mine) if (cap[k] !== mine[k]) return true;
    for (const k in cap) if (!(k in mine)) return true;
    return false;
  }

  // ---- syncLoopIteration ---------------------------------------------------------------------

  /** configCh: one merged batch of pod updates. */
  private onConfigUpdates(updates: PodUpdate[]): void {
    for (const u of updates) {
      switch (u.op) {
        case 'ADD':
          this.handlePodAdditions(u.pods);
          break;
        case 'UPDATE':
        case 'DELETE':
          this.handlePodUpdates(u.pods);
          break;
        case 'REMOVE':
          this.handlePodRemoves(u.pods);
          break;
        case 'RECONCILE':
          this.handlePodReconcile(u.pods);
          break;
      }
      if (u.source === API_SOURCE) this.sourcesReady = true;
    }
  }

  /** plegCh. */
  private onPlegEvents(events: PodLifecycleEvent[]): void {
    for (const e of events) {
      if (e.type !== 'ContainerRemoved') {
        const pod = this.podManager.get(e.id);
        if (pod) this.handlePodSyncs([pod]);
      }
      if (e.type === 'ContainerDied') this.cleanUpContainersInPod(e.id, e.data);
    }
  }

  /** syncCh (1 s): pods whose requeue is due. */
  private syncTick(): void {
    const pods: Pod[] = [];
    for (const uid of this.podWorkers.getWork(this.env.now())) {
      const pod = this.podManager.get(uid);
      if (pod) pods.push(pod);
    }
    if (pods.length > 0) this.handlePodSyncs(pods);
  }

  /**
   * The probe result channels of `syncLoopIteration`: `livenessManager.Updates()` (a Failure
   * dispatches a sync, whose computePodActions kills the container), `readinessManager.Updates()`
   * (`SetContainerReadiness`, then a sync) and `startupManager.Updates()` (`SetContainerStartup`,
   * then a sync). `handleProbeSync` looks the pod up in the pod manager by UID.
   */
  private onProbeResult(probeType: ProbeType, pod: Pod, containerId: string, result: ProbeResult): void {
    if (probeType === 'liveness' && result !== 'Failure') return;
    const current = this.podManager.get(pod.metadata.uid!);
    if (!current) return;
    if (probeType === 'readiness') this.statusManager.setContainerReadiness(current, containerId, result === 'Success');
    if (probeType === 'startup') this.statusManager.setContainerStartup(current, containerId, result === 'Success');
    this.handlePodSyncs([current]);
  }

  // ---- handlers ----------------------------------------------------------------------------

  /**
   * Requests of the pods admission counts: `filterOutTerminatedPods(podManager.GetPods())`, i.e.
   * pods in the pod manager whose worker is not known terminated (terminating pods still count).
   * Kept incrementally — added at admission, dropped when the worker reaches terminatedAt or the
   * pod leaves the pod manager — so a burst of ADDs is O(pods), not O(pods²).
   */
  private readonly counted = new Map<string, { cpu: number; memory: number }>();
  private readonly usage = { cpu: 0, memory: 0 };

  private count(uid: string, pod: Pod): void {
    if (this.counted.has(uid) || this.podWorkers.isPodKnownTerminated(uid)) return;
    const r = podRequests(pod);
    this.counted.set(uid, r);
    this.usage.cpu += r.cpu;
    this.usage.memory += r.memory;
  }

  private uncount(uid: string): void {
    const r = this.counted.get(uid);
    if (!r) return;
    this.counted.delete(uid);
    this.usage.cpu -= r.cpu;
    this.usage.memory -= r.memory;
  }

  /** `HandlePodAdditions`: admission (terminating pods still count), dispatch SyncPodCreate. */
  handlePodAdditions(pods: readonly Pod[]): void {
    const sorted = [...pods].sort((a, b) => ((a.metadata.creationTimestamp ?? '') < (b.metadata.creationTimestamp ?? '') ? -1 : (a.metadata.creationTimestamp ?? '') > (b.metadata.creationTimestamp ?? '') ? 1 : 0));
    const cap = { pods: capacityOf(this.config.capacity.pods), cpu: capacityOf(this.config.capacity.cpu), memory: capacityOf(this.config.capacity.memory) };
    for (const pod of sorted) {
      const uid = pod.metadata.uid!;
      this.setDesiredPod(uid, pod);
      if (!this.podWorkers.isPodTerminationRequested(uid)) {
        const r = podRequests(pod);
        const usage = { pods: this.counted.size - (this.counted.has(uid) ? 1 : 0), cpu: this.usage.cpu, memory: this.usage.memory };
        let reason: string | undefined;
        let message = '';
        if (usage.pods + 1 > cap.pods) {
          reason = 'OutOfpods';
          message = 'Node didn\'t have enough resource: pods';
        } else if (usage.cpu + r.cpu > cap.cpu) {
          reason = 'OutOfcpu';
          message = `Node didn't have enough resource: cpu, requested: ${Math.round(r.cpu * 1000)}m`;
        } else if (usage.memory + r.memory > cap.memory) {
          reason = 'OutOfmemory';
          message = `Node didn't have enough resource: memory, requested: ${r.memory}`;
        }
        if (reason !== undefined) {
          this.rejectPod(pod, reason, message);
          continue;
        }
      }
      this.count(uid, pod);
      this.dispatchWork(pod, 'SyncPodCreate');
      this.prober.addPod(pod);
    }
  }

  /** `rejectPod`: event + phase Failed with the reason. */
  private rejectPod(pod: Pod, reason: string, message: string): void {
    this.recorder.event(pod, 'Warning', reason, message);
    this.statusManager.setPodStatus(pod, { ...pod.status, phase: 'Failed', reason, message: `Pod ${message}` });
  }

  /** `HandlePodUpdates` (UPDATE and DELETE). */
  handlePodUpdates(pods: readonly Pod[]): void {
    for (const pod of pods) {
      this.setDesiredPod(pod.metadata.uid!, pod);
      this.dispatchWork(pod, 'SyncPodUpdate');
    }
  }

  /** `HandlePodRemoves`: forget the pod, then `deletePod` (a SyncPodKill with no options). */
  handlePodRemoves(pods: readonly Pod[]): void {
    for (const pod of pods) {
      this.removeDesiredPod(pod.metadata.uid!);
      this.uncount(pod.metadata.uid!);
      if (!this.sourcesReady) continue; // "skipping delete because sources aren't ready yet"
      this.podWorkers.updatePod({ pod, updateType: 'SyncPodKill' });
      this.prober.removePod(pod.metadata.uid!);
    }
  }

  /** `HandlePodReconcile`: update the pod manager (no readiness gates in podsim). */
  handlePodReconcile(pods: readonly Pod[]): void {
    for (const pod of pods) this.setDesiredPod(pod.metadata.uid!, pod);
  }

  /** `podManager.UpdatePod` / `AddPod` (the status manager hears of it: `notifiesPodUpdates`). */
  private setDesiredPod(uid: string, pod: Pod): void {
    this.podManager.set(uid, pod);
    this.statusManager.podUpdated(uid);
  }

  /** `podManager.DeletePod`: the status manager and housekeeping hear of it (its suspects, RemoveOrphanedStatuses). */
  private removeDesiredPod(uid: string): void {
    this.podManager.delete(uid);
    this.statusManager.podUpdated(uid);
    this.suspect(uid);
    this.removedPods.add(uid);
  }

  /** `HandlePodSyncs`. */
  handlePodSyncs(pods: readonly Pod[]): void {
    for (const pod of pods) this.dispatchWork(pod, 'SyncPodSync');
  }

  /** `dispatchWork`. */
  private dispatchWork(pod: Pod, updateType: SyncPodType): void {
    this.podWorkers.updatePod({ pod, updateType, startTime: this.env.now() });
  }

  // ---- sync functions -----------------------------------------------------------------------

  private generateAPIPodStatus(pod: Pod, podStatus: RuntimePodStatus): PodStatus {
    const uid = pod.metadata.uid!;
    const reasons = this.reasonCache.get(uid);
    return generateAPIPodStatus(pod, podStatus, {
      clock: this.env.clock,
      hostIP: this.config.nodeIP,
      oldStatus: this.statusManager.getPodStatus(uid),
      readiness: (name, cid) => this.prober.readiness(uid, name, cid),
      started: (name, cid) => this.prober.started(uid, name, cid),
      reason: (name) => reasons?.get(name),
    });
  }

  /** `syncPod` (1.22: returns only an error). */
  syncPod(_ctx: WorkerContext, _updateType: SyncPodType, pod: Pod, _mirrorPod: Pod | undefined, podStatus: RuntimePodStatus, done: (err: SyncError) => void): void {
    const uid = pod.metadata.uid!;
    const apiPodStatus = this.generateAPIPodStatus(pod, podStatus);
    this.statusManager.setPodStatus(pod, apiPodStatus);
    const proceed = () => {
      if (!this.podWorkers.isPodTerminationRequested(uid)) {
        // The pod cgroup is created (and volumes mounted) only while the pod is not terminating.
        this.addPodCgroup(uid);
        this.volumeManager.mount(pod);
      }
      syncPodRuntime(this.runtimeDeps, pod, podStatus, (result, messages) => {
        // reasonCache.Update
        let rc = this.reasonCache.get(uid);
        for (const r of result.results) {
          if (r.action !== 'StartContainer') continue;
          if (r.error === undefined) rc?.delete(r.target);
          else {
            if (!rc) this.reasonCache.set(uid, (rc = new Map()));
            rc.set(r.target, { reason: r.error, message: messages.get(r.target) ?? '' });
          }
        }
        if (result.error === undefined) return done(undefined);
        // "Do not return error if the only failures were pods in backoff": upstream's loop returns
        // the error as soon as any result is not a backoff error — including the successful
        // ConfigPodSandbox result SyncPod always records — so in practice a CrashLoopBackOff is
        // returned and the pod worker retries after its 10–15 s backoff (kubernetes#123602).
        for (const r of result.results) {
          if (r.error !== ERR_CRASH_LOOP_BACK_OFF && r.error !== ERR_IMAGE_PULL_BACK_OFF) return done(result.error);
        }
        done(undefined);
      });
    };
    // A pod whose cgroup is missing although its containers run (not its first sync) is killed first.
    const firstSync = !apiPodStatus.containerStatuses?.some((c) => c.state.running);
    if (!this.podWorkers.isPodTerminationRequested(uid) && !this.podCgroups.has(uid) && !firstSync) {
      killPod(this.killDeps, pod, convertPodStatusToRunningPod(podStatus), undefined, () => proceed());
      return;
    }
    proceed();
  }

  /** `syncTerminatingPod` (spec §6.2). */
  syncTerminatingPod(
    _ctx: WorkerContext,
    pod: Pod,
    podStatus: RuntimePodStatus | undefined,
    runningPod: RuntimePod | undefined,
    gracePeriod: number | undefined,
    podStatusFn: ((s: PodStatus) => PodStatus) | undefined,
    done: (err: SyncError) => void,
  ): void {
    if (runningPod !== undefined) {
      killPod(this.killDeps, pod, runningPod, gracePeriod, (r) => {
        if (r.error !== undefined) {
          this.recorder.event(pod, 'Warning', 'FailedKillPod', `error killing pod: ${r.error}`);
          return done(r.error);
        }
        done(undefined);
      });
      return;
    }
    let apiPodStatus = this.generateAPIPodStatus(pod, podStatus!);
    if (podStatusFn) apiPodStatus = podStatusFn(apiPodStatus);
    this.statusManager.setPodStatus(pod, apiPodStatus);
    const p = convertPodStatusToRunningPod(podStatus!);
    killPod(this.killDeps, pod, p, gracePeriod, (r) => {
      if (r.error !== undefined) {
        this.recorder.event(pod, 'Warning', 'FailedKillPod', `error killing pod: ${r.error}`);
        return done(r.error);
      }
      getPodStatus(this.env, pod.metadata.uid!, pod.metadata.name ?? '', pod.metadata.namespace ?? '', (s) => {
        if (typeof s === 'string') return done(s);
        const running = s.containerStatuses.filter((c) => c.state === 'running').map((c) => c.id);
        if (running.length > 0) return done(`detected running containers after a successful KillPod, CRI violation: [${running.join(' ')}]`);
        done(undefined);
      });
    });
  }

  /** `syncTerminatedPod` (spec §6.3). */
  syncTerminatedPod(_ctx: WorkerContext, pod: Pod, podStatus: RuntimePodStatus, done: (err: SyncError) => void): void {
    const uid = pod.metadata.uid!;
    this.statusManager.setPodStatus(pod, this.generateAPIPodStatus(pod, podStatus));
    this.volumeManager.podTerminated(uid);
    this.volumeManager.waitForUnmount(pod, (err) => {
      if (err !== undefined) return done(err);
      if (this.config.cgroupsPerQOS) this.podCgroups.delete(uid);
      this.statusManager.terminatePod(pod);
      done(undefined);
    });
  }

  /** `PodResourcesAreReclaimed` (spec §10.6). */
  podResourcesAreReclaimed(pod: Pod, status: PodStatus): boolean {
    // The planted bug `skipReclaimCheck` (test-only): the final DELETE goes out while containers run.
    if (this.config.plantedBugs.includes('skipReclaimCheck')) return true;
    const uid = pod.metadata.uid!;
    if (this.podWorkers.couldHaveRunningContainers(uid)) return false;
    if ((status.containerStatuses ?? []).some((c) => c.state.running !== undefined)) return false;
    if (this.volumeManager.podVolumesExist(uid)) return false;
    if (this.config.cgroupsPerQOS && this.podCgroups.has(uid)) return false;
    return true;
  }

  // ---- housekeeping -------------------------------------------------------------------------

  /**
   * `HandlePodCleanups` (spec §11.1), every housekeeping period (2 s) as upstream. The desired
   * set is the pod manager itself and the work types are read from the pod workers per UID (no
   * set or map is built per pass): nothing in the pass adds or removes a desired pod, and the
   * only workers it changes are the orphans it kills, which count as not running for the rest of
   * the pass, as in upstream's `workingPods` snapshot.
   */
  handlePodCleanups(): void {
    const desired = this.podManager;
    const workers = this.podWorkers;
    workers.syncKnownPods(desired);
    // "Clean up probes for terminating and terminated pods": 1.22.8 keeps only the workers of
    // pods in SyncPodWork, so every probe of a terminating pod stops at the first housekeeping
    // after the deletion (readiness included: kubernetes#110309, fixed by #110418 after 1.22.8).
    this.prober.cleanupPods((uid) => workers.workTypeOf(uid) === 'SyncPodWork');
    // A worker in SyncPodWork or TerminatingPodWork when the pass began (orphans killed below excepted).
    let killed: Set<string> | undefined;
    const possiblyRunning = (uid: string): boolean => {
      const w = workers.workTypeOf(uid);
      return (w === 'SyncPodWork' || w === 'TerminatingPodWork') && !(killed?.has(uid) ?? false);
    };
    // Running pods no pod worker owns and no source wants: killed (the predicate filters before
    // the RuntimePod is built, and runs for every pod before the first kill; the order of the
    // kills is the relist's). A pod is one only if it is a suspect: a desired pod stops being
    // desired only through HandlePodRemoves, a worker's work type changes only through the pod
    // workers, and the relist's running pods only through a rebuilt pod, all of which make it
    // a suspect again; so when no suspect is an orphan, the relist's pods hold none either.
    const orphan = (uid: string): boolean => !desired.has(uid) && !possiblyRunning(uid);
    for (const uid of this.orphanSuspects) if (!orphan(uid) || !this.pleg.hasRunning(uid)) this.orphanSuspects.delete(uid);
    if (this.orphanSuspects.size > 0) {
      for (const rp of this.pleg.runningPods(orphan)) {
        (killed ??= new Set()).add(rp.uid);
        workers.updatePod({ updateType: 'SyncPodKill', runningPod: rp, killPodOptions: { podTerminationGracePeriodSecondsOverride: 1 } });
      }
    }
    this.statusManager.removeOrphanedStatuses(desired, this.removedPods);
    this.removedPods.clear();
    for (const uid of this.reasonCache.keys()) if (!desired.has(uid)) this.reasonCache.delete(uid);
    // cleanupOrphanedPodCgroups: cgroups of pods that can no longer be running and have no volumes.
    // Only suspects can be such a pod (the same argument, with the cgroups created since the last
    // pass); one kept for its volumes stays a suspect. The order of the removals is unobservable.
    if (this.config.cgroupsPerQOS) {
      // Deleting the entry being visited is allowed during a Set iteration.
      for (const uid of this.cgroupSuspects) {
        if (this.podCgroups.has(uid) && !desired.has(uid) && !possiblyRunning(uid)) {
          if (this.volumeManager.podVolumesExist(uid)) continue;
          this.podCgroups.delete(uid);
        }
        this.cgroupSuspects.delete(uid);
      }
    }
    this.backoff.gc(this.env.now());
  }

  /** The pod's answers to housekeeping's questions may have changed (see {@link orphanSuspects}). */
  private suspect(uid: string): void {
    this.orphanSuspects.add(uid);
    if (this.config.cgroupsPerQOS) this.cgroupSuspects.add(uid);
  }

  /** `pcm.EnsureExists`. */
  private addPodCgroup(uid: string): void {
    if (this.podCgroups.has(uid)) return;
    this.podCgroups.add(uid);
    if (this.config.cgroupsPerQOS) this.cgroupSuspects.add(uid);
  }

  /** `cleanUpContainersInPod` on ContainerDied: keep the newest dead container per name (none once content may go). */
  private cleanUpContainersInPod(uid: string, exitedContainerId: string): void {
    if (!this.podCache.has(uid)) return;
    const status = this.podCache.get(uid);
    const removeAll = this.podWorkers.shouldPodContentBeRemoved(uid);
    const keep = removeAll ? 0 : 1;
    const names = removeAll ? undefined : status.containerStatuses.find((c) => c.id === exitedContainerId)?.name;
    if (!removeAll && names === undefined) return;
    const byName = new Map<string, string[]>();
    for (const c of status.containerStatuses) {
      if (c.state !== 'exited' || (names !== undefined && c.name !== names)) continue;
      const l = byName.get(c.name) ?? [];
      l.push(c.id);
      byName.set(c.name, l);
    }
    for (const ids of byName.values()) for (const id of ids.slice(keep)) this.env.cri({ type: 'RemoveContainer', containerId: id }, () => {});
  }

  /** Container GC (1 m): dead containers beyond one per name, all of them for pods whose content may go; then dead sandboxes. */
  private garbageCollectContainers(): void {
    this.env.cri({ type: 'ListContainers' }, (cr) => {
      if (cr.error) return;
      this.env.cri({ type: 'ListPodSandbox' }, (sr) => {
        if (sr.error) return;
        // Containers left per pod are only read for the pods with a sandbox that is not ready
        // (the few being torn down), so only theirs are counted.
        let notReady: Set<string> | undefined;
        for (const sb of sr.items) {
          const uid = sb.labels['io.kubernetes.pod.uid'];
          if (uid !== undefined && sb.state !== 'SANDBOX_READY') (notReady ??= new Set()).add(uid);
        }
        const remaining = new Map<string, number>();
        const groups = new Map<string, { id: string; createdAt: number }[]>();
        for (const c of cr.containers) {
          if (c.state !== 'CONTAINER_EXITED') {
            if (notReady === undefined) continue;
            const uid = c.labels['io.kubernetes.pod.uid'];
            if (uid !== undefined && notReady.has(uid)) remaining.set(uid, (remaining.get(uid) ?? 0) + 1);
            continue;
          }
          const uid = c.labels['io.kubernetes.pod.uid'];
          if (uid === undefined) continue;
          const key = `${uid}\u0000${c.labels['io.kubernetes.container.name'] ?? c.metadata.name}`;
          const l = groups.get(key) ?? [];
          l.push({ id: c.id, createdAt: c.createdAt });
          groups.set(key, l);
        }
        for (const [key, list] of groups) {
          const uid = key.slice(0, key.indexOf('\u0000'));
          const keep = this.podWorkers.shouldPodContentBeRemoved(uid) ? 0 : 1;
          list.sort((a, b) => b.createdAt - a.createdAt);
          for (const c of list.slice(keep)) this.env.cri({ type: 'RemoveContainer', containerId: c.id }, () => {});
          if (keep > 0) remaining.set(uid, (remaining.get(uid) ?? 0) + Math.min(keep, list.length));
        }
        for (const sb of sr.items) {
          const uid = sb.labels['io.kubernetes.pod.uid'];
          if (uid === undefined || sb.state === 'SANDBOX_READY' || (remaining.get(uid) ?? 0) > 0) continue;
          if (!this.podWorkers.shouldPodRuntimeBeRemoved(uid)) continue;
          this.env.cri({ type: 'RemovePodSandbox', podSandboxId: sb.id }, () => {});
        }
      });
    });
  }
}

/**
 * A pod's effective cpu (cores) and memory (bytes) requests, as admission counts them
 * (`resource.GetResourceRequest`): the sum over the containers, raised to the largest init
 * container request, since init containers run one at a time before them.
 */
export function podRequests(p: Pod): { cpu: number; memory: number } {
  let cpu = 0;
  let memory = 0;
  for (const c of p.spec.containers) {
    cpu += parseQuantity(c.resources?.requests?.cpu) ?? 0;
    memory += parseQuantity(c.resources?.requests?.memory) ?? 0;
  }
  for (const c of p.spec.initContainers ?? []) {
    cpu = Math.max(cpu, parseQuantity(c.resources?.requests?.cpu) ?? 0);
    memory = Math.max(memory, parseQuantity(c.resources?.requests?.memory) ?? 0);
  }
  return { cpu, memory };
}

/**
 * A node capacity for admission: an unset resource is 0 (nothing fits), a malformed one NaN
 * (every comparison with it is false, so it limits nothing).
 */
function capacityOf(q: string | undefined): number {
  return q === undefined ? 0 : (parseQuantity(q) ?? NaN);
}
