/**
 * The CRI runtime of one node: RuntimeService + ImageService of cri-api v1alpha2 (v0.22.8,
 * `pkg/apis/services.go`) behaving like containerd's CRI plugin of the time (v1.5,
 * `pkg/cri/server/container_stop.go` `stopContainer`, `sandbox_stop.go`, `sandbox_remove.go`,
 * `container_execsync.go`), over simulated processes driven by `podsim.dev/*` annotations.
 * Invariants (spec §14): SIGKILL only when a StopContainer deadline (`timeout` s after its SIGTERM)
 * passes, at timeout 0, or from StopPodSandbox / RemovePodSandbox / RemoveContainer (inv. 6);
 * exit 137 after SIGKILL, 143 from the default SIGTERM action, else the process's own (inv. 16).
 * A crash of the actor is a node reboot: every process, shim and network namespace is gone, but
 * containerd's records (`/var/lib/containerd`: containers, sandboxes, images) are kept in the
 * actor's durable store and recovered as `pkg/cri/server/restart.go` `recover` / `loadContainer`
 * / `loadSandbox` do (a RUNNING container becomes EXITED 255 `Unknown`, every sandbox NOTREADY).
 * Simplified: no logs or stdout, IPv4 only.
 */
import {
  type ContainerBehavior,
  type CriError,
  type DurableStore,
  type DurationUs,
  type Message,
  type Prng,
  type TimerId,
  type VirtualTime,
  type cri,
  NEVER,
  appliesToAttempt,
  labelSetMatches,
  parseBehaviorAnnotations,
  resolveContainerBehavior,
  sampleUs,
  seconds,
} from '@podsim/api';
import { type CallTarget, type CriFault, type FaultOutcome, CriFaultBook, NO_FAULT, validateCriFaults } from './criFaults.js';
import { planExec } from './execCommand.js';
import { normalizeImage } from './images.js';
import { HostLocalIpam, parseCidr } from './ipam.js';
import { probeResult } from './probes.js';

/**
 * What the runtime needs from its actor context (an `ActorContext` is one, with T = Envelope).
 * `reply(token, body)` answers the call that `handle` received with `token`.
 */
export interface RuntimeHost<T> {
  readonly now: VirtualTime;
  setTimer(delayUs: DurationUs, payload?: unknown): TimerId;
  cancelTimer(id: TimerId): void;
  stream(name: string): Prng;
  newId(size?: number, alphabet?: string): string;
  trace(kind: string, msg: string, data?: Record<string, unknown>): void;
  tracing(kind: string): boolean;
  reply(token: T, body: Message): void;
  /** The actor's durable store (`ActorContext.durable`); without one nothing survives a crash. */
  readonly durable?: DurableStore;
}

/**
 * The runtime's behaviour when the caller of a StopContainer goes away (the kubelet process dies:
 * its gRPC connection closes) while the stop waits out its timeout:
 * - `containerd` (default): containerd 1.5's CRI plugin (`pkg/cri/server/container_stop.go`
 *   `stopContainer`): the request's context is cancelled, `waitContainerStop` returns and "if the
 *   parent context was cancelled … return immediately" — no SIGKILL at that request's deadline;
 *   the process keeps only its SIGTERM until the restarted kubelet's own StopContainer.
 * - `detached-stop`: the stop runs to its deadline whoever waits for it — SIGKILL `timeout` s
 *   after the SIGTERM even when the kubelet died meanwhile (podsim's behaviour before issue #15).
 */
export type RuntimeFlavor = 'containerd' | 'detached-stop';
export const RUNTIME_FLAVORS: readonly RuntimeFlavor[] = ['containerd', 'detached-stop'];

/** Runtime actor configuration (plain data). Durations are virtual µs. */
export interface RuntimeConfig {
  readonly nodeName: string;
  /** The node's pod CIDR for sandbox IPs (host-local IPAM). Default {@link DEFAULT_POD_CIDR}. */
  readonly podCidr?: string;
  /** Pull time of an image with no per-image or `podsim.dev/image-pull` value. Default 1 s. */
  readonly imagePullUs?: DurationUs;
  /** Per-image pull time and size (keys are image references, normalized on use). */
  readonly images?: Readonly<Record<string, { readonly pullUs?: DurationUs; readonly sizeBytes?: number }>>;
  /** Images present before the first pull. */
  readonly preloadedImages?: readonly string[];
  /** Duration of an exec command other than sleep/true/false/exit, unless `podsim.dev/exec-duration` says. Default 10 ms. */
  readonly execDefaultUs?: DurationUs;
  /**
   * What happens to an ExecSync command whose timeout passed: it keeps running in the background
   * (`keep-running`, default; dockershim) or is SIGKILLed, exit 137 (`kill`; containerd's execInternal).
   */
  readonly execTimeout?: 'keep-running' | 'kill';
  /** {@link RuntimeFlavor}; default `containerd`. */
  readonly flavor?: RuntimeFlavor;
  /**
   * Virtual times (µs) at which this node's kubelet process dies (kubeletRestart / kubeletDown
   * faults, from the run's fault schedule), so the runtime knows when a caller's connection
   * closed; read only by the `containerd` flavour.
   */
  readonly callerCrashesUs?: readonly number[];
  readonly faults?: readonly CriFault[];
}

export const DEFAULT_POD_CIDR = '10.244.0.0/24';
export const DEFAULT_IMAGE_PULL_US: DurationUs = 1_000_000;
export const DEFAULT_EXEC_US: DurationUs = 10_000;
export const DEFAULT_IMAGE_SIZE_BYTES = 50_000_000;
/** Exit code after SIGKILL (128 + 9). */
export const EXIT_SIGKILL = 137;
/** Exit code when the default SIGTERM action kills the process (128 + 15). */
export const EXIT_SIGTERM = 143;
/** containerd's `unknownExitCode`: a container whose task vanished (restart.go). */
export const EXIT_UNKNOWN = 255;
/** containerd's `unknownExitReason`. */
export const REASON_UNKNOWN = 'Unknown';
/** The key of containerd's records in the actor's durable store. */
const DISK_KEY = 'containerd';

