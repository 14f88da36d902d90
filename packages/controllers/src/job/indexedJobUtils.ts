/**
 * Indexed Job helpers (`pkg/controller/job/indexed_job_utils.go`, v1.22, IndexedJob Beta on):
 * the completion index of a pod (`batch.kubernetes.io/job-completion-index`), the succeeded
 * indexes as ordered intervals (`calculateSucceededIndexes`, printed as `status.completedIndexes`
 * `1,3-5`), `firstPendingIndexes`, `appendDuplicatedIndexPodsForRemoval`, the env var and
 * annotation added to each pod, and `podGenerateNameWithIndex`. Pure.
 */
import type { Clock, Pod, PodTemplateSpec } from '@podsim/api';
import { JOB_COMPLETION_INDEX_ANNOTATION, JOB_COMPLETION_INDEX_ENV_NAME } from '@podsim/api';
import { compareActivePods } from '../activePodsOrder.js';

/** `unknownCompletionIndex`. */
export const UNKNOWN_COMPLETION_INDEX = -1;
/** `names.MaxGeneratedNameLength`. */
const MAX_GENERATED_NAME_LENGTH = 58;

/** An inclusive interval of indexes. */
export interface Interval {
  readonly first: number;
  readonly last: number;
}

/** `getCompletionIndex`: the annotation's value when a non-negative integer, else -1. */
export function getCompletionIndex(pod: Pod): number {
  const v = pod.metadata.annotations?.[JOB_COMPLETION_INDEX_ANNOTATION];
  if (v === undefined || !/^\d+$/.test(v)) return UNKNOWN_COMPLETION_INDEX;
  return Number(v);
}

/** `calculateSucceededIndexes`: distinct in-range indexes of Succeeded pods, as intervals. */
export function calculateSucceededIndexes(pods: readonly Pod[], completions: number): Interval[] {
  const set = new Set<number>();
  for (const p of pods) {
    if (p.status?.phase !== 'Succeeded') continue;
    const ix = getCompletionIndex(p);
    if (ix >= 0 && ix < completions) set.add(ix);
  }
  const sorted = [...set].sort((a, b) => a - b);
  const out: Interval[] = [];
  for (const ix of sorted) {
    const last = out.at(-1);
    if (last && last.last + 1 === ix) out[out.length - 1] = { first: last.first, last: ix };
    else out.push({ first: ix, last: ix });
  }
  return out;
}

/** `orderedIntervals.total`. */
export function intervalsTotal(iv: readonly Interval[]): number {
  return iv.reduce((n, i) => n + i.last - i.first + 1, 0);
}

/** `orderedIntervals.String`: `1,3-5,7`. */
export function intervalsString(iv: readonly Interval[]): string {
  return iv.map((i) => (i.first === i.last ? `${i.first}` : `${i.first}-${i.last}`)).join(',');
}

/** `firstPendingIndexes`: up to `count` lowest indexes in [0, completions) neither succeeded nor held by an active pod. */
export function firstPendingIndexes(activePods: readonly Pod[], succeeded: readonly Interval[], count: number, completions: number): number[] {
  if (count === 0) return [];
  const taken = new Set<number>();
  for (const p of activePods) {
    const ix = getCompletionIndex(p);
    if (ix >= 0) taken.add(ix);
  }
  for (const i of succeeded) for (let x = i.first; x <= i.last; x++) taken.add(x);
  const out: number[] = [];
  for (let x = 0; x < completions && out.length < count; x++) if (!taken.has(x)) out.push(x);
  return out;
}

/**
 * `appendDuplicatedIndexPodsForRemoval`: pods without a valid in-range index go to `rm`; of
 * the pods sharing one index all but the one {@link compareActivePods} keeps longest go to `rm`.
 */
export function splitDuplicatedIndexPods(pods: readonly Pod[], completions: number, clock: Pick<Clock, 'parse'>): { rm: Pod[]; left: Pod[] } {
  const rm: Pod[] = [];
  const left: Pod[] = [];
  const byIndex = new Map<number, Pod[]>();
  for (const p of pods) {
    const ix = getCompletionIndex(p);
    if (ix < 0 || ix >= completions) rm.push(p);
    else {
      let g = byIndex.get(ix);
      if (!g) byIndex.set(ix, (g = []));
      g.push(p);
    }
  }
  for (const ix of [...byIndex.keys()].sort((a, b) => a - b)) {
    const g = byIndex.get(ix)!.sort((a, b) => compareActivePods(a, b, clock));
    rm.push(...g.slice(0, -1));
    left.push(g[g.length - 1]);
  }
  return { rm, left };
}

/**
 * `addCompletionIndexEnvVariables`: every container and init container gets
 * `JOB_COMPLETION_INDEX` from the annotation through the downward API, unless it defines it.
 */
export function addCompletionIndexEnvVariables(template: PodTemplateSpec): PodTemplateSpec {
  const env = {
    name: JOB_COMPLETION_INDEX_ENV_NAME,
    valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${JOB_COMPLETION_INDEX_ANNOTATION}']` } },
  };
  const add = <C extends { env?: { name: string }[] }>(c: C): C => (c.env?.some((e) => e.name === JOB_COMPLETION_INDEX_ENV_NAME) ? c : { ...c, env: [...(c.env ?? []), env] });
  return {
    ...template,
    spec: {
      ...template.spec,
      containers: template.spec.containers.map(add),
      ...(template.spec.initContainers ? { initContainers: template.spec.initContainers.map(add) } : {}),
    },
  };
}

/** `addCompletionIndexAnnotation` + `template.Spec.Hostname = <job>-<index>`. */
export function indexedTemplate(template: PodTemplateSpec, jobName: string, index: number): PodTemplateSpec {
  return {
    metadata: { ...(template.metadata ?? {}), annotations: { ...(template.metadata?.annotations ?? {}), [JOB_COMPLETION_INDEX_ANNOTATION]: String(index) } },
    spec: { ...template.spec, hostname: `${jobName}-${index}` },
  };
}

/** `podGenerateNameWithIndex`: `<job>-<index>-`, the job name truncated so the prefix fits 58 characters. */
export function podGenerateNameWithIndex(jobName: string, index: number): string {
  const appendIndex = `-${index}-`;
  const prefix = jobName + appendIndex;
  if (prefix.length > MAX_GENERATED_NAME_LENGTH) return prefix.slice(0, MAX_GENERATED_NAME_LENGTH - appendIndex.length) + appendIndex;
  return prefix;
}
