/**
 * A node reboot keeps containerd's records (issue #15 item 5; spec node-lifecycle §9.2): after a
 * `nodeDown` with `for:`, the runtime recovers its containers (a RUNNING one is EXITED 255
 * `Unknown`) and sandboxes (NOTREADY), so the restarted kubelet announces `SandboxChanged`, makes
 * a new sandbox (attempt 1) and counts RESTARTS on: `kubectl get pods -w` prints `0/1 Unknown`
 * and then `1/1 Running` with RESTARTS 1 — before this, RESTARTS went back to 0.
 */
import test from 'ava';
import type { TraceRecord } from '@podsim/api';
import { S, runText, stepTimes, why } from './helpers.js';

/** One node, a Deployment-less pod `web` with `containers` containers; the node is off 20 s from step `down`. */
function reboot(containers = 1, extra = ''): string {
  const cs = Array.from({ length: containers }, (_, i) => `{ name: c${i + 1}, image: nginx:1.21 }`).join(', ');
  return `kind: Scenario
cluster:
  seed: 1
  nodes: [{ name: node-1 }]
steps:
  - apply: all
  - sleep: 10s
  - watch: start
  - id: down
    fault: { kind: nodeDown, node: node-1, for: 20s }
  - sleep: 40s
  - watch: stop
${extra}---
apiVersion: v1
kind: Pod
metadata: { name: web }
spec:
  containers: [${cs}]
`;
}

const cells = (r: TraceRecord) => ((r.data as { cells?: string[] }).cells ?? []).join(' ');

test('a reboot: the pod shows 0/1 Unknown, then Running with RESTARTS 1 (containerd kept its records)', async (t) => {
  const { report, model } = await runText('reboot', reboot());
  t.true(report.ok, why(report));
  const rows = model.watchRows.map(cells).filter((c) => c !== '');
  t.deepEqual(
    rows.map((c) => c.split(/\s+/).slice(0, 4).join(' ')),
    ['web 1/1 Running 0', 'web 0/1 Unknown 0', 'web 1/1 Running 1'],
  );
  // containerd's recovery at the reboot: the container that was running is EXITED 255 Unknown.
  // The fault is placed by the timeline's static clock: off at 10 s, on at 30 s.
  t.true(stepTimes(model, 'down').start >= 10 * S);
  const rec = model.records.filter((r) => r.kind === 'cri.recover');
  t.is(rec.length, 1);
  t.is(rec[0].t, 30 * S);
  t.like(rec[0].data, { container: 'c1', state: 'CONTAINER_EXITED', exitCode: 255, reason: 'Unknown', lost: true });
  // The kubelet's SandboxChanged event, and a new sandbox with attempt 1.
  const events = model.records.filter((r) => r.kind === 'api.write' && (r.data as { eventReason?: string }).eventReason === 'SandboxChanged');
  t.is(events.length, 1);
  t.is((events[0].data as { involvedObject?: string }).involvedObject, 'web');
  // The old sandbox's network went with the reboot; the new sandbox has a new pod IP.
  const nets = model.records.filter((r) => r.kind === 'cri.network').map((r) => [r.t, (r.data as { up: boolean }).up, (r.data as { ip: string }).ip] as const);
  t.is(nets.length, 3);
  t.deepEqual([nets[1][0], nets[1][1], nets[1][2]], [30 * S, false, nets[0][2]]);
  t.true(nets[2][1]);
  t.not(nets[2][2], nets[0][2]);
});

test('a reboot restarts every container of the pod once: RESTARTS counts per container', async (t) => {
  const { report, model } = await runText('reboot-2', reboot(2));
  t.true(report.ok, why(report));
  const rows = model.watchRows.map(cells).filter((c) => c !== '');
  // RESTARTS is the sum over containers: 2 once both run again.
  t.is(rows[rows.length - 1].split(/\s+/).slice(0, 4).join(' '), 'web 2/2 Running 2');
  t.is(model.records.filter((r) => r.kind === 'cri.recover').length, 2);
});

test('the reboot gives the same trace digest on every placement (the durable store lives with its actor)', async (t) => {
  t.timeout(120_000);
  const text = reboot(2).replace('nodes: [{ name: node-1 }]', 'nodes: [{ name: node-1 }, { name: node-2 }]');
  const base = await runText('reboot-single', text, { placement: 'single' });
  t.true(base.report.ok, why(base.report));
  for (const placement of ['per-actor', 'shards:2', 'nodes:2']) {
    const r = await runText(`reboot-${placement}`, text, { placement, engine: 'threads' });
    t.is(r.report.traceDigest, base.report.traceDigest, placement);
  }
});
