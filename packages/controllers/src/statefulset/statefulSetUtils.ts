/**
 * StatefulSet identity, storage and revision helpers: kubernetes v1.22
 * `pkg/controller/statefulset/stateful_set_utils.go` (getParentNameAndOrdinal, getPodName,
 * getPersistentVolumeClaimName, identityMatches, storageMatches, getPersistentVolumeClaims,
 * updateStorage, initIdentity, newVersionedStatefulSetPod, getPatch, newRevision, ApplyRevision,
 * nextRevision, isRunningAndReady, isHealthy, completeRollingUpdate, inconsistentStatus) and
 * `pkg/controller/history/controller_history.go` (ControllerRevisionName, HashControllerRevision,
 * EqualRevision, FindEqualRevisions, SortControllerRevisions). All pure.
 *
 * Deliberate difference: the revision hash is fnv32a over podsim's canonical JSON of the patch
 * (sorted keys), not over Go's json.Marshal bytes, so a revision name has upstream's shape
 * (`<set>-<10 safe-encoded chars>`) but not the value a real cluster computes for the same template.
 */
import type { ControllerRevision, OwnerReference, PersistentVolumeClaim, Pod, StatefulSet, StatefulSetStatus, Volume } from '@podsim/api';
import { CONTROLLER_REVISION_HASH_LABEL, STATEFULSET_POD_NAME_LABEL } from '@podsim/api';
import { safeEncodeString } from '../deployment/deploymentUtil.js';
import { canonicalJson, deepCopy } from '../objects.js';
import { getPodFromTemplate, isPodReady } from '../podutil.js';

const UTF8 = new TextEncoder();

export const STS_API_VERSION = 'apps/v1';
export const STS_KIND = 'StatefulSet';

/** `statefulPodRegex` = `(.*)-([0-9]+)$`: the parent name and ordinal of a pod name, or ['', -1]. */
export function getParentNameAndOrdinal(pod: Pod): { parent: string; ordinal: number } {
  const m = /^(.*)-([0-9]+)$/.exec(pod.metadata.name ?? '');
  if (!m) return { parent: '', ordinal: -1 };
  const n = Number(m[2]);
  // strconv.ParseInt(…, 10, 32) fails beyond int32.
  if (!Number.isSafeInteger(n) || n > 2147483647) return { parent: m[1], ordinal: -1 };
  return { parent: m[1], ordinal: n };
}

export const getOrdinal = (pod: Pod): number => getParentNameAndOrdinal(pod).ordinal;
export const getPodName = (set: StatefulSet, ordinal: number): string => `${set.metadata.name}-${ordinal}`;

/** `getPersistentVolumeClaimName`: `<template>-<set>-<ordinal>`. */
export function getPersistentVolumeClaimName(set: StatefulSet, claimName: string, ordinal: number): string {
  return `${claimName}-${set.metadata.name}-${ordinal}`;
}

/** `isMemberOf`: the pod's parsed parent name is the set's name. */
export function isMemberOf(set: StatefulSet, pod: Pod): boolean {
  return getParentNameAndOrdinal(pod).parent === set.metadata.name;
}

/** `identityMatches`: ordinal ≥ 0, parent, name, namespace and the pod-name label agree. */
export function identityMatches(set: StatefulSet, pod: Pod): boolean {
  const { parent, ordinal } = getParentNameAndOrdinal(pod);
  return (
    ordinal >= 0 &&
    set.metadata.name === parent &&
    pod.metadata.name === getPodName(set, ordinal) &&
    pod.metadata.namespace === set.metadata.namespace &&
    pod.metadata.labels?.[STATEFULSET_POD_NAME_LABEL] === pod.metadata.name
  );
}

/** `storageMatches`: every claim template has a same-named volume pointing at its claim. */
export function storageMatches(set: StatefulSet, pod: Pod): boolean {
  const ordinal = getOrdinal(pod);
  if (ordinal < 0) return false;
  const volumes = new Map((pod.spec?.volumes ?? []).map((v) => [v.name, v]));
  for (const t of set.spec.volumeClaimTemplates ?? []) {
    const name = t.metadata?.name ?? '';
    const v = volumes.get(name);
    if (!v?.persistentVolumeClaim || v.persistentVolumeClaim.claimName !== getPersistentVolumeClaimName(set, name, ordinal)) return false;
  }
  return true;
}

/**
 * `getPersistentVolumeClaims(set, pod)`: one claim per template (in template order; upstream
 * returns a map), named for the pod's ordinal, in the set's namespace, labelled with the
 * template's labels plus `spec.selector.matchLabels`.
 */
