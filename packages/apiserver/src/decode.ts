/**
 * Typed decoding of request bodies: the check Go's JSON decoder makes when kube-apiserver v1.22
 * unmarshals a body into the typed structs of k8s.io/api v0.22.8 (core/v1 Pod, Node, Namespace,
 * Event, Binding; apps/v1 ReplicaSet, Deployment; autoscaling/v1 Scale; policy/v1 Eviction, PodDisruptionBudget;
 * meta/v1 ObjectMeta, DeleteOptions) — `runtime.Decode` for creates and updates, `DefaultUnstructuredConverter.
 * FromUnstructured` / `DecodeInto` after a patch (apiserver `pkg/endpoints/handlers/patch.go`).
 * A value of the wrong JSON type (a string where the list of containers belongs, 1.5 for an
 * int64, 3e9 for an int32) is an error naming the field, found before defaulting, validation
 * or any controller reads the object. As Go does, a `null` element of a list or map becomes its
 * element type's zero value (`[null]` → one empty Container); `null` fields and unknown fields
 * pass through untouched.
 */
import type { DeleteOptions, Status } from '@podsim/api';
import { US_PER_SECOND } from '@podsim/api';
import { field, newBadRequest, newInvalid, type GroupKind } from './errors.js';
import { deepClone } from './objects.js';
import { rfc3339ParseError } from './rfc3339.js';
import { ValidStrings } from './validStrings.js';

// ---- shapes ---------------------------------------------------------------------------------------

/** A Go type as JSON sees it. `any` fields are not checked (podsim does not read them). */
/** `time`: metav1.Time, parsed as RFC 3339; `microTime`: metav1.MicroTime, checked as a string only. */
type Scalar = 'string' | 'bool' | 'int32' | 'int64' | 'intOrString' | 'quantity' | 'time' | 'microTime' | 'any';
interface Struct {
  readonly struct: string;
  readonly fields: Readonly<Record<string, Shape>>;
  /** `fields` by name, for {@link copyChecked}'s per-key lookup (a Map: no prototype keys). */
  readonly byName: ReadonlyMap<string, Shape>;
}
interface List {
  readonly list: Shape;
}
interface MapOf {
  readonly map: Shape;
}
type Shape = Scalar | Struct | List | MapOf;

const struct = (name: string, fields: Record<string, Shape>): Struct => ({ struct: name, fields, byName: new Map(Object.entries(fields)) });
const list = (s: Shape): List => ({ list: s });
const mapOf = (s: Shape): MapOf => ({ map: s });

const ownerReference = struct('v1.OwnerReference', {
  apiVersion: 'string',
  kind: 'string',
  name: 'string',
  uid: 'string',
  controller: 'bool',
  blockOwnerDeletion: 'bool',
});

const objectMeta = struct('v1.ObjectMeta', {
  name: 'string',
  generateName: 'string',
  namespace: 'string',
  selfLink: 'string',
  uid: 'string',
  resourceVersion: 'string',
  generation: 'int64',
  creationTimestamp: 'time',
  deletionTimestamp: 'time',
  deletionGracePeriodSeconds: 'int64',
  labels: mapOf('string'),
  annotations: mapOf('string'),
  ownerReferences: list(ownerReference),
  finalizers: list('string'),
  clusterName: 'string',
  managedFields: list('any'),
});

const objectReference = struct('v1.ObjectReference', {
  kind: 'string',
  namespace: 'string',
  name: 'string',
  uid: 'string',
  apiVersion: 'string',
  resourceVersion: 'string',
  fieldPath: 'string',
});

const handlerFields: Record<string, Shape> = {
  exec: struct('v1.ExecAction', { command: list('string') }),
  httpGet: struct('v1.HTTPGetAction', {
    path: 'string',
    port: 'intOrString',
    host: 'string',
    scheme: 'string',
    httpHeaders: list(struct('v1.HTTPHeader', { name: 'string', value: 'string' })),
  }),
  tcpSocket: struct('v1.TCPSocketAction', { port: 'intOrString', host: 'string' }),
};
const handler = struct('v1.Handler', handlerFields);
const probe = struct('v1.Probe', {
  ...handlerFields,
  initialDelaySeconds: 'int32',
  timeoutSeconds: 'int32',
  periodSeconds: 'int32',
  successThreshold: 'int32',
  failureThreshold: 'int32',
  terminationGracePeriodSeconds: 'int64',
});

