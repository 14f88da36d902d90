/**
 * DaemonSet helpers (`pkg/controller/daemon/util/daemonset_util.go` and the predicates of
 * `daemon_controller.go`, v1.22; spec WC §3.1–§3.2), all pure: the default daemon tolerations
 * (`AddOrUpdateDaemonPodTolerations`), `CreatePodTemplate`, the node-name affinity term
 * (`ReplaceDaemonSetPodNodeNameNodeAffinity`, `GetTargetNodeName`), `IsPodUpdated`,
 * `nodeShouldRunDaemonPod` with `Predicates` (node name, nodeSelector and required node affinity,
 * NoSchedule/NoExecute taints), `SurgeCount`/`UnavailableCount`, and the pod order
 * `podByCreationTimestampAndPhase`.
 */
import type { DaemonSet, Node, Pod, PodSpec, PodTemplateSpec, Taint, Toleration } from '@podsim/api';
import { CONTROLLER_REVISION_HASH_LABEL, DAEMONSET_TEMPLATE_GENERATION_LABEL } from '@podsim/api';
import { getScaledValueFromIntOrPercent } from '../intstr.js';

/** `extensions.DaemonSetTemplateGenerationKey` (the annotation on the DaemonSet). */
export const DAEMONSET_TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';
/** `metav1.ObjectNameField`. */
export const OBJECT_NAME_FIELD = 'metadata.name';

/** The taints every daemon pod tolerates forever (`AddOrUpdateDaemonPodTolerations`), in upstream order. */
export const DAEMON_POD_TOLERATIONS: readonly Toleration[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];
/** Added only with `spec.hostNetwork: true`. */
export const DAEMON_HOST_NETWORK_TOLERATION: Toleration = { key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' };

/** `Toleration.MatchToleration`: same key, operator, value and effect. */
function matchToleration(a: Toleration, b: Toleration): boolean {
  return (a.key ?? '') === (b.key ?? '') && (a.effect ?? '') === (b.effect ?? '') && (a.operator ?? 'Equal') === (b.operator ?? 'Equal') && (a.value ?? '') === (b.value ?? '');
}

/** `AddOrUpdateTolerationInPodSpec`: replaces a matching toleration (e.g. a 300 s one) or appends. */
function addOrUpdateToleration(list: Toleration[], t: Toleration): Toleration[] {
  let updated = false;
  const out: Toleration[] = [];
  for (const x of list) {
    if (matchToleration(t, x)) {
      out.push(t);
      updated = true;
    } else out.push(x);
  }
  if (!updated) out.push(t);
  return out;
}

/** `AddOrUpdateDaemonPodTolerations`: a copy of `spec` with the daemon tolerations. */
export function addOrUpdateDaemonPodTolerations(spec: PodSpec): PodSpec {
  let t = [...(spec.tolerations ?? [])];
  for (const d of DAEMON_POD_TOLERATIONS) t = addOrUpdateToleration(t, d);
  if (spec.hostNetwork) t = addOrUpdateToleration(t, DAEMON_HOST_NETWORK_TOLERATION);
  return { ...spec, tolerations: t };
}

/** `util.GetTemplateGeneration`: the DaemonSet's template-generation annotation, if numeric. */
export function getTemplateGeneration(ds: DaemonSet): number | undefined {
  const v = ds.metadata.annotations?.[DAEMONSET_TEMPLATE_GENERATION_ANNOTATION];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}

/** `util.CreatePodTemplate`: daemon tolerations, `pod-template-generation` and `controller-revision-hash` labels. */
export function createPodTemplate(template: PodTemplateSpec, generation: number | undefined, hash: string): PodTemplateSpec {
  const labels = { ...(template.metadata?.labels ?? {}) };
  if (generation !== undefined) labels[DAEMONSET_TEMPLATE_GENERATION_LABEL] = String(generation);
  if (hash) labels[CONTROLLER_REVISION_HASH_LABEL] = hash;
  return { metadata: { ...(template.metadata ?? {}), labels }, spec: addOrUpdateDaemonPodTolerations(template.spec) };
}

interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}
interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}
interface NodeAffinityShape {
  requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] };
  [k: string]: unknown;
}

function requiredTerms(spec: PodSpec): NodeSelectorTerm[] | undefined {
  const na = spec.affinity?.nodeAffinity as NodeAffinityShape | undefined;
  return na?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
}

/** `ReplaceDaemonSetPodNodeNameNodeAffinity`: the required node affinity becomes the single term `metadata.name In [node]`. */
export function replaceDaemonSetPodNodeNameNodeAffinity(affinity: Record<string, unknown> | undefined, nodeName: string): Record<string, unknown> {
  const term: NodeSelectorTerm = { matchFields: [{ key: OBJECT_NAME_FIELD, operator: 'In', values: [nodeName] }] };
  const na = (affinity?.nodeAffinity ?? {}) as NodeAffinityShape;
  const required = { ...(na.requiredDuringSchedulingIgnoredDuringExecution ?? {}), nodeSelectorTerms: [term] };
  return { ...(affinity ?? {}), nodeAffinity: { ...na, requiredDuringSchedulingIgnoredDuringExecution: required } };
}

/** `GetTargetNodeName`: `spec.nodeName`, else the value of the `metadata.name In [x]` affinity term; undefined when neither. */
export function getTargetNodeName(pod: Pod): string | undefined {
  if (pod.spec.nodeName) return pod.spec.nodeName;
  for (const term of requiredTerms(pod.spec) ?? []) {
    for (const e of term.matchFields ?? []) {
      if (e.key === OBJECT_NAME_FIELD && e.operator === 'In') return e.values?.length === 1 ? e.values[0] : undefined;
    }
  }
  return undefined;
}

