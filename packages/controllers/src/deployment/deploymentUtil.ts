/**
 * Deployment helpers (`pkg/controller/deployment/util/deployment_util.go`, v1.22, and
 * `controller.ComputeHash`, `ReplicaSetsByCreationTimestamp` …): revision and replica
 * annotations, fenceposts (maxSurge rounded up, maxUnavailable rounded down), new/old
 * ReplicaSet discovery, proportional scaling, completion and progress tests.
 * The pod-template-hash is FNV-32a over a canonical JSON of the template (upstream hashes a
 * spew dump), encoded with `rand.SafeEncodeString` as upstream.
 */
import type { Deployment, DeploymentCondition, DeploymentStatus, PodTemplateSpec, ReplicaSet, VirtualTime } from '@podsim/api';
import type { Clock } from '@podsim/api';
import { KUBE_NAME_ALPHABET, US_PER_SECOND } from '@podsim/api';
import { getScaledValueFromIntOrPercent } from '../intstr.js';
import { byCreationTimestamp, canonicalJson, deepCopy } from '../objects.js';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
export const ROLLBACK_TO_ANNOTATION = 'deprecated.deployment.rollback.to';
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
/** `apps.DefaultDeploymentUniqueLabelKey`. */
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
/** `maxRevHistoryLengthInChars`. */
export const MAX_REV_HISTORY_LENGTH_IN_CHARS = 2000;

// Condition types and reasons (deployment_util.go).
export const DEPLOYMENT_AVAILABLE = 'Available';
export const DEPLOYMENT_PROGRESSING = 'Progressing';
export const DEPLOYMENT_REPLICA_FAILURE = 'ReplicaFailure';
export const NEW_RS_AVAILABLE_REASON = 'NewReplicaSetAvailable';
export const REPLICA_SET_UPDATED_REASON = 'ReplicaSetUpdated';
export const TIMED_OUT_REASON = 'ProgressDeadlineExceeded';
export const FOUND_NEW_RS_REASON = 'FoundNewReplicaSet';
export const NEW_REPLICA_SET_REASON = 'NewReplicaSetCreated';
export const FAILED_RS_CREATE_REASON = 'ReplicaSetCreateError';
export const PAUSED_DEPLOY_REASON = 'DeploymentPaused';
export const RESUMED_DEPLOY_REASON = 'DeploymentResumed';
export const MINIMUM_REPLICAS_AVAILABLE = 'MinimumReplicasAvailable';
export const MINIMUM_REPLICAS_UNAVAILABLE = 'MinimumReplicasUnavailable';

/** Deployment status with the collision count (absent from the shared api types). */
export type DeploymentStatusFull = DeploymentStatus & { collisionCount?: number };

/** `math.MaxInt32`: a progressDeadlineSeconds meaning "no deadline". */
const MAX_INT32 = 2147483647;

/**
 * apps/v1 `SetDefaults_Deployment` for the fields the controller reads (replicas 1,
 * RollingUpdate 25%/25%, revisionHistoryLimit 10, progressDeadlineSeconds 600). The apiserver
 * normally applies these; defaulting again here keeps the controller correct if it did not.
 */
export function withDeploymentDefaults(d: Deployment): Deployment {
  const spec = { ...d.spec };
  spec.replicas ??= 1;
  const strategy = { ...(spec.strategy ?? {}) };
  strategy.type ??= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    strategy.rollingUpdate = { maxUnavailable: '25%', maxSurge: '25%', ...(strategy.rollingUpdate ?? {}) };
    strategy.rollingUpdate.maxUnavailable ??= '25%';
    strategy.rollingUpdate.maxSurge ??= '25%';
  }
  spec.strategy = strategy;
  spec.revisionHistoryLimit ??= 10;
  spec.progressDeadlineSeconds ??= 600;
  return { ...d, spec };
}

/** `*(rs.Spec.Replicas)` (apps/v1 defaults nil to 1). */
export function rsReplicas(rs: ReplicaSet): number {
  return rs.spec.replicas ?? 1;
}

export function dReplicas(d: Deployment): number {
  return d.spec.replicas ?? 1;
}

