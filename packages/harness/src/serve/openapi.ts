/**
 * The OpenAPI v3 `components.schemas` of `podsim serve`, generated from podsim's own table of the
 * k8s.io/api v0.22.8 types (protobufSchema.ts), so that `kubectl explain` (which reads
 * `/openapi/v3/<group-version>` and finds a kind by `x-kubernetes-group-version-kind`) prints
 * each field's type and description. Shapes follow kube-openapi's v3 output: schema names
 * `io.k8s.api.core.v1.PodSpec`, a message field as `allOf: [{$ref}]` beside its description,
 * lists as `type: array`, maps as `additionalProperties`, Time / Quantity / IntOrString as their
 * named string schemas. Descriptions are podsim's own words ({@link DESCRIPTIONS}), for the
 * kinds and the fields podsim models; other fields have none.
 *
 * Table-driven: a served kind gets its schema from its `<package>.<Kind>` entry of
 * PROTO_MESSAGES (a kind without one still gets apiVersion / kind / metadata), so a new kind is
 * its entry in discovery.ts `SERVED_RESOURCES` plus its messages in protobufSchema.ts.
 */
import { inlinesTypeMeta, messagePackage, PROTO_MESSAGES } from './protobufSchema.js';

type Schema = Record<string, unknown>;

/** Named scalar schemas of apimachinery. */
const NAMED_SCALARS: Readonly<Record<string, { name: string; schema: Schema }>> = {
  Time: { name: 'io.k8s.apimachinery.pkg.apis.meta.v1.Time', schema: { type: 'string', format: 'date-time', description: 'Time is a timestamp in RFC 3339 form, with a resolution of seconds.' } },
  MicroTime: { name: 'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime', schema: { type: 'string', format: 'date-time', description: 'MicroTime is a timestamp in RFC 3339 form with microseconds.' } },
  Quantity: {
    name: 'io.k8s.apimachinery.pkg.api.resource.Quantity',
    schema: { type: 'string', description: 'A fixed-point number with an optional suffix (binary Ki, Mi, Gi…; decimal k, M, G…; or milli m), e.g. 500m or 128Mi.' },
  },
  IntOrString: {
    name: 'io.k8s.apimachinery.pkg.util.intstr.IntOrString',
    schema: { type: 'string', format: 'int-or-string', description: 'An integer or a string (for example a number of pods or a percentage).' },
  },
  RawExtension: { name: 'io.k8s.apimachinery.pkg.runtime.RawExtension', schema: { type: 'object', description: 'Any JSON object, kept as it was written (a ControllerRevision\'s data).' } },
  FieldsV1: { name: 'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1', schema: { type: 'object', description: 'The set of fields a manager owns, in the FieldsV1 JSON format.' } },
};

const PRIMITIVES: Readonly<Record<string, Schema>> = {
  string: { type: 'string' },
  bool: { type: 'boolean' },
  int32: { type: 'integer', format: 'int32' },
  int64: { type: 'integer', format: 'int64' },
};

/**
 * Descriptions in podsim's words: `<message key>` for a type, `<message key>.<field>` for a field.
 */
