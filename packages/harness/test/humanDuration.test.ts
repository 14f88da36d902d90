/**
 * Both copies of `duration.HumanDuration` — the apiserver's printer (packages/apiserver/src/duration.ts,
 * which prints AGE and RESTARTS "(… ago)") and the harness's (src/duration.ts, which the
 * `printing-terminating` checker recomputes AGE with) — against the test vectors of upstream's own
 * tests, k8s.io/apimachinery `pkg/util/duration/duration_test.go` (`TestHumanDuration`,
 * `TestHumanDurationBoundaries`, `TestShortHumanDurationBoundaries`): the durations and expected
 * strings are upstream's, so a shared misreading of duration.go cannot pass here (issue #25 item 5:
 * the harness copy transliterates the apiserver's, so comparing the two proved nothing). Go
 * durations are nanoseconds; `-2*time.Second + 1` (1 ns) is written as 1 µs, the simulator's unit.
 */
import test from 'ava';
import { humanDuration as apiserverHumanDuration, shortHumanDuration } from '@podsim/apiserver/duration';
import { humanDuration as checkerHumanDuration } from '../src/duration.js';

const US = 1;
const MS = 1000 * US;
const SEC = 1000 * MS;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const YEAR = 365 * DAY;

/** `TestHumanDuration` and `TestHumanDurationBoundaries`: [Go expression, µs, want]. */
const HUMAN: Array<[string, number, string]> = [
  // TestHumanDuration
  ['time.Second', SEC, '1s'],
  ['70 * time.Second', 70 * SEC, '70s'],
  ['190 * time.Second', 190 * SEC, '3m10s'],
  ['70 * time.Minute', 70 * MIN, '70m'],
  ['47 * time.Hour', 47 * HOUR, '47h'],
  ['49 * time.Hour', 49 * HOUR, '2d1h'],
  ['(8*24 + 2) * time.Hour', (8 * 24 + 2) * HOUR, '8d'],
  ['(367 * 24) * time.Hour', 367 * 24 * HOUR, '367d'],
  ['(365*2*24 + 25) * time.Hour', (365 * 2 * 24 + 25) * HOUR, '2y1d'],
  ['(365*8*24 + 2) * time.Hour', (365 * 8 * 24 + 2) * HOUR, '8y'],
  // TestHumanDurationBoundaries
  ['-2 * time.Second', -2 * SEC, '<invalid>'],
  ['-2*time.Second + 1', -2 * SEC + US, '0s'],
  ['0', 0, '0s'],
  ['time.Second - time.Millisecond', SEC - MS, '0s'],
  ['2*time.Minute - time.Millisecond', 2 * MIN - MS, '119s'],
  ['2 * time.Minute', 2 * MIN, '2m'],
  ['2*time.Minute + time.Second', 2 * MIN + SEC, '2m1s'],
  ['10*time.Minute - time.Millisecond', 10 * MIN - MS, '9m59s'],
  ['10 * time.Minute', 10 * MIN, '10m'],
  ['10*time.Minute + time.Second', 10 * MIN + SEC, '10m'],
  ['3*time.Hour - time.Millisecond', 3 * HOUR - MS, '179m'],
  ['3 * time.Hour', 3 * HOUR, '3h'],
  ['3*time.Hour + time.Minute', 3 * HOUR + MIN, '3h1m'],
  ['8*time.Hour - time.Millisecond', 8 * HOUR - MS, '7h59m'],
  ['8 * time.Hour', 8 * HOUR, '8h'],
  ['8*time.Hour + 59*time.Minute', 8 * HOUR + 59 * MIN, '8h'],
  ['2*24*time.Hour - time.Millisecond', 2 * DAY - MS, '47h'],
  ['2 * 24 * time.Hour', 2 * DAY, '2d'],
  ['2*24*time.Hour + time.Hour', 2 * DAY + HOUR, '2d1h'],
  ['8*24*time.Hour - time.Millisecond', 8 * DAY - MS, '7d23h'],
  ['8 * 24 * time.Hour', 8 * DAY, '8d'],
  ['8*24*time.Hour + 23*time.Hour', 8 * DAY + 23 * HOUR, '8d'],
  ['2*365*24*time.Hour - time.Millisecond', 2 * YEAR - MS, '729d'],
  ['2 * 365 * 24 * time.Hour', 2 * YEAR, '2y'],
  ['2*365*24*time.Hour + 23*time.Hour', 2 * YEAR + 23 * HOUR, '2y'],
  ['2*365*24*time.Hour + 23*time.Hour + 59*time.Minute', 2 * YEAR + 23 * HOUR + 59 * MIN, '2y'],
  ['2*365*24*time.Hour + 24*time.Hour - time.Millisecond', 2 * YEAR + DAY - MS, '2y'],
  ['2*365*24*time.Hour + 24*time.Hour', 2 * YEAR + DAY, '2y1d'],
  ['3 * 365 * 24 * time.Hour', 3 * YEAR, '3y'],
  ['4 * 365 * 24 * time.Hour', 4 * YEAR, '4y'],
  ['5 * 365 * 24 * time.Hour', 5 * YEAR, '5y'],
  ['6 * 365 * 24 * time.Hour', 6 * YEAR, '6y'],
  ['7 * 365 * 24 * time.Hour', 7 * YEAR, '7y'],
  ['8*365*24*time.Hour - time.Millisecond', 8 * YEAR - MS, '7y364d'],
  ['8 * 365 * 24 * time.Hour', 8 * YEAR, '8y'],
  ['8*365*24*time.Hour + 364*24*time.Hour', 8 * YEAR + 364 * DAY, '8y'],
  ['9 * 365 * 24 * time.Hour', 9 * YEAR, '9y'],
];

