/**
 * policy/v1 types (k8s.io/api `policy/v1/types.go`, v0.22.8): PodDisruptionBudget and the
 * `metav1.Condition` its status carries. The Eviction body lives in `core.ts` beside Binding.
 */
import type { KubeObject, LabelSelector } from './meta.js';

/** `metav1.Condition` (reason, message and lastTransitionTime are required on the wire). */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export interface PodDisruptionBudgetSpec {
  /** An int or a percentage ("50%") of the expected pods that must stay available. */
  minAvailable?: number | string;
  /** Pods this budget covers; in policy/v1 an empty selector selects every pod of the namespace. */
  selector?: LabelSelector;
  /** An int or a percentage of the expected pods that may be unavailable (exclusive with minAvailable). */
  maxUnavailable?: number | string;
}

export interface PodDisruptionBudgetStatus {
  observedGeneration?: number;
  /** Pod name → when the eviction API allowed its disruption (`metav1.Time`, RFC 3339). */
  disruptedPods?: Record<string, string>;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  conditions?: Condition[];
}

export interface PodDisruptionBudget extends KubeObject {
  apiVersion?: 'policy/v1';
  kind?: 'PodDisruptionBudget';
  spec: PodDisruptionBudgetSpec;
  status?: PodDisruptionBudgetStatus;
}

/** `policy.DisruptionBudgetCause`: the StatusCause type of a 429 from the eviction API. */
export const DISRUPTION_BUDGET_CAUSE = 'DisruptionBudget';
/** `policy.DisruptionAllowedCondition` and its reasons. */
export const DISRUPTION_ALLOWED_CONDITION = 'DisruptionAllowed';
export const SYNC_FAILED_REASON = 'SyncFailed';
export const SUFFICIENT_PODS_REASON = 'SufficientPods';
export const INSUFFICIENT_PODS_REASON = 'InsufficientPods';

/**
 * `apimeta.SetStatusCondition`: adds or updates the condition of `cond.type` in `conditions`
 * (mutated); `lastTransitionTime` changes only when the status does (`now`, RFC 3339).
 */
export function setStatusCondition(conditions: Condition[], cond: Omit<Condition, 'lastTransitionTime'>, now: string): void {
  const i = conditions.findIndex((c) => c.type === cond.type);
  if (i < 0) {
    conditions.push({ ...cond, lastTransitionTime: now });
    return;
  }
  const old = conditions[i];
  conditions[i] = { ...cond, lastTransitionTime: old.status !== cond.status ? now : old.lastTransitionTime };
}

/**
 * k8s.io/component-helpers v0.22.8 `apps/poddisruptionbudget` `UpdateDisruptionAllowedCondition`:
 * sets DisruptionAllowed True/SufficientPods when disruptionsAllowed > 0, else False/InsufficientPods
 * (on `status`, mutated; a fresh conditions list when there was none).
 */
export function updateDisruptionAllowedCondition(status: PodDisruptionBudgetStatus, now: string): void {
  const conditions = (status.conditions = status.conditions ? [...status.conditions] : []);
  const allowed = status.disruptionsAllowed > 0;
  setStatusCondition(
    conditions,
    {
      type: DISRUPTION_ALLOWED_CONDITION,
      status: allowed ? 'True' : 'False',
      reason: allowed ? SUFFICIENT_PODS_REASON : INSUFFICIENT_PODS_REASON,
      message: '',
      ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
    },
    now,
  );
}

/** `ConditionsAreUpToDate`: the DisruptionAllowed condition agrees with the status and the generation. */
export function conditionsAreUpToDate(pdb: PodDisruptionBudget): boolean {
  const st = pdb.status;
  const cond = st?.conditions?.find((c) => c.type === DISRUPTION_ALLOWED_CONDITION);
  if (!st || !cond) return false;
  if ((st.observedGeneration ?? 0) !== (pdb.metadata.generation ?? 0)) return false;
  if (st.disruptionsAllowed > 0) return cond.status === 'True' && cond.reason === SUFFICIENT_PODS_REASON;
  return cond.status === 'False' && cond.reason === INSUFFICIENT_PODS_REASON;
}
