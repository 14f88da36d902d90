/**
 * Virtual time. The engine's clock is an integer count of microseconds since the run's epoch
 * (DESIGN.md §4); the epoch maps to a wall-clock instant (`epochUnixSeconds`) so that objects
 * carry real RFC 3339 timestamps, as the apiserver emits them (`metav1.Time`, second precision).
 *
 * Everything here is pure arithmetic: no `Date`, so actor logic may call it freely.
 */

/** Virtual microseconds since the run's epoch. Always a non-negative safe integer. */
export type VirtualTime = number;
/** A duration in virtual microseconds. */
export type DurationUs = number;

export const US_PER_MS = 1_000;
export const US_PER_SECOND = 1_000_000;
export const US_PER_MINUTE = 60 * US_PER_SECOND;
export const US_PER_HOUR = 60 * US_PER_MINUTE;
/** "Never": later than any reachable virtual time (2^53 − 1 µs ≈ 285 years). */
export const NEVER: VirtualTime = Number.MAX_SAFE_INTEGER;

/** Seconds (may be fractional) → integer microseconds, rounded to the nearest µs. */
export function seconds(s: number): DurationUs {
  return Math.round(s * US_PER_SECOND);
}
/** Milliseconds → integer microseconds. */
export function millis(ms: number): DurationUs {
  return Math.round(ms * US_PER_MS);
}
/** Microseconds → seconds as a float (for reports). */
export function toSeconds(us: DurationUs): number {
  return us / US_PER_SECOND;
}

// Civil-date conversion (Howard Hinnant's days_from_civil / civil_from_days algorithms),
// so timestamps can be formatted and parsed without `Date`.
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const y = yoe + era * 400;
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return [m <= 2 ? y + 1 : y, m, d];
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Unix seconds → `YYYY-MM-DDTHH:MM:SSZ` (the apiserver's `metav1.Time` wire format). */
export function formatUnixSeconds(unixSeconds: number): string {
  const s = Math.floor(unixSeconds);
  const days = Math.floor(s / 86400);
  const rem = s - days * 86400;
  const [y, m, d] = civilFromDays(days);
  return `${pad(y, 4)}-${pad(m)}-${pad(d)}T${pad(Math.floor(rem / 3600))}:${pad(Math.floor((rem % 3600) / 60))}:${pad(rem % 60)}Z`;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Parses an RFC 3339 timestamp to fractional Unix seconds.
 * Returns `undefined` for anything that is not RFC 3339 (callers turn that into a 422/400).
 */
export function parseRfc3339(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  let secs = daysFromCivil(+y, +mo, +d) * 86400 + +h * 3600 + +mi * 60 + +s;
  if (frac) secs += Number(`0${frac}`);
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    secs -= sign * (+zone.slice(1, 3) * 3600 + +zone.slice(4, 6) * 60);
  }
  return secs;
}

/**
 * Maps virtual time to wall-clock timestamps for one run. `epochUnixSeconds` is the wall
 * instant of virtual time 0 (a scenario setting; default 2025-01-01T00:00:00Z).
 */
export class Clock {
  // One-entry memos: an actor formats and parses the same second many times in a row.
  private lastSecond = NaN;
  private lastFormatted = '';
  private lastParsedText = '';
  private lastParsed: VirtualTime | undefined = undefined;

  constructor(readonly epochUnixSeconds: number = DEFAULT_EPOCH_UNIX_SECONDS) {}
  /** Virtual µs → RFC 3339, truncated to whole seconds like `metav1.Time`. */
  format(t: VirtualTime): string {
    const second = Math.floor(t / US_PER_SECOND);
    if (second !== this.lastSecond) {
      this.lastFormatted = formatUnixSeconds(this.epochUnixSeconds + second);
      this.lastSecond = second;
    }
    return this.lastFormatted;
  }
  /** Virtual µs → `metav1.MicroTime` (RFC 3339 with six fractional digits, as Lease `renewTime`). */
  formatMicro(t: VirtualTime): string {
    const base = this.format(t);
    const us = ((t % US_PER_SECOND) + US_PER_SECOND) % US_PER_SECOND;
    return `${base.slice(0, -1)}.${String(us).padStart(6, '0')}Z`;
  }
  /** RFC 3339 → virtual µs (may be negative for instants before the epoch); undefined if malformed. */
  parse(text: string): VirtualTime | undefined {
    if (text !== this.lastParsedText || text === '') {
      const s = parseRfc3339(text);
      this.lastParsed = s === undefined ? undefined : Math.round((s - this.epochUnixSeconds) * US_PER_SECOND);
      this.lastParsedText = text;
    }
    return this.lastParsed;
  }
}

/** 2025-01-01T00:00:00Z. */
export const DEFAULT_EPOCH_UNIX_SECONDS = 1735689600;