const container = struct('v1.Container', {
  name: 'string',
  image: 'string',
  command: list('string'),
  args: list('string'),
  workingDir: 'string',
  ports: list(struct('v1.ContainerPort', { name: 'string', hostPort: 'int32', containerPort: 'int32', protocol: 'string', hostIP: 'string' })),
  env: list(struct('v1.EnvVar', { name: 'string', value: 'string', valueFrom: 'any' })),
  resources: struct('v1.ResourceRequirements', { limits: mapOf('quantity'), requests: mapOf('quantity') }),
  volumeMounts: list(
    struct('v1.VolumeMount', { name: 'string', readOnly: 'bool', mountPath: 'string', subPath: 'string', mountPropagation: 'string', subPathExpr: 'string' }),
  ),
  livenessProbe: probe,
  readinessProbe: probe,
  startupProbe: probe,
  lifecycle: struct('v1.Lifecycle', { postStart: handler, preStop: handler }),
  terminationMessagePath: 'string',
  terminationMessagePolicy: 'string',
  imagePullPolicy: 'string',
  stdin: 'bool',
  stdinOnce: 'bool',
  tty: 'bool',
});

const podSpec = struct('v1.PodSpec', {
  volumes: list(
    struct('v1.Volume', {
      name: 'string',
      emptyDir: struct('v1.EmptyDirVolumeSource', { medium: 'string', sizeLimit: 'quantity' }),
      hostPath: struct('v1.HostPathVolumeSource', { path: 'string', type: 'string' }),
      persistentVolumeClaim: struct('v1.PersistentVolumeClaimVolumeSource', { claimName: 'string', readOnly: 'bool' }),
    }),
  ),
  initContainers: list(container),
  containers: list(container),
  restartPolicy: 'string',
  terminationGracePeriodSeconds: 'int64',
  activeDeadlineSeconds: 'int64',
  dnsPolicy: 'string',
  nodeSelector: mapOf('string'),
  serviceAccountName: 'string',
  serviceAccount: 'string',
  automountServiceAccountToken: 'bool',
  nodeName: 'string',
  hostNetwork: 'bool',
  hostPID: 'bool',
  hostIPC: 'bool',
  hostname: 'string',
  subdomain: 'string',
  schedulerName: 'string',
  tolerations: list(struct('v1.Toleration', { key: 'string', operator: 'string', value: 'string', effect: 'string', tolerationSeconds: 'int64' })),
  priorityClassName: 'string',
  priority: 'int32',
  readinessGates: list(struct('v1.PodReadinessGate', { conditionType: 'string' })),
  runtimeClassName: 'string',
  enableServiceLinks: 'bool',
  preemptionPolicy: 'string',
  overhead: mapOf('quantity'),
});

const containerState = struct('v1.ContainerState', {
  waiting: struct('v1.ContainerStateWaiting', { reason: 'string', message: 'string' }),
  running: struct('v1.ContainerStateRunning', { startedAt: 'time' }),
  terminated: struct('v1.ContainerStateTerminated', {
    exitCode: 'int32',
    signal: 'int32',
    reason: 'string',
    message: 'string',
    startedAt: 'time',
    finishedAt: 'time',
    containerID: 'string',
  }),
});
const containerStatus = struct('v1.ContainerStatus', {
  name: 'string',
  state: containerState,
  lastState: containerState,
  ready: 'bool',
  restartCount: 'int32',
  image: 'string',
  imageID: 'string',
  containerID: 'string',
  started: 'bool',
});

const podStatus = struct('v1.PodStatus', {
  phase: 'string',
  conditions: list(
    struct('v1.PodCondition', { type: 'string', status: 'string', lastProbeTime: 'time', lastTransitionTime: 'time', reason: 'string', message: 'string' }),
  ),
  message: 'string',
  reason: 'string',
  nominatedNodeName: 'string',
  hostIP: 'string',
  podIP: 'string',
  podIPs: list(struct('v1.PodIP', { ip: 'string' })),
  startTime: 'time',
  initContainerStatuses: list(containerStatus),
  containerStatuses: list(containerStatus),
  qosClass: 'string',
});