export function isRollingUpdate(d: Deployment): boolean {
  return (d.spec.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
}

/** `ResolveFenceposts`: (surge rounded up, unavailable rounded down); both 0 → unavailable 1. */
export function resolveFenceposts(maxSurge: number | string | undefined, maxUnavailable: number | string | undefined, desired: number): [number, number] {
  const s = getScaledValueFromIntOrPercent(maxSurge ?? 0, desired, true);
  const u = getScaledValueFromIntOrPercent(maxUnavailable ?? 0, desired, false);
  const surge = typeof s === 'number' ? s : 0;
  let unavailable = typeof u === 'number' ? u : 0;
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return [surge, unavailable];
}

/** `MaxUnavailable(deployment)`: 0 for Recreate or replicas 0; at most replicas. */
export function maxUnavailable(d: Deployment): number {
  const replicas = dReplicas(d);
  if (!isRollingUpdate(d) || replicas === 0) return 0;
  const ru = d.spec.strategy?.rollingUpdate;
  const [, u] = resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, replicas);
  return Math.min(u, replicas);
}

/** `MaxSurge(deployment)`: 0 for Recreate. */
export function maxSurge(d: Deployment): number {
  if (!isRollingUpdate(d)) return 0;
  const ru = d.spec.strategy?.rollingUpdate;
  return resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, dReplicas(d))[0];
}

/** `ReplicaSetsBySizeOlder`: larger first; equal size → older first. */
export function bySizeOlder(a: ReplicaSet, b: ReplicaSet): number {
  const d = rsReplicas(b) - rsReplicas(a);
  return d !== 0 ? d : byCreationTimestamp(a, b);
}

/** `ReplicaSetsBySizeNewer`: larger first; equal size → newer first. */
export function bySizeNewer(a: ReplicaSet, b: ReplicaSet): number {
  const d = rsReplicas(b) - rsReplicas(a);
  return d !== 0 ? d : byCreationTimestamp(b, a);
}

/** `Revision(rs)`: the revision annotation as a number (0 when absent or malformed). */
export function revision(rs: ReplicaSet): number {
  const v = rs.metadata.annotations?.[REVISION_ANNOTATION];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : 0;
}

/** `ReplicaSetsByRevision`: lower revision first; ties by creation time. */
export function byRevision(a: ReplicaSet, b: ReplicaSet): number {
  const d = revision(a) - revision(b);
  return d !== 0 ? d : byCreationTimestamp(a, b);
}

/** `MaxRevision(allRSs)`. */
export function maxRevision(rss: readonly ReplicaSet[]): number {
  let m = 0;
  for (const rs of rss) m = Math.max(m, revision(rs));
  return m;
}

/** `FilterActiveReplicaSets`: present and spec.replicas > 0. */
export function filterActiveReplicaSets(rss: readonly (ReplicaSet | undefined)[]): ReplicaSet[] {
  return rss.filter((rs): rs is ReplicaSet => rs !== undefined && rsReplicas(rs) > 0);
}

const present = (rss: readonly (ReplicaSet | undefined)[]) => rss.filter((rs): rs is ReplicaSet => rs !== undefined);

/** `GetReplicaCountForReplicaSets`: Σ spec.replicas. */
export function getReplicaCountForReplicaSets(rss: readonly (ReplicaSet | undefined)[]): number {
  return present(rss).reduce((n, rs) => n + rsReplicas(rs), 0);
}

/** `GetActualReplicaCountForReplicaSets`: Σ status.replicas. */
export function getActualReplicaCountForReplicaSets(rss: readonly (ReplicaSet | undefined)[]): number {
  return present(rss).reduce((n, rs) => n + (rs.status?.replicas ?? 0), 0);
}

/** `GetReadyReplicaCountForReplicaSets`. */
export function getReadyReplicaCountForReplicaSets(rss: readonly (ReplicaSet | undefined)[]): number {
  return present(rss).reduce((n, rs) => n + (rs.status?.readyReplicas ?? 0), 0);
}

/** `GetAvailableReplicaCountForReplicaSets`. */
export function getAvailableReplicaCountForReplicaSets(rss: readonly (ReplicaSet | undefined)[]): number {
  return present(rss).reduce((n, rs) => n + (rs.status?.availableReplicas ?? 0), 0);
}

/**
 * Pod-spec fields the apiserver defaults (`SetDefaults_PodSpec`, `SetDefaults_Container`), so
 * that a template compared before and after defaulting is still equal.
 */
function normalizeTemplate(t: PodTemplateSpec): unknown {
  const c = deepCopy(t) as PodTemplateSpec;
  if (c.metadata?.labels) {
    delete c.metadata.labels[POD_TEMPLATE_HASH_LABEL];
    if (Object.keys(c.metadata.labels).length === 0) delete c.metadata.labels;
  }
  if (c.metadata) {
    delete c.metadata.creationTimestamp;
    if (Object.keys(c.metadata).length === 0) delete c.metadata;
  }
  const s = c.spec;
  s.restartPolicy ??= 'Always';
  s.terminationGracePeriodSeconds ??= 30;
  s.dnsPolicy ??= 'ClusterFirst';
  s.schedulerName ??= 'default-scheduler';
  for (const ct of [...(s.containers ?? []), ...(s.initContainers ?? [])]) {
    ct.terminationMessagePath ??= '/dev/termination-log';
    ct.terminationMessagePolicy ??= 'File';
    ct.imagePullPolicy ??= ct.image && !ct.image.includes(':') ? 'Always' : ct.image?.endsWith(':latest') ? 'Always' : 'IfNotPresent';
  }
  return c;
}