export const DESCRIPTIONS: Readonly<Record<string, string>> = {
  'core.Pod': 'Pod is a group of containers that run together on one node, with shared storage and network.',
  'core.PodSpec': 'PodSpec is what the user wants a pod to be: its containers, how long they get to stop, where it may run.',
  'core.PodSpec.terminationGracePeriodSeconds':
    'Seconds the pod gets to stop gracefully once it is deleted: the kubelet runs the preStop hooks, sends SIGTERM, and sends SIGKILL to what still runs when the period is over. Must be non-negative; 0 stops the containers at once (SIGKILL). A delete request may shorten it (gracePeriodSeconds). Defaults to 30 seconds.',
  'core.PodSpec.activeDeadlineSeconds': 'Seconds the pod may be active on a node, counted from its start, before the kubelet fails it. Must be a positive integer.',
  'core.PodSpec.containers': 'The containers of the pod. At least one; containers cannot be added or removed once the pod exists.',
  'core.PodSpec.initContainers': 'Containers run one after the other, each to success, before the regular containers start.',
  'core.PodSpec.nodeName': 'The node the pod is bound to. Set by the scheduler (a pods/binding), or by the user to skip scheduling.',
  'core.PodSpec.nodeSelector': 'Labels a node must have for the pod to be scheduled onto it.',
  'core.PodSpec.restartPolicy': 'When the kubelet restarts the containers of the pod: Always (default), OnFailure or Never.',
  'core.PodSpec.tolerations': 'The taints the pod tolerates.',
  'core.PodSpec.schedulerName': 'The scheduler that schedules the pod (default-scheduler when empty).',
  'core.PodStatus': 'PodStatus is what the kubelet last reported about the pod.',
  'core.PodStatus.phase': 'Pending, Running, Succeeded, Failed or Unknown: where the pod is in its life cycle.',
  'core.Container': 'A single application container of a pod.',
  'core.Container.name': 'The name of the container, unique in the pod (a DNS label).',
  'core.Container.image': 'The container image to run. Changing it on a running pod makes the kubelet restart the container.',
  'core.Container.lifecycle': 'Hooks the kubelet runs after the container starts and before it is stopped.',
  'core.Lifecycle.preStop': 'A hook run before the container gets SIGTERM when it is stopped; it counts against the grace period.',
  'core.Container.readinessProbe': 'Checks whether the container is ready for traffic; a pod is Ready when all its containers are.',
  'core.Container.livenessProbe': 'Checks whether the container still works; the kubelet restarts it after failureThreshold failures in a row.',
  'meta.ObjectMeta': 'ObjectMeta is the metadata every persisted object has.',
  'meta.ObjectMeta.name': 'The name of the object, unique within its namespace and kind.',
  'meta.ObjectMeta.namespace': 'The namespace of the object; empty for cluster-scoped kinds.',
  'meta.ObjectMeta.labels': 'Key/value pairs to select objects by (label selectors).',
  'meta.ObjectMeta.annotations': 'Key/value pairs for tools; their keys and values may total at most 256 KiB.',
  'meta.ObjectMeta.deletionTimestamp': 'When the object will be removed: set by the apiserver when a graceful deletion is requested. Read-only.',
  'meta.ObjectMeta.deletionGracePeriodSeconds': 'Seconds the object has left to stop gracefully, set with deletionTimestamp. Read-only.',
  'meta.ObjectMeta.finalizers': 'Keys that must each be removed before the object is deleted from storage.',
  'meta.ObjectMeta.ownerReferences': 'Objects this one depends on; the garbage collector deletes it once every owner is gone.',
  'meta.ObjectMeta.resourceVersion': 'An opaque version of the object, for optimistic concurrency and watches. Read-only.',
  'meta.ObjectMeta.uid': 'The unique id of this object in time and space. Read-only.',
  'apps.Deployment': 'Deployment keeps a number of identical pods running through ReplicaSets, and rolls out changes to their template.',
  'apps.DeploymentSpec': 'DeploymentSpec is what the user wants a Deployment to run: how many pods, of which template, rolled out how.',
  'apps.DeploymentSpec.replicas': 'The number of pods wanted. Defaults to 1.',
  'apps.DeploymentSpec.strategy': 'How a changed template replaces the old pods: RollingUpdate (default) or Recreate.',
  'apps.ReplicaSet': 'ReplicaSet keeps a number of pods matching its selector running.',
  'apps.ReplicaSetSpec.replicas': 'The number of pods wanted. Defaults to 1.',
  'core.Node': 'Node is a worker machine of the cluster, as its kubelet registers it.',
  'core.Namespace': 'Namespace is a scope for names; deleting one deletes everything in it.',
  'core.Event': 'Event is a report of something that happened to an object, for humans.',
  'core.Event.count': 'How many times this event happened (repeats are folded into one Event).',
  'apps.StatefulSet': 'StatefulSet runs pods with stable names (<name>-<ordinal>) and storage, created, updated and deleted in ordinal order.',
  'apps.StatefulSetSpec': 'StatefulSetSpec is what the user wants a StatefulSet to run: how many pods, of which template, with which claims, rolled out how.',
  'apps.StatefulSetSpec.replicas': 'The number of pods wanted, named <name>-0 … <name>-(replicas-1). Defaults to 1.',
  'apps.StatefulSetSpec.serviceName': 'The headless Service that gives the pods their network identity (<pod>.<serviceName>).',
  'apps.StatefulSetSpec.podManagementPolicy': 'OrderedReady (default): one pod at a time, each Ready before the next; Parallel: all at once.',
  'apps.StatefulSetSpec.volumeClaimTemplates': 'Claims made for each pod (<template>-<pod>); they outlive the pods in 1.22.',
  'apps.StatefulSetSpec.updateStrategy': 'How a changed template replaces the pods: RollingUpdate (default, highest ordinal first) or OnDelete.',
  'apps.ControllerRevision': 'ControllerRevision is an immutable snapshot of a workload\'s pod template, numbered by revision.',
  'core.PersistentVolumeClaim': 'PersistentVolumeClaim is a request for storage by a user.',
  'core.Service': 'Service is a stable virtual IP and DNS name for the ready pods its selector matches.',
  'core.ServiceSpec': 'ServiceSpec is what the user wants a Service to be: its ports, the pods it selects, its type.',
  'core.ServiceSpec.selector': 'Labels of the pods this Service sends traffic to; without one the Service has no managed endpoints.',
  'core.ServiceSpec.ports': 'The ports the Service exposes and the target port on the pods for each.',
  'core.ServiceSpec.clusterIP': 'The virtual IP of the Service, allocated when empty; None makes it headless.',
  'core.ServiceSpec.type': 'ClusterIP (default), NodePort, LoadBalancer or ExternalName.',
  'core.Endpoints': 'Endpoints is the set of addresses of the pods behind a Service, kept by the endpoints controller.',
  'discovery.EndpointSlice': 'EndpointSlice is a subset of the endpoints of a Service, kept by the EndpointSlice controller.',
  'coordination.Lease': 'Lease is a lock with a holder and a renew time; a kubelet renews its node\'s Lease as its heartbeat.',
  'coordination.LeaseSpec.renewTime': 'When the holder last renewed the lease.',
  'policy.PodDisruptionBudget': 'PodDisruptionBudget limits how many pods of a set voluntary disruptions (evictions) may take down at once.',
};