/** Problems with a runtime config, one sentence each (empty = valid). */
export function validateRuntimeConfig(c: RuntimeConfig): string[] {
  const errs: string[] = [];
  if (typeof c?.nodeName !== 'string' || c.nodeName === '') errs.push('nodeName must be a non-empty string');
  if (c?.podCidr !== undefined && !parseCidr(c.podCidr)) errs.push(`podCidr ${JSON.stringify(c.podCidr)} is not an IPv4 CIDR with a prefix of at most /30`);
  for (const k of ['imagePullUs', 'execDefaultUs'] as const) {
    const v = c?.[k];
    if (v !== undefined && !(Number.isSafeInteger(v) && v >= 0)) errs.push(`${k} must be a non-negative integer (µs)`);
  }
  if (c?.execTimeout !== undefined && c.execTimeout !== 'keep-running' && c.execTimeout !== 'kill') errs.push(`execTimeout must be 'keep-running' or 'kill'`);
  if (c?.flavor !== undefined && !RUNTIME_FLAVORS.includes(c.flavor)) errs.push(`flavor must be one of ${RUNTIME_FLAVORS.join(', ')}`);
  if (c?.callerCrashesUs !== undefined && !(Array.isArray(c.callerCrashesUs) && c.callerCrashesUs.every((v) => Number.isSafeInteger(v) && v >= 0))) {
    errs.push('callerCrashesUs must be a list of non-negative integers (µs)');
  }
  return [...errs, ...validateCriFaults(c?.faults ?? [])];
}

/** `ContainerStatus.reason` for an exit code, as containerd reports it. */
export function exitReason(exitCode: number): string {
  return exitCode === 0 ? 'Completed' : 'Error';
}

type Pending<T> = { readonly token: T; readonly delayUs: DurationUs };

interface SandboxRec {
  readonly id: string;
  readonly config: cri.PodSandboxConfig;
  readonly createdAt: VirtualTime;
  /** The containerd name reservation key. */
  readonly name: string;
  readonly containers: Set<string>;
  state: cri.PodSandboxState;
  /** Set while the pod network is up (until the teardown of StopPodSandbox completes). */
  ip: string | undefined;
  teardownTimer: TimerId | undefined;
  teardownAt: VirtualTime;
  /** The last `PodSandbox` view handed out (list results are immutable messages); rebuilt when the state changed. */
  view: cri.PodSandbox | undefined;
  /** The last PodSandboxStatus answer, with the view and IP it was built from (reused while both are unchanged). */
  statusReply: cri.PodSandboxStatusResult | undefined;
  statusView: cri.PodSandbox | undefined;
  statusIp: string | undefined;
}

interface StopWaiter<T> {
  readonly pending: Pending<T>;
  /** The SIGKILL at the deadline, or (containerd flavour) the cancellation when the caller dies first. */
  killTimer: TimerId | undefined;
  /** The StopContainer timeout (s) whose deadline the kill timer is. */
  readonly timeout: number;
}

interface ExecRec<T> {
  readonly span: number;
  readonly c: ContainerRec<T>;
  readonly cmd: string;
  readonly stderr: string;
  readonly exitCode: number;
  pending: Pending<T> | undefined;
  endTimer: TimerId | undefined;
  timeoutTimer: TimerId | undefined;
  timedOut: boolean;
}

interface ContainerRec<T> {
  readonly id: string;
  readonly sandbox: SandboxRec;
  readonly config: cri.ContainerConfig;
  readonly imageRef: string;
  readonly behavior: ContainerBehavior;
  readonly createdAt: VirtualTime;
  readonly name: string;
  state: cri.ContainerState;
  startedAt: VirtualTime;
  finishedAt: VirtualTime;
  exitCode: number;
  reason: string;
  startupUs: DurationUs;
  unhealthyAtUs: DurationUs;
  termSignalledAt: VirtualTime | undefined;
  crashTimer: TimerId | undefined;
  termTimer: TimerId | undefined;
  readonly stops: Set<StopWaiter<T>>;
  readonly execs: Set<ExecRec<T>>;
  /** Host ports (`TCP/8080`) the process listens on while it runs (host-network sandboxes only). */
  hostPorts: readonly string[];
  /** The last `Container` view handed out; rebuilt when the state changed (every other field is fixed). */
  view: cri.Container | undefined;
  /** The last ContainerStatus answer; handed out again while its view and exit fields are unchanged. */
  statusReply: cri.ContainerStatusResult | undefined;
  /** The view `statusReply` was built from (a new view means the state changed). */
  statusView: cri.Container | undefined;
}

/** A container record's fields that belong to a live process (signals, timers, waiters, ports): empty for a new or recovered record. */
function noProcessState<T>(): Pick<ContainerRec<T>, 'termSignalledAt' | 'crashTimer' | 'termTimer' | 'stops' | 'execs' | 'hostPorts' | 'view' | 'statusReply' | 'statusView'> {
  return { termSignalledAt: undefined, crashTimer: undefined, termTimer: undefined, stops: new Set(), execs: new Set(), hostPorts: [], view: undefined, statusReply: undefined, statusView: undefined };
}

/**
 * What containerd keeps on disk across a reboot (its bolt metadata, the CRI plugin's status
 * checkpoints, the image store, host-local IPAM's last reserved address): the previous
 * incarnation's live records, read (never written) by {@link CriRuntime.recover}.
 */
interface ContainerdDisk {
  readonly sandboxes: ReadonlyMap<string, SandboxRec>;
  readonly containers: ReadonlyMap<string, ContainerRec<unknown>>;
  readonly images: ReadonlyMap<string, { readonly id: string; readonly size: number }>;
  readonly ipam: HostLocalIpam;
}

type ExitCause = 'SIGKILL' | 'SIGTERM' | 'SIGTERM-handler' | 'crash' | 'bind';

/** The kubelet's container annotation with the container's ports as JSON (`containerPortsLabel`). */
export const CONTAINER_PORTS_ANNOTATION = 'io.kubernetes.container.ports';
/** Exit code of an application whose listen() failed (`bind: address already in use`). */
export const EXIT_BIND_FAILED = 1;

/**
 * The host ports a container's process listens on: its declared container ports, when its
 * sandbox shares the node's network namespace (`hostNetwork: true`, CRI NamespaceMode NODE). In a
 * pod network namespace every pod has its own ports, so nothing can clash.
 */
export function hostPortsOf(sandbox: cri.PodSandboxConfig, container: cri.ContainerConfig): string[] {
  if (sandbox.linux?.securityContext?.namespaceOptions?.network !== 'NODE') return [];
  const raw = container.annotations[CONTAINER_PORTS_ANNOTATION];
  if (raw === undefined) return [];
  let ports: unknown;
  try {
    ports = JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(ports)) return [];
  return ports
    .filter((p): p is { containerPort: number; protocol?: string } => typeof p === 'object' && p !== null && typeof (p as { containerPort?: unknown }).containerPort === 'number')
    .map((p) => `${p.protocol ?? 'TCP'}/${p.containerPort}`);
}

type RuntimeTimer<T> =
  | { readonly k: 'exit'; readonly c: ContainerRec<T>; readonly code: number; readonly cause: 'crash' | 'SIGTERM-handler' }
  | { readonly k: 'kill'; readonly c: ContainerRec<T>; readonly w: StopWaiter<T> }
  | { readonly k: 'stopCancelled'; readonly c: ContainerRec<T>; readonly w: StopWaiter<T> }
  | { readonly k: 'execEnd'; readonly e: ExecRec<T> }
  | { readonly k: 'execTimeout'; readonly e: ExecRec<T>; readonly timeout: number }
  | { readonly k: 'pulled'; readonly image: string; readonly sizeBytes: number }
  | { readonly k: 'teardown'; readonly s: SandboxRec }
  | { readonly k: 'reply'; readonly token: T; readonly body: cri.CriResult };