const labelSelector = struct('v1.LabelSelector', {
  matchLabels: mapOf('string'),
  matchExpressions: list(struct('v1.LabelSelectorRequirement', { key: 'string', operator: 'string', values: list('string') })),
});
const podTemplateSpec = struct('v1.PodTemplateSpec', { metadata: objectMeta, spec: podSpec });
const workloadCondition = (name: string) =>
  struct(name, { type: 'string', status: 'string', lastUpdateTime: 'time', lastTransitionTime: 'time', reason: 'string', message: 'string' });

const top = (name: string, fields: Record<string, Shape>): Struct => struct(name, { apiVersion: 'string', kind: 'string', metadata: objectMeta, ...fields });

const deleteOptionsShape = struct('v1.DeleteOptions', {
  apiVersion: 'string',
  kind: 'string',
  gracePeriodSeconds: 'int64',
  preconditions: struct('v1.Preconditions', { uid: 'string', resourceVersion: 'string' }),
  orphanDependents: 'bool',
  propagationPolicy: 'string',
  dryRun: list('string'),
});

/** The typed shape of each kind podsim serves (plus the bodies of subresources). */
const KINDS: Readonly<Record<string, Struct>> = {
  Pod: top('v1.Pod', { spec: podSpec, status: podStatus }),
  Node: top('v1.Node', {
    spec: struct('v1.NodeSpec', {
      podCIDR: 'string',
      podCIDRs: list('string'),
      providerID: 'string',
      unschedulable: 'bool',
      taints: list(struct('v1.Taint', { key: 'string', value: 'string', effect: 'string', timeAdded: 'time' })),
    }),
    status: struct('v1.NodeStatus', {
      capacity: mapOf('quantity'),
      allocatable: mapOf('quantity'),
      phase: 'string',
      conditions: list(
        struct('v1.NodeCondition', { type: 'string', status: 'string', lastHeartbeatTime: 'time', lastTransitionTime: 'time', reason: 'string', message: 'string' }),
      ),
      addresses: list(struct('v1.NodeAddress', { type: 'string', address: 'string' })),
    }),
  }),
  Namespace: top('v1.Namespace', {
    spec: struct('v1.NamespaceSpec', { finalizers: list('string') }),
    status: struct('v1.NamespaceStatus', { phase: 'string' }),
  }),
  Event: top('v1.Event', {
    involvedObject: objectReference,
    reason: 'string',
    message: 'string',
    source: struct('v1.EventSource', { component: 'string', host: 'string' }),
    firstTimestamp: 'time',
    lastTimestamp: 'time',
    count: 'int32',
    type: 'string',
    eventTime: 'microTime',
    series: struct('v1.EventSeries', { count: 'int32', lastObservedTime: 'microTime' }),
    action: 'string',
    related: objectReference,
    reportingComponent: 'string',
    reportingInstance: 'string',
  }),
  ReplicaSet: top('v1.ReplicaSet', {
    spec: struct('v1.ReplicaSetSpec', { replicas: 'int32', minReadySeconds: 'int32', selector: labelSelector, template: podTemplateSpec }),
    status: struct('v1.ReplicaSetStatus', {
      replicas: 'int32',
      fullyLabeledReplicas: 'int32',
      readyReplicas: 'int32',
      availableReplicas: 'int32',
      observedGeneration: 'int64',
      conditions: list(workloadCondition('v1.ReplicaSetCondition')),
    }),
  }),
  Deployment: top('v1.Deployment', {
    spec: struct('v1.DeploymentSpec', {
      replicas: 'int32',
      selector: labelSelector,
      template: podTemplateSpec,
      strategy: struct('v1.DeploymentStrategy', {
        type: 'string',
        rollingUpdate: struct('v1.RollingUpdateDeployment', { maxUnavailable: 'intOrString', maxSurge: 'intOrString' }),
      }),
      minReadySeconds: 'int32',
      revisionHistoryLimit: 'int32',
      paused: 'bool',
      progressDeadlineSeconds: 'int32',
    }),
    status: struct('v1.DeploymentStatus', {
      observedGeneration: 'int64',
      replicas: 'int32',
      updatedReplicas: 'int32',
      readyReplicas: 'int32',
      availableReplicas: 'int32',
      unavailableReplicas: 'int32',
      conditions: list(workloadCondition('v1.DeploymentCondition')),
      collisionCount: 'int32',
    }),
  }),
  StatefulSet: top('v1.StatefulSet', {
    spec: struct('v1.StatefulSetSpec', {
      replicas: 'int32',
      selector: labelSelector,
      template: podTemplateSpec,
      volumeClaimTemplates: list(top('v1.PersistentVolumeClaim', { spec: 'any', status: 'any' })),
      serviceName: 'string',
      podManagementPolicy: 'string',
      updateStrategy: struct('v1.StatefulSetUpdateStrategy', {
        type: 'string',
        rollingUpdate: struct('v1.RollingUpdateStatefulSetStrategy', { partition: 'int32' }),
      }),
      revisionHistoryLimit: 'int32',
      minReadySeconds: 'int32',
    }),
    status: struct('v1.StatefulSetStatus', {
      observedGeneration: 'int64',
      replicas: 'int32',
      readyReplicas: 'int32',
      currentReplicas: 'int32',
      updatedReplicas: 'int32',
      currentRevision: 'string',
      updateRevision: 'string',
      collisionCount: 'int32',
      conditions: list(workloadCondition('v1.StatefulSetCondition')),
      availableReplicas: 'int32',
    }),
  }),
  Job: top('v1.Job', {
    spec: struct('v1.JobSpec', {
      parallelism: 'int32',
      completions: 'int32',
      activeDeadlineSeconds: 'int64',
      backoffLimit: 'int32',
      selector: labelSelector,
      manualSelector: 'bool',
      template: podTemplateSpec,
      ttlSecondsAfterFinished: 'int32',
      completionMode: 'string',
      suspend: 'bool',
    }),
    status: struct('v1.JobStatus', {
      conditions: list(struct('v1.JobCondition', { type: 'string', status: 'string', lastProbeTime: 'time', lastTransitionTime: 'time', reason: 'string', message: 'string' })),
      startTime: 'time',
      completionTime: 'time',
      active: 'int32',
      succeeded: 'int32',
      failed: 'int32',
      completedIndexes: 'string',
    }),
  }),
  DaemonSet: top('v1.DaemonSet', {
    spec: struct('v1.DaemonSetSpec', {
      selector: labelSelector,
      template: podTemplateSpec,
      updateStrategy: struct('v1.DaemonSetUpdateStrategy', {
        type: 'string',
        rollingUpdate: struct('v1.RollingUpdateDaemonSet', { maxUnavailable: 'intOrString', maxSurge: 'intOrString' }),
      }),
      minReadySeconds: 'int32',
      revisionHistoryLimit: 'int32',
    }),
    status: struct('v1.DaemonSetStatus', {
      currentNumberScheduled: 'int32',
      numberMisscheduled: 'int32',
      desiredNumberScheduled: 'int32',
      numberReady: 'int32',
      observedGeneration: 'int64',
      updatedNumberScheduled: 'int32',
      numberAvailable: 'int32',
      numberUnavailable: 'int32',
      collisionCount: 'int32',
      conditions: list(workloadCondition('v1.DaemonSetCondition')),
    }),
  }),
  Service: top('v1.Service', {
    spec: struct('v1.ServiceSpec', {
      ports: list(struct('v1.ServicePort', { name: 'string', protocol: 'string', appProtocol: 'string', port: 'int32', targetPort: 'intOrString', nodePort: 'int32' })),
      selector: mapOf('string'),
      clusterIP: 'string',
      clusterIPs: list('string'),
      type: 'string',
      externalIPs: list('string'),
      sessionAffinity: 'string',
      sessionAffinityConfig: struct('v1.SessionAffinityConfig', { clientIP: struct('v1.ClientIPConfig', { timeoutSeconds: 'int32' }) }),
      loadBalancerIP: 'string',
      externalName: 'string',
      externalTrafficPolicy: 'string',
      healthCheckNodePort: 'int32',
      publishNotReadyAddresses: 'bool',
      ipFamilies: list('string'),
      ipFamilyPolicy: 'string',
      internalTrafficPolicy: 'string',
      allocateLoadBalancerNodePorts: 'bool',
    }),
    status: 'any',
  }),
  Endpoints: top('v1.Endpoints', {
    subsets: list(
      struct('v1.EndpointSubset', {
        addresses: list(struct('v1.EndpointAddress', { ip: 'string', hostname: 'string', nodeName: 'string', targetRef: objectReference })),
        notReadyAddresses: list(struct('v1.EndpointAddress', { ip: 'string', hostname: 'string', nodeName: 'string', targetRef: objectReference })),
        ports: list(struct('v1.EndpointPort', { name: 'string', port: 'int32', protocol: 'string', appProtocol: 'string' })),
      }),
    ),
  }),
  EndpointSlice: top('v1.EndpointSlice', {
    addressType: 'string',
    endpoints: list(
      struct('v1.Endpoint', {
        addresses: list('string'),
        conditions: struct('v1.EndpointConditions', { ready: 'bool', serving: 'bool', terminating: 'bool' }),
        hostname: 'string',
        targetRef: objectReference,
        nodeName: 'string',
        zone: 'string',
        hints: 'any',
      }),
    ),
    ports: list(struct('v1.EndpointPort', { name: 'string', protocol: 'string', port: 'int32', appProtocol: 'string' })),
  }),
  ControllerRevision: top('v1.ControllerRevision', { data: 'any', revision: 'int64' }),
  PersistentVolumeClaim: top('v1.PersistentVolumeClaim', {
    spec: struct('v1.PersistentVolumeClaimSpec', {
      accessModes: list('string'),
      selector: labelSelector,
      resources: struct('v1.ResourceRequirements', { limits: mapOf('quantity'), requests: mapOf('quantity') }),
      volumeName: 'string',
      storageClassName: 'string',
      volumeMode: 'string',
    }),
    status: struct('v1.PersistentVolumeClaimStatus', { phase: 'string', accessModes: list('string'), capacity: mapOf('quantity') }),
  }),
  Scale: top('v1.Scale', { spec: struct('v1.ScaleSpec', { replicas: 'int32' }), status: struct('v1.ScaleStatus', { replicas: 'int32', selector: 'string' }) }),
  Binding: top('v1.Binding', { target: objectReference }),
  Eviction: top('v1.Eviction', { deleteOptions: deleteOptionsShape }),
  Lease: top('v1.Lease', {
    spec: struct('v1.LeaseSpec', { holderIdentity: 'string', leaseDurationSeconds: 'int32', acquireTime: 'microTime', renewTime: 'microTime', leaseTransitions: 'int32' }),
  }),
  PodDisruptionBudget: top('v1.PodDisruptionBudget', {
    spec: struct('v1.PodDisruptionBudgetSpec', { minAvailable: 'intOrString', selector: labelSelector, maxUnavailable: 'intOrString' }),
    status: struct('v1.PodDisruptionBudgetStatus', {
      observedGeneration: 'int64',
      disruptedPods: mapOf('time'),
      disruptionsAllowed: 'int32',
      currentHealthy: 'int32',
      desiredHealthy: 'int32',
      expectedPods: 'int32',
      conditions: list(
        struct('v1.Condition', { type: 'string', status: 'string', observedGeneration: 'int64', lastTransitionTime: 'time', reason: 'string', message: 'string' }),
      ),
    }),
  }),
};