function schemaName(key: string): string {
  const [pkg, kind] = key.split('.');
  return pkg === 'meta' ? `io.k8s.apimachinery.pkg.apis.meta.v1.${kind}` : `io.k8s.api.${pkg}.v1.${kind}`;
}

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** The schema of one field type (`*int64`, `[]core.Container`, `map[string]Quantity`, …), adding named schemas it needs to `out`. */
function typeSchema(typeText: string, out: Map<string, Schema>, pending: string[]): Schema {
  let t = typeText.replace(/^\*/, '');
  if (t.startsWith('[]')) return { type: 'array', items: typeSchema(t.slice(2), out, pending) };
  if (t.startsWith('map[string]')) return { type: 'object', additionalProperties: typeSchema(t.slice('map[string]'.length), out, pending) };
  if (PRIMITIVES[t]) return { ...PRIMITIVES[t] };
  const named = NAMED_SCALARS[t];
  if (named) {
    out.set(named.name, named.schema);
    return ref(named.name);
  }
  t = t.replace(/^\*/, '');
  if (PROTO_MESSAGES[t]) {
    pending.push(t);
    return ref(schemaName(t));
  }
  return {};
}

/** Adds the schema of message `key` and everything it references to `out`. */
function addMessage(key: string, out: Map<string, Schema>, gvk?: { group: string; version: string; kind: string }): void {
  const pending = [key];
  let first = true;
  while (pending.length > 0) {
    const k = pending.pop()!;
    const name = schemaName(k);
    if (out.has(name) && !(first && gvk)) continue;
    const properties: Record<string, Schema> = {};
    const addFields = (mk: string) => {
      for (const text of Object.values(PROTO_MESSAGES[mk] ?? {})) {
        const [field, typeText] = text.split(' ');
        if (field === '...') {
          addFields(typeText.replace(/^\*/, ''));
          continue;
        }
        let s = typeSchema(typeText, out, pending);
        const desc = DESCRIPTIONS[`${mk}.${field}`] ?? DESCRIPTIONS[`${k}.${field}`];
        // kube-openapi wraps a reference in allOf when the field carries its own description.
        if (s.$ref !== undefined) s = { allOf: [s], default: {} };
        properties[field] = desc ? { ...s, description: desc } : s;
      }
    };
    if ((first && gvk) || inlinesTypeMeta(k)) {
      properties.apiVersion = { type: 'string', description: 'The versioned schema of this representation of the object (group/version).' };
      properties.kind = { type: 'string', description: 'The REST kind of this object, in CamelCase.' };
    }
    addFields(k);
    const schema: Schema = { type: 'object', properties };
    if (DESCRIPTIONS[k]) schema.description = DESCRIPTIONS[k];
    if (first && gvk) schema['x-kubernetes-group-version-kind'] = [gvk];
    out.set(name, schema);
    first = false;
  }
}

/**
 * `components.schemas` for the kinds of one group version: each kind's schema (with its
 * `x-kubernetes-group-version-kind`) and every schema it references. `kinds` are the served
 * kinds of the group (`''` = core).
 */
export function componentSchemas(group: string, kinds: readonly string[]): Record<string, Schema> {
  const out = new Map<string, Schema>();
  const pkg = messagePackage(group);
  for (const kind of kinds) {
    const key = `${pkg}.${kind}`;
    const gvk = { group, version: 'v1', kind };
    if (PROTO_MESSAGES[key]) addMessage(key, out, gvk);
    else {
      // A kind without a message table entry: the envelope only.
      addMessage('meta.ObjectMeta', out);
      out.set(schemaName(key), {
        type: 'object',
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { allOf: [ref(schemaName('meta.ObjectMeta'))], default: {} },
        },
        'x-kubernetes-group-version-kind': [gvk],
      });
    }
  }
  return Object.fromEntries([...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