const HEX = '0123456789abcdef';
const RUNNING: cri.ContainerState = 'CONTAINER_RUNNING';

const notFound = (what: string, id: string): CriError => ({ code: 'NotFound', message: `an error occurred when try to find ${what} "${id}": not found` });
const unknown = (message: string): CriError => ({ code: 'Unknown', message });

/** The reply to a failed call: the error plus the reply type's required fields, empty. */
function failure(call: cri.CriCallName, error: CriError): cri.CriResult {
  switch (call) {
    case 'ListPodSandbox':
      return { type: 'ListPodSandboxResult', error, items: [] };
    case 'ListContainers':
      return { type: 'ListContainersResult', error, containers: [] };
    case 'ExecSync':
      return { type: 'ExecSyncResult', error, stdout: '', stderr: '', exitCode: -1 };
    case 'ProbeContainer':
      return { type: 'ProbeContainerResult', error, success: false };
    default:
      return { type: `${call}Result`, error } as cri.CriResult;
  }
}

/** The pod UID label the kubelet filters its per-pod lists by (`kubetypes.KubernetesPodUIDLabel`). */
const POD_UID_LABEL = 'io.kubernetes.pod.uid';

/** Adds `item` to the set of `key` in an index (the set keeps insertion order). */
function indexAdd<V>(index: Map<string, Set<V>>, key: string | undefined, item: V): void {
  if (key === undefined) return;
  let set = index.get(key);
  if (!set) index.set(key, (set = new Set()));
  set.add(item);
}

function indexDelete<V>(index: Map<string, Set<V>>, key: string | undefined, item: V): void {
  if (key === undefined) return;
  const set = index.get(key);
  if (set?.delete(item) && set.size === 0) index.delete(key);
}

/**
 * One node's runtime. The actor shell calls {@link start} once, {@link handle} per CRI request and
 * {@link onTimer} for every timer (all timers of the actor are the runtime's). Replies go through
 * `host.reply`, possibly later (StopContainer waits for the exit; faults add delays).
 */
export class CriRuntime<T> {
  private h!: RuntimeHost<T>;
  private readonly sandboxes = new Map<string, SandboxRec>();
  private readonly containers = new Map<string, ContainerRec<T>>();
  /**
   * Sandboxes and containers by their pod UID label, in creation order (the same relative order
   * as the maps above): GetPodStatus lists by that label once per pod sync, which would otherwise
   * scan every sandbox and container of the node.
   */
  private readonly sandboxesByPod = new Map<string, Set<SandboxRec>>();
  private readonly containersByPod = new Map<string, Set<ContainerRec<T>>>();
  /**
   * The unfiltered ListPodSandbox / ListContainers answers (what the PLEG asks every relist
   * period and housekeeping every 2 s), kept until a sandbox or container is added, removed or
   * changes state: a reply body is immutable, so every list of an unchanged runtime is the same
   * array, and the PLEG can tell "nothing changed" by reference (GenericPLEG.compare).
   */
  private sandboxList: cri.PodSandbox[] | undefined = undefined;
  private containerList: cri.Container[] | undefined = undefined;
  /** containerd's name index: reserved sandbox/container name → id. */
  private readonly names = new Map<string, string>();
  /** The node's listening sockets of host-network processes: `TCP/8080` → container id. */
  private readonly hostPorts = new Map<string, string>();
  private readonly images = new Map<string, { readonly id: string; readonly size: number }>();
  private readonly imageConfig = new Map<string, { readonly pullUs?: DurationUs; readonly sizeBytes?: number }>();
  private readonly pulls = new Map<string, Pending<T>[]>();
  private readonly ipam: HostLocalIpam;
  private readonly faults: CriFaultBook;
  private nextExec = 1;

  /** Throws if the config is invalid ({@link validateRuntimeConfig}). */
  constructor(readonly config: RuntimeConfig) {
    const errs = validateRuntimeConfig(config);
    if (errs.length > 0) throw new Error(`invalid runtime config: ${errs.join('; ')}`);
    this.ipam = new HostLocalIpam(config.podCidr ?? DEFAULT_POD_CIDR);
    this.faults = new CriFaultBook(config.faults ?? []);
    for (const [ref, v] of Object.entries(config.images ?? {})) this.imageConfig.set(normalizeImage(ref), v);
  }

  /**
   * Starts containerd: after a crash (a reboot) recovers the records the previous incarnation left
   * in the durable store, then loads the preloaded images that are missing (ids are drawn from the
   * host, so this cannot run in the constructor) and keeps its own records there.
   */
  start(host: RuntimeHost<T>): void {
    this.h = host;
    const disk = host.durable?.get(DISK_KEY) as ContainerdDisk | undefined;
    if (disk) this.recover(disk);
    for (const ref of this.config.preloadedImages ?? []) if (!this.images.has(normalizeImage(ref))) this.storeImage(normalizeImage(ref));
    // The live maps are the "disk": containerd writes its bolt metadata and status checkpoints
    // synchronously with every change, so what a crash leaves is what the maps hold then. Recovery
    // reads only the fields containerd persists, never timers or waiters.
    host.durable?.set(DISK_KEY, { sandboxes: this.sandboxes, containers: this.containers, images: this.images, ipam: this.ipam } satisfies ContainerdDisk);
  }

