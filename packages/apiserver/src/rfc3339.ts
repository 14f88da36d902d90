/**
 * The error Go's `time.Parse(time.RFC3339, s)` returns for a string that is not an RFC 3339
 * time, worded as Go 1.16's `time.ParseError.Error()` words it (Kubernetes v1.22.8 is built
 * with Go 1.16). `metav1.Time.UnmarshalJSON` (apimachinery v0.22.8 `meta/v1/time.go`) returns
 * that error as it is, so a body with `timeAdded: "garbage"` is refused with
 * `parsing time "garbage" as "2006-01-02T15:04:05Z07:00": cannot parse "garbage" as "2006"`.
 *
 * Mirrors the layout walk of Go's `time.parse` for the RFC 3339 layout only: `2006` (4 digits),
 * `-`, `01` (2 digits, 1–12), `-`, `02` (2 digits),
 * `T`, `15` (1–2 digits, 0–23), `:`, `04` and `05` (2 digits, 0–59), an optional fraction
 * after the seconds (`.` then digits; Go 1.17 added `,`), then `Z07:00` (`Z` or `±hh:mm`, no
 * range check in 1.16); text left over is `extra text`; the day is checked against its month
 * last. Returns undefined when `s` parses.
 */
export function rfc3339ParseError(s: string): string | undefined {
  const LAYOUT = '2006-01-02T15:04:05Z07:00';
  const q = (x: string) => `"${x}"`;
  const cannot = (rest: string, elem: string) => `parsing time ${q(s)} as ${q(LAYOUT)}: cannot parse ${q(rest)} as ${q(elem)}`;
  const outOfRange = (what: string) => `parsing time ${q(s)}: ${what} out of range`;
  const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
  let rest = s;
  const literal = (lit: string): string | undefined => {
    if (!rest.startsWith(lit)) return cannot(rest, lit);
    rest = rest.slice(lit.length);
    return undefined;
  };
  // getnum(value, fixed): one or two digits; `fixed` wants exactly two.
  const num = (elem: string, fixed: boolean): number | string => {
    if (!isDigit(rest[0]) || (fixed && !isDigit(rest[1]))) return cannot(rest, elem);
    const n = isDigit(rest[1]) ? 2 : 1;
    const v = Number(rest.slice(0, n));
    rest = rest.slice(n);
    return v;
  };
  if (rest.length < 4 || ![0, 1, 2, 3].every((i) => isDigit(rest[i]))) return cannot(rest, '2006');
  const year = Number(rest.slice(0, 4));
  rest = rest.slice(4);
  let e = literal('-');
  if (e) return e;
  const month = num('01', true);
  if (typeof month === 'string') return month;
  if (month < 1 || month > 12) return outOfRange('month');
  if ((e = literal('-'))) return e;
  const day = num('02', true);
  if (typeof day === 'string') return day;
  if ((e = literal('T'))) return e;
  const hour = num('15', false);
  if (typeof hour === 'string') return hour;
  if (hour > 23) return outOfRange('hour');
  if ((e = literal(':'))) return e;
  const minute = num('04', true);
  if (typeof minute === 'string') return minute;
  if (minute > 59) return outOfRange('minute');
  if ((e = literal(':'))) return e;
  const second = num('05', true);
  if (typeof second === 'string') return second;
  if (second > 59) return outOfRange('second');
  if (rest.length >= 2 && rest[0] === '.' && isDigit(rest[1])) {
    let i = 1;
    while (isDigit(rest[i])) i++;
    rest = rest.slice(i);
  }
  if (rest.startsWith('Z')) rest = rest.slice(1);
  else {
    if (rest.length < 6 || rest[3] !== ':' || (rest[0] !== '+' && rest[0] !== '-') || ![1, 2, 4, 5].every((i) => isDigit(rest[i]))) return cannot(rest, 'Z07:00');
    rest = rest.slice(6);
  }
  if (rest.length > 0) return `parsing time ${q(s)}: extra text: ${rest}`;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const daysIn = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  if (day < 1 || day > daysIn) return outOfRange('day');
  return undefined;
}
