/**
 * kube-proxy's BoundedFrequencyRunner timing (pkg/util/async/bounded_frequency_runner.go) and the
 * proxier's rule view: burst 2 then one run per minSyncPeriod, coalescing, the periodic run,
 * minInterval 0 (IPVS), and which endpoints new ClusterIP connections may use.
 */
import test from 'ava';
import type { EndpointSlice, Service } from '@podsim/api';
import { BoundedFrequencyRunner } from '../src/boundedFrequencyRunner.js';
import { Proxier, applyTargetDelta, tracedView } from '../src/proxier.js';

const S = 1_000_000;

/** Drives a runner: requests at the given times, each run lasting `d` µs; returns the run start times. */
function drive(bfr: BoundedFrequencyRunner, requests: number[], d: number, until: number): number[] {
  const starts: number[] = [];
  const events: { t: number; k: 'req' | 'end' | 'timer' }[] = requests.map((t) => ({ t, k: 'req' as const }));
  let timerAt = Infinity;
  const push = (e: { t: number; k: 'req' | 'end' | 'timer' }) => events.push(e);
  const handle = (dec: { runNow: boolean; timerAt: number }, now: number) => {
    if (dec.timerAt !== timerAt) {
      timerAt = dec.timerAt;
      push({ t: timerAt, k: 'timer' });
    }
    if (dec.runNow) {
      starts.push(now);
      push({ t: now + d, k: 'end' });
    }
  };
  for (;;) {
    events.sort((a, b) => a.t - b.t || (a.k === 'end' ? -1 : 1));
    const e = events.shift();
    if (!e || e.t > until) break;
    if (e.k === 'req') handle(bfr.run(e.t), e.t);
    else if (e.k === 'end') handle(bfr.finished(e.t), e.t);
    else if (e.t === timerAt) {
      // As the actor does: the fired timer is gone before the runner says when the next is due.
      timerAt = Infinity;
      handle(bfr.onTimer(e.t), e.t);
    }
  }
  return starts;
}

test('iptables defaults: a full bucket lets 2 syncs run at once, the third waits until minSyncPeriod after the last', (t) => {
  const bfr = new BoundedFrequencyRunner(S, 3600 * S, 2, 0);
  const starts = drive(bfr, [10 * S, 10 * S + 100_000, 10 * S + 200_000], 20_000, 20 * S);
  t.deepEqual(starts, [10 * S, 10 * S + 100_000, 10 * S + 120_000 + S]);
});

test('a run the timer started leaves no early timer behind: no run without a request (every node resynced each second)', (t) => {
  const bfr = new BoundedFrequencyRunner(S, 3600 * S, 2, 0);
  const starts = drive(bfr, [0, 10_000, 20_000], 5_000, 20 * S);
  t.deepEqual(starts, [0, 10_000, 15_000 + S]);
});

test('requests while waiting coalesce into one run', (t) => {
  const bfr = new BoundedFrequencyRunner(S, 3600 * S, 2, 0);
  const reqs = [5 * S, 5 * S + 1, 5 * S + 2, ...Array.from({ length: 10 }, (_, i) => 5 * S + 50_000 + i * 10_000)];
  const starts = drive(bfr, reqs, 10_000, 10 * S);
  t.is(starts.length, 3, JSON.stringify(starts));
});

test('never more than burst + elapsed/minSyncPeriod runs (spec §12 item 6)', (t) => {
  const bfr = new BoundedFrequencyRunner(S, 3600 * S, 2, 0);
  const reqs = Array.from({ length: 400 }, (_, i) => i * 25_000);
  const starts = drive(bfr, reqs, 5_000, 10 * S);
  for (let i = 0; i < starts.length; i++) {
    for (let j = i; j < starts.length; j++) t.true(j - i + 1 <= 2 + (starts[j] - starts[i]) / S + 1e-9, `runs ${i}..${j}`);
  }
  t.true(starts.length >= 10);
});

test('the periodic run comes maxInterval after the last run (IPVS: 30 s), minInterval 0 runs every request', (t) => {
  const ipvs = new BoundedFrequencyRunner(0, 30 * S, 2, 0);
  const starts = drive(ipvs, [S, S + 10, S + 20], 1_000, 40 * S);
  // The two requests during the first run coalesce into one (the run channel holds one request).
  t.deepEqual(starts, [S, S + 1_000, S + 2_000 + 30 * S]);
});

