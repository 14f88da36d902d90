/**
 * What `kubectl drain` decides and prints, as pure functions: kubectl v0.22.8 `pkg/drain/filters.go`
 * (GetPodsForDeletion's filters: skip mirror pods, refuse DaemonSet pods unless ignored, emptyDir
 * pods unless `--delete-emptydir-data`, unreplicated pods unless `--force`), `pkg/drain/drain.go`
 * (evictPods' reaction to each eviction reply) and `pkg/cmd/drain/drain.go` / `pkg/cmd/util`
 * (the lines printed, CheckErr's error format). The driver (`driver.ts`) makes the API calls.
 * `daemonSetFilter` GETs each daemon pod's DaemonSet (the driver does, {@link daemonSetLookups}):
 * an existing one keeps its pod (an error without `--ignore-daemonsets`), a missing one makes
 * the pod an orphan deleted under `--force`. Simplified: `--skip-wait-for-delete-timeout`, `--selector`,
 * `--pod-selector`, `--disable-eviction` and dry runs are not modelled.
 */
import type { KubeObject, Pod, Status } from '@podsim/api';

export const DAEMONSET_FATAL = 'DaemonSet-managed Pods (use --ignore-daemonsets to ignore)';
export const DAEMONSET_WARNING = 'ignoring DaemonSet-managed Pods';
export const LOCAL_STORAGE_FATAL = 'Pods with local storage (use --delete-emptydir-data to override)';
export const LOCAL_STORAGE_WARNING = 'deleting Pods with local storage';
export const UNMANAGED_FATAL = 'Pods not managed by ReplicationController, ReplicaSet, Job, DaemonSet or StatefulSet (use --force to override)';
export const UNMANAGED_WARNING = 'deleting Pods not managed by ReplicationController, ReplicaSet, Job, DaemonSet or StatefulSet';
/** `corev1.MirrorPodAnnotationKey`. */
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** The drain flags the filters read. */
export interface DrainFilterOptions {
  readonly force: boolean;
  readonly ignoreDaemonsets: boolean;
  readonly deleteEmptydirData: boolean;
  /** The answer to each daemon pod's DaemonSet GET, by pod UID (absent: treated as found). */
  readonly daemonSets?: ReadonlyMap<string, DaemonSetLookup>;
}

/** `PodDeleteStatus`: whether the pod is evicted, and the warning / error it contributes. */
interface PodDeleteStatus {
  readonly delete: boolean;
  readonly reason: 'Okay' | 'Skip' | 'Warning' | 'Error';
  readonly message?: string;
}

const OKAY: PodDeleteStatus = { delete: true, reason: 'Okay' };

/** The outcome of GetPodsForDeletion: the pods to evict, the WARNING text, the errors. */
export interface PodDeleteList {
  readonly pods: readonly Pod[];
  /** `PodDeleteList.Warnings()`: `<message>: ns/a, ns/b; <message>: …` ('' when none). */
  readonly warnings: string;
  /** `PodDeleteList.errors()`: one `cannot delete <message>: ns/a, ns/b` per message. */
  readonly errors: readonly string[];
}