// ---- checking -------------------------------------------------------------------------------------

const INT32_MAX = 2 ** 31 - 1;
const INT64_MAX = 2 ** 63;

function typeName(s: Shape): string {
  if (typeof s === 'string') {
    switch (s) {
      case 'intOrString':
        return 'intstr.IntOrString';
      case 'quantity':
        return 'resource.Quantity';
      case 'time':
        return 'v1.Time';
      case 'microTime':
        return 'v1.MicroTime';
      default:
        return s;
    }
  }
  if ('struct' in s) return s.struct;
  if ('list' in s) return `[]${typeName(s.list)}`;
  return `map[string]${typeName(s.map)}`;
}

/** `resource.ErrFormatWrong`, as the decoder reports a malformed quantity string. */
export const QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** A string ParseQuantity accepts: a decimal number and a suffix (n u m "" k M G T P E, Ki … Ei, or an exponent e3 / E-2). */
export function isQuantityText(v: string): boolean {
  return /^[+-]?(\d+\.?\d*|\.\d+)(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+)?$/.test(v);
}

/** How Go's decoder names a JSON value in "cannot unmarshal X into …". */
function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return `number ${Number.isFinite(v) ? String(v) : v > 0 ? '1e+400' : '-1e+400'}`;
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'object' ? 'object' : typeof v;
}

