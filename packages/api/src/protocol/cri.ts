/**
 * kubelet ↔ CRI runtime messages, with the CRI names of `kubernetes/cri-api`
 * `pkg/apis/runtime/v1alpha2/api.proto` at v0.22.8 (RuntimeService + ImageService). Field names
 * follow the proto's JSON names. Deliberate differences: timestamps are **virtual µs** (the
 * proto uses Unix nanoseconds), and every reply carries an optional {@link CriError} instead of a
 * gRPC status. A reply's `type` is the request's name + `Result`.
 *
 * One extension that is not CRI: {@link ProbeContainer}, because httpGet / tcpSocket probes hit
 * the simulated process, whose behaviour the runtime owns.
 */
import type { CriError } from '../errors.js';
import type { VirtualTime } from '../time.js';

export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';

export interface PodSandboxMetadata {
  readonly name: string;
  readonly uid: string;
  readonly namespace: string;
  readonly attempt: number;
}

/** CRI `PortMapping` (`port_mappings` of PodSandboxConfig). */
export interface PortMapping {
  readonly protocol?: 'TCP' | 'UDP' | 'SCTP';
  readonly containerPort: number;
  readonly hostPort?: number;
  readonly hostIp?: string;
}

/** CRI `NamespaceMode`: the pod's own namespace, the container's, or the node's (`hostNetwork: true`). */
export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE';

export interface PodSandboxConfig {
  readonly metadata: PodSandboxMetadata;
  readonly hostname?: string;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  /** Ports of every container (`generatePodSandboxConfig`); omitted when there are none. */
  readonly portMappings?: readonly PortMapping[];
  /** `linux.security_context.namespace_options`: network `NODE` for a hostNetwork pod. */
  readonly linux?: { readonly securityContext?: { readonly namespaceOptions?: { readonly network?: NamespaceMode } } };
}

export interface PodSandbox {
  readonly id: string;
  readonly metadata: PodSandboxMetadata;
  readonly state: PodSandboxState;
  /** Virtual µs. */
  readonly createdAt: VirtualTime;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
}

export interface PodSandboxStatus extends PodSandbox {
  readonly network?: { readonly ip: string };
}

export interface ContainerMetadata {
  readonly name: string;
  readonly attempt: number;
}

export interface ImageSpec {
  readonly image: string;
}

export interface ContainerConfig {
  readonly metadata: ContainerMetadata;
  readonly image: ImageSpec;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  /** The kubelet's labels (pod name/namespace/uid, container name). */
  readonly labels: Record<string, string>;
  /**
   * The kubelet's annotations (hash, restartCount, terminationGracePeriod, preStop handler) plus
   * the pod's `podsim.dev/*` behaviour annotations, which drive the simulated process.
   */
  readonly annotations: Record<string, string>;
}

export interface Container {
  readonly id: string;
  readonly podSandboxId: string;
  readonly metadata: ContainerMetadata;
  readonly image: ImageSpec;
  readonly imageRef: string;
  readonly state: ContainerState;
  /** Virtual µs. */
  readonly createdAt: VirtualTime;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
}

export interface ContainerStatus extends Container {
  /** Virtual µs; 0 if not started. */
  readonly startedAt: VirtualTime;
  /** Virtual µs; 0 if not finished. */
  readonly finishedAt: VirtualTime;
  readonly exitCode: number;
  /** `Completed`, `Error`, `OOMKilled`, … (set once exited). */
  readonly reason: string;
  readonly message: string;
}

export interface PodSandboxFilter {
  readonly id?: string;
  readonly state?: PodSandboxState;
  readonly labelSelector?: Record<string, string>;
}

export interface ContainerFilter {
  readonly id?: string;
  readonly state?: ContainerState;
  readonly podSandboxId?: string;
  readonly labelSelector?: Record<string, string>;
}

// ---- RuntimeService requests -------------------------------------------------------------

export interface RunPodSandbox {
  readonly type: 'RunPodSandbox';
  readonly config: PodSandboxConfig;
  readonly runtimeHandler?: string;
}
export interface StopPodSandbox {
  readonly type: 'StopPodSandbox';
  readonly podSandboxId: string;
}
export interface RemovePodSandbox {
  readonly type: 'RemovePodSandbox';
  readonly podSandboxId: string;
}
export interface PodSandboxStatusRequest {
  readonly type: 'PodSandboxStatus';
  readonly podSandboxId: string;
}
export interface ListPodSandbox {
  readonly type: 'ListPodSandbox';
  readonly filter?: PodSandboxFilter;
}
export interface CreateContainer {
  readonly type: 'CreateContainer';
  readonly podSandboxId: string;
  readonly config: ContainerConfig;
  readonly sandboxConfig: PodSandboxConfig;
}
export interface StartContainer {
  readonly type: 'StartContainer';
  readonly containerId: string;
}
/** `timeout` is in **seconds** (as in the proto): SIGTERM (the stop signal), then SIGKILL after it; 0 kills at once. */
export interface StopContainer {
  readonly type: 'StopContainer';
  readonly containerId: string;
  readonly timeout: number;
}
export interface RemoveContainer {
  readonly type: 'RemoveContainer';
  readonly containerId: string;
}
export interface ListContainers {
  readonly type: 'ListContainers';
  readonly filter?: ContainerFilter;
}
export interface ContainerStatusRequest {
  readonly type: 'ContainerStatus';
  readonly containerId: string;
}
/** `timeout` in seconds; 0 = no timeout. */
export interface ExecSync {
  readonly type: 'ExecSync';
  readonly containerId: string;
  readonly cmd: readonly string[];
  readonly timeout: number;
}

