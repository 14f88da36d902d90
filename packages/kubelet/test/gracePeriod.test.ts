import test from 'ava';
import type { Pod } from '@podsim/api';
import { calculateEffectiveGracePeriod } from '../src/podWorkers.js';

const pod = (tgps: number | undefined, dgps?: number): Pod => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'u', ...(dgps !== undefined ? { deletionGracePeriodSeconds: dgps, deletionTimestamp: '2025-01-01T00:00:30Z' } : {}) },
  spec: { containers: [{ name: 'app' }], ...(tgps !== undefined ? { terminationGracePeriodSeconds: tgps } : {}) },
});

// calculateEffectiveGracePeriod (pod_workers.go, spec §5.2; rules R4, R10; cases C04, C05).
const table: Array<[string, number, Pod, number | undefined, number, boolean]> = [
  // name, status.gracePeriod, pod, override, expected grace, shortened
  ['graceful delete takes dgps', 0, pod(30, 30), undefined, 30, false],
  ['dgps shorter than TGPS wins', 0, pod(30, 10), undefined, 10, false],
  ['force delete: dgps 0 is "unset" → TGPS (C04)', 0, pod(30, 0), undefined, 30, false],
  ['REMOVE without options → TGPS (R10)', 0, pod(30), undefined, 30, false],
  ['grace 1 stays 1 (C05, kubectl --grace-period=0)', 0, pod(30, 1), undefined, 1, false],
  ['override 1 (orphan kill) beats dgps', 0, pod(30, 30), 1, 1, false],
  ['TGPS 0 floors to 1', 0, pod(0), undefined, 1, false],
  ['no TGPS, no dgps → floor 1', 0, pod(undefined), undefined, 1, false],
  ['remembered grace only shrinks: longer dgps ignored', 10, pod(30, 30), undefined, 10, false],
  ['second delete with a shorter grace shortens', 30, pod(30, 5), undefined, 5, true],
  ['force delete while terminating keeps the remembered grace (C04 variant B)', 30, pod(30, 0), undefined, 30, false],
  // Upstream quirk (pod_workers.go: `gracePeriod == 0 || *override < gracePeriod` lets dgps 0 zero the
  // value, then the TGPS fallback applies): a force delete after a shortened grace grows it back to
  // TGPS and counts as "shortened" (10 ≠ 30), which cancels the in-flight sync.
  ['force delete after a shortened grace falls back to TGPS', 10, pod(30, 0), undefined, 30, true],
  ['override 0 while terminating is ignored (0 is unset)', 30, pod(30, 30), 0, 30, false],
  ['a larger override never grows the grace', 5, pod(30, 5), 60, 5, false],
  ['same value is not "shortened"', 10, pod(30, 10), undefined, 10, false],
];

for (const [name, status, p, override, want, shortened] of table) {
  test(`calculateEffectiveGracePeriod: ${name}`, (t) => {
    const r = calculateEffectiveGracePeriod(status, p, override === undefined ? undefined : { podTerminationGracePeriodSecondsOverride: override });
    t.is(r.gracePeriod, want);
    t.is(r.shortened, shortened);
  });
}