function isInt(v: unknown, max: number): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= -max && v < max;
}

/** The zero value a `null` list / map element decodes to. */
function zero(s: Shape): unknown {
  if (typeof s === 'string') return s === 'string' || s === 'time' || s === 'microTime' ? '' : s === 'bool' ? false : s === 'any' ? null : 0;
  if ('struct' in s) return {};
  return null;
}

/**
 * Checks `v` against `s`; returns the first mismatch as `[path, message, bare]`: `bare` when the
 * message is a field type's own parse error (ParseQuantity's, time.Parse's), which the decoder
 * returns unwrapped, not encoding/json's `json: cannot unmarshal …`. Replaces `null` elements of
 * lists and maps by their zero value (in place: `v` must be a private copy).
 *
 * A valid body (nearly every one) is walked once without building field paths; only a mismatch
 * walks it again with them. The second walk meets the same first mismatch: the first one only
 * replaced `null` elements before it, by zero values that check.
 */
function check(v: unknown, s: Shape, path: string): [string, string, boolean?] | undefined {
  return walk(v, s, path, false) && walk(v, s, path, true);
}

/** The path of a field, list element or map entry under `path` ('' when not tracked). */
function fieldPath(path: string, k: string, track: boolean): string {
  return track ? (path === '' ? k : `${path}.${k}`) : '';
}