// ---- ImageService requests ---------------------------------------------------------------

export interface PullImage {
  readonly type: 'PullImage';
  readonly image: ImageSpec;
  /**
   * The pod's sandbox config, as the proto's `sandbox_config` (the kubelet passes it). The
   * runtime reads the pod-wide `podsim.dev/image-pull` annotation from it.
   */
  readonly sandboxConfig?: PodSandboxConfig;
}
export interface ImageStatus {
  readonly type: 'ImageStatus';
  readonly image: ImageSpec;
}

// ---- podsim extension --------------------------------------------------------------------

/** An httpGet/tcpSocket probe against the simulated process (not CRI; see the module header). */
export interface ProbeContainer {
  readonly type: 'ProbeContainer';
  readonly containerId: string;
  readonly probe: 'readiness' | 'liveness' | 'startup';
  readonly handler: 'httpGet' | 'tcpSocket';
}

/** The name of a CRI call (`StopContainer`, …), as used in traces and runtime fault configs. */
export type CriCallName = CriRequest['type'];

export type CriRequest =
  | RunPodSandbox
  | StopPodSandbox
  | RemovePodSandbox
  | PodSandboxStatusRequest
  | ListPodSandbox
  | CreateContainer
  | StartContainer
  | StopContainer
  | RemoveContainer
  | ListContainers
  | ContainerStatusRequest
  | ExecSync
  | PullImage
  | ImageStatus
  | ProbeContainer;

// ---- Replies -------------------------------------------------------------------------------

interface CriReply {
  /** Set when the call failed (NotFound, Unknown, DeadlineExceeded, …). */
  readonly error?: CriError;
}

export interface RunPodSandboxResult extends CriReply {
  readonly type: 'RunPodSandboxResult';
  readonly podSandboxId?: string;
}
export interface StopPodSandboxResult extends CriReply {
  readonly type: 'StopPodSandboxResult';
}
export interface RemovePodSandboxResult extends CriReply {
  readonly type: 'RemovePodSandboxResult';
}
export interface PodSandboxStatusResult extends CriReply {
  readonly type: 'PodSandboxStatusResult';
  readonly status?: PodSandboxStatus;
}
export interface ListPodSandboxResult extends CriReply {
  readonly type: 'ListPodSandboxResult';
  readonly items: readonly PodSandbox[];
}
export interface CreateContainerResult extends CriReply {
  readonly type: 'CreateContainerResult';
  readonly containerId?: string;
}
export interface StartContainerResult extends CriReply {
  readonly type: 'StartContainerResult';
}
export interface StopContainerResult extends CriReply {
  readonly type: 'StopContainerResult';
}
export interface RemoveContainerResult extends CriReply {
  readonly type: 'RemoveContainerResult';
}
export interface ListContainersResult extends CriReply {
  readonly type: 'ListContainersResult';
  readonly containers: readonly Container[];
}
export interface ContainerStatusResult extends CriReply {
  readonly type: 'ContainerStatusResult';
  readonly status?: ContainerStatus;
}
export interface ExecSyncResult extends CriReply {
  readonly type: 'ExecSyncResult';
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}
export interface PullImageResult extends CriReply {
  readonly type: 'PullImageResult';
  readonly imageRef?: string;
}
export interface ImageStatusResult extends CriReply {
  readonly type: 'ImageStatusResult';
  readonly image?: { readonly id: string; readonly size: number };
}
export interface ProbeContainerResult extends CriReply {
  readonly type: 'ProbeContainerResult';
  readonly success: boolean;
}

export type CriResult =
  | RunPodSandboxResult
  | StopPodSandboxResult
  | RemovePodSandboxResult
  | PodSandboxStatusResult
  | ListPodSandboxResult
  | CreateContainerResult
  | StartContainerResult
  | StopContainerResult
  | RemoveContainerResult
  | ListContainersResult
  | ContainerStatusResult
  | ExecSyncResult
  | PullImageResult
  | ImageStatusResult
  | ProbeContainerResult;

/** Maps a request type to its reply type. */
export interface CriResultOf {
  RunPodSandbox: RunPodSandboxResult;
  StopPodSandbox: StopPodSandboxResult;
  RemovePodSandbox: RemovePodSandboxResult;
  PodSandboxStatus: PodSandboxStatusResult;
  ListPodSandbox: ListPodSandboxResult;
  CreateContainer: CreateContainerResult;
  StartContainer: StartContainerResult;
  StopContainer: StopContainerResult;
  RemoveContainer: RemoveContainerResult;
  ListContainers: ListContainersResult;
  ContainerStatus: ContainerStatusResult;
  ExecSync: ExecSyncResult;
  PullImage: PullImageResult;
  ImageStatus: ImageStatusResult;
  ProbeContainer: ProbeContainerResult;
}

/** The runtime actor of a node: `runtime/<nodeName>`. */
export function runtimeActorId(nodeName: string): string {
  return `runtime/${nodeName}`;
}
/** The kubelet actor of a node: `kubelet/<nodeName>`. */
export function kubeletActorId(nodeName: string): string {
  return `kubelet/${nodeName}`;
}
