/**
 * Defaulting applied when a request body is decoded (kubernetes v1.22 `pkg/apis/core/v1/
 * defaults.go` SetDefaults_Pod / _PodSpec / _Container / _Probe / _ContainerPort, and
 * `pkg/apis/apps/v1/defaults.go` SetDefaults_Deployment / _ReplicaSet), plus the pod-create
 * admission plugins whose effect every real pod shows: DefaultTolerationSeconds (not-ready /
 * unreachable NoExecute 300 s), Priority (priority 0, PreemptLowerPriority) and ServiceAccount
 * (serviceAccountName `default`; the token volume is not added — a simplification).
 * Every function mutates its argument, which must be a private copy.
 */
import type { Container, Deployment, Namespace, Pod, PodSpec, PodTemplateSpec, Probe, ReplicaSet, Toleration } from '@podsim/api';

/** `v1.DefaultTerminationGracePeriodSeconds`. */
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;
/** `v1.DefaultSchedulerName`. */
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';
/** `v1.TerminationMessagePathDefault`. */
export const TERMINATION_MESSAGE_PATH_DEFAULT = '/dev/termination-log';
/** DefaultTolerationSeconds admission: `--default-not-ready-toleration-seconds` / unreachable, 300. */
export const DEFAULT_TOLERATION_SECONDS = 300;

/** `parsers.ParseImageName` → the tag, `latest` when neither tag nor digest is given. */
export function imageTag(image: string | undefined): string {
  if (!image) return 'latest';
  if (image.includes('@')) return '';
  const lastSlash = image.lastIndexOf('/');
  const colon = image.lastIndexOf(':');
  return colon > lastSlash ? image.slice(colon + 1) : 'latest';
}

function setDefaultsProbe(p: Probe | undefined): void {
  if (!p) return;
  // SetDefaults_Probe: a 0 (the Go zero value) is unset.
  p.timeoutSeconds ||= 1;
  p.periodSeconds ||= 10;
  p.successThreshold ||= 1;
  p.failureThreshold ||= 3;
  if (p.httpGet) {
    p.httpGet.path ||= '/';
    p.httpGet.scheme ??= 'HTTP';
  }
}

/** `SetDefaults_Container` (+ ports, probes, lifecycle handlers). */
export function setDefaultsContainer(c: Container): void {
  if (!c.imagePullPolicy) c.imagePullPolicy = imageTag(c.image) === 'latest' ? 'Always' : 'IfNotPresent';
  if (!c.terminationMessagePath) c.terminationMessagePath = TERMINATION_MESSAGE_PATH_DEFAULT;
  if (!c.terminationMessagePolicy) c.terminationMessagePolicy = 'File';
  for (const p of c.ports ?? []) if (!p.protocol) p.protocol = 'TCP';
  setDefaultsProbe(c.livenessProbe);
  setDefaultsProbe(c.readinessProbe);
  setDefaultsProbe(c.startupProbe);
  for (const h of [c.lifecycle?.preStop, c.lifecycle?.postStart]) {
    if (h?.httpGet) {
      h.httpGet.path ||= '/';
      h.httpGet.scheme ??= 'HTTP';
    }
  }
}

/** `SetDefaults_PodSpec` (shared by pods and pod templates). */
export function setDefaultsPodSpec(spec: PodSpec): void {
  if (!spec.dnsPolicy) spec.dnsPolicy = 'ClusterFirst';
  if (!spec.restartPolicy) spec.restartPolicy = 'Always';
  spec.securityContext ??= {};
  if (spec.terminationGracePeriodSeconds === undefined || spec.terminationGracePeriodSeconds === null) {
    spec.terminationGracePeriodSeconds = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  }
  if (!spec.schedulerName) spec.schedulerName = DEFAULT_SCHEDULER_NAME;
  for (const c of spec.containers ?? []) setDefaultsContainer(c);
  for (const c of spec.initContainers ?? []) setDefaultsContainer(c);
  for (const v of spec.volumes ?? []) {
    // SetDefaults_Volume: a volume without a source is an emptyDir.
    if (!v.emptyDir && !v.persistentVolumeClaim && !v.configMap && !v.secret && !v.hostPath) v.emptyDir = {};
  }
}