/** Time strings already found to parse: the same few timestamps (a second's creationTimestamp, startTime, lastTransitionTime) arrive in nearly every status write. */
const VALID_TIMES = new ValidStrings();

/** {@link check}'s walk; without `track` a mismatch is reported with an empty path and message. */
function walk(v: unknown, s: Shape, path: string, track: boolean): [string, string, boolean?] | undefined {
  if (v === null || v === undefined || s === 'any') return undefined;
  if (typeof s === 'string') {
    switch (s) {
      case 'string':
      case 'microTime':
        return typeof v === 'string' ? undefined : mismatch(v, s, path, track);
      case 'time': {
        // metav1.Time's UnmarshalJSON → time.Parse(time.RFC3339, …) (apimachinery v0.22.8 time.go).
        if (typeof v !== 'string') return mismatch(v, s, path, track);
        if (VALID_TIMES.has(v)) return undefined;
        const te = rfc3339ParseError(v);
        if (te === undefined) {
          VALID_TIMES.add(v);
          return undefined;
        }
        return track ? [path, te, true] : UNTRACKED;
      }
      case 'bool':
        return typeof v === 'boolean' ? undefined : mismatch(v, s, path, track);
      case 'int32':
        return isInt(v, INT32_MAX + 1) ? undefined : mismatch(v, s, path, track);
      case 'int64':
        return isInt(v, INT64_MAX) ? undefined : mismatch(v, s, path, track);
      case 'intOrString':
        return typeof v === 'string' || isInt(v, INT32_MAX + 1) ? undefined : mismatch(v, s, path, track);
      case 'quantity':
        if (typeof v === 'number' && Number.isFinite(v)) return undefined;
        if (typeof v !== 'string') return mismatch(v, s, path, track);
        // resource.Quantity's UnmarshalJSON → ParseQuantity (apimachinery v0.22.8 quantity.go).
        return isQuantityText(v) ? undefined : [path, QUANTITY_FORMAT_ERROR, true];
    }
  }
  if ('list' in s) {
    if (!Array.isArray(v)) return mismatch(v, s, path, track);
    for (let i = 0; i < v.length; i++) {
      if (v[i] === null) v[i] = zero(s.list);
      const e = walk(v[i], s.list, track ? `${path}[${i}]` : '', track);
      if (e) return e;
    }
    return undefined;
  }
  if (typeof v !== 'object' || Array.isArray(v)) return mismatch(v, s, path, track);
  const o = v as Record<string, unknown>;
  if ('map' in s) {
    for (const k in o) {
      if (o[k] === null) o[k] = zero(s.map);
      const e = walk(o[k], s.map, track ? `${path}[${JSON.stringify(k)}]` : '', track);
      if (e) return e;
    }
    return undefined;
  }
  for (const k in s.fields) {
    const x = o[k];
    if (x === undefined || x === null) continue;
    const e = walk(x, s.fields[k], fieldPath(path, k, track), track);
    if (e) return e;
  }
  return undefined;
}

