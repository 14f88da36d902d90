/**
 * `intstr.GetScaledValueFromIntOrPercent` (apimachinery `pkg/util/intstr/intstr.go`): an int is
 * taken as is; "N%" is N percent of `total`, rounded up (`roundUp`) or down. Used for the
 * Deployment's maxSurge (rounded up) and maxUnavailable (rounded down).
 */

/** Returns the scaled value, or a string error for a malformed value (validation rejects those). */
export function getScaledValueFromIntOrPercent(v: number | string | undefined, total: number, roundUp: boolean): number | string {
  if (v === undefined) return 0;
  if (typeof v === 'number') return v;
  const m = /^(-?\d+)%$/.exec(v);
  if (!m) {
    if (/^-?\d+$/.test(v)) return Number(v);
    return `invalid value for IntOrString: invalid value "${v}": must be an integer or percentage (e.g '5%')`;
  }
  const pct = Number(m[1]);
  return roundUp ? Math.ceil((pct * total) / 100) : Math.floor((pct * total) / 100);
}
