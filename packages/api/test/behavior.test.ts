import test from 'ava';
import {
  DEFAULT_CONTAINER_BEHAVIOR,
  NEVER,
  appliesToAttempt,
  deriveStream,
  parseBehaviorAnnotations,
  parseDistribution,
  parseDurationUs,
  resolveContainerBehavior,
  sampleUs,
} from '../src/index.js';

test('Go durations parse to virtual µs; malformed ones do not', (t) => {
  t.is(parseDurationUs('2s'), 2_000_000);
  t.is(parseDurationUs('1.5s'), 1_500_000);
  t.is(parseDurationUs('2m30s'), 150_000_000);
  t.is(parseDurationUs('500ms'), 500_000);
  t.is(parseDurationUs('1h'), 3_600_000_000);
  t.is(parseDurationUs('250us'), 250);
  t.is(parseDurationUs('0'), 0);
  for (const bad of ['', '2', '-1s', '2 s', 's', '1d', '2s3']) t.is(parseDurationUs(bad), undefined, bad);
});

test('distributions: fixed, uniform, exp, normal', (t) => {
  t.deepEqual(parseDistribution('3s'), { kind: 'fixed', us: 3_000_000 });
  t.deepEqual(parseDistribution('uniform(1s, 5s)'), { kind: 'uniform', minUs: 1_000_000, maxUs: 5_000_000 });
  t.deepEqual(parseDistribution('exp(2s)'), { kind: 'exp', meanUs: 2_000_000 });
  t.deepEqual(parseDistribution('normal(10s,1s)'), { kind: 'normal', meanUs: 10_000_000, stddevUs: 1_000_000 });
  t.is(parseDistribution('uniform(5s,1s)'), undefined);
  t.is(parseDistribution('exp(1s,2s)'), undefined);
  t.is(parseDistribution('gauss(1s)'), undefined);
});

test('samples are seeded, in range, and fixed values draw nothing', (t) => {
  const d = parseDistribution('uniform(1s,5s)')!;
  const a = deriveStream(1, 'x');
  const b = deriveStream(1, 'x');
  const xs = Array.from({ length: 200 }, () => sampleUs(d, a));
  t.deepEqual(xs, Array.from({ length: 200 }, () => sampleUs(d, b)));
  t.true(xs.every((x) => x >= 1_000_000 && x <= 5_000_000 && Number.isInteger(x)));
  t.true(new Set(xs).size > 100);
  const n = deriveStream(2, 'n');
  const normals = Array.from({ length: 500 }, () => sampleUs(parseDistribution('normal(1s,2s)')!, n));
  t.true(normals.every((x) => x >= 0));
  const c = deriveStream(1, 'x');
  sampleUs({ kind: 'fixed', us: 7 }, c);
  t.is(sampleUs(d, c), xs[0]);
});

test('pod-wide values are overridden per container; defaults fill the rest', (t) => {
  const r = parseBehaviorAnnotations({
    'podsim.dev/on-sigterm': 'exit:uniform(1s,5s):3',
    'podsim.dev/app.on-sigterm': 'ignore',
    'podsim.dev/startup': '5s',
    'podsim.dev/sidecar.crash': '3m:2',
    'podsim.dev/not-ready': '30s-40s,2m-',
    'podsim.dev/image-pull': '4s',
    'io.kubernetes.container.hash': 'abc',
  });
  t.deepEqual(r.errors, []);
  t.deepEqual(r.unknown, []);
  t.deepEqual(r.behavior.imagePull, { kind: 'fixed', us: 4_000_000 });
  const app = resolveContainerBehavior(r.behavior, 'app');
  t.deepEqual(app.onSigterm, { action: 'ignore' });
  t.deepEqual(app.startup, { kind: 'fixed', us: 5_000_000 });
  t.is(app.crash, null);
  t.deepEqual(app.notReady, [
    { fromUs: 30_000_000, toUs: 40_000_000 },
    { fromUs: 120_000_000, toUs: NEVER },
  ]);
  const sidecar = resolveContainerBehavior(r.behavior, 'sidecar');
  t.deepEqual(sidecar.onSigterm, { action: 'exit', after: { kind: 'uniform', minUs: 1_000_000, maxUs: 5_000_000 }, exitCode: 3 });
  t.deepEqual(sidecar.crash, { after: { kind: 'fixed', us: 180_000_000 }, exitCode: 2 });
  t.is(sidecar.crashAttempts, 1);
  t.deepEqual(resolveContainerBehavior(parseBehaviorAnnotations({}).behavior, 'x'), DEFAULT_CONTAINER_BEHAVIOR);
});

