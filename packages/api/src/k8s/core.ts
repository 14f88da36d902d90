/**
 * core/v1 types (k8s.io/api `core/v1/types.go`, v0.22.8) that pod deletion touches: Pod, Node,
 * Namespace, Event. JSON wire shape; optional fields as upstream marks them `omitempty`.
 */
import type { DeleteOptions, KubeObject, ObjectMeta } from './meta.js';

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';
export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface ExecAction {
  command?: string[];
}
export interface HTTPGetAction {
  path?: string;
  port: number | string;
  host?: string;
  scheme?: 'HTTP' | 'HTTPS';
}
export interface TCPSocketAction {
  port: number | string;
  host?: string;
}
/** `Handler` in 1.22 (renamed LifecycleHandler later). */
export interface LifecycleHandler {
  exec?: ExecAction;
  httpGet?: HTTPGetAction;
  tcpSocket?: TCPSocketAction;
}
export interface Lifecycle {
  postStart?: LifecycleHandler;
  preStop?: LifecycleHandler;
}

export interface Probe extends LifecycleHandler {
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

export interface ResourceRequirements {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  hostPort?: number;
  hostIP?: string;
  protocol?: 'TCP' | 'UDP' | 'SCTP' | string;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: Record<string, unknown>;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: ContainerPort[];
  resources?: ResourceRequirements;
  volumeMounts?: VolumeMount[];
  lifecycle?: Lifecycle;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  terminationMessagePath?: string;
  terminationMessagePolicy?: 'File' | 'FallbackToLogsOnError' | string;
  workingDir?: string;
  stdin?: boolean;
  tty?: boolean;
  securityContext?: Record<string, unknown>;
}

export interface Volume {
  name: string;
  emptyDir?: Record<string, unknown>;
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  configMap?: { name?: string };
  secret?: { secretName?: string };
  hostPath?: { path: string };
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  restartPolicy?: RestartPolicy;
  terminationGracePeriodSeconds?: number;
  activeDeadlineSeconds?: number;
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  schedulerName?: string;
  tolerations?: Toleration[];
  priority?: number;
  priorityClassName?: string;
  preemptionPolicy?: 'PreemptLowerPriority' | 'Never';
  dnsPolicy?: 'ClusterFirst' | 'ClusterFirstWithHostNet' | 'Default' | 'None' | string;
  serviceAccountName?: string;
  /** Deprecated alias of serviceAccountName (kept in sync by defaulting). */
  serviceAccount?: string;
  automountServiceAccountToken?: boolean;
  hostNetwork?: boolean;
  hostname?: string;
  subdomain?: string;
  enableServiceLinks?: boolean;
  securityContext?: Record<string, unknown>;
  affinity?: Record<string, unknown>;
  runtimeClassName?: string;
  readinessGates?: { conditionType: string }[];
}

export interface PodCondition {
  type: 'PodScheduled' | 'Initialized' | 'ContainersReady' | 'Ready' | string;
  status: ConditionStatus;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface ContainerStateWaiting {
  reason?: string;
  message?: string;
}
export interface ContainerStateRunning {
  startedAt?: string;
}
export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  containerID?: string;
}
export interface ContainerState {
  waiting?: ContainerStateWaiting;
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
}

export interface ContainerStatus {
  name: string;
  state: ContainerState;
  lastState: ContainerState;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started?: boolean;
}

export interface PodIP {
  ip: string;
}

export interface PodStatus {
  phase?: PodPhase;
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  nominatedNodeName?: string;
  hostIP?: string;
  podIP?: string;
  podIPs?: PodIP[];
  startTime?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  qosClass?: string;
}

/** core/v1 Binding: the body of `POST pods/<name>/binding` (what the scheduler sends). */
export interface Binding extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'Binding';
  target: ObjectReference;
}

/**
 * policy/v1 (or v1beta1) Eviction (k8s.io/api `policy/v1/types.go`): the body of
 * `POST pods/<name>/eviction`, what `kubectl drain` sends. Lives here beside Binding, the other
 * pod subresource body.
 */
export interface Eviction extends KubeObject {
  apiVersion?: 'policy/v1' | 'policy/v1beta1';
  kind?: 'Eviction';
  deleteOptions?: DeleteOptions;
}

export interface Pod extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'Pod';
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: PodStatus;
}

export interface NodeCondition {
  type: 'Ready' | 'MemoryPressure' | 'DiskPressure' | 'PIDPressure' | 'NetworkUnavailable' | string;
  status: ConditionStatus;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  timeAdded?: string;
}

export interface NodeSpec {
  podCIDR?: string;
  podCIDRs?: string[];
  providerID?: string;
  unschedulable?: boolean;
  taints?: Taint[];
}

export interface NodeAddress {
  type: string;
  address: string;
}

export interface NodeStatus {
  capacity?: Record<string, string>;
  allocatable?: Record<string, string>;
  conditions?: NodeCondition[];
  addresses?: NodeAddress[];
  daemonEndpoints?: { kubeletEndpoint?: { Port: number } };
  nodeInfo?: {
    machineID?: string;
    systemUUID?: string;
    bootID?: string;
    kubeProxyVersion?: string;
    kubeletVersion?: string;
    containerRuntimeVersion?: string;
    osImage?: string;
    kernelVersion?: string;
    operatingSystem?: string;
    architecture?: string;
  };
}

export interface Node extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'Node';
  spec?: NodeSpec;
  status?: NodeStatus;
}

/** `labelNodeDisruptionExclusion`: nodes the node lifecycle controller leaves out of its zone counts. */
export const LABEL_NODE_EXCLUDE_DISRUPTION = 'node.kubernetes.io/exclude-disruption';

/**
 * `GetZoneKey` (`k8s.io/component-helpers/node/topology`, v0.22): region and zone, each from the
 * beta `failure-domain.beta.kubernetes.io/*` label first and the GA `topology.kubernetes.io/*`
 * one when the beta label is absent, joined `region:\0:zone`; "" when both are empty. The node
 * lifecycle controller keys its zones by it; the apiserver traces it on node writes.
 */
export function zoneKey(labels: Readonly<Record<string, string>> | undefined): string {
  const l = labels ?? {};
  const zone = l['failure-domain.beta.kubernetes.io/zone'] ?? l['topology.kubernetes.io/zone'] ?? '';
  const region = l['failure-domain.beta.kubernetes.io/region'] ?? l['topology.kubernetes.io/region'] ?? '';
  if (region === '' && zone === '') return '';
  return `${region}:\x00:${zone}`;
}

export interface Namespace extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'Namespace';
  spec?: { finalizers?: string[] };
  status?: { phase?: 'Active' | 'Terminating'; conditions?: NamespaceCondition[] };
}

/** `v1.NamespaceCondition` (set by the namespace controller while it empties a namespace). */
export interface NamespaceCondition {
  type: string;
  status: ConditionStatus;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface ObjectReference {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

/** core/v1 Event (what `kubectl describe` lists). */
export interface Event extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'Event';
  involvedObject: ObjectReference;
  reason?: string;
  message?: string;
  source?: { component?: string; host?: string };
  firstTimestamp?: string;
  lastTimestamp?: string;
  count?: number;
  type?: 'Normal' | 'Warning';
  /** events.k8s.io-era fields (MicroTime = RFC 3339 with µs). */
  eventTime?: string;
  series?: { count?: number; lastObservedTime?: string };
  action?: string;
  related?: ObjectReference;
  reportingComponent?: string;
  reportingInstance?: string;
}