const normalizedJson = new WeakMap<PodTemplateSpec, string>();

/**
 * Canonical JSON of the normalised template, cached per template object (objects from the
 * informers are immutable, so a template is normalised once, not on every sync).
 */
function templateKey(t: PodTemplateSpec): string {
  let k = normalizedJson.get(t);
  if (k === undefined) {
    k = canonicalJson(normalizeTemplate(t));
    normalizedJson.set(t, k);
  }
  return k;
}

/** `EqualIgnoreHash`: templates equal apart from the pod-template-hash label (semantically). */
export function equalIgnoreHash(a: PodTemplateSpec, b: PodTemplateSpec): boolean {
  return a === b || templateKey(a) === templateKey(b);
}

/** A copy of a ReplicaSet whose metadata, annotations and spec (not the template) may be edited. */
export function copyForEdit(rs: ReplicaSet): ReplicaSet {
  return { ...rs, metadata: { ...rs.metadata, annotations: { ...(rs.metadata.annotations ?? {}) } }, spec: { ...rs.spec } };
}

/** FNV-1a 32-bit over the UTF-8 bytes of `text` (`hash/fnv.New32a`). */
function fnv32a(text: string): number {
  const bytes = new TextEncoder().encode(text);
  let h = 0x811c9dc5;
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** `rand.SafeEncodeString`: each character mapped into the Kubernetes name alphabet. */
export function safeEncodeString(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += KUBE_NAME_ALPHABET[s.charCodeAt(i) % KUBE_NAME_ALPHABET.length];
  return out;
}

/** `controller.ComputeHash(template, collisionCount)`. */
export function computeHash(template: PodTemplateSpec, collisionCount: number | undefined): string {
  let text = templateKey(template);
  if (collisionCount !== undefined) text += `#${collisionCount}`;
  return safeEncodeString(String(fnv32a(text)));
}

/** `FindNewReplicaSet`: the oldest RS whose template equals the deployment's. */
export function findNewReplicaSet(d: Deployment, rsList: readonly ReplicaSet[]): ReplicaSet | undefined {
  const sorted = [...rsList].sort(byCreationTimestamp);
  return sorted.find((rs) => equalIgnoreHash(rs.spec.template, d.spec.template));
}

/** `FindOldReplicaSets`: (old RSs with replicas ≠ 0, all old RSs). */
export function findOldReplicaSets(d: Deployment, rsList: readonly ReplicaSet[]): [ReplicaSet[], ReplicaSet[]] {
  const newRS = findNewReplicaSet(d, rsList);
  const required: ReplicaSet[] = [];
  const allOld: ReplicaSet[] = [];
  for (const rs of rsList) {
    if (newRS && rs.metadata.uid === newRS.metadata.uid) continue;
    allOld.push(rs);
    if (rsReplicas(rs) !== 0) required.push(rs);
  }
  return [required, allOld];
}

/**
 * `NewRSNewReplicas`: the new RS's target size. RollingUpdate: scale up by at most
 * (replicas + maxSurge − Σ spec.replicas), never beyond replicas. Recreate: replicas.
 */
export function newRSNewReplicas(d: Deployment, allRSs: readonly (ReplicaSet | undefined)[], newRS: ReplicaSet): number {
  const replicas = dReplicas(d);
  if (isRollingUpdate(d)) {
    const s = getScaledValueFromIntOrPercent(d.spec.strategy?.rollingUpdate?.maxSurge ?? 0, replicas, true);
    const surge = typeof s === 'number' ? s : 0;
    const current = getReplicaCountForReplicaSets(allRSs);
    const maxTotal = replicas + surge;
    if (current >= maxTotal) return rsReplicas(newRS);
    const up = Math.min(maxTotal - current, replicas - rsReplicas(newRS));
    return rsReplicas(newRS) + up;
  }
  return replicas;
}

/** `getIntFromAnnotation`. */
function intAnnotation(rs: ReplicaSet, name: string): number | undefined {
  const v = rs.metadata.annotations?.[name];
  return v !== undefined && /^-?\d+$/.test(v) ? Number(v) : undefined;
}

/** `GetDesiredReplicasAnnotation`. */
export function getDesiredReplicasAnnotation(rs: ReplicaSet): number | undefined {
  return intAnnotation(rs, DESIRED_REPLICAS_ANNOTATION);
}

/** `ReplicasAnnotationsNeedUpdate`. */
export function replicasAnnotationsNeedUpdate(rs: ReplicaSet, desired: number, max: number): boolean {
  const a = rs.metadata.annotations;
  return !a || a[DESIRED_REPLICAS_ANNOTATION] !== String(desired) || a[MAX_REPLICAS_ANNOTATION] !== String(max);
}

/** `SetReplicasAnnotations` on a copy the caller owns; returns whether anything changed. */
export function setReplicasAnnotations(rs: ReplicaSet, desired: number, max: number): boolean {
  rs.metadata.annotations ??= {};
  const a = rs.metadata.annotations;
  let changed = false;
  if (a[DESIRED_REPLICAS_ANNOTATION] !== String(desired)) {
    a[DESIRED_REPLICAS_ANNOTATION] = String(desired);
    changed = true;
  }
  if (a[MAX_REPLICAS_ANNOTATION] !== String(max)) {
    a[MAX_REPLICAS_ANNOTATION] = String(max);
    changed = true;
  }
  return changed;
}

const SKIP_COPY = new Set([LAST_APPLIED_ANNOTATION, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION, DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, ROLLBACK_TO_ANNOTATION]);

/**
 * `SetNewReplicaSetAnnotations(d, newRS, newRevision, exists, maxRevHistoryLengthInChars)` on a
 * copy the caller owns: copies the deployment's annotations, raises the revision (keeping a
 * revision history when an old revision is reused), and for a new RS sets the replica annotations.
 */
export function setNewReplicaSetAnnotations(d: Deployment, rs: ReplicaSet, newRevision: number, exists: boolean): boolean {
  let changed = false;
  rs.metadata.annotations ??= {};
  const a = rs.metadata.annotations;
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
    if (SKIP_COPY.has(k) || a[k] === v) continue;
    a[k] = v;
    changed = true;
  }
  const oldRevision = a[REVISION_ANNOTATION];
  const had = oldRevision !== undefined;
  let oldRev = 0;
  if (had) {
    if (!/^\d+$/.test(oldRevision)) return false;
    oldRev = Number(oldRevision);
  }
  if (oldRev < newRevision) {
    a[REVISION_ANNOTATION] = String(newRevision);
    changed = true;
  }
  if (had && oldRev < newRevision) {
    const hist = a[REVISION_HISTORY_ANNOTATION] ?? '';
    const olds = hist.split(',');
    if (olds[0].length === 0) a[REVISION_HISTORY_ANNOTATION] = oldRevision;
    else {
      let total = hist.length + oldRevision.length + 1;
      let start = 0;
      while (total > MAX_REV_HISTORY_LENGTH_IN_CHARS && start < olds.length) {
        total -= olds[start].length + 1;
        start++;
      }
      if (total <= MAX_REV_HISTORY_LENGTH_IN_CHARS) a[REVISION_HISTORY_ANNOTATION] = [...olds.slice(start), oldRevision].join(',');
    }
  }
  if (!exists && setReplicasAnnotations(rs, dReplicas(d), dReplicas(d) + maxSurge(d))) changed = true;
  return changed;
}

