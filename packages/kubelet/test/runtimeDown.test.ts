/**
 * The kubelet against a container runtime that is not running (issue #27 item 4): its CRI calls
 * go to containerd's unix socket, so they fail at once with gRPC Unavailable instead of waiting
 * for the 2 m `runtimeRequestTimeout`; the PLEG relists again every second and the pod is back
 * within a couple of seconds of the runtime's return.
 */
import test from 'ava';
import { mkPod, NODE, runPair, S } from './pairHarness.js';

test('CRI calls to a down runtime fail fast (Unavailable): the PLEG retries every second and the pod runs again ~1 s after the runtime is back', (t) => {
  // The runtime is down 5–15 s (its containers die with it); the kubelet stays up.
  const run = runPair({
    steps: [{ at: 0, create: mkPod('p') }],
    faults: [{ kind: 'crash', actor: `runtime/${NODE}`, atUs: 5 * S, restartAfterUs: 10 * S }],
    untilS: 40,
  });
  const refused = run.all('engine.refuse', (r) => r.msg === `down: ListPodSandbox from kubelet/${NODE}`).map((r) => r.t / S);
  // One relist per second while the runtime is down (the relist period runs from the failure).
  t.true(refused.length >= 9 && refused.length <= 11, `relists refused at ${refused.join(', ')}`);
  t.true(refused.every((x, i) => i === 0 || (x - refused[i - 1] >= 0.99 && x - refused[i - 1] <= 1.1)), refused.join(', '));
  const starts = run.all('cri.start').map((r) => r.t / S);
  t.is(starts.length, 2, `container starts at ${starts.join(', ')}`);
  t.true(starts[0] < 5, `first start ${starts[0]}`);
  t.true(starts[1] > 15 && starts[1] < 18, `restarted at ${starts[1]}s (the runtime is back at 15 s)`);
});
