import test from 'ava';
import { humanDuration, shortHumanDuration } from '../src/duration.js';

const S = 1_000_000;

// Table from apimachinery v0.22.8 duration.go's branches: each row is one branch boundary.
const cases: Array<[number, string]> = [
  [-2.5 * S, '<invalid>'],
  [-2 * S, '<invalid>'],
  [-1.5 * S, '0s'],
  [-0.5 * S, '0s'],
  [0, '0s'],
  [0.999 * S, '0s'],
  [17 * S, '17s'],
  [119 * S, '119s'],
  [120 * S, '2m'],
  [172 * S, '2m52s'],
  [(9 * 60 + 59) * S, '9m59s'],
  [10 * 60 * S, '10m'],
  [179 * 60 * S, '179m'],
  [180 * 60 * S, '3h'],
  [(3 * 3600 + 5 * 60 + 59) * S, '3h5m'],
  [(7 * 3600 + 59 * 60) * S, '7h59m'],
  [8 * 3600 * S, '8h'],
  [42 * 3600 * S, '42h'],
  [48 * 3600 * S, '2d'],
  [(3 * 24 + 4) * 3600 * S, '3d4h'],
  [8 * 24 * 3600 * S, '8d'],
  [697 * 24 * 3600 * S, '697d'],
  [730 * 24 * 3600 * S, '2y'],
  [(2 * 365 + 3) * 24 * 3600 * S, '2y3d'],
  [8 * 365 * 24 * 3600 * S, '8y'],
  [9 * 365 * 24 * 3600 * S, '9y'],
];

for (const [us, want] of cases) {
  test(`HumanDuration(${us / S}s) = ${want}`, (t) => {
    t.is(humanDuration(us), want);
  });
}

test('ShortHumanDuration differs from HumanDuration above one minute', (t) => {
  t.is(shortHumanDuration(90 * S), '1m');
  t.is(humanDuration(90 * S), '90s');
  t.is(shortHumanDuration(3 * 3600 * S + 5 * 60 * S), '3h');
});