  /**
   * containerd's CRI `recover` after a reboot (`pkg/cri/server/restart.go`): images are kept;
   * `loadSandbox` — every sandbox's task is gone, so it is SANDBOX_NOTREADY (its network
   * namespace is gone too: `cri.network` down now, the address freed); `loadContainer` — a
   * container checkpointed RUNNING whose task is gone is EXITED with `unknownExitCode` 255,
   * reason `unknownExitReason` "Unknown", finishedAt = now; CREATED and EXITED ones keep their
   * status. Names stay reserved and the kubelet's labels and annotations (attempt, restartCount)
   * are kept, so the kubelet counts RESTARTS on. One `cri.recover` record per container.
   */
  private recover(disk: ContainerdDisk): void {
    for (const [ref, img] of disk.images) this.images.set(ref, img);
    this.ipam.continueAfter(disk.ipam);
    const byId = new Map<string, SandboxRec>();
    for (const old of disk.sandboxes.values()) {
      const s: SandboxRec = {
        id: old.id,
        config: old.config,
        createdAt: old.createdAt,
        name: old.name,
        containers: new Set(),
        state: 'SANDBOX_NOTREADY',
        ip: old.ip,
        teardownTimer: undefined,
        teardownAt: NEVER,
        view: undefined,
        statusReply: undefined,
        statusView: undefined,
        statusIp: undefined,
      };
      if (s.ip !== undefined) this.traceNetwork(s, false);
      s.ip = undefined;
      byId.set(s.id, s);
      this.sandboxes.set(s.id, s);
      this.sandboxList = undefined;
      indexAdd(this.sandboxesByPod, s.config.labels[POD_UID_LABEL], s);
      this.names.set(s.name, s.id);
    }
    for (const old of disk.containers.values()) {
      const sandbox = byId.get(old.sandbox.id)!;
      const lost = old.state === RUNNING;
      const c: ContainerRec<T> = {
        id: old.id,
        sandbox,
        config: old.config,
        imageRef: old.imageRef,
        behavior: old.behavior,
        createdAt: old.createdAt,
        name: old.name,
        state: lost ? 'CONTAINER_EXITED' : old.state,
        startedAt: old.startedAt,
        finishedAt: lost ? this.h.now : old.finishedAt,
        exitCode: lost ? EXIT_UNKNOWN : old.exitCode,
        reason: lost ? REASON_UNKNOWN : old.reason,
        startupUs: old.startupUs,
        unhealthyAtUs: old.unhealthyAtUs,
        ...noProcessState(),
      };
      this.registerContainer(c, sandbox);
      this.traceProc('cri.recover', c, `recovered ${c.state}${lost ? ` ${EXIT_UNKNOWN} (${REASON_UNKNOWN})` : ''}`, { state: c.state, exitCode: c.exitCode, reason: c.reason, lost });
    }
  }

  /** One CRI request received now; its reply is sent through `host.reply(token, …)`, now or later. */
  handle(host: RuntimeHost<T>, req: cri.CriRequest, token: T): void {
    this.h = host;
    // No fault configured (the common case): no closure for the target.
    const fault = this.faults.empty ? NO_FAULT : this.faults.check(req.type, () => this.targetOf(req), host.now);
    this.traceCall(req, fault);
    const p: Pending<T> = { token, delayUs: fault.delayUs };
    if (fault.error) return this.finish(p, failure(req.type, fault.error));
    switch (req.type) {
      case 'RunPodSandbox':
        return this.runPodSandbox(req, p);
      case 'StopPodSandbox':
        return this.stopPodSandbox(req, p);
      case 'RemovePodSandbox':
        return this.removePodSandbox(req, p);
      case 'PodSandboxStatus':
        return this.podSandboxStatus(req, p);
      case 'ListPodSandbox':
        return this.listPodSandbox(req, p);
      case 'CreateContainer':
        return this.createContainer(req, p);
      case 'StartContainer':
        return this.startContainer(req, p);
      case 'StopContainer':
        return this.stopContainer(req, p);
      case 'RemoveContainer':
        return this.removeContainer(req, p);
      case 'ListContainers':
        return this.listContainers(req, p);
      case 'ContainerStatus':
        return this.containerStatus(req, p);
      case 'ExecSync':
        return this.execSync(req, p);
      case 'PullImage':
        return this.pullImage(req, p);
      case 'ImageStatus':
        return this.imageStatus(req, p);
      case 'ProbeContainer':
        return this.probeContainer(req, p);
      default:
        throw new Error(`runtime ${this.config.nodeName}: not a CRI request: ${JSON.stringify((req as Message).type)}`);
    }
  }

  /** A timer set by this runtime fired. */
  onTimer(host: RuntimeHost<T>, payload: unknown): void {
    this.h = host;
    const t = payload as RuntimeTimer<T>;
    switch (t.k) {
      case 'exit':
        if (t.cause === 'crash') t.c.crashTimer = undefined;
        else t.c.termTimer = undefined;
        return this.exit(t.c, t.code, t.cause);
      case 'kill':
        // The StopContainer deadline passed with the process still running (its exit would
        // have cancelled this timer): SIGKILL, as containerd does after waitContainerStop.
        t.w.killTimer = undefined;
        return this.signal(t.c, 'SIGKILL', t.w.timeout);
      case 'stopCancelled':
        // containerd flavour: the caller died while the stop waited; its context is cancelled,
        // waitContainerStop returns and stopContainer "returns immediately": no SIGKILL, and the
        // reply has nobody to reach (the engine drops it: the caller's incarnation is gone).
        t.w.killTimer = undefined;
        t.c.stops.delete(t.w);
        this.traceProc('cri.stopCancelled', t.c, `StopContainer timeout=${t.w.timeout} cancelled (caller gone)`, { timeout: t.w.timeout });
        return;
      case 'execEnd':
        t.e.endTimer = undefined;
        return this.endExec(t.e, false);
      case 'execTimeout':
        return this.execTimedOut(t.e, t.timeout);
      case 'pulled': {
        const img = this.storeImage(t.image, t.sizeBytes);
        const waiters = this.pulls.get(t.image) ?? [];
        this.pulls.delete(t.image);
        for (const w of waiters) this.finish(w, { type: 'PullImageResult', imageRef: img.id });
        return;
      }
      case 'teardown':
        return this.teardown(t.s);
      case 'reply':
        return this.h.reply(t.token, t.body);
    }
  }

  // ---- RuntimeService: sandboxes ----------------------------------------------------------

  private runPodSandbox(req: cri.RunPodSandbox, p: Pending<T>): void {
    const m = req.config.metadata;
    const name = `${m.name}_${m.namespace}_${m.uid}_${m.attempt}`;
    const holder = this.names.get(name);
    if (holder !== undefined) {
      return this.finish(p, failure(req.type, unknown(`failed to reserve sandbox name "${name}": name "${name}" is reserved for "${holder}"`)));
    }
    const ip = this.ipam.allocate();
    if (ip === undefined) {
      return this.finish(p, failure(req.type, unknown(`failed to setup network for sandbox: no IP addresses available in range ${this.ipam.cidr}`)));
    }
    const id = this.h.newId(64, HEX);
    const s: SandboxRec = {
      id,
      config: req.config,
      createdAt: this.h.now,
      name,
      containers: new Set(),
      state: 'SANDBOX_READY',
      ip,
      teardownTimer: undefined,
      teardownAt: NEVER,
      view: undefined,
      statusReply: undefined,
      statusView: undefined,
      statusIp: undefined,
    };
    this.sandboxes.set(id, s);
    this.sandboxList = undefined;
    indexAdd(this.sandboxesByPod, req.config.labels[POD_UID_LABEL], s);
    this.traceNetwork(s, true);
    this.names.set(name, id);
    this.finish(p, { type: 'RunPodSandboxResult', podSandboxId: id });
  }