test('on-sigterm forms: default, ignore, exit, exit:<delay>, exit:<delay>:<code>', (t) => {
  const of = (v: string) => resolveContainerBehavior(parseBehaviorAnnotations({ 'podsim.dev/on-sigterm': v }).behavior, 'c').onSigterm;
  t.deepEqual(of('default'), { action: 'default' });
  t.deepEqual(of('ignore'), { action: 'ignore' });
  t.deepEqual(of('exit'), { action: 'exit', after: { kind: 'fixed', us: 0 }, exitCode: 0 });
  t.deepEqual(of('exit:2s'), { action: 'exit', after: { kind: 'fixed', us: 2_000_000 }, exitCode: 0 });
  t.deepEqual(of('exit:2s:7'), { action: 'exit', after: { kind: 'fixed', us: 2_000_000 }, exitCode: 7 });
});

test('crash happens on the first attempt only unless crash-attempts says otherwise', (t) => {
  const once = resolveContainerBehavior(parseBehaviorAnnotations({ 'podsim.dev/crash': '10s' }).behavior, 'c');
  t.deepEqual(once.crash, { after: { kind: 'fixed', us: 10_000_000 }, exitCode: 1 });
  t.true(appliesToAttempt(once.crashAttempts, 0));
  t.false(appliesToAttempt(once.crashAttempts, 1));
  const thrice = parseBehaviorAnnotations({ 'podsim.dev/crash': '10s:0', 'podsim.dev/crash-attempts': '3' }).behavior;
  t.true(appliesToAttempt(resolveContainerBehavior(thrice, 'c').crashAttempts, 2));
  t.false(appliesToAttempt(resolveContainerBehavior(thrice, 'c').crashAttempts, 3));
  const always = parseBehaviorAnnotations({ 'podsim.dev/c.crash-attempts': 'always' }).behavior;
  t.true(appliesToAttempt(resolveContainerBehavior(always, 'c').crashAttempts, 99));
});

test('bad values: each error names the annotation and the value, and the key stays unset', (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['podsim.dev/on-sigterm', 'exit:2x', /"2x" is neither a duration/],
    ['podsim.dev/on-sigterm', 'term', /not one of default, ignore, exit/],
    ['podsim.dev/app.on-sigterm', 'exit:1s:300', /exit code "300" is not an integer in 0–255/],
    ['podsim.dev/crash', '3m:1:2', /not <delay> or <delay>:<exit code>/],
    ['podsim.dev/crash-attempts', '0', /positive number of attempts/],
    ['podsim.dev/startup', 'uniform(5s,1s)', /minimum is larger than the maximum/],
    ['podsim.dev/not-ready', '40s-30s', /ends before it starts/],
    ['podsim.dev/not-ready', '30s', /not a window/],
    ['podsim.dev/ready-after-sigterm', 'yes', /neither true nor false/],
    ['podsim.dev/exec-exit-code', '-1', /not an integer in 0–255/],
    ['podsim.dev/app.image-pull', '3s', /image-pull is pod-wide/],
    ['podsim.dev/image-pull', 'soon', /neither a duration/],
  ];
  for (const [annotation, value, why] of cases) {
    const r = parseBehaviorAnnotations({ [annotation]: value });
    t.is(r.errors.length, 1, annotation);
    t.is(r.errors[0].annotation, annotation);
    t.is(r.errors[0].value, value);
    t.true(r.errors[0].message.startsWith(`annotation ${annotation}: invalid value ${JSON.stringify(value)}: `), r.errors[0].message);
    t.regex(r.errors[0].message, why);
  }
  const r = parseBehaviorAnnotations({ 'podsim.dev/on-sigterm': 'exit:2x' });
  t.deepEqual(resolveContainerBehavior(r.behavior, 'c').onSigterm, { action: 'default' });
});

test('podsim.dev keys that are not behaviour keys are reported as unknown, not as errors', (t) => {
  const r = parseBehaviorAnnotations({ 'podsim.dev/volume-unmount': 'fail', 'podsim.dev/app.on-sigtrem': 'ignore', 'other/x': 'y' });
  t.deepEqual(r.errors, []);
  t.deepEqual(r.unknown, ['podsim.dev/volume-unmount', 'podsim.dev/app.on-sigtrem']);
});