/** `TestShortHumanDurationBoundaries`. */
const SHORT: Array<[string, number, string]> = [
  ['-2 * time.Second', -2 * SEC, '<invalid>'],
  ['-2*time.Second + 1', -2 * SEC + US, '0s'],
  ['0', 0, '0s'],
  ['time.Second - time.Millisecond', SEC - MS, '0s'],
  ['time.Second', SEC, '1s'],
  ['2*time.Second - time.Millisecond', 2 * SEC - MS, '1s'],
  ['time.Minute - time.Millisecond', MIN - MS, '59s'],
  ['time.Minute', MIN, '1m'],
  ['2*time.Minute - time.Millisecond', 2 * MIN - MS, '1m'],
  ['time.Hour - time.Millisecond', HOUR - MS, '59m'],
  ['time.Hour', HOUR, '1h'],
  ['2*time.Hour - time.Millisecond', 2 * HOUR - MS, '1h'],
  ['24*time.Hour - time.Millisecond', DAY - MS, '23h'],
  ['24 * time.Hour', DAY, '1d'],
  ['2*24*time.Hour - time.Millisecond', 2 * DAY - MS, '1d'],
  ['365*24*time.Hour - time.Millisecond', YEAR - MS, '364d'],
  ['365 * 24 * time.Hour', YEAR, '1y'],
  ['2*365*24*time.Hour - time.Millisecond', 2 * YEAR - MS, '1y'],
  ['2 * 365 * 24 * time.Hour', 2 * YEAR, '2y'],
];

test('the upstream tables are complete (10 TestHumanDuration + 37 boundary cases, 19 ShortHumanDuration)', (t) => {
  t.is(HUMAN.length, 47);
  t.is(SHORT.length, 19);
});

for (const [impl, fn] of [
  ['apiserver printer', apiserverHumanDuration],
  ['harness checker', checkerHumanDuration],
] as const) {
  test(`${impl} HumanDuration matches every upstream vector`, (t) => {
    const wrong = HUMAN.filter(([, us, want]) => fn(us) !== want).map(([go, us, want]) => `HumanDuration(${go}) = ${fn(us)}, want ${want}`);
    t.deepEqual(wrong, []);
  });
}

test('apiserver ShortHumanDuration matches every upstream vector', (t) => {
  const wrong = SHORT.filter(([, us, want]) => shortHumanDuration(us) !== want).map(([go, us, want]) => `ShortHumanDuration(${go}) = ${shortHumanDuration(us)}, want ${want}`);
  t.deepEqual(wrong, []);
});