const UNTRACKED: [string, string] = ['', ''];

/** {@link copyChecked}'s answer when the value does not check (never a JSON value). */
const MISMATCH: unique symbol = Symbol('mismatch');

/**
 * A copy of `v` that checks against `s` as it is made: what {@link deepClone} followed by
 * {@link check} gives for a valid value (same keys in the same order, `undefined` object fields
 * dropped, `null` list and map elements replaced by their zero value), in one walk instead of
 * two. {@link MISMATCH} when the value does not check; the caller then takes the two-pass path,
 * which names the first mismatch as before (the order in which this walk meets mismatches is
 * the body's key order, not the shape's, so it never picks the error).
 */
function copyChecked(v: unknown, s: Shape, keepKey?: string, keepValue?: unknown): unknown {
  if (v === null || v === undefined) return v;
  if (typeof s === 'string') {
    if (s === 'any') return deepClone(v);
    // The common scalars inline; the others (and every mismatch) as `walk` checks them.
    if (s === 'string') return typeof v === 'string' ? v : MISMATCH;
    if (s === 'bool') return typeof v === 'boolean' ? v : MISMATCH;
    return walk(v, s, '', false) ? MISMATCH : v;
  }
  if ('list' in s) {
    if (!Array.isArray(v)) return MISMATCH;
    const el = s.list;
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const c = copyElement(v[i], el);
      if (c === MISMATCH) return MISMATCH;
      out[i] = c;
    }
    return out;
  }
  if (typeof v !== 'object' || Array.isArray(v)) return MISMATCH;
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  if ('map' in s) {
    const el = s.map;
    for (const k in o) {
      const x = o[k];
      if (x === undefined) continue;
      const c = copyElement(x, el);
      if (c === MISMATCH) return MISMATCH;
      out[k] = c;
    }
    return out;
  }
  const byName = s.byName;
  for (const k in o) {
    const x = o[k];
    if (x === undefined) continue;
    // A field the caller hands over as it is (a stored, already decoded value; top level only).
    if (k === keepKey && x === keepValue) {
      out[k] = x;
      continue;
    }
    const fs = byName.get(k);
    // Unknown fields pass through untouched; a `null` field stays `null`.
    if (fs === undefined || x === null) {
      out[k] = deepClone(x);
      continue;
    }
    const c = copyChecked(x, fs);
    if (c === MISMATCH) return MISMATCH;
    out[k] = c;
  }
  return out;
}

/** A list or map element's copy: a `null` element becomes its zero value, as the decoder leaves it. */
function copyElement(x: unknown, el: Shape): unknown {
  return x === null ? zero(el) : copyChecked(x, el);
}

/** encoding/json's "cannot unmarshal" error at `path` (a placeholder when paths are not tracked). */
function mismatch(v: unknown, s: Shape, path: string, track: boolean): [string, string] {
  return track ? [path, `cannot unmarshal ${jsonKind(v)} into Go struct field ${path} of type ${typeName(s)}`] : UNTRACKED;
}