  /**
   * containerd `stopPodSandbox`: SIGKILL every running container (stopContainer with timeout 0),
   * mark the sandbox NOTREADY, tear the network down (frees the IP). A delay fault models a
   * hanging CNI teardown: the IP stays allocated until the delayed reply.
   */
  private stopPodSandbox(req: cri.StopPodSandbox, p: Pending<T>): void {
    const s = this.sandboxes.get(req.podSandboxId);
    if (!s) return this.finish(p, failure(req.type, notFound('sandbox', req.podSandboxId)));
    for (const cid of s.containers) {
      const c = this.containers.get(cid)!;
      if (c.state === RUNNING) this.signal(c, 'SIGKILL');
    }
    s.state = 'SANDBOX_NOTREADY';
    this.sandboxList = undefined;
    if (s.ip !== undefined) {
      if (p.delayUs === 0) this.teardown(s);
      else if (this.h.now + p.delayUs < s.teardownAt) {
        if (s.teardownTimer !== undefined) this.h.cancelTimer(s.teardownTimer);
        s.teardownTimer = this.h.setTimer(p.delayUs, { k: 'teardown', s } satisfies RuntimeTimer<T>);
        s.teardownAt = this.h.now + p.delayUs;
      }
    }
    this.finish(p, { type: 'StopPodSandboxResult' });
  }

  private teardown(s: SandboxRec): void {
    if (s.teardownTimer !== undefined) this.h.cancelTimer(s.teardownTimer);
    s.teardownTimer = undefined;
    s.teardownAt = NEVER;
    if (s.ip !== undefined) {
      this.traceNetwork(s, false);
      this.ipam.release(s.ip);
    }
    s.ip = undefined;
  }

  /**
   * `cri.network`: the pod IP comes up (RunPodSandbox) or goes (the network teardown of
   * StopPodSandbox / RemovePodSandbox); after it, connections to the IP time out. The up record
   * carries the pod's app behaviour annotations (what the traffic model serves with).
   */
  /** Enters a container record in the maps (by id, by pod, its sandbox's set, its reserved name). */
  private registerContainer(c: ContainerRec<T>, sandbox: SandboxRec): void {
    this.containers.set(c.id, c);
    this.containerList = undefined;
    indexAdd(this.containersByPod, c.config.labels[POD_UID_LABEL], c);
    sandbox.containers.add(c.id);
    this.names.set(c.name, c.id);
  }

  private traceNetwork(s: SandboxRec, up: boolean): void {
    if (!this.h.tracing('cri.network')) return;
    const m = s.config.metadata;
    const app = up ? Object.fromEntries(Object.entries(s.config.annotations ?? {}).filter(([k]) => k.startsWith('podsim.dev/'))) : undefined;
    this.h.trace('cri.network', `${up ? 'up' : 'down'} ${s.ip} ${m.namespace}/${m.name}`, { podUid: m.uid, pod: m.name, namespace: m.namespace, ip: s.ip, up, ...(app ? { annotations: app } : {}) });
  }

  /** containerd `RemovePodSandbox`: forcibly stops it, removes its containers, then itself. Unknown ids are fine. */
  private removePodSandbox(req: cri.RemovePodSandbox, p: Pending<T>): void {
    const s = this.sandboxes.get(req.podSandboxId);
    if (s) {
      for (const cid of [...s.containers]) this.removeContainerRec(this.containers.get(cid)!);
      s.state = 'SANDBOX_NOTREADY';
      this.teardown(s);
      this.sandboxes.delete(s.id);
      this.sandboxList = undefined;
      indexDelete(this.sandboxesByPod, s.config.labels[POD_UID_LABEL], s);
      this.names.delete(s.name);
    }
    this.finish(p, { type: 'RemovePodSandboxResult' });
  }

  private podSandboxStatus(req: cri.PodSandboxStatusRequest, p: Pending<T>): void {
    const s = this.sandboxes.get(req.podSandboxId);
    if (!s) return this.finish(p, failure(req.type, notFound('sandbox', req.podSandboxId)));
    const view = this.sandboxView(s);
    // Unchanged view and IP: the previous (immutable) answer, as for ContainerStatus.
    if (s.statusReply !== undefined && s.statusView === view && s.statusIp === s.ip) return this.finish(p, s.statusReply);
    const status: cri.PodSandboxStatus = { ...view, ...(s.ip !== undefined ? { network: { ip: s.ip } } : {}) };
    const reply: cri.PodSandboxStatusResult = { type: 'PodSandboxStatusResult', status };
    s.statusReply = reply;
    s.statusView = view;
    s.statusIp = s.ip;
    this.finish(p, reply);
  }

  private listPodSandbox(req: cri.ListPodSandbox, p: Pending<T>): void {
    const f = req.filter;
    if (f === undefined) {
      this.sandboxList ??= Array.from(this.sandboxes.values(), (s) => this.sandboxView(s));
      return this.finish(p, { type: 'ListPodSandboxResult', items: this.sandboxList });
    }
    const items: cri.PodSandbox[] = [];
    const uid = f?.labelSelector?.[POD_UID_LABEL];
    for (const s of uid !== undefined ? (this.sandboxesByPod.get(uid) ?? []) : this.sandboxes.values()) {
      if (f?.id !== undefined && f.id !== s.id) continue;
      if (f?.state !== undefined && f.state !== s.state) continue;
      if (!labelSetMatches(f?.labelSelector, s.config.labels)) continue;
      items.push(this.sandboxView(s));
    }
    this.finish(p, { type: 'ListPodSandboxResult', items });
  }

  /** The sandbox as ListPodSandbox reports it (shared by every list until its state changes: the PLEG lists every second). */
  private sandboxView(s: SandboxRec): cri.PodSandbox {
    if (s.view === undefined || s.view.state !== s.state) {
      s.view = { id: s.id, metadata: s.config.metadata, state: s.state, createdAt: s.createdAt, labels: s.config.labels, annotations: s.config.annotations };
    }
    return s.view;
  }

  // ---- RuntimeService: containers ---------------------------------------------------------

  private createContainer(req: cri.CreateContainer, p: Pending<T>): void {
    const s = this.sandboxes.get(req.podSandboxId);
    if (!s) return this.finish(p, failure(req.type, notFound('sandbox', req.podSandboxId)));
    if (s.state !== 'SANDBOX_READY') return this.finish(p, failure(req.type, unknown(`sandbox container "${s.id}" is not running`)));
    const img = this.images.get(normalizeImage(req.config.image.image));
    if (!img) {
      return this.finish(p, failure(req.type, { code: 'NotFound', message: `failed to resolve image "${req.config.image.image}": not found` }));
    }
    const parsed = parseBehaviorAnnotations(req.config.annotations);
    if (parsed.errors.length > 0) {
      return this.finish(p, failure(req.type, { code: 'InvalidArgument', message: parsed.errors.map((e) => e.message).join('; ') }));
    }
    const m = req.config.metadata;
    const sm = s.config.metadata;
    const name = `${m.name}_${sm.name}_${sm.namespace}_${sm.uid}_${m.attempt}`;
    const holder = this.names.get(name);
    if (holder !== undefined) {
      return this.finish(p, failure(req.type, unknown(`failed to reserve container name "${name}": name "${name}" is reserved for "${holder}"`)));
    }
    const c: ContainerRec<T> = {
      id: this.h.newId(64, HEX),
      sandbox: s,
      config: req.config,
      imageRef: img.id,
      behavior: resolveContainerBehavior(parsed.behavior, m.name),
      createdAt: this.h.now,
      name,
      state: 'CONTAINER_CREATED',
      startedAt: 0,
      finishedAt: 0,
      exitCode: 0,
      reason: '',
      startupUs: 0,
      unhealthyAtUs: NEVER,
      ...noProcessState(),
    };
    this.registerContainer(c, s);
    this.finish(p, { type: 'CreateContainerResult', containerId: c.id });
  }