const svc: Service = { metadata: { name: 'web', namespace: 'default' }, spec: { clusterIP: '10.96.0.10', ports: [{ port: 80 }] } };
const slice = (eps: Array<[string, boolean | undefined, string]>): EndpointSlice => ({
  metadata: { name: 'web-x', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv4',
  endpoints: eps.map(([ip, ready, node]) => ({ addresses: [ip], conditions: ready === undefined ? {} : { ready, serving: true, terminating: ready === false }, nodeName: node, targetRef: { kind: 'Pod', uid: `uid-${ip}` } })),
});

test('proxier: new connections use Ready endpoints only (nil ready counts as ready); none Ready → REJECT; ITP Local keeps local ones', (t) => {
  const p = new Proxier('node-1');
  t.true(p.onService('default/web', svc));
  t.true(p.onSlice(slice([['10.224.0.2', true, 'node-1'], ['10.224.1.2', false, 'node-2'], ['10.224.2.2', undefined, 'node-3']]), false));
  p.syncProxyRules();
  t.deepEqual(p.view('default/web')?.targets.map((x) => x.ip), ['10.224.0.2', '10.224.2.2']);
  // An identical slice is no change; a condition change is.
  t.false(p.onSlice(slice([['10.224.0.2', true, 'node-1'], ['10.224.1.2', false, 'node-2'], ['10.224.2.2', undefined, 'node-3']]), false));
  t.true(p.onSlice(slice([['10.224.0.2', false, 'node-1']]), false));
  p.syncProxyRules();
  t.deepEqual(p.view('default/web'), { clusterIP: '10.96.0.10', targets: [], reject: true });
  const local = new Proxier('node-2');
  local.onService('default/web', { ...svc, spec: { ...svc.spec, internalTrafficPolicy: 'Local' } });
  local.onSlice(slice([['10.224.0.2', true, 'node-1'], ['10.224.1.2', true, 'node-2']]), false);
  local.syncProxyRules();
  t.deepEqual(local.view('default/web')?.targets.map((x) => x.ip), ['10.224.1.2']);
  // Headless Services get no rules.
  t.false(local.onService('default/h', { ...svc, metadata: { name: 'h', namespace: 'default' }, spec: { ...svc.spec, clusterIP: 'None' } }));
});

test('proxy.sync traces a full list on the first view, then what changed; applying the changes rebuilds the list each sync applied (same order)', (t) => {
  const p = new Proxier('node-1');
  p.onService('default/web', svc);
  let rebuilt: (readonly [string, string])[] = [];
  const sync = () => {
    const prev = p.view('default/web');
    const next = p.syncProxyRules().get('default/web')!;
    const traced = tracedView(prev, next);
    rebuilt = 'targets' in traced ? traced.targets : applyTargetDelta(rebuilt, traced.remove, traced.add);
    t.deepEqual(rebuilt, next.targets.map((x) => [x.ip, x.podUid]));
    return traced;
  };
  p.onSlice(slice([['10.224.0.10', true, 'n'], ['10.224.0.9', true, 'n'], ['10.224.1.2', true, 'n']]), false);
  t.true('targets' in sync(), 'first view: the full list');
  p.onSlice(slice([['10.224.0.10', false, 'n'], ['10.224.0.9', true, 'n'], ['10.224.1.2', true, 'n'], ['10.224.0.11', true, 'n']]), false);
  const d = sync();
  t.deepEqual(d, { clusterIP: '10.96.0.10', add: [['10.224.0.11', 'uid-10.224.0.11']], remove: [['10.224.0.10', 'uid-10.224.0.10']], reject: false, count: 3 });
  p.onSlice(slice([['10.224.0.10', false, 'n']]), false);
  t.deepEqual(sync(), { clusterIP: '10.96.0.10', add: [], remove: [['10.224.0.11', 'uid-10.224.0.11'], ['10.224.0.9', 'uid-10.224.0.9'], ['10.224.1.2', 'uid-10.224.1.2']], reject: true, count: 0 });
});