export function getPersistentVolumeClaims(set: StatefulSet, pod: Pod): { template: string; claim: PersistentVolumeClaim }[] {
  const ordinal = getOrdinal(pod);
  return (set.spec.volumeClaimTemplates ?? []).map((t) => {
    const template = t.metadata?.name ?? '';
    const md = deepCopy(t.metadata ?? {});
    const claim: PersistentVolumeClaim = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        ...md,
        name: getPersistentVolumeClaimName(set, template, ordinal),
        namespace: set.metadata.namespace,
        labels: { ...(md.labels ?? {}), ...(set.spec.selector?.matchLabels ?? {}) },
      },
      spec: deepCopy(t.spec ?? {}),
    };
    return { template, claim };
  });
}

/** `updateStorage`: the claim volumes first (template order), then the pod's other volumes. */
export function updateStorage(set: StatefulSet, pod: Pod): void {
  const claims = getPersistentVolumeClaims(set, pod);
  const names = new Set(claims.map((c) => c.template));
  const vols: Volume[] = claims.map((c) => ({ name: c.template, persistentVolumeClaim: { claimName: c.claim.metadata.name ?? '', readOnly: false } }));
  for (const v of pod.spec.volumes ?? []) if (!names.has(v.name)) vols.push(v);
  if (vols.length > 0) pod.spec.volumes = vols;
}

/** `updateIdentity`: name, namespace and the `statefulset.kubernetes.io/pod-name` label. */
export function updateIdentity(set: StatefulSet, pod: Pod, ordinal: number): void {
  pod.metadata.name = getPodName(set, ordinal);
  pod.metadata.namespace = set.metadata.namespace;
  pod.metadata.labels = { ...(pod.metadata.labels ?? {}), [STATEFULSET_POD_NAME_LABEL]: pod.metadata.name };
}

