/**
 * Server-side printing for `kubectl get`: kubernetes `pkg/printers/internalversion/printers.go`
 * (printPod, printNode, printReplicaSet, printDeployment, printNamespace, printEvent, printPodDisruptionBudget and their
 * column definitions; read at v1.23.13, the 1.22 RESTARTS "(… ago)" suffix included per PR
 * #100142) and `pkg/printers/tablegenerator.go` / `pkg/registry/.../tableconvertor.go`
 * (`GenerateTable` with `Wide: true`). Times are printed at the apiserver's clock `nowUs`.
 */
import type {
  DaemonSet,
  Job,
  ControllerRevision,
  PersistentVolumeClaim,
  StatefulSet,
  EndpointSlice,
  Endpoints,
  Service,
  Lease,
  PodDisruptionBudget,
  Clock,
  ContainerStatus,
  Deployment,
  Event,
  IncludeObjectPolicy,
  KubeObject,
  Namespace,
  Node,
  PartialObjectMetadata,
  Pod,
  ReplicaSet,
  Table,
  TableColumnDefinition,
  TableRow,
  TableRowCondition,
  VirtualTime,
} from '@podsim/api';
import { humanDuration } from './duration.js';
import { ENDPOINTSLICE_COLUMNS, ENDPOINTS_COLUMNS, SERVICE_COLUMNS, printEndpointSlice, printEndpoints, printService } from './printersService.js';
import { formatLabelSelector, labelSelectorAsSelector, labelSelectorString } from '@podsim/api';

// Descriptions are the upstream SwaggerDoc() strings the printers reference (k8s.io/api and
// apimachinery `types_swagger_doc_generated.go`, read at v1.23.13).
const DOC_NAME =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: http://kubernetes.io/docs/user-guide/identifiers#names';
const DOC_CREATION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';
const DOC_CONTAINERS = 'Names of each container in the template.';
const DOC_IMAGES = 'Images referenced by each container in the template.';

function col(name: string, type: string, description: string, priority = 0, format = ''): TableColumnDefinition {
  return { name, type, format, description, priority };
}

/**
 * The wide columns every workload with a pod template ends with: CONTAINERS IMAGES SELECTOR
 * (`layoutContainerCells` fills the first two); only the selector's description differs.
 */
function podTemplateColumns(selectorDescription: string): TableColumnDefinition[] {
  return [col('Containers', 'string', DOC_CONTAINERS, 1), col('Images', 'string', DOC_IMAGES, 1), col('Selector', 'string', selectorDescription, 1)];
}

