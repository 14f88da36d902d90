/**
 * What kubectl does on the client side before it talks to the apiserver: the `kubectl delete`
 * flag rewrites of kubectl v0.22.8 `pkg/cmd/delete/delete.go` (`DeleteOptions.Complete` /
 * `Validate`, spec §2.10), as a pure function. (Label selectors use the apimachinery `labels`
 * parser in packages/api/src/labels.ts, the library kubectl shares with the apiserver.)
 */
import type { DeleteOptions } from '@podsim/api';

/** The `kubectl delete` flags podsim models. `gracePeriod` undefined = kubectl's default −1. */
export interface DeleteFlags {
  readonly gracePeriod?: number;
  readonly force?: boolean;
  readonly now?: boolean;
}

/** Result of applying kubectl's rules: the DeleteOptions sent, or kubectl's error text. */
export type DeleteFlagsResult =
  | { readonly ok: true; readonly options: DeleteOptions; readonly gracePeriod: number; readonly warning?: string }
  | { readonly ok: false; readonly error: string };

/**
 * kubectl v0.22.8 delete flag handling:
 * `--now` = grace 1 (error together with `--grace-period`); `--grace-period=0` without `--force`
 * → 1; `--force` without a grace → 0; `--force` with grace > 0 is an error. The request carries
 * `gracePeriodSeconds` only when the result is ≥ 0, and always `propagationPolicy: Background`
 * (kubectl's default `--cascade=background`).
 */
export function deleteOptionsFromFlags(flags: DeleteFlags): DeleteFlagsResult {
  let grace = flags.gracePeriod ?? -1;
  if (flags.now) {
    if (grace !== -1) return { ok: false, error: '--now and --grace-period cannot be specified together' };
    grace = 1;
  }
  if (grace === 0 && !flags.force) grace = 1;
  if (flags.force && grace < 0) grace = 0;
  if (flags.force && grace > 0) return { ok: false, error: '--force and --grace-period greater than 0 cannot be specified together' };
  const options: DeleteOptions = grace >= 0 ? { gracePeriodSeconds: grace, propagationPolicy: 'Background' } : { propagationPolicy: 'Background' };
  const warning =
    grace === 0 && flags.force
      ? 'Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.'
      : undefined;
  return { ok: true, options, gracePeriod: grace, warning };
}
