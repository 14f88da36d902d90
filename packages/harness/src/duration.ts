/**
 * Durations as scenario authors write them and as kubectl prints them.
 * `parseDuration` reads Go `time.ParseDuration`-style text ("42h", "2m46s", "500ms", "1.5s") plus
 * `d` for days, and bare numbers as seconds; `humanDuration` is apimachinery v0.22.8
 * `pkg/util/duration/duration.go` `HumanDuration` (spec §3), a second copy so the harness's
 * `printing-terminating` checker can recompute the apiserver's AGE column without importing the
 * code under test. It is written from the same function as the apiserver's, so it is not
 * independent of it: both are checked against upstream's own test vectors
 * (test/humanDuration.test.ts, from duration_test.go).
 */
import { US_PER_SECOND, parseDurationUs, type DurationUs } from '@podsim/api';

/**
 * Parses a duration to integer virtual µs. Accepts a non-negative number (seconds) or text such
 * as `42h`, `2m46s`, `1.5s`, `250ms`, `0`, `2d12h` (Go `time.ParseDuration` syntax, via
 * `parseDurationUs` of packages/api/src/behavior.ts, plus a leading days part and bare
 * numbers as seconds). Returns `undefined` for anything else (the caller reports field and line).
 */
/** The generic message for a value that is no duration. */
export const DURATION_EXPECTED = 'expected a duration such as 30s, 2m46s, 42h or a number of seconds';

/**
 * Why `value` is not a duration {@link parseDuration} takes: a negative one (`-5s`, `-1`) is
 * named as such (time in a scenario only runs forward); anything else gets the generic message.
 */
export function durationError(value: unknown): string {
  const negative = typeof value === 'number' ? value < 0 : typeof value === 'string' && /^\s*-/.test(value) && parseDuration(value.trim().slice(1)) !== undefined;
  return negative ? `a duration cannot be negative (got ${typeof value === 'string' ? value.trim() : value})` : DURATION_EXPECTED;
}

export function parseDuration(value: unknown): DurationUs | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value * US_PER_SECOND) : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * US_PER_SECOND);
  const days = /^(\d+(?:\.\d+)?)d(.*)$/.exec(text);
  if (!days) return parseDurationUs(text);
  const rest = days[2] === '' ? 0 : parseDurationUs(days[2]);
  return rest === undefined ? undefined : Math.round(Number(days[1]) * 86400 * US_PER_SECOND) + rest;
}

/**
 * Formats virtual µs compactly for reports: `42h0m11s`, `42h`, `5m`, `2.13s`, `350ms`, `0s`
 * (trailing zero units are dropped, so the text reads back as the scenario would write it).
 * (Not kubectl's format; see {@link humanDuration} for that.)
 */
export function formatDuration(us: DurationUs): string {
  const sign = us < 0 ? '-' : '';
  let rest = Math.abs(us);
  if (rest === 0) return '0s';
  if (rest < 1000) return `${sign}${rest}µs`;
  if (rest < US_PER_SECOND) return `${sign}${Math.round(rest / 1000)}ms`;
  if (rest < 60 * US_PER_SECOND) return `${sign}${(rest / US_PER_SECOND).toFixed(2).replace(/\.?0+$/, '')}s`;
  const h = Math.floor(rest / (3600 * US_PER_SECOND));
  rest -= h * 3600 * US_PER_SECOND;
  const m = Math.floor(rest / (60 * US_PER_SECOND));
  rest -= m * 60 * US_PER_SECOND;
  const sec = Math.floor(rest / US_PER_SECOND);
  if (sec === 0 && m === 0) return `${sign}${h}h`;
  return `${sign}${h > 0 ? `${h}h` : ''}${m}m${sec > 0 ? `${sec}s` : ''}`;
}

/**
 * Like {@link formatDuration}, with the seconds to `digits` decimals (trailing zeros dropped), so
 * a value just outside a window reads as such: `8.002s`, `8.002354s` (digits 6), `1m5.25s`.
 */
export function formatDurationPrecise(us: DurationUs, digits = 3): string {
  const sign = us < 0 ? '-' : '';
  let rest = Math.abs(us);
  const secs = (v: number) => `${(v / US_PER_SECOND).toFixed(digits).replace(/\.?0+$/, '')}s`;
  if (rest < 60 * US_PER_SECOND) return rest === 0 ? '0s' : `${sign}${secs(rest)}`;
  const h = Math.floor(rest / (3600 * US_PER_SECOND));
  rest -= h * 3600 * US_PER_SECOND;
  const m = Math.floor(rest / (60 * US_PER_SECOND));
  rest -= m * 60 * US_PER_SECOND;
  return `${sign}${h > 0 ? `${h}h` : ''}${m}m${secs(rest)}`;
}

/**
 * A measured duration for a message about the window `[lo, hi]` it should have fallen in: as
 * {@link formatDuration} when inside; outside, with milliseconds — or microseconds when even
 * milliseconds would round it onto the window (8.0004 s against `[5s, 8s]` reads `8.0004s`).
 */
export function formatAgainstWindow(us: DurationUs, lo: DurationUs, hi: DurationUs): string {
  if (us >= lo && us <= hi) return formatDuration(us);
  const ms = Math.round(us / 1000) * 1000;
  return formatDurationPrecise(us, ms >= lo && ms <= hi ? 6 : 3);
}

/**
 * `HumanDuration(d)` of apimachinery v0.22.8 for a duration in µs (spec §3): `17s`, `2m46s`,
 * `42h`, `3d4h`, … Divisions truncate; below −1 s prints `<invalid>`.
 */
export function humanDuration(us: DurationUs): string {
  const seconds = Math.trunc(us / US_PER_SECOND);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 192) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    return dy === 0 ? `${Math.trunc(hours / 24 / 365)}y` : `${Math.trunc(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}