/** `SetDeploymentRevision` on a copy the caller owns. */
export function setDeploymentRevision(d: Deployment, rev: string | undefined): boolean {
  if (rev === undefined) return false;
  d.metadata.annotations ??= {};
  if (d.metadata.annotations[REVISION_ANNOTATION] === rev) return false;
  d.metadata.annotations[REVISION_ANNOTATION] = rev;
  return true;
}

/** `FindActiveOrLatest`: the only active RS, or the newest when none is active; else undefined. */
export function findActiveOrLatest(newRS: ReplicaSet | undefined, oldRSs: readonly ReplicaSet[]): ReplicaSet | undefined {
  if (!newRS && oldRSs.length === 0) return undefined;
  const olds = [...oldRSs].sort((a, b) => byCreationTimestamp(b, a));
  const active = filterActiveReplicaSets([...olds, newRS]);
  if (active.length === 0) return newRS ?? olds[0];
  if (active.length === 1) return active[0];
  return undefined;
}

/** `IsSaturated`: the new RS runs all replicas and they are available. */
export function isSaturated(d: Deployment, rs: ReplicaSet | undefined): boolean {
  if (!rs) return false;
  const desired = getDesiredReplicasAnnotation(rs);
  if (desired === undefined) return false;
  const replicas = dReplicas(d);
  return rsReplicas(rs) === replicas && desired === replicas && (rs.status?.availableReplicas ?? 0) === replicas;
}

