// The traffic summary lines podsim run prints (cli.ts trafficLines).
import test from 'ava';
import { trafficLines } from '../src/cli.js';
import type { TrafficReport } from '../src/traffic/evaluate.js';

const report = (exposure: TrafficReport['exposure']): TrafficReport => ({
  sources: [],
  total: { requests: 0, served: 0, failed: 0, byOutcome: { served: 0, refused: 0, reset: 0, timedOut: 0 }, byCause: {} },
  exposure,
  unchecked: [],
});

test('bug: "exposure: none (every node\'s rules dropped each pod before it stopped answering)" was printed for pods whose node came back within the grace, which failed requests and were never dropped; now "no window measured" with the count (found by the bad-input trial)', (t) => {
  const lost = { pod: 'web-a', ipGoneAt: 60, ruleRemovedAt: {}, windowSeconds: 0, failedRequests: 23 };
  const fine = { pod: 'web-b', ruleRemovedAt: { w1: 10 }, windowSeconds: 0, failedRequests: 0 };
  t.true(trafficLines(report([lost, fine])).includes("exposure: no window measured (no node's rules dropped a pod after it stopped answering); 1 of 2 pods had failed requests without one, see the failures by pod"));
  t.true(trafficLines(report([fine])).includes('exposure: none (no node routed to any of 1 pods after it stopped answering)'));
});