function finished(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

function controllerOf(pod: Pod): { kind: string; name: string } | undefined {
  return pod.metadata.ownerReferences?.find((r) => r.controller === true);
}

/**
 * What the GET of a daemon pod's DaemonSet answered (`daemonSetFilter` asks the apiserver):
 * found, or the error text (`daemonsets.apps "x" not found` with `notFound`).
 */
export type DaemonSetLookup = { readonly found: true } | { readonly found: false; readonly notFound: boolean; readonly error: string };

/** The daemon pods whose DaemonSet `daemonSetFilter` GETs: DaemonSet-controlled and not finished. */
export function daemonSetLookups(items: readonly Pod[]): { pod: Pod; namespace: string; name: string }[] {
  const out: { pod: Pod; namespace: string; name: string }[] = [];
  for (const pod of items) {
    const ref = controllerOf(pod);
    if (ref && ref.kind === 'DaemonSet' && !finished(pod)) out.push({ pod, namespace: pod.metadata.namespace ?? '', name: ref.name });
  }
  return out;
}

function daemonSetFilter(pod: Pod, o: DrainFilterOptions): PodDeleteStatus {
  const ref = controllerOf(pod);
  if (!ref || ref.kind !== 'DaemonSet' || finished(pod)) return OKAY;
  const found = o.daemonSets?.get(pod.metadata.uid ?? '');
  if (found && !found.found) {
    // Orphaned daemon pods (their DaemonSet is gone) are deleted with a warning under --force.
    if (found.notFound && o.force) return { delete: true, reason: 'Warning', message: found.error };
    return { delete: false, reason: 'Error', message: found.error };
  }
  if (!o.ignoreDaemonsets) return { delete: false, reason: 'Error', message: DAEMONSET_FATAL };
  return { delete: false, reason: 'Warning', message: DAEMONSET_WARNING };
}

function mirrorPodFilter(pod: Pod): PodDeleteStatus {
  return pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== undefined ? { delete: false, reason: 'Skip' } : OKAY;
}

function localStorageFilter(pod: Pod, o: DrainFilterOptions): PodDeleteStatus {
  if (!(pod.spec.volumes ?? []).some((v) => v.emptyDir !== undefined) || finished(pod)) return OKAY;
  if (!o.deleteEmptydirData) return { delete: false, reason: 'Error', message: LOCAL_STORAGE_FATAL };
  return { delete: true, reason: 'Warning', message: LOCAL_STORAGE_WARNING };
}

function unreplicatedFilter(pod: Pod, o: DrainFilterOptions): PodDeleteStatus {
  if (finished(pod) || controllerOf(pod)) return OKAY;
  if (o.force) return { delete: true, reason: 'Warning', message: UNMANAGED_WARNING };
  return { delete: false, reason: 'Error', message: UNMANAGED_FATAL };
}

/**
 * `filterPods(podList, makeFilters())`: the filters in upstream's order, the first one that keeps
 * a pod decides (so only the last warning of an evicted pod survives, as upstream's TODO says).
 * Upstream groups warnings and errors in a Go map (random order); here they come in order of
 * first appearance, so runs stay deterministic.
 */
export function podsForDeletion(items: readonly Pod[], o: DrainFilterOptions): PodDeleteList {
  const filters = [(p: Pod) => daemonSetFilter(p, o), mirrorPodFilter, (p: Pod) => localStorageFilter(p, o), (p: Pod) => unreplicatedFilter(p, o)];
  const pods: Pod[] = [];
  const warnings = new Map<string, string[]>();
  const errors = new Map<string, string[]>();
  for (const pod of items) {
    let status = OKAY;
    for (const f of filters) {
      status = f(pod);
      if (!status.delete) break;
    }
    const ref = `${pod.metadata.namespace}/${pod.metadata.name}`;
    if (status.delete) pods.push(pod);
    if (status.reason === 'Warning') warnings.set(status.message!, [...(warnings.get(status.message!) ?? []), ref]);
    if (status.reason === 'Error') errors.set(status.message!, [...(errors.get(status.message!) ?? []), ref]);
  }
  return {
    pods,
    warnings: [...warnings].map(([m, refs]) => `${m}: ${refs.join(', ')}`).join('; '),
    errors: [...errors].map(([m, refs]) => `cannot delete ${m}: ${refs.join(', ')}`),
  };
}

/** What evictPods does with one eviction reply. */
export type EvictionOutcome =
  | { readonly t: 'evicted' }
  /** 404: the pod is gone already; nothing is printed for it. */
  | { readonly t: 'gone' }
  /** 429, or 403 NamespaceTerminating on a pod not yet deleting: print `stderr`, try again in 5 s. */
  | { readonly t: 'retry'; readonly stderr: string }
  /** 403 NamespaceTerminating on a pod already deleting: wait for it without an eviction. */
  | { readonly t: 'wait' }
  | { readonly t: 'failed'; readonly error: string };

/** kubectl's retry period after a 429 / 403 eviction reply. */
export const EVICTION_RETRY_US = 5_000_000;
/** waitForDelete's poll interval. */
export const WAIT_FOR_DELETE_POLL_US = 1_000_000;

/** `StatusError.Error()`: the Status message. */
export function statusErrorText(body: unknown): string {
  const st = body as Partial<Status> | undefined;
  return st?.message ?? st?.reason ?? 'unknown error';
}

/** evictPods' switch on the error of `EvictPod` (`deleting`: the listed pod had a deletionTimestamp). */
export function evictionOutcome(pod: KubeObject, code: number, body: unknown, deleting: boolean): EvictionOutcome {
  if (code < 300) return { t: 'evicted' };
  const { name, namespace } = pod.metadata;
  const err = statusErrorText(body);
  if (code === 404) return { t: 'gone' };
  if (code === 429) return { t: 'retry', stderr: `error when evicting pods/"${name}" -n "${namespace}" (will retry after 5s): ${err}` };
  const terminating = code === 403 && ((body as Partial<Status> | undefined)?.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating');
  if (terminating && deleting) return { t: 'wait' };
  if (terminating) return { t: 'retry', stderr: `error when evicting pod "${name}" (will retry after 5s): ${err}` };
  return { t: 'failed', error: `error when evicting pods/"${name}" -n "${namespace}": ${err}` };
}

/** `utilerrors.NewAggregate(errs).Error()`: one message as is, several de-duplicated in brackets. */
export function aggregateError(errs: readonly string[]): string {
  const seen = [...new Set(errs)];
  return seen.length === 1 ? seen[0] : `[${seen.join(', ')}]`;
}

/** `cmdutil.CheckErr`'s stderr for an aggregate of plain errors: `error: <msg>` for one, one line each for several. */
export function checkErrLines(errs: readonly string[]): string[] {
  return errs.length === 1 ? [errs[0].startsWith('error: ') ? errs[0] : `error: ${errs[0]}`] : [...errs];
}

/** RunDrain's stderr when draining a node fails (before CheckErr prints the error itself). */
export function abortLines(node: string): string[] {
  return [
    'DEPRECATED WARNING: Aborting the drain command in a list of nodes will be deprecated in v1.23.',
    'The new behavior will make the drain command go through all nodes even if one or more nodes failed during the drain.',
    'For now, users can try such experience via: --ignore-errors',
    `error: unable to drain node "${node}", aborting command...`,
    '',
    'There are pending nodes to be drained:',
    ` ${node}`,
  ];
}

/** Go's `time.Duration.String()` of virtual µs (`5s`, `1m0s`, `1h0m0s`, `1.5s`, `500ms`). */
export function goDuration(us: number): string {
  if (us === 0) return '0s';
  if (us < 1_000) return `${us}µs`;
  if (us < 1_000_000) return `${trimFraction(us / 1_000)}ms`;
  const h = Math.floor(us / 3_600_000_000);
  const m = Math.floor((us % 3_600_000_000) / 60_000_000);
  const s = trimFraction((us % 60_000_000) / 1_000_000);
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

function trimFraction(v: number): string {
  return String(Number(v.toFixed(6)));
}