/** `GetProportion`: this RS's share of a scale change, bounded by what is left to distribute. */
export function getProportion(rs: ReplicaSet | undefined, d: Deployment, toAdd: number, added: number, deploymentStatusReplicas: number): number {
  if (!rs || rsReplicas(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const fraction = getReplicaSetFraction(rs, d, deploymentStatusReplicas);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

/** `getReplicaSetFraction` (Go's `integer.RoundToInt32` rounds half away from zero). */
function getReplicaSetFraction(rs: ReplicaSet, d: Deployment, deploymentStatusReplicas: number): number {
  if (dReplicas(d) === 0) return -rsReplicas(rs);
  const deploymentReplicas = dReplicas(d) + maxSurge(d);
  const annotated = intAnnotation(rs, MAX_REPLICAS_ANNOTATION) ?? deploymentStatusReplicas;
  const size = (rsReplicas(rs) * deploymentReplicas) / annotated;
  const rounded = size < 0 ? -Math.round(-size) : Math.round(size);
  return rounded - rsReplicas(rs);
}

// ---- conditions -------------------------------------------------------------------------

/** `NewDeploymentCondition` at `now` (RFC 3339). */
export function newDeploymentCondition(type: string, status: DeploymentCondition['status'], reason: string, message: string, now: string): DeploymentCondition {
  return { type, status, lastUpdateTime: now, lastTransitionTime: now, reason, message };
}

export function getDeploymentCondition(status: DeploymentStatus | undefined, type: string): DeploymentCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/**
 * `SetDeploymentCondition`: no-op when status and reason are unchanged; keeps
 * lastTransitionTime when only the reason changes.
 */
export function setDeploymentCondition(status: DeploymentStatus, cond: DeploymentCondition): void {
  const cur = getDeploymentCondition(status, cond.type);
  if (cur && cur.status === cond.status && cur.reason === cond.reason) return;
  const c = { ...cond };
  if (cur && cur.status === c.status) c.lastTransitionTime = cur.lastTransitionTime;
  status.conditions = [...(status.conditions ?? []).filter((x) => x.type !== cond.type), c];
}

export function removeDeploymentCondition(status: DeploymentStatus, type: string): void {
  if (!status.conditions) return;
  status.conditions = status.conditions.filter((c) => c.type !== type);
  if (status.conditions.length === 0) delete status.conditions;
}

export function hasProgressDeadline(d: Deployment): boolean {
  const p = d.spec.progressDeadlineSeconds;
  return p !== undefined && p !== MAX_INT32;
}

export function hasRevisionHistoryLimit(d: Deployment): boolean {
  const l = d.spec.revisionHistoryLimit;
  return l !== undefined && l !== MAX_INT32;
}

/** `DeploymentComplete`: all replicas updated and available, and the generation observed. */
export function deploymentComplete(d: Deployment, s: DeploymentStatus): boolean {
  const r = dReplicas(d);
  return (s.updatedReplicas ?? 0) === r && (s.replicas ?? 0) === r && (s.availableReplicas ?? 0) === r && (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0);
}

/** `DeploymentProgressing`: more updated/ready/available pods, or fewer old ones, than before. */
export function deploymentProgressing(d: Deployment, s: DeploymentStatus): boolean {
  const o = d.status ?? {};
  const oldOld = (o.replicas ?? 0) - (o.updatedReplicas ?? 0);
  const newOld = (s.replicas ?? 0) - (s.updatedReplicas ?? 0);
  return (
    (s.updatedReplicas ?? 0) > (o.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (s.readyReplicas ?? 0) > (o.readyReplicas ?? 0) ||
    (s.availableReplicas ?? 0) > (o.availableReplicas ?? 0)
  );
}

/** `DeploymentTimedOut`: the Progressing condition was last updated more than the deadline ago. */
export function deploymentTimedOut(d: Deployment, s: DeploymentStatus, now: VirtualTime, clock: Clock): boolean {
  if (!hasProgressDeadline(d)) return false;
  const c = getDeploymentCondition(s, DEPLOYMENT_PROGRESSING);
  if (!c) return false;
  if (c.reason === NEW_RS_AVAILABLE_REASON) return false;
  if (c.reason === TIMED_OUT_REASON) return true;
  const from = c.lastUpdateTime ? clock.parse(c.lastUpdateTime) : undefined;
  if (from === undefined) return false;
  return from + (d.spec.progressDeadlineSeconds ?? 0) * US_PER_SECOND < now;
}
