/**
 * Pod predicates the controllers share: `IsPodActive` / `FilterActivePods`
 * (`pkg/controller/controller_utils.go`), `IsPodReady` / `IsPodAvailable` / `GetPodReadyCondition`
 * (`pkg/api/v1/pod/util.go`), podgc's `isPodTerminated`, and `GetPodFromTemplate`
 * (controller_utils.go) which builds the pod a ReplicaSet creates. Spec §12 and invariant 13:
 * a pod with a deletionTimestamp is never active, so its replacement is created at once.
 */
import type { OwnerReference, Pod, PodCondition, PodTemplateSpec, VirtualTime } from '@podsim/api';
import type { Clock } from '@podsim/api';
import { US_PER_SECOND } from '@podsim/api';

/** `IsPodActive`: not Succeeded, not Failed, and no deletionTimestamp. */
export function isPodActive(p: Pod): boolean {
  const phase = p.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !p.metadata.deletionTimestamp;
}

/** `FilterActivePods`. */
export function filterActivePods(pods: Iterable<Pod>): Pod[] {
  const out: Pod[] = [];
  for (const p of pods) if (isPodActive(p)) out.push(p);
  return out;
}

/** `GetPodReadyCondition`. */
export function getPodReadyCondition(p: Pod): PodCondition | undefined {
  const cs = p.status?.conditions;
  if (!cs) return undefined;
  for (const c of cs) if (c.type === 'Ready') return c;
  return undefined;
}

/** `IsPodReady`: the Ready condition is True. */
export function isPodReady(p: Pod): boolean {
  return getPodReadyCondition(p)?.status === 'True';
}

/**
 * `IsPodAvailable(pod, minReadySeconds, now)`: ready, and ready for at least `minReadySeconds`
 * (Ready's lastTransitionTime + minReadySeconds strictly before now). `now` is virtual µs.
 */
export function isPodAvailable(p: Pod, minReadySeconds: number, now: VirtualTime, clock: Clock): boolean {
  const c = getPodReadyCondition(p);
  if (!c || c.status !== 'True') return false;
  if (!minReadySeconds) return true;
  const t = c.lastTransitionTime ? clock.parse(c.lastTransitionTime) : undefined;
  return t !== undefined && t + minReadySeconds * US_PER_SECOND < now;
}

/** `podReadyTime`: lastTransitionTime of a True Ready condition (virtual µs), else undefined. */
export function podReadyTime(p: Pod, clock: Pick<Clock, 'parse'>): VirtualTime | undefined {
  const c = getPodReadyCondition(p);
  if (!c || c.status !== 'True' || !c.lastTransitionTime) return undefined;
  return clock.parse(c.lastTransitionTime);
}

/** podgc `isPodTerminated`: phase is neither Pending, Running nor Unknown (absent = Pending). */
export function isPodTerminated(p: Pod): boolean {
  const phase = p.status?.phase ?? 'Pending';
  return phase !== 'Pending' && phase !== 'Running' && phase !== 'Unknown';
}

/** `maxContainerRestarts`. */
export function maxContainerRestarts(p: Pod): number {
  let m = 0;
  for (const c of p.status?.containerStatuses ?? []) m = Math.max(m, c.restartCount ?? 0);
  return m;
}

/**
 * `GetPodFromTemplate(template, parent, controllerRef)`: labels, annotations and finalizers
 * from the template, `generateName: <parent>-` (the apiserver appends 5 characters), the
 * controller reference, and the template's spec. No status: the apiserver sets phase Pending at
 * create. Upstream deep-copies the spec; here it is shared, because informer objects and
 * message bodies are never mutated (the apiserver decodes a private copy).
 */
export function getPodFromTemplate(template: PodTemplateSpec, parentName: string, controllerRef: OwnerReference | undefined): Pod {
  const md = template.metadata ?? {};
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${parentName}-`,
      ...(md.labels ? { labels: { ...md.labels } } : {}),
      ...(md.annotations ? { annotations: { ...md.annotations } } : {}),
      ...(md.finalizers ? { finalizers: [...md.finalizers] } : {}),
      ...(controllerRef ? { ownerReferences: [controllerRef] } : {}),
    },
    spec: template.spec,
  };
  return pod;
}