/** `newStatefulSetPod` + `setPodRevision` (`newVersionedStatefulSetPod` picks the set and revision). */
export function newStatefulSetPod(set: StatefulSet, ordinal: number, revision: string): Pod {
  const ref: OwnerReference = {
    apiVersion: STS_API_VERSION,
    kind: STS_KIND,
    name: set.metadata.name ?? '',
    uid: set.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
  const pod = getPodFromTemplate(set.spec.template, set.metadata.name ?? '', ref);
  pod.spec = deepCopy(pod.spec);
  // initIdentity: hostname = pod name, subdomain = serviceName (set only here, at creation).
  updateIdentity(set, pod, ordinal);
  pod.spec.hostname = pod.metadata.name;
  if (set.spec.serviceName) pod.spec.subdomain = set.spec.serviceName;
  updateStorage(set, pod);
  pod.metadata.labels = { ...(pod.metadata.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: revision };
  return pod;
}

/**
 * Which revision `newVersionedStatefulSetPod` builds a slot at: currentRevision when
 * (RollingUpdate, no rollingUpdate and ordinal < status.currentReplicas) or (rollingUpdate set and
 * ordinal < partition); else updateRevision (OnDelete included).
 */
export function slotAtCurrentRevision(currentSet: StatefulSet, ordinal: number): boolean {
  const st = currentSet.spec.updateStrategy;
  const ru = st?.rollingUpdate;
  return (st?.type === 'RollingUpdate' && !ru && ordinal < (currentSet.status?.currentReplicas ?? 0)) || (ru !== undefined && ordinal < (ru.partition ?? 0));
}

/** `newVersionedStatefulSetPod`: the pod for an empty slot, from the set of the revision {@link slotAtCurrentRevision} picks. */
export function newVersionedStatefulSetPod(currentSet: StatefulSet, updateSet: StatefulSet, currentRevision: string, updateRevision: string, ordinal: number): Pod {
  return slotAtCurrentRevision(currentSet, ordinal) ? newStatefulSetPod(currentSet, ordinal, currentRevision) : newStatefulSetPod(updateSet, ordinal, updateRevision);
}

export const getPodRevision = (pod: Pod): string => pod.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '';
/** `isCreated`: a placeholder has no phase. */
export const isCreated = (pod: Pod): boolean => Boolean(pod.status?.phase);
export const isFailed = (pod: Pod): boolean => pod.status?.phase === 'Failed';
export const isTerminating = (pod: Pod): boolean => Boolean(pod.metadata.deletionTimestamp);
/** `isRunningAndReady`: phase Running and condition Ready=True. */
export const isRunningAndReady = (pod: Pod): boolean => pod.status?.phase === 'Running' && isPodReady(pod);
/** `isHealthy`: Running, Ready and not terminating. */
export const isHealthy = (pod: Pod): boolean => isRunningAndReady(pod) && !isTerminating(pod);
/** `allowsBurst`: podManagementPolicy Parallel. */
export const allowsBurst = (set: StatefulSet): boolean => set.spec.podManagementPolicy === 'Parallel';

// ---- revisions ------------------------------------------------------------------------------------

/** `getPatch`: `{spec: {template: <template>, $patch: replace}}` — the template replaces the set's. */
export function getPatch(set: StatefulSet): Record<string, unknown> {
  // Shared, not copied: informer objects and message bodies are never mutated.
  return { spec: { template: { ...(set.spec.template as unknown as Record<string, unknown>), $patch: 'replace' } } };
}

/** FNV-1a, 32 bit, over the UTF-8 bytes of `s`. */
function fnv32a(s: string): number {
  let h = 0x811c9dc5;
  for (const b of UTF8.encode(s)) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** `HashControllerRevision(revision, probe)`: fnv32a of the data, then of the collision count. */
export function hashControllerRevision(data: unknown, collisionCount: number | undefined): string {
  let s = canonicalJson(data);
  if (collisionCount !== undefined) s += String(collisionCount);
  return safeEncodeString(String(fnv32a(s)));
}

/** `ControllerRevisionName`: `<prefix>-<hash>`, the prefix cut to 223 characters. */
export function controllerRevisionName(prefix: string, hash: string): string {
  return `${prefix.length > 223 ? prefix.slice(0, 223) : prefix}-${hash}`;
}

/**
 * `newRevision(set, revision, collisionCount)` via `history.NewControllerRevision`: labels from
 * the template, the set's annotations, owned by the set, named by the hash.
 */
export function newRevision(set: StatefulSet, revision: number, collisionCount: number): ControllerRevision {
  const data = getPatch(set);
  const cr: ControllerRevision = {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: controllerRevisionName(set.metadata.name ?? '', hashControllerRevision(data, collisionCount)),
      namespace: set.metadata.namespace,
      labels: { ...(set.spec.template?.metadata?.labels ?? {}) },
      ...(set.metadata.annotations ? { annotations: { ...set.metadata.annotations } } : {}),
      ownerReferences: [
        { apiVersion: STS_API_VERSION, kind: STS_KIND, name: set.metadata.name ?? '', uid: set.metadata.uid ?? '', controller: true, blockOwnerDeletion: true },
      ],
    },
    data,
    revision,
  };
  return cr;
}

/** `ApplyRevision`: the set with the revision's template. */
export function applyRevision(set: StatefulSet, revision: ControllerRevision): StatefulSet {
  const tmpl = (revision.data as { spec?: { template?: Record<string, unknown> } } | undefined)?.spec?.template;
  if (!tmpl) return set;
  // A new set object sharing everything but the template (nothing here is mutated; pods built
  // from it copy their spec).
  const { $patch: _ignored, ...t } = tmpl;
  return { ...set, spec: { ...set.spec, template: t as unknown as StatefulSet['spec']['template'] } };
}

/** Canonical JSON of a revision's data, once per (immutable) revision object. */
const DATA_JSON = new WeakMap<ControllerRevision, string>();
function dataJson(r: ControllerRevision): string {
  let j = DATA_JSON.get(r);
  if (j === undefined) DATA_JSON.set(r, (j = canonicalJson(r.data ?? null)));
  return j;
}

/** `history.EqualRevision`: same data (semantically). */
export function equalRevision(a: ControllerRevision, b: ControllerRevision): boolean {
  return dataJson(a) === dataJson(b);
}

/** `SortControllerRevisions`: by revision, then creation time, then name. */
export function sortControllerRevisions(revs: ControllerRevision[]): ControllerRevision[] {
  return revs.sort(
    (a, b) =>
      a.revision - b.revision ||
      (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
      (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  );
}

/** `nextRevision`: one past the highest, 1 for none (revisions sorted). */
export function nextRevision(revs: readonly ControllerRevision[]): number {
  return revs.length === 0 ? 1 : revs[revs.length - 1].revision + 1;
}

// ---- status ---------------------------------------------------------------------------------------

/** `completeRollingUpdate`: RollingUpdate with every replica updated and ready → current := update. */
export function completeRollingUpdate(set: StatefulSet, status: StatefulSetStatus): void {
  if (set.spec.updateStrategy?.type === 'RollingUpdate' && (status.updatedReplicas ?? 0) === status.replicas && (status.readyReplicas ?? 0) === status.replicas) {
    status.currentReplicas = status.updatedReplicas;
    status.currentRevision = status.updateRevision;
  }
}

/** `inconsistentStatus`: the computed status differs from the stored one in a field the controller owns. */
export function inconsistentStatus(set: StatefulSet, status: StatefulSetStatus): boolean {
  const s = set.status ?? { replicas: 0 };
  return (
    (status.observedGeneration ?? 0) > (s.observedGeneration ?? 0) ||
    status.replicas !== (s.replicas ?? 0) ||
    (status.currentReplicas ?? 0) !== (s.currentReplicas ?? 0) ||
    (status.readyReplicas ?? 0) !== (s.readyReplicas ?? 0) ||
    (status.updatedReplicas ?? 0) !== (s.updatedReplicas ?? 0) ||
    (status.availableReplicas ?? 0) !== (s.availableReplicas ?? 0) ||
    (status.currentRevision ?? '') !== (s.currentRevision ?? '') ||
    (status.updateRevision ?? '') !== (s.updateRevision ?? '')
  );
}