  private startContainer(req: cri.StartContainer, p: Pending<T>): void {
    const c = this.containers.get(req.containerId);
    if (!c) return this.finish(p, failure(req.type, notFound('container', req.containerId)));
    if (c.state !== 'CONTAINER_CREATED') return this.finish(p, failure(req.type, unknown(`container is in ${c.state} state`)));
    if (c.sandbox.state !== 'SANDBOX_READY') return this.finish(p, failure(req.type, unknown(`sandbox container "${c.sandbox.id}" is not running`)));
    const b = c.behavior;
    const attempt = c.config.metadata.attempt;
    c.state = RUNNING;
    this.containerList = undefined;
    c.startedAt = this.h.now;
    c.startupUs = sampleUs(b.startup, this.h.stream('startup'));
    if (b.unhealthyAfter && appliesToAttempt(b.unhealthyAttempts, attempt)) c.unhealthyAtUs = sampleUs(b.unhealthyAfter, this.h.stream('unhealthy'));
    this.traceProc('cri.start', c, 'start');
    // A host-network process binds its ports in the node's namespace: if another running process
    // still holds one (the old replica of a force-deleted pod, C04) listen() fails and the
    // application exits at once, as a server does on `bind: address already in use`.
    const ports = hostPortsOf(c.sandbox.config, c.config);
    if (ports.some((k) => this.hostPorts.has(k))) {
      this.exit(c, EXIT_BIND_FAILED, 'bind');
      return this.finish(p, { type: 'StartContainerResult' });
    }
    c.hostPorts = ports;
    for (const k of ports) this.hostPorts.set(k, c.id);
    if (b.crash && appliesToAttempt(b.crashAttempts, attempt)) {
      const after = sampleUs(b.crash.after, this.h.stream('crash'));
      c.crashTimer = this.h.setTimer(after, { k: 'exit', c, code: b.crash.exitCode, cause: 'crash' } satisfies RuntimeTimer<T>);
    }
    this.finish(p, { type: 'StartContainerResult' });
  }

  /**
   * containerd `stopContainer`: a no-op unless running; with timeout > 0 SIGTERM (again on every
   * call, as containerd 1.5 does), then SIGKILL if it still runs `timeout` seconds later — unless,
   * with the `containerd` flavour, the caller dies first (its cancelled context ends the wait, see
   * {@link RuntimeFlavor}); with timeout ≤ 0 SIGKILL at once. The reply waits until the process
   * has exited.
   */
  private stopContainer(req: cri.StopContainer, p: Pending<T>): void {
    const c = this.containers.get(req.containerId);
    if (!c) return this.finish(p, failure(req.type, notFound('container', req.containerId)));
    if (c.state !== RUNNING) return this.finish(p, { type: 'StopContainerResult' });
    if (req.timeout > 0) {
      // SIGTERM first: a handler's exit timer is then ordered before the kill timer, so a process
      // exiting exactly at the deadline exits with its own code.
      this.signal(c, 'SIGTERM', req.timeout);
      if (c.state === RUNNING) {
        const w: StopWaiter<T> = { pending: p, killTimer: undefined, timeout: req.timeout };
        const deadline = this.h.now + seconds(req.timeout);
        const gone = this.callerGoneBy(deadline);
        w.killTimer =
          gone === undefined
            ? this.h.setTimer(seconds(req.timeout), { k: 'kill', c, w } satisfies RuntimeTimer<T>)
            : this.h.setTimer(gone - this.h.now, { k: 'stopCancelled', c, w } satisfies RuntimeTimer<T>);
        c.stops.add(w);
        return;
      }
    } else {
      this.signal(c, 'SIGKILL', req.timeout);
    }
    this.finish(p, { type: 'StopContainerResult' });
  }

  /**
   * containerd flavour: the first time at or after now, and before `deadline`, at which the
   * caller (this node's kubelet) dies and its connection closes; undefined when it outlives the
   * deadline, or always for `detached-stop`.
   */
  private callerGoneBy(deadline: VirtualTime): VirtualTime | undefined {
    if ((this.config.flavor ?? 'containerd') !== 'containerd') return undefined;
    let first: VirtualTime | undefined;
    for (const t of this.config.callerCrashesUs ?? []) if (t >= this.h.now && t < deadline && (first === undefined || t < first)) first = t;
    return first;
  }

  /** containerd `RemoveContainer`: forcibly (SIGKILL if running); unknown ids are fine. */
  private removeContainer(req: cri.RemoveContainer, p: Pending<T>): void {
    const c = this.containers.get(req.containerId);
    if (c) this.removeContainerRec(c);
    this.finish(p, { type: 'RemoveContainerResult' });
  }

  private removeContainerRec(c: ContainerRec<T>): void {
    if (c.state === RUNNING) this.signal(c, 'SIGKILL');
    this.containers.delete(c.id);
    this.containerList = undefined;
    indexDelete(this.containersByPod, c.config.labels[POD_UID_LABEL], c);
    c.sandbox.containers.delete(c.id);
    this.names.delete(c.name);
  }

  private listContainers(req: cri.ListContainers, p: Pending<T>): void {
    const f = req.filter;
    if (f === undefined) {
      this.containerList ??= Array.from(this.containers.values(), (c) => this.containerView(c));
      return this.finish(p, { type: 'ListContainersResult', containers: this.containerList });
    }
    const containers: cri.Container[] = [];
    const uid = f?.labelSelector?.[POD_UID_LABEL];
    for (const c of uid !== undefined ? (this.containersByPod.get(uid) ?? []) : this.containers.values()) {
      if (f?.id !== undefined && f.id !== c.id) continue;
      if (f?.state !== undefined && f.state !== c.state) continue;
      if (f?.podSandboxId !== undefined && f.podSandboxId !== c.sandbox.id) continue;
      if (!labelSetMatches(f?.labelSelector, c.config.labels)) continue;
      containers.push(this.containerView(c));
    }
    this.finish(p, { type: 'ListContainersResult', containers });
  }

