/**
 * Pod GC against the real apiserver (pair tests over the engine): spec §11.3, R12, cases C08
 * and C12. The quarantine is observable as a timing window: a pod on a deleted Node is removed
 * no earlier than 40 s (`QUARANTINE_TIME_US`) after the Node, and at most two 20 s passes
 * (`GC_CHECK_PERIOD_US`) later than that.
 */
import test from 'ava';
import type { Pod } from '@podsim/api';
import { GC_CHECK_PERIOD_US, QUARANTINE_TIME_US, TERMINATED_POD_GC_THRESHOLD } from '../src/podgc/gcController.js';
import { create, createNode, del, mkNode, runCluster, S, type Step } from './helpers/cluster.js';

function boundPod(name: string, nodeName: string, tgps: number, annotations: Record<string, string> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', annotations },
    spec: { nodeName, terminationGracePeriodSeconds: tgps, containers: [{ name: 'app', image: 'nginx:1.21' }] },
  };
}

test('podgc defaults are the upstream constants', (t) => {
  t.is(GC_CHECK_PERIOD_US, 20 * S);
  t.is(QUARANTINE_TIME_US, 40 * S);
  t.is(TERMINATED_POD_GC_THRESHOLD, 12500);
});

test('C12 + C08: pods of a deleted or missing Node are force-deleted after the quarantine; pods of an existing Node stay Terminating', (t) => {
  const run = runCluster({
    steps: [
      createNode(0, mkNode('n1')),
      createNode(0, mkNode('n2')),
      // C12: p1 on n1 terminating with a 120 s grace; its kubelet would confirm only at 100 s.
      create(0.5 * S, 'pods', boundPod('p1', 'n1', 120, { 'test/stop-after-seconds': '100' })),
      // p2 on n2, which exists but has no kubelet: nobody finishes it.
      create(0.5 * S, 'pods', boundPod('p2', 'n2', 30)),
      // C08: q is bound to node "foo", which never existed.
      create(0.5 * S, 'pods', boundPod('q', 'foo', 30)),
      del(1 * S, 'pods', 'p1'),
      del(1 * S, 'pods', 'p2'),
      del(5 * S, 'pods', 'q'),
      del(11 * S, 'nodes', 'n1', {}, 'kubectl delete node n1'),
    ],
    kubelet: { nodes: ['n1'] },
    scheduler: false,
    untilUs: 200 * S,
  });
  const pods = run.pods();
  const terminating = (name: string) => pods.find((e) => e.object.metadata.name === name && e.object.metadata.deletionTimestamp)?.t;
  const gone = (name: string) => pods.find((e) => e.object.metadata.name === name && e.type === 'DELETED')?.t;
  t.true(terminating('p1')! < 1.01 * S, 'p1 Terminating at t=1 (graceful: nodeName is set)');
  t.true(terminating('q')! < 5.01 * S, 'q Terminating at t=5');

  const nodeGone = 11 * S;
  const p1Gone = gone('p1')!;
  t.true(p1Gone >= nodeGone + QUARANTINE_TIME_US, `p1 gone at ${p1Gone / S}s, not before the 40 s quarantine`);
  t.true(p1Gone <= nodeGone + QUARANTINE_TIME_US + 2 * GC_CHECK_PERIOD_US + 0.1 * S, `p1 gone at ${p1Gone / S}s`);
  t.true(p1Gone < 100 * S, 'before its kubelet would have confirmed');
  const qGone = gone('q')!;
  t.true(qGone >= 40 * S && qGone <= 80 * S, `q gone at ${qGone / S}s (C08: t ∈ [40, 80])`);
  // Both by force (grace 0) from the controller manager: MODIFIED with dgps 0, then DELETED.
  const byPodgc = run.all('controller.podgc.delete');
  t.deepEqual(byPodgc.map((r) => [r.data!.pod, r.data!.reason, r.data!.code]).sort(), [
    ['p1', 'orphaned', 200],
    ['q', 'orphaned', 200],
  ]);
  const forced = run.all('api.request', (r) => r.data!.client === 'kube-controller-manager' && r.data!.verb === 'delete');
  t.deepEqual(forced.map((r) => [r.data!.name, r.data!.gracePeriodSeconds]).sort(), [['p1', 0], ['q', 0]], 'one grace-0 DELETE per orphaned pod (every() alone held for none)');
  const last = pods.filter((e) => e.object.metadata.name === 'p1').at(-2)!;
  t.is(last.object.metadata.deletionGracePeriodSeconds, 0);
  // The kubelet's own final delete, later, finds nothing.
  t.is(run.all('test.kubelet', (r) => r.data!.name === 'p1')[0]?.data!.code, 404);
  // p2's node exists: podgc leaves it Terminating.
  t.is(gone('p2'), undefined);
  t.truthy(run.live<Pod>('test-pods').size === 1 && [...run.live<Pod>('test-pods').values()][0].metadata.deletionTimestamp);
});

test('gcTerminated deletes the oldest terminated pods beyond the threshold', (t) => {
  const steps: Step[] = [createNode(0, mkNode('n1'))];
  for (let i = 1; i <= 5; i++) {
    steps.push(create(i * S, 'pods', boundPod(`done-${i}`, 'n1', 30)));
    steps.push({
      at: 7 * S,
      req: { type: 'ApiPatch', resource: 'pods', namespace: 'default', name: `done-${i}`, subresource: 'status', patchType: 'merge', patch: { status: { phase: 'Succeeded' } } },
    });
  }
  steps.push(create(6 * S, 'pods', boundPod('running', 'n1', 30)));
  const run = runCluster({ steps, kcm: { podGC: { terminatedPodGCThreshold: 2 } }, scheduler: false, untilUs: 40 * S });
  const deleted = run.all('controller.podgc.delete').map((r) => [r.data!.pod, r.data!.reason]);
  t.deepEqual(deleted, [
    ['done-1', 'terminated'],
    ['done-2', 'terminated'],
    ['done-3', 'terminated'],
  ]);
  t.deepEqual([...run.live<Pod>('test-pods').values()].map((p) => p.metadata.name).sort(), ['done-4', 'done-5', 'running']);
  // The pass after the patch (passes run every 20 s from start).
  const at = run.all('controller.podgc.delete')[0].t;
  t.true(at > 7 * S && at <= 7 * S + GC_CHECK_PERIOD_US + 0.1 * S);
});
