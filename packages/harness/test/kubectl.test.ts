import test from 'ava';
import { deleteOptionsFromFlags } from '../src/driver/kubectl.js';
import { KubectlTabWriter } from '../src/report/tabwriter.js';
import { humanDuration, parseDuration } from '../src/duration.js';

test('kubectl delete flag rewrites (kubectl v0.22.8 delete.go)', (t) => {
  const grace = (f: Parameters<typeof deleteOptionsFromFlags>[0]) => {
    const r = deleteOptionsFromFlags(f);
    return r.ok ? (r.options.gracePeriodSeconds ?? 'unset') : r.error;
  };
  t.is(grace({}), 'unset', 'plain delete sends no grace: the pod spec decides');
  t.is(grace({ gracePeriod: 30 }), 30);
  t.is(grace({ gracePeriod: 0 }), 1, '--grace-period=0 without --force becomes 1');
  t.is(grace({ now: true }), 1, '--now is grace 1');
  t.is(grace({ force: true }), 0, '--force without a grace is 0');
  t.is(grace({ force: true, gracePeriod: 0 }), 0);
  t.is(grace({ force: true, gracePeriod: 5 }), '--force and --grace-period greater than 0 cannot be specified together');
  t.is(grace({ now: true, gracePeriod: 3 }), '--now and --grace-period cannot be specified together');
  const forced = deleteOptionsFromFlags({ force: true });
  t.true(forced.ok && /Immediate deletion does not wait/.test(forced.warning ?? ''));
  t.deepEqual(deleteOptionsFromFlags({}).ok && deleteOptionsFromFlags({}), { ok: true, options: { propagationPolicy: 'Background' }, gracePeriod: -1, warning: undefined });
});

test('kubectl -w column alignment remembers widths across flushes (cli-runtime tabwriter)', (t) => {
  const tw = new KubectlTabWriter();
  const first = tw.flush([
    ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'],
    ['minio-6d8f7b9c5-x7k2p', '1/1', 'Running', '1 (2m46s ago)', '42h'],
  ]);
  t.deepEqual(first, [
    'NAME                    READY   STATUS    RESTARTS        AGE',
    'minio-6d8f7b9c5-x7k2p   1/1     Running   1 (2m46s ago)   42h',
  ]);
  // A wider STATUS widens that column from now on; a narrower row keeps the remembered widths.
  t.deepEqual(tw.flush([['minio-6d8f7b9c5-x7k2p', '1/1', 'Terminating', '1 (2m57s ago)', '42h']]), [
    'minio-6d8f7b9c5-x7k2p   1/1     Terminating   1 (2m57s ago)   42h',
  ]);
  t.deepEqual(tw.flush([['minio-6d8f7b9c5-b9pqs', '0/1', 'Pending', '0', '0s']]), ['minio-6d8f7b9c5-b9pqs   0/1     Pending       0               0s']);
});

test('HumanDuration (apimachinery v0.22.8) and scenario durations', (t) => {
  const s = 1_000_000;
  t.is(humanDuration(17 * s), '17s');
  t.is(humanDuration(119 * s), '119s');
  t.is(humanDuration(166 * s), '2m46s');
  t.is(humanDuration(300 * s), '5m');
  t.is(humanDuration(42 * 60 * s), '42m');
  t.is(humanDuration((3 * 3600 + 5 * 60) * s), '3h5m');
  t.is(humanDuration((42 * 3600 + 11) * s), '42h');
  t.is(humanDuration((76 * 3600) * s), '3d4h');
  t.is(humanDuration(-0.5 * s), '0s');
  t.is(humanDuration(-2 * s), '<invalid>');
  t.is(parseDuration('42h'), 42 * 3600 * s);
  t.is(parseDuration('2m46s'), 166 * s);
  t.is(parseDuration('1.5s'), 1.5 * s);
  t.is(parseDuration('250ms'), 250_000);
  t.is(parseDuration(30), 30 * s);
  t.is(parseDuration('30'), 30 * s);
  t.is(parseDuration('2d12h'), 60 * 3600 * s);
  t.is(parseDuration('1d'), 24 * 3600 * s);
  t.is(parseDuration('10 parsecs'), undefined);
  t.is(parseDuration(''), undefined);
  t.is(parseDuration(-1), undefined);
});