  private containerStatus(req: cri.ContainerStatusRequest, p: Pending<T>): void {
    const c = this.containers.get(req.containerId);
    if (!c) return this.finish(p, failure(req.type, notFound('container', req.containerId)));
    // A reply body is immutable: while nothing in it changed (the PLEG asks for every container
    // of a changed pod each relist), the previous answer is the answer, with no new objects.
    const view = this.containerView(c);
    const last = c.statusReply;
    if (last !== undefined) {
      const st = last.status!;
      if (c.statusView === view && st.startedAt === c.startedAt && st.finishedAt === c.finishedAt && st.exitCode === c.exitCode && st.reason === c.reason) {
        return this.finish(p, last);
      }
    }
    const status: cri.ContainerStatus = {
      ...view,
      startedAt: c.startedAt,
      finishedAt: c.finishedAt,
      exitCode: c.exitCode,
      reason: c.reason,
      message: '',
    };
    const reply: cri.ContainerStatusResult = { type: 'ContainerStatusResult', status };
    c.statusReply = reply;
    c.statusView = view;
    this.finish(p, reply);
  }

  /** The container as ListContainers reports it (shared until its state changes). */
  private containerView(c: ContainerRec<T>): cri.Container {
    if (c.view === undefined || c.view.state !== c.state) {
      c.view = {
        id: c.id,
        podSandboxId: c.sandbox.id,
        metadata: c.config.metadata,
        image: c.config.image,
        imageRef: c.imageRef,
        state: c.state,
        createdAt: c.createdAt,
        labels: c.config.labels,
        annotations: c.config.annotations,
      };
    }
    return c.view;
  }

  // ---- simulated processes ----------------------------------------------------------------

  /**
   * Delivers a signal to a running container's process and applies its behaviour. `timeout` is
   * the StopContainer timeout (s) that sent it, traced in `cri.signal` data (never in the
   * digested message) so the `no-early-sigkill` checker reads the timeout the runtime actually
   * received — a kubelet that crashed before StopContainer returned never writes its own.
   */
  private signal(c: ContainerRec<T>, sig: 'SIGTERM' | 'SIGKILL', timeout?: number): void {
    this.traceProc('cri.signal', c, sig, timeout === undefined ? { signal: sig } : { signal: sig, timeout });
    if (sig === 'SIGKILL') return this.exit(c, EXIT_SIGKILL, 'SIGKILL');
    c.termSignalledAt ??= this.h.now;
    const on = c.behavior.onSigterm;
    if (on.action === 'default') return this.exit(c, EXIT_SIGTERM, 'SIGTERM');
    // A handler already shutting down is not restarted by a second SIGTERM.
    if (on.action === 'ignore' || c.termTimer !== undefined) return;
    const after = sampleUs(on.after, this.h.stream('sigterm'));
    if (after === 0) return this.exit(c, on.exitCode, 'SIGTERM-handler');
    c.termTimer = this.h.setTimer(after, { k: 'exit', c, code: on.exitCode, cause: 'SIGTERM-handler' } satisfies RuntimeTimer<T>);
  }

  /** The process exits: execs inside die with it (137), and every StopContainer waiting on it is answered. */
  private exit(c: ContainerRec<T>, code: number, cause: ExitCause): void {
    if (c.state !== RUNNING) throw new Error(`container ${c.id} exited twice (${cause})`);
    c.state = 'CONTAINER_EXITED';
    this.containerList = undefined;
    c.finishedAt = this.h.now;
    c.exitCode = code;
    c.reason = exitReason(code);
    if (c.crashTimer !== undefined) this.h.cancelTimer(c.crashTimer);
    if (c.termTimer !== undefined) this.h.cancelTimer(c.termTimer);
    c.crashTimer = c.termTimer = undefined;
    for (const k of c.hostPorts) if (this.hostPorts.get(k) === c.id) this.hostPorts.delete(k);
    c.hostPorts = [];
    this.traceProc('cri.exit', c, `exit ${code}`, { exitCode: code, reason: c.reason, cause });
    for (const e of [...c.execs]) this.endExec(e, true);
    for (const w of c.stops) {
      if (w.killTimer !== undefined) this.h.cancelTimer(w.killTimer);
      this.finish(w.pending, { type: 'StopContainerResult' });
    }
    c.stops.clear();
  }

  // ---- exec -------------------------------------------------------------------------------

  /**
   * ExecSync: runs the command as {@link planExec} says. `timeout` (s, 0 = none) passing first
   * answers DeadlineExceeded (the kubelet reads that as a probe timeout); the command keeps
   * running, or is killed with `execTimeout: 'kill'`.
   */
  private execSync(req: cri.ExecSync, p: Pending<T>): void {
    const c = this.containers.get(req.containerId);
    if (!c) return this.finish(p, failure(req.type, notFound('container', req.containerId)));
    if (c.state !== RUNNING) return this.finish(p, failure(req.type, unknown(`container is in ${c.state} state`)));
    const b = c.behavior;
    const plan = planExec(
      req.cmd,
      () => (b.execDuration ? sampleUs(b.execDuration, this.h.stream('exec')) : (this.config.execDefaultUs ?? DEFAULT_EXEC_US)),
      b.execExitCode,
    );
    const e: ExecRec<T> = {
      span: this.nextExec++,
      c,
      cmd: req.cmd.join(' '),
      stderr: plan.stderr,
      exitCode: plan.exitCode,
      pending: p,
      endTimer: undefined,
      timeoutTimer: undefined,
      timedOut: false,
    };
    c.execs.add(e);
    this.traceExec(e, 'B');
    if (plan.durationUs === 0) return this.endExec(e, false);
    if (plan.durationUs !== NEVER) e.endTimer = this.h.setTimer(plan.durationUs, { k: 'execEnd', e } satisfies RuntimeTimer<T>);
    // Set after the end timer, so a command ending exactly at the timeout still succeeds.
    if (req.timeout > 0 && seconds(req.timeout) < plan.durationUs) {
      e.timeoutTimer = this.h.setTimer(seconds(req.timeout), { k: 'execTimeout', e, timeout: req.timeout } satisfies RuntimeTimer<T>);
    }
  }

  private execTimedOut(e: ExecRec<T>, timeout: number): void {
    e.timeoutTimer = undefined;
    e.timedOut = true;
    const p = e.pending!;
    e.pending = undefined;
    this.finish(p, failure('ExecSync', { code: 'DeadlineExceeded', message: `failed to exec in container: timeout ${timeout}s exceeded: context deadline exceeded` }));
    if (this.config.execTimeout === 'kill') this.endExec(e, true);
  }