/** `podColumnDefinitions`. */
export const POD_COLUMNS: readonly TableColumnDefinition[] = [
  col('Name', 'string', DOC_NAME, 0, 'name'),
  col('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
  col('Status', 'string', 'The aggregate status of the containers in this pod.'),
  col('Restarts', 'string', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
  col('Age', 'string', DOC_CREATION),
  col('IP', 'string', 'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.', 1),
  col(
    'Node',
    'string',
    'NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the scheduler simply schedules this pod onto that node, assuming that it fits resource requirements.',
    1,
  ),
  col(
    'Nominated Node',
    'string',
    'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.',
    1,
  ),
  col(
    'Readiness Gates',
    'string',
    'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
    1,
  ),
];

/** `nodeColumnDefinitions`. */
export const NODE_COLUMNS: readonly TableColumnDefinition[] = [
  col('Name', 'string', DOC_NAME, 0, 'name'),
  col('Status', 'string', 'The status of the node'),
  col('Roles', 'string', 'The roles of the node'),
  col('Age', 'string', DOC_CREATION),
  col('Version', 'string', 'Kubelet Version reported by the node.'),
  col(
    'Internal-IP',
    'string',
    'List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/concepts/nodes/node/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See http://pr.k8s.io/79391 for an example.',
    1,
  ),
  col(
    'External-IP',
    'string',
    'List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/concepts/nodes/node/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See http://pr.k8s.io/79391 for an example.',
    1,
  ),
  col('OS-Image', 'string', "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).", 1),
  col('Kernel-Version', 'string', "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", 1),
  col('Container-Runtime', 'string', 'ContainerRuntime Version reported by the node through runtime remote API (e.g. docker://1.5.0).', 1),
];

/** `replicaSetColumnDefinitions`. */
export const REPLICASET_COLUMNS: readonly TableColumnDefinition[] = [
  col('Name', 'string', DOC_NAME, 0, 'name'),
  col(
    'Desired',
    'integer',
    'Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller',
  ),
  col(
    'Current',
    'integer',
    'Replicas is the most recently oberved number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller',
  ),
  col('Ready', 'integer', 'The number of ready replicas for this replica set.'),
  col('Age', 'string', DOC_CREATION),
  ...podTemplateColumns(
    'Selector is a label query over pods that should match the replica count. If the selector is empty, it is defaulted to the labels present on the pod template. Label keys and values that must match in order to be controlled by this replica set. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors',
  ),
];

/** `deploymentColumnDefinitions`. */
export const DEPLOYMENT_COLUMNS: readonly TableColumnDefinition[] = [
  col('Name', 'string', DOC_NAME, 0, 'name'),
  col('Ready', 'string', 'Number of the pod with ready state'),
  col('Up-to-date', 'string', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.'),
  col('Available', 'string', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.'),
  col('Age', 'string', DOC_CREATION),
  ...podTemplateColumns('Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.'),
];

/** `namespaceColumnDefinitions`. */
export const NAMESPACE_COLUMNS: readonly TableColumnDefinition[] = [
  col('Name', 'string', DOC_NAME, 0, 'name'),
  col('Status', 'string', 'The status of the namespace'),
  col('Age', 'string', DOC_CREATION),
];

/** `eventColumnDefinitions`. */
export const EVENT_COLUMNS: readonly TableColumnDefinition[] = [
  col('Last Seen', 'string', 'The time at which the most recent occurrence of this event was recorded.'),
  col('Type', 'string', 'Type of this event (Normal, Warning), new types could be added in the future'),
  col('Reason', 'string', "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
  col('Object', 'string', 'The object that this event is about.'),
  col(
    'Subobject',
    'string',
    'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
    1,
  ),
  col('Source', 'string', 'The component reporting this event. Should be a short machine understandable string.', 1),
  col('Message', 'string', 'A human-readable description of the status of this operation.'),
  col('First Seen', 'string', 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)', 1),
  col('Count', 'string', 'The number of times this event has occurred.', 1),
  col('Name', 'string', DOC_NAME, 1, 'name'),
];

/** `podDisruptionBudgetColumnDefinitions`. */
export const POD_DISRUPTION_BUDGET_COLUMNS: readonly TableColumnDefinition[] = [
  col('Name', 'string', DOC_NAME, 0, 'name'),
  col('Min Available', 'string', 'The minimum number of pods that must be available.'),
  col('Max Unavailable', 'string', 'The maximum number of pods that may be unavailable.'),
  col('Allowed Disruptions', 'integer', 'Calculated number of pods that may be disrupted at this time.'),
  col('Age', 'string', DOC_CREATION),
];

/** `translateTimestampSince`: `<unknown>` for a zero/absent timestamp, else HumanDuration(now − t). */
export function translateTimestampSince(ts: string | undefined, nowUs: VirtualTime, clock: Clock): string {
  if (!ts) return '<unknown>';
  const t = clock.parse(ts);
  if (t === undefined) return '<unknown>';
  return humanDuration(nowUs - t);
}

const POD_SUCCESS_CONDITIONS: TableRowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
];
const POD_FAILED_CONDITIONS: TableRowCondition[] = [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }];

/** `node.NodeUnreachablePodReason`. */
export const NODE_UNREACHABLE_POD_REASON = 'NodeLost';

function laterOf(clock: Clock, cur: string | undefined, ts: string | undefined): string | undefined {
  if (!ts) return cur;
  if (!cur) return ts;
  const a = clock.parse(cur) ?? 0;
  const b = clock.parse(ts) ?? 0;
  return b > a ? ts : cur;
}

/** One printed row: all cells (wide), plus the row conditions. `object` is filled by {@link toTable}. */
export interface PrintedRow {
  readonly cells: unknown[];
  readonly conditions?: TableRowCondition[];
}

/** `printPod` (wide): NAME READY STATUS RESTARTS AGE IP NODE NOMINATED-NODE READINESS-GATES. */
export function printPod(pod: Pod, nowUs: VirtualTime, clock: Clock): PrintedRow {
  let restarts = 0;
  const totalContainers = pod.spec?.containers?.length ?? 0;
  let readyContainers = 0;
  let lastRestartDate: string | undefined;
  const status = pod.status ?? {};
  let reason: string = status.phase ?? '';
  if (status.reason) reason = status.reason;

  let conditions: TableRowCondition[] | undefined;
  if (status.phase === 'Succeeded') conditions = POD_SUCCESS_CONDITIONS;
  else if (status.phase === 'Failed') conditions = POD_FAILED_CONDITIONS;

  let initializing = false;
  const initStatuses: readonly ContainerStatus[] = status.initContainerStatuses ?? [];
  for (let i = 0; i < initStatuses.length; i++) {
    const container = initStatuses[i];
    restarts += container.restartCount ?? 0;
    lastRestartDate = laterOf(clock, lastRestartDate, container.lastState?.terminated?.finishedAt);
    const term = container.state?.terminated;
    const wait = container.state?.waiting;
    if (term && term.exitCode === 0) continue;
    if (term) {
      // initialization is failed
      if (!term.reason) {
        reason = term.signal ? `Init:Signal:${term.signal}` : `Init:ExitCode:${term.exitCode}`;
      } else {
        reason = `Init:${term.reason}`;
      }
      initializing = true;
    } else if (wait && wait.reason && wait.reason !== 'PodInitializing') {
      reason = `Init:${wait.reason}`;
      initializing = true;
    } else {
      reason = `Init:${i}/${pod.spec?.initContainers?.length ?? 0}`;
      initializing = true;
    }
    break;
  }
  if (!initializing) {
    restarts = 0;
    let hasRunning = false;
    const cs: readonly ContainerStatus[] = status.containerStatuses ?? [];
    for (let i = cs.length - 1; i >= 0; i--) {
      const container = cs[i];
      restarts += container.restartCount ?? 0;
      lastRestartDate = laterOf(clock, lastRestartDate, container.lastState?.terminated?.finishedAt);
      const wait = container.state?.waiting;
      const term = container.state?.terminated;
      if (wait && wait.reason) {
        reason = wait.reason;
      } else if (term && term.reason) {
        reason = term.reason;
      } else if (term && !term.reason) {
        reason = term.signal ? `Signal:${term.signal}` : `ExitCode:${term.exitCode}`;
      } else if (container.ready && container.state?.running) {
        hasRunning = true;
        readyContainers++;
      }
    }
    // change pod status back to "Running" if there is at least one container still reporting as "Running" status
    if (reason === 'Completed' && hasRunning) {
      reason = hasPodReadyCondition(pod) ? 'Running' : 'NotReady';
    }
  }

  if (pod.metadata.deletionTimestamp && status.reason === NODE_UNREACHABLE_POD_REASON) {
    reason = 'Unknown';
  } else if (pod.metadata.deletionTimestamp) {
    reason = 'Terminating';
  }

  let restartsStr = String(restarts);
  if (lastRestartDate) restartsStr = `${restarts} (${translateTimestampSince(lastRestartDate, nowUs, clock)} ago)`;

  const cells: unknown[] = [
    pod.metadata.name ?? '',
    `${readyContainers}/${totalContainers}`,
    reason,
    restartsStr,
    translateTimestampSince(pod.metadata.creationTimestamp, nowUs, clock),
  ];
  // Wide columns (the server always prints them; GenerateOptions{Wide: true}).
  const podIP = status.podIPs?.[0]?.ip || '<none>';
  const nodeName = pod.spec?.nodeName || '<none>';
  const nominatedNodeName = status.nominatedNodeName || '<none>';
  let readinessGates = '<none>';
  const gates = pod.spec?.readinessGates ?? [];
  if (gates.length > 0) {
    let trueConditions = 0;
    for (const g of gates) {
      const c = status.conditions?.find((x) => x.type === g.conditionType);
      if (c && c.status === 'True') trueConditions++;
    }
    readinessGates = `${trueConditions}/${gates.length}`;
  }
  cells.push(podIP, nodeName, nominatedNodeName, readinessGates);
  return conditions ? { cells, conditions } : { cells };
}

function hasPodReadyCondition(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

const LABEL_NODE_ROLE_PREFIX = 'node-role.kubernetes.io/';
const NODE_LABEL_ROLE = 'kubernetes.io/role';

/** `findNodeRoles`: sorted, de-duplicated. */
function findNodeRoles(node: Node): string[] {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(node.metadata.labels ?? {})) {
    if (k.startsWith(LABEL_NODE_ROLE_PREFIX)) {
      const role = k.slice(LABEL_NODE_ROLE_PREFIX.length);
      if (role.length > 0) roles.add(role);
    } else if (k === NODE_LABEL_ROLE && v !== '') {
      roles.add(v);
    }
  }
  return [...roles].sort();
}

/** `printNode` (wide): NAME STATUS ROLES AGE VERSION INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME. */
export function printNode(node: Node, nowUs: VirtualTime, clock: Clock): PrintedRow {
  const status: string[] = [];
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready) status.push(ready.status === 'True' ? 'Ready' : 'NotReady');
  if (status.length === 0) status.push('Unknown');
  if (node.spec?.unschedulable) status.push('SchedulingDisabled');
  const roles = findNodeRoles(node).join(',') || '<none>';
  const info = node.status?.nodeInfo ?? {};
  const addr = (type: string) => node.status?.addresses?.find((a) => a.type === type)?.address ?? '<none>';
  return {
    cells: [
      node.metadata.name ?? '',
      status.join(','),
      roles,
      translateTimestampSince(node.metadata.creationTimestamp, nowUs, clock),
      info.kubeletVersion ?? '',
      addr('InternalIP'),
      addr('ExternalIP'),
      info.osImage || '<unknown>',
      info.kernelVersion || '<unknown>',
      info.containerRuntimeVersion || '<unknown>',
    ],
  };
}

/** `layoutContainerCells`: comma-joined names and images. */
function layoutContainerCells(containers: readonly { name: string; image?: string }[] | undefined): [string, string] {
  const cs = containers ?? [];
  return [cs.map((c) => c.name).join(','), cs.map((c) => c.image ?? '').join(',')];
}

/** `printReplicaSet` (wide): NAME DESIRED CURRENT READY AGE CONTAINERS IMAGES SELECTOR. */
export function printReplicaSet(rs: ReplicaSet, nowUs: VirtualTime, clock: Clock): PrintedRow {
  const [names, images] = layoutContainerCells(rs.spec?.template?.spec?.containers);
  return {
    cells: [
      rs.metadata.name ?? '',
      rs.spec?.replicas ?? 0,
      rs.status?.replicas ?? 0,
      rs.status?.readyReplicas ?? 0,
      translateTimestampSince(rs.metadata.creationTimestamp, nowUs, clock),
      names,
      images,
      formatLabelSelector(rs.spec?.selector),
    ],
  };
}

/** `printDeployment` (wide): NAME READY UP-TO-DATE AVAILABLE AGE CONTAINERS IMAGES SELECTOR. */
export function printDeployment(d: Deployment, nowUs: VirtualTime, clock: Clock): PrintedRow {
  const [names, images] = layoutContainerCells(d.spec?.template?.spec?.containers);
  const sel = labelSelectorAsSelector(d.spec?.selector);
  return {
    cells: [
      d.metadata.name ?? '',
      `${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 0}`,
      d.status?.updatedReplicas ?? 0,
      d.status?.availableReplicas ?? 0,
      translateTimestampSince(d.metadata.creationTimestamp, nowUs, clock),
      names,
      images,
      'error' in sel ? '' : labelSelectorString(sel),
    ],
  };
}

/** `printNamespace`: NAME STATUS AGE. */
export function printNamespace(ns: Namespace, nowUs: VirtualTime, clock: Clock): PrintedRow {
  return { cells: [ns.metadata.name ?? '', ns.status?.phase ?? '', translateTimestampSince(ns.metadata.creationTimestamp, nowUs, clock)] };
}

/** `printEvent` (wide): LAST SEEN TYPE REASON OBJECT SUBOBJECT SOURCE MESSAGE FIRST SEEN COUNT NAME. */
export function printEvent(ev: Event, nowUs: VirtualTime, clock: Clock): PrintedRow {
  let firstTimestamp = translateTimestampSince(ev.firstTimestamp, nowUs, clock);
  if (!ev.firstTimestamp) firstTimestamp = translateTimestampSince(ev.eventTime, nowUs, clock);
  let lastTimestamp = translateTimestampSince(ev.lastTimestamp, nowUs, clock);
  if (!ev.lastTimestamp) lastTimestamp = firstTimestamp;
  let count = ev.count ?? 0;
  if (ev.series) {
    lastTimestamp = translateTimestampSince(ev.series.lastObservedTime, nowUs, clock);
    count = ev.series.count ?? 0;
  } else if (count === 0) {
    // Singleton events don't have a count set in the new API.
    count = 1;
  }
  const io = ev.involvedObject ?? {};
  const kind = (io.kind ?? '').toLowerCase();
  const target = io.name ? `${kind}/${io.name}` : kind;
  const component = ev.source?.component || ev.reportingComponent || '';
  const host = ev.source?.host || ev.reportingInstance || '';
  const source = host ? `${component}, ${host}` : component;
  return {
    cells: [lastTimestamp, ev.type ?? '', ev.reason ?? '', target, io.fieldPath ?? '', source, (ev.message ?? '').trim(), firstTimestamp, count, ev.metadata.name ?? ''],
  };
}

/** `printPodDisruptionBudget`: NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE (`N/A` for an unset bound). */
export function printPodDisruptionBudget(pdb: PodDisruptionBudget, nowUs: VirtualTime, clock: Clock): PrintedRow {
  const bound = (v: number | string | undefined) => (v === undefined ? 'N/A' : String(v));
  return {
    cells: [
      pdb.metadata.name ?? '',
      bound(pdb.spec?.minAvailable),
      bound(pdb.spec?.maxUnavailable),
      pdb.status?.disruptionsAllowed ?? 0,
      translateTimestampSince(pdb.metadata.creationTimestamp, nowUs, clock),
    ],
  };
}

/** `leaseColumnDefinitions`: NAME HOLDER AGE. */
export const LEASE_COLUMNS: readonly TableColumnDefinition[] = [
  col('Name', 'string', DOC_NAME, 0, 'name'),
  col('Holder', 'string', 'holderIdentity contains the identity of the holder of a current lease.'),
  col('Age', 'string', DOC_CREATION),
];

/** `printLease`: NAME HOLDER AGE (an unset holder prints as an empty cell, as upstream's `*string` deref). */
export function printLease(l: Lease, nowUs: VirtualTime, clock: Clock): PrintedRow {
  return { cells: [l.metadata.name ?? '', l.spec?.holderIdentity ?? '', translateTimestampSince(l.metadata.creationTimestamp, nowUs, clock)] };
}

/** `jobColumnDefinitions`. */
export const JOB_COLUMNS: readonly TableColumnDefinition[] = [
  col('Name', 'string', DOC_NAME, 0, 'name'),
  col('Completions', 'string', 'The desired number of successfully finished pods the job should be run with.'),
  col('Duration', 'string', 'Time required to complete the job.'),
  col('Age', 'string', DOC_CREATION),
  ...podTemplateColumns('A label query over pods that should match the pod count.'),
];

/** `printJob`: COMPLETIONS is `succeeded/completions` (`succeeded/1 of parallelism` without completions); DURATION runs from startTime to completionTime or now. */
export function printJob(job: Job, nowUs: VirtualTime, clock: Clock): PrintedRow {
  const succeeded = job.status?.succeeded ?? 0;
  let completions: string;
  if (job.spec?.completions !== undefined) completions = `${succeeded}/${job.spec.completions}`;
  else {
    const parallelism = job.spec?.parallelism ?? 0;
    completions = parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
  }
  let duration = '';
  const start = job.status?.startTime ? clock.parse(job.status.startTime) : undefined;
  if (start !== undefined) {
    const end = job.status?.completionTime ? clock.parse(job.status.completionTime) : undefined;
    duration = humanDuration((end ?? nowUs) - start);
  }
  const [names, images] = layoutContainerCells(job.spec?.template?.spec?.containers);
  return {
    cells: [job.metadata.name ?? '', completions, duration, translateTimestampSince(job.metadata.creationTimestamp, nowUs, clock), names, images, formatLabelSelector(job.spec?.selector)],
  };
}

/** `daemonSetColumnDefinitions`. */
export const DAEMONSET_COLUMNS: readonly TableColumnDefinition[] = [
  col('Name', 'string', DOC_NAME, 0, 'name'),
  col('Desired', 'integer', 'The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/'),
  col('Current', 'integer', 'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/'),
  col('Ready', 'integer', 'numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.'),
  col('Up-to-date', 'integer', 'The total number of nodes that are running updated daemon pod'),
  col('Available', 'integer', 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)'),
  col('Node Selector', 'string', 'NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node\'s labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/'),
  col('Age', 'string', DOC_CREATION),
  ...podTemplateColumns('A label query over pods that are managed by the daemon set. Must match in order to be controlled. It must match the pod template\'s labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors'),
];

/** `printDaemonSet`: NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE (+ wide). */
export function printDaemonSet(ds: DaemonSet, nowUs: VirtualTime, clock: Clock): PrintedRow {
  const st = ds.status;
  const ns = ds.spec?.template?.spec?.nodeSelector;
  const nodeSelector = ns && Object.keys(ns).length > 0 ? Object.keys(ns).sort().map((k) => `${k}=${ns[k]}`).join(',') : '<none>';
  const [names, images] = layoutContainerCells(ds.spec?.template?.spec?.containers);
  return {
    cells: [
      ds.metadata.name ?? '',
      st?.desiredNumberScheduled ?? 0,
      st?.currentNumberScheduled ?? 0,
      st?.numberReady ?? 0,
      st?.updatedNumberScheduled ?? 0,
      st?.numberAvailable ?? 0,
      nodeSelector,
      translateTimestampSince(ds.metadata.creationTimestamp, nowUs, clock),
      names,
      images,
      formatLabelSelector(ds.spec?.selector),
    ],
  };
}

// ---- StatefulSet, ControllerRevision, PersistentVolumeClaim (printers.go v1.22: printStatefulSet,
// printControllerRevision, printPersistentVolumeClaim and their column definitions).

/** `statefulSetColumnDefinitions`. */
export const STATEFULSET_COLUMNS: readonly TableColumnDefinition[] = [
  col('Name', 'string', DOC_NAME, 0, 'name'),
  col('Ready', 'string', 'Number of the pod with ready state'),
  col('Age', 'string', DOC_CREATION),
  col('Containers', 'string', DOC_CONTAINERS, 1),
  col('Images', 'string', DOC_IMAGES, 1),
];

/** `printStatefulSet` (wide): NAME READY AGE CONTAINERS IMAGES; READY is `readyReplicas/spec.replicas`. */
export function printStatefulSet(ss: StatefulSet, nowUs: VirtualTime, clock: Clock): PrintedRow {
  const [names, images] = layoutContainerCells(ss.spec?.template?.spec?.containers);
  return {
    cells: [
      ss.metadata.name ?? '',
      `${ss.status?.readyReplicas ?? 0}/${ss.spec?.replicas ?? 0}`,
      translateTimestampSince(ss.metadata.creationTimestamp, nowUs, clock),
      names,
      images,
    ],
  };
}

/** `controllerRevisionColumnDefinition`. */
export const CONTROLLER_REVISION_COLUMNS: readonly TableColumnDefinition[] = [
  col('Name', 'string', DOC_NAME, 0, 'name'),
  col('Controller', 'string', 'Controller of the object'),
  col('Revision', 'string', 'Revision indicates the revision of the state represented by Data.'),
  col('Age', 'string', DOC_CREATION),
];

/** `printControllerRevision`: CONTROLLER is `<kind lowercased>.<group>/<name>` of the controller ref, or `<none>`. */
export function printControllerRevision(cr: ControllerRevision, nowUs: VirtualTime, clock: Clock): PrintedRow {
  const ref = (cr.metadata.ownerReferences ?? []).find((r) => r.controller === true);
  let controller = '<none>';
  if (ref) {
    const group = ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[0] : '';
    controller = `${ref.kind.toLowerCase()}${group ? `.${group}` : ''}/${ref.name}`;
  }
  return { cells: [cr.metadata.name ?? '', controller, cr.revision ?? 0, translateTimestampSince(cr.metadata.creationTimestamp, nowUs, clock)] };
}

/** `persistentVolumeClaimColumnDefinitions`. */
export const PERSISTENT_VOLUME_CLAIM_COLUMNS: readonly TableColumnDefinition[] = [
  col('Name', 'string', DOC_NAME, 0, 'name'),
  col('Status', 'string', 'Phase represents the current phase of PersistentVolumeClaim.'),
  col('Volume', 'string', 'VolumeName is the binding reference to the PersistentVolume backing this claim.'),
  col('Capacity', 'string', 'Represents the actual resources of the underlying volume.'),
  col('Access Modes', 'string', 'AccessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1'),
  col('StorageClass', 'string', 'Name of the StorageClass required by the claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#class-1'),
  col('Age', 'string', DOC_CREATION),
  col('VolumeMode', 'string', 'volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.', 1),
];

/** `GetAccessModesAsString`: RWO, ROX, RWX in that order, comma-separated. */
function accessModesAsString(modes: readonly string[] | undefined): string {
  const m = modes ?? [];
  const out: string[] = [];
  if (m.includes('ReadWriteOnce')) out.push('RWO');
  if (m.includes('ReadOnlyMany')) out.push('ROX');
  if (m.includes('ReadWriteMany')) out.push('RWX');
  if (m.includes('ReadWriteOncePod')) out.push('RWOP');
  return out.join(',');
}

/** `printPersistentVolumeClaim`: capacity and access modes only once bound (from status). */
export function printPersistentVolumeClaim(pvc: PersistentVolumeClaim, nowUs: VirtualTime, clock: Clock): PrintedRow {
  const phase = pvc.metadata.deletionTimestamp ? 'Terminating' : (pvc.status?.phase ?? '');
  const bound = Boolean(pvc.spec?.volumeName);
  const capacity = bound ? (pvc.status?.capacity?.storage ?? '') : '';
  const modes = bound ? accessModesAsString(pvc.status?.accessModes) : '';
  const storageClass = pvc.spec?.storageClassName ?? pvc.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? '';
  return {
    cells: [
      pvc.metadata.name ?? '',
      phase,
      pvc.spec?.volumeName ?? '',
      capacity,
      modes,
      storageClass,
      translateTimestampSince(pvc.metadata.creationTimestamp, nowUs, clock),
      pvc.spec?.volumeMode ?? '<unset>',
    ],
  };
}

/** Printer and columns per resource. */
export interface PrinterEntry {
  readonly columns: readonly TableColumnDefinition[];
  readonly print: (obj: KubeObject, nowUs: VirtualTime, clock: Clock) => PrintedRow;
}

export const PRINTERS: Readonly<Record<string, PrinterEntry>> = {
  pods: { columns: POD_COLUMNS, print: (o, n, c) => printPod(o as Pod, n, c) },
  nodes: { columns: NODE_COLUMNS, print: (o, n, c) => printNode(o as Node, n, c) },
  replicasets: { columns: REPLICASET_COLUMNS, print: (o, n, c) => printReplicaSet(o as ReplicaSet, n, c) },
  deployments: { columns: DEPLOYMENT_COLUMNS, print: (o, n, c) => printDeployment(o as Deployment, n, c) },
  namespaces: { columns: NAMESPACE_COLUMNS, print: (o, n, c) => printNamespace(o as Namespace, n, c) },
  events: { columns: EVENT_COLUMNS, print: (o, n, c) => printEvent(o as Event, n, c) },
  poddisruptionbudgets: { columns: POD_DISRUPTION_BUDGET_COLUMNS, print: (o, n, c) => printPodDisruptionBudget(o as PodDisruptionBudget, n, c) },
  jobs: { columns: JOB_COLUMNS, print: (o, n, c) => printJob(o as Job, n, c) },
  daemonsets: { columns: DAEMONSET_COLUMNS, print: (o, n, c) => printDaemonSet(o as DaemonSet, n, c) },
  statefulsets: { columns: STATEFULSET_COLUMNS, print: (o, n, c) => printStatefulSet(o as StatefulSet, n, c) },
  controllerrevisions: { columns: CONTROLLER_REVISION_COLUMNS, print: (o, n, c) => printControllerRevision(o as ControllerRevision, n, c) },
  persistentvolumeclaims: { columns: PERSISTENT_VOLUME_CLAIM_COLUMNS, print: (o, n, c) => printPersistentVolumeClaim(o as PersistentVolumeClaim, n, c) },
  services: { columns: SERVICE_COLUMNS, print: (o, n, c) => printService(o as Service, n, c, (ts) => translateTimestampSince(ts, n, c)) },
  endpoints: { columns: ENDPOINTS_COLUMNS, print: (o, n, c) => printEndpoints(o as Endpoints, (ts) => translateTimestampSince(ts, n, c)) },
  endpointslices: { columns: ENDPOINTSLICE_COLUMNS, print: (o, n, c) => printEndpointSlice(o as EndpointSlice, (ts) => translateTimestampSince(ts, n, c)) },
  leases: { columns: LEASE_COLUMNS, print: (o, n, c) => printLease(o as Lease, n, c) },
};

/** `meta.AsPartialObjectMetadata`. */
export function asPartialObjectMetadata(obj: KubeObject): PartialObjectMetadata {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

/** Options for {@link toTable}. */
export interface TableOutputOptions {
  /** Keep priority-1 columns (the real apiserver always does; kubectl hides them without -o wide). */
  readonly wide?: boolean;
  readonly includeObject?: IncludeObjectPolicy;
}

/**
 * `TableConvertor.ConvertToTable` + the handler's `includeObject` step: a Table of `objects`
 * printed at `nowUs`, with `metadata.resourceVersion` = `resourceVersion` (the list's, or the
 * single object's).
 */
export function toTable(
  resource: string,
  objects: readonly KubeObject[],
  resourceVersion: string,
  nowUs: VirtualTime,
  clock: Clock,
  opts: TableOutputOptions = {},
): Table {
  const p = PRINTERS[resource];
  if (!p) throw new Error(`no printer for ${resource}`);
  const keep = opts.wide ? undefined : p.columns.map((c, i) => (c.priority === 0 ? i : -1)).filter((i) => i >= 0);
  const columnDefinitions = keep ? keep.map((i) => p.columns[i]) : [...p.columns];
  const rows: TableRow[] = objects.map((obj) => {
    const pr = p.print(obj, nowUs, clock);
    const row: TableRow = { cells: keep ? keep.map((i) => pr.cells[i]) : pr.cells };
    if (pr.conditions) row.conditions = pr.conditions;
    const inc = opts.includeObject ?? 'Metadata';
    if (inc === 'Object') row.object = obj;
    else if (inc === 'Metadata') row.object = asPartialObjectMetadata(obj);
    return row;
  });
  return { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion }, columnDefinitions, rows };
}