/**
 * Where {@link decodeTyped} would refuse `obj` as `kind` (a copy is checked): the field path as
 * the checker walks it (`spec.containers[0].resources.requests["cpu"]`) and the decoder's
 * message; undefined when it decodes. For tools that point at the offending field of a file.
 */
export function decodeProblem(obj: unknown, kind: string): { path: string; message: string } | undefined {
  const shape = KINDS[kind];
  if (!shape) return undefined;
  const e = check(deepClone(obj as Record<string, unknown>), shape, '');
  return e ? { path: e[0], message: e[1] } : undefined;
}

/** Whether {@link decodeTyped} knows `kind`. */
export function hasTypedShape(kind: string): boolean {
  return KINDS[kind] !== undefined;
}

/**
 * {@link decodeTyped} of a private copy of `obj` (which is not touched): the copy, fixed up, or
 * the decoder's error. `keep`: a top-level field whose value, when `obj` holds that very object,
 * goes into the copy by reference, unchecked (a stored subtree the caller will not let anyone
 * mutate; the slow path below copies it, as before). A valid body is copied and checked in one walk ({@link copyChecked});
 * one that does not check is copied and checked again as {@link decodeTyped} does, so the error
 * is the same. Kinds without a typed shape are only copied.
 */
export function decodeTypedCopy(
  obj: Record<string, unknown>,
  kind: string,
  version: string,
  mode: 'body' | 'patch',
  gk: GroupKind,
  name = '',
  keep?: { readonly key: string; readonly value: object },
): { readonly object: Record<string, unknown>; readonly status?: undefined } | { readonly object?: undefined; readonly status: Status } {
  const shape = KINDS[kind];
  if (shape) {
    const c = copyChecked(obj, shape, keep?.key, keep?.value);
    if (c !== MISMATCH) return { object: c as Record<string, unknown> };
  }
  const o = deepClone(obj);
  const bad = decodeTyped(o, kind, version, mode, gk, name);
  return bad ? { status: bad } : { object: o };
}

/**
 * Decodes `obj` (a private copy, fixed up in place) as a `kind` of `gk`'s group. `patch`: the
 * object is the result of a PATCH (422 Invalid on field `patch`, as patch.go answers when the
 * patched map does not convert); otherwise the request body itself (400 BadRequest
 * `Pod in version "v1" cannot be handled as a Pod: …`, as the decoder answers). `name` names
 * the object in the 422.
 */
export function decodeTyped(obj: Record<string, unknown>, kind: string, version: string, mode: 'body' | 'patch', gk: GroupKind, name = ''): Status | undefined {
  const shape = KINDS[kind];
  if (!shape) return undefined;
  const e = check(obj, shape, '');
  if (!e) return undefined;
  // A malformed quantity or time is ParseQuantity's or time.Parse's error, not encoding/json's.
  const message = e[2] ? e[1] : `json: ${e[1].replace('Go struct field ', `Go struct field ${kind}.`)}`;
  if (mode === 'body') return newBadRequest(`${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: ${message}`);
  return newInvalid(gk, name, [field.invalid('patch', e[0], message)]);
}

/**
 * Decodes DeleteOptions (a private copy): wrong types are a 400 as the decoder answers
 * (`gracePeriodSeconds: "x"`, `preconditions: 5`, `dryRun: "All"`).
 */
export function decodeDeleteOptions(options: DeleteOptions): Status | undefined {
  const e = check(options, deleteOptionsShape, '');
  return e ? newBadRequest(`DeleteOptions in version "v1" cannot be handled as a DeleteOptions: json: ${e[1].replace('Go struct field ', 'Go struct field DeleteOptions.')}`) : undefined;
}

/**
 * The longest grace period (seconds) whose deletionTimestamp podsim's virtual clock can hold at
 * virtual time `nowUs`: virtual time is an integer count of µs below 2^53 (about 285 years).
 * Upstream has no such bound, but its `time.Second * gracePeriodSeconds` overflows Go's
 * time.Duration beyond 9223372036 s and the deletionTimestamp wraps into nonsense there.
 */
export function maxGracePeriodSeconds(nowUs: number): number {
  return Math.floor((Number.MAX_SAFE_INTEGER - nowUs) / US_PER_SECOND);
}