/** `SetDefaults_Pod`: requests default to limits; enableServiceLinks true. */
export function setDefaultsPod(pod: Pod): void {
  if (!pod.spec) return;
  setDefaultsPodSpec(pod.spec);
  for (const c of [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])]) {
    const limits = c.resources?.limits;
    if (limits) {
      c.resources!.requests ??= {};
      for (const [k, v] of Object.entries(limits)) c.resources!.requests[k] ??= v;
    }
  }
  pod.spec.enableServiceLinks ??= true;
}

/**
 * The pod-create admission defaults (ServiceAccount, Priority, DefaultTolerationSeconds).
 * Applied on create only, after decoding.
 */
export function admitPodCreate(pod: Pod): void {
  const spec = pod.spec;
  if (!spec) return;
  if (!spec.serviceAccountName) spec.serviceAccountName = spec.serviceAccount || 'default';
  // The v1 conversion mirrors the deprecated field.
  spec.serviceAccount = spec.serviceAccountName;
  if (spec.priority === undefined && !spec.priorityClassName) spec.priority = 0;
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
  admitDefaultTolerationSeconds(pod);
}

/**
 * The DefaultTolerationSeconds admission plugin (`plugin/pkg/admission/defaulttolerationseconds`
 * `Plugin.Admit`, a handler for **Create and Update** of `pods`, not of subresources): appends
 * `node.kubernetes.io/not-ready` and `unreachable` `Exists:NoExecute` tolerations of 300 s unless
 * one already covers the key (same key or empty key, effect NoExecute or empty). On UPDATE this
 * puts back defaults a PUT or patch left out, so the update does not fail pod-update validation
 * ("only additions to existing tolerations").
 */
export function admitDefaultTolerationSeconds(pod: Pod): void {
  const spec = pod.spec;
  if (!spec) return;
  const tolerations: Toleration[] = spec.tolerations ?? [];
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    const has = tolerations.some((t) => (t.key === key || !t.key) && (!t.effect || t.effect === 'NoExecute'));
    if (!has) tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: DEFAULT_TOLERATION_SECONDS });
  }
  spec.tolerations = tolerations;
}

function setDefaultsTemplate(t: PodTemplateSpec | undefined): void {
  if (t?.spec) setDefaultsPodSpec(t.spec);
}

/** apps/v1 `SetDefaults_Deployment`: replicas 1, RollingUpdate 25%/25%, history 10, deadline 600. */
export function setDefaultsDeployment(d: Deployment): void {
  if (!d.spec) return;
  d.spec.replicas ??= 1;
  const st = (d.spec.strategy ??= {});
  if (!st.type) st.type = 'RollingUpdate';
  if (st.type === 'RollingUpdate') {
    const ru = (st.rollingUpdate ??= {});
    ru.maxUnavailable ??= '25%';
    ru.maxSurge ??= '25%';
  }
  d.spec.revisionHistoryLimit ??= 10;
  d.spec.progressDeadlineSeconds ??= 600;
  setDefaultsTemplate(d.spec.template);
}

/** apps/v1 `SetDefaults_ReplicaSet`: replicas 1. */
export function setDefaultsReplicaSet(rs: ReplicaSet): void {
  if (!rs.spec) return;
  rs.spec.replicas ??= 1;
  setDefaultsTemplate(rs.spec.template);
}

/** core/v1 `SetDefaults_NamespaceStatus`: phase `Active` when empty. */
export function setDefaultsNamespace(ns: Namespace): void {
  if (ns.status && !ns.status.phase) ns.status.phase = 'Active';
}