function requirementMatches(r: NodeSelectorRequirement, value: string | undefined): boolean {
  const vals = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return value !== undefined && vals.includes(value);
    case 'NotIn':
      return value === undefined || !vals.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (value === undefined || vals.length !== 1) return false;
      const a = Number(value);
      const b = Number(vals[0]);
      if (!Number.isInteger(a) || !Number.isInteger(b)) return false;
      return r.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

/**
 * `PodMatchesNodeSelectorAndAffinityTerms`: the nodeSelector labels all match, and one of the
 * required node-affinity terms matches (labels through matchExpressions, the node name through
 * matchFields `metadata.name`; an empty term matches nothing).
 */
export function podMatchesNodeSelectorAndAffinityTerms(spec: PodSpec, node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [k, v] of Object.entries(spec.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const terms = requiredTerms(spec);
  if (!terms) return true;
  return terms.some((t) => {
    const ex = t.matchExpressions ?? [];
    const fs = t.matchFields ?? [];
    if (ex.length === 0 && fs.length === 0) return false;
    return ex.every((r) => requirementMatches(r, labels[r.key])) && fs.every((r) => r.key === OBJECT_NAME_FIELD && requirementMatches(r, node.metadata.name));
  });
}

/** `v1.Toleration.ToleratesTaint`. */
function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (t.operator === 'Exists') return true;
  return (t.value ?? '') === (taint.value ?? '');
}

/** `FindMatchingUntoleratedTaint` restricted to `effects`. */
function hasUntoleratedTaint(taints: readonly Taint[], tolerations: readonly Toleration[], effects: readonly string[]): boolean {
  return taints.some((taint) => effects.includes(taint.effect) && !tolerations.some((t) => toleratesTaint(t, taint)));
}

/** What `nodeShouldRunDaemonPod` decides for one node. */
export interface ShouldRun {
  /** A daemon pod should be created there if none exists. */
  readonly shouldRun: boolean;
  /** An existing daemon pod may stay. */
  readonly shouldContinueRunning: boolean;
}

/**
 * `nodeShouldRunDaemonPod(node, ds)` against the simulated daemon pod (`NewPod`: the template
 * with the daemon tolerations): a template nodeName naming another node, or nodeSelector/required
 * affinity not matching → (false, false); an untolerated NoSchedule/NoExecute taint →
 * shouldRun false, shouldContinueRunning only without an untolerated NoExecute taint. Only
 * `spec.taints` count: node conditions and `spec.unschedulable` are not checked (spec WC §3.1).
 */
export function nodeShouldRunDaemonPod(node: Node, ds: DaemonSet): ShouldRun {
  const spec = addOrUpdateDaemonPodTolerations(ds.spec.template.spec);
  if (spec.nodeName && spec.nodeName !== node.metadata.name) return { shouldRun: false, shouldContinueRunning: false };
  if (!podMatchesNodeSelectorAndAffinityTerms(spec, node)) return { shouldRun: false, shouldContinueRunning: false };
  const taints = node.spec?.taints ?? [];
  const tolerations = spec.tolerations ?? [];
  if (hasUntoleratedTaint(taints, tolerations, ['NoExecute', 'NoSchedule'])) {
    return { shouldRun: false, shouldContinueRunning: !hasUntoleratedTaint(taints, tolerations, ['NoExecute']) };
  }
  return { shouldRun: true, shouldContinueRunning: true };
}

/** `util.IsPodUpdated`: the revision hash matches, or the template-generation label does. */
export function isPodUpdated(pod: Pod, hash: string, generation: number | undefined): boolean {
  const labels = pod.metadata.labels ?? {};
  const templateMatches = generation !== undefined && labels[DAEMONSET_TEMPLATE_GENERATION_LABEL] === String(generation);
  const hashMatches = hash.length > 0 && labels[CONTROLLER_REVISION_HASH_LABEL] === hash;
  return hashMatches || templateMatches;
}

/** `util.SurgeCount` (DaemonSetUpdateSurge Beta on): maxSurge scaled against `n`, rounded up; 0 unless RollingUpdate. */
export function surgeCount(ds: DaemonSet, n: number): number {
  const st = ds.spec.updateStrategy;
  if ((st?.type ?? 'RollingUpdate') !== 'RollingUpdate') return 0;
  const v = getScaledValueFromIntOrPercent(st?.rollingUpdate?.maxSurge ?? 0, n, true);
  return typeof v === 'number' ? v : 0;
}

/** `util.UnavailableCount`: maxUnavailable scaled against `n`, rounded up; 0 unless RollingUpdate. */
export function unavailableCount(ds: DaemonSet, n: number): number {
  const st = ds.spec.updateStrategy;
  if ((st?.type ?? 'RollingUpdate') !== 'RollingUpdate') return 0;
  const v = getScaledValueFromIntOrPercent(st?.rollingUpdate?.maxUnavailable ?? 1, n, true);
  return typeof v === 'number' ? v : 0;
}

/** `util.AllowsSurge`. */
export function allowsSurge(ds: DaemonSet): boolean {
  return surgeCount(ds, 1) !== 0;
}

/** `podByCreationTimestampAndPhase.Less` as a comparator: scheduled first, then older, then by name. */
export function compareByCreationTimestampAndPhase(a: Pod, b: Pod): number {
  const sa = !!a.spec.nodeName;
  const sb = !!b.spec.nodeName;
  if (sa !== sb) return sa ? -1 : 1;
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta === tb) {
    const na = a.metadata.name ?? '';
    const nb = b.metadata.name ?? '';
    return na < nb ? -1 : na > nb ? 1 : 0;
  }
  return ta < tb ? -1 : 1;
}