  /** The command ends on its own (its planned code and stderr) or is `killed` (137). */
  private endExec(e: ExecRec<T>, killed: boolean): void {
    const exitCode = killed ? EXIT_SIGKILL : e.exitCode;
    if (e.endTimer !== undefined) this.h.cancelTimer(e.endTimer);
    if (e.timeoutTimer !== undefined) this.h.cancelTimer(e.timeoutTimer);
    e.endTimer = e.timeoutTimer = undefined;
    e.c.execs.delete(e);
    this.traceExec(e, 'E', exitCode);
    if (e.pending) this.finish(e.pending, { type: 'ExecSyncResult', stdout: '', stderr: killed ? '' : e.stderr, exitCode });
    e.pending = undefined;
  }

  // ---- probes -----------------------------------------------------------------------------

  private probeContainer(req: cri.ProbeContainer, p: Pending<T>): void {
    const c = this.containers.get(req.containerId);
    if (!c) return this.finish(p, failure(req.type, notFound('container', req.containerId)));
    const success = probeResult(
      {
        running: c.state === RUNNING,
        startedAt: c.startedAt,
        startupUs: c.startupUs,
        unhealthyAtUs: c.unhealthyAtUs,
        termSignalledAt: c.termSignalledAt,
        behavior: c.behavior,
      },
      req.probe,
      this.h.now,
    );
    this.finish(p, { type: 'ProbeContainerResult', success });
  }

  // ---- ImageService -----------------------------------------------------------------------

  /**
   * PullImage: cached images answer at once; otherwise the pull takes the pod's
   * `podsim.dev/image-pull`, else the per-image config, else `imagePullUs`. Concurrent pulls of
   * one image share the first pull.
   */
  private pullImage(req: cri.PullImage, p: Pending<T>): void {
    const ref = normalizeImage(req.image.image);
    const img = this.images.get(ref);
    if (img) return this.finish(p, { type: 'PullImageResult', imageRef: img.id });
    const inflight = this.pulls.get(ref);
    if (inflight) {
      inflight.push(p);
      return;
    }
    const parsed = parseBehaviorAnnotations(req.sandboxConfig?.annotations);
    const bad = parsed.errors.find((e) => e.annotation.endsWith('image-pull'));
    if (bad) return this.finish(p, failure(req.type, { code: 'InvalidArgument', message: bad.message }));
    const conf = this.imageConfig.get(ref);
    const pullUs = parsed.behavior.imagePull
      ? sampleUs(parsed.behavior.imagePull, this.h.stream('pull'))
      : (conf?.pullUs ?? this.config.imagePullUs ?? DEFAULT_IMAGE_PULL_US);
    this.pulls.set(ref, [p]);
    this.h.setTimer(pullUs, { k: 'pulled', image: ref, sizeBytes: conf?.sizeBytes ?? DEFAULT_IMAGE_SIZE_BYTES } satisfies RuntimeTimer<T>);
  }

  private imageStatus(req: cri.ImageStatus, p: Pending<T>): void {
    const img = this.images.get(normalizeImage(req.image.image));
    this.finish(p, img ? { type: 'ImageStatusResult', image: img } : { type: 'ImageStatusResult' });
  }

  private storeImage(ref: string, size = this.imageConfig.get(ref)?.sizeBytes ?? DEFAULT_IMAGE_SIZE_BYTES) {
    const img = { id: `sha256:${this.h.newId(64, HEX)}`, size };
    this.images.set(ref, img);
    return img;
  }

  // ---- replies, faults, traces ------------------------------------------------------------

  /** Sends a reply, `delayUs` later when a delay fault matched the call. */
  private finish(p: Pending<T>, body: cri.CriResult): void {
    if (p.delayUs > 0) this.h.setTimer(p.delayUs, { k: 'reply', token: p.token, body } satisfies RuntimeTimer<T>);
    else this.h.reply(p.token, body);
  }

  /** What a call is about, for fault matching and the call trace. */
  private targetOf(req: cri.CriRequest): CallTarget {
    switch (req.type) {
      case 'RunPodSandbox':
        return { pod: req.config.metadata };
      case 'StopPodSandbox':
      case 'RemovePodSandbox':
      case 'PodSandboxStatus':
        return { pod: this.sandboxes.get(req.podSandboxId)?.config.metadata };
      case 'CreateContainer':
        return { pod: req.sandboxConfig.metadata, container: req.config.metadata.name, image: normalizeImage(req.config.image.image) };
      case 'StartContainer':
      case 'StopContainer':
      case 'RemoveContainer':
      case 'ContainerStatus':
      case 'ExecSync':
      case 'ProbeContainer': {
        const c = this.containers.get(req.containerId);
        return c ? { pod: c.sandbox.config.metadata, container: c.config.metadata.name, image: normalizeImage(c.config.image.image) } : {};
      }
      case 'PullImage':
        return { pod: req.sandboxConfig?.metadata, image: normalizeImage(req.image.image) };
      case 'ImageStatus':
        return { image: normalizeImage(req.image.image) };
      default:
        return {};
    }
  }

  private traceCall(req: cri.CriRequest, fault: FaultOutcome): void {
    const r = req as { readonly containerId?: string; readonly podSandboxId?: string; readonly timeout?: number };
    const extra = r.timeout !== undefined ? ` timeout=${r.timeout}` : '';
    const subject = r.containerId ?? r.podSandboxId;
    this.h.trace('cri.call', `${req.type}${subject ? ` ${subject.slice(0, 13)}` : ''}${extra}${fault.faults.length ? ' (fault)' : ''}`, this.h.tracing('cri.call')
      ? {
          call: req.type,
          ...(r.containerId !== undefined ? { containerId: r.containerId } : {}),
          ...(r.podSandboxId !== undefined ? { podSandboxId: r.podSandboxId } : {}),
          ...(r.timeout !== undefined ? { timeout: r.timeout } : {}),
          ...(fault.faults.length ? { faults: fault.faults, ...(fault.error ? { error: fault.error.code } : {}), delayUs: fault.delayUs } : {}),
        }
      : undefined);
  }

  /** Writes a process trace record (data only when the kind is collected; the message is always digested). */
  private traceProc(kind: string, c: ContainerRec<T>, what: string, extra?: Record<string, unknown>): void {
    const m = c.sandbox.config.metadata;
    const container = c.config.metadata.name;
    this.h.trace(kind, `${what} ${m.namespace}/${m.name}/${container}`, this.h.tracing(kind)
      ? { containerId: c.id, podUid: m.uid, pod: m.name, namespace: m.namespace, container, ...extra }
      : undefined);
  }

  private traceExec(e: ExecRec<T>, ph: 'B' | 'E', exitCode?: number): void {
    const what = ph === 'B' ? `exec ${JSON.stringify(e.cmd)}` : `exec end ${exitCode}${e.timedOut ? ' (after timeout)' : ''}`;
    this.traceProc('cri.exec', e.c, what, {
      cmd: e.cmd,
      ph,
      span: `exec-${e.span}`,
      ...(ph === 'E' ? { exitCode, timedOut: e.timedOut } : {}),
    });
  }
}
