/**
 * `duration.HumanDuration` of k8s.io/apimachinery v0.22.8 `pkg/util/duration/duration.go`: the
 * AGE / RESTARTS "(… ago)" text of `kubectl get`. Input is a duration in virtual µs; every
 * division truncates toward zero like Go's integer conversion of `time.Duration`.
 */
import type { DurationUs } from '@podsim/api';

const S = 1_000_000;
const M = 60 * S;
const H = 60 * M;

/**
 * `HumanDuration(d)`: `<invalid>` below −1 s, `0s` in [−1 s, 0), then `17s`, `2m52s`, `42m`,
 * `3h5m`, `42h`, `3d4h`, `697d`, `2y3d`, `9y`.
 */
export function humanDuration(dUs: DurationUs): string {
  const seconds = Math.trunc(dUs / S);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(dUs / M);
  if (minutes < 10) {
    const s = Math.trunc(dUs / S) % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  } else if (minutes < 60 * 3) {
    return `${minutes}m`;
  }
  const hours = Math.trunc(dUs / H);
  if (hours < 8) {
    const m = Math.trunc(dUs / M) % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  } else if (hours < 48) {
    return `${hours}h`;
  } else if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  } else if (hours < 24 * 365 * 2) {
    return `${Math.trunc(hours / 24)}d`;
  } else if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    return dy === 0 ? `${Math.trunc(hours / 24 / 365)}y` : `${Math.trunc(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/**
 * `ShortHumanDuration(d)` (not used by printPod; kept for the events printer's callers):
 * `17s`, `5m`, `3h`, `12d`, `2y`.
 */
export function shortHumanDuration(dUs: DurationUs): string {
  const seconds = Math.trunc(dUs / S);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.trunc(dUs / M);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.trunc(dUs / H);
  if (hours < 24) return `${hours}h`;
  if (hours < 24 * 365) return `${Math.trunc(hours / 24)}d`;
  return `${Math.trunc(hours / 24 / 365)}y`;
}
