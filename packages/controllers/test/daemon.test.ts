/**
 * The DaemonSet controller's sync decisions as pure functions (spec WC §3.1–§3.5):
 * `nodeShouldRunDaemonPod` (nodeSelector, affinity, taints), the daemon tolerations and node-name
 * affinity of the pods it creates, `podsShouldBeOnNode` with and without surge, the rolling
 * update's maxUnavailable / maxSurge budget, the failed-pod back-off.
 */
import test from 'ava';
import type { DaemonSet, Node, Pod } from '@podsim/api';
import { CONTROLLER_REVISION_HASH_LABEL } from '@podsim/api';
import { Clock, DEFAULT_EPOCH_UNIX_SECONDS } from '@podsim/api';
import { Backoff, podsShouldBeOnNode, rollingUpdateDecision } from '../src/daemon/daemonController.js';
import {
  addOrUpdateDaemonPodTolerations,
  createPodTemplate,
  getTargetNodeName,
  nodeShouldRunDaemonPod,
  podMatchesNodeSelectorAndAffinityTerms,
  replaceDaemonSetPodNodeNameNodeAffinity,
} from '../src/daemon/daemonUtil.js';

const S = 1_000_000;
const clock = new Clock(DEFAULT_EPOCH_UNIX_SECONDS);

function mkDS(o: { nodeSelector?: Record<string, string>; surge?: number; unavailable?: number; hostNetwork?: boolean; tolerations?: DaemonSet['spec']['template']['spec']['tolerations'] } = {}): DaemonSet {
  return {
    metadata: { name: 'agent', namespace: 'ns', uid: 'ds-uid', generation: 1 },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: o.surge ?? 0, maxUnavailable: o.unavailable ?? 1 } },
      template: {
        metadata: { labels: { app: 'agent' } },
        spec: { containers: [{ name: 'a' }], ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}), ...(o.hostNetwork ? { hostNetwork: true } : {}), ...(o.tolerations ? { tolerations: o.tolerations } : {}) },
      },
    },
  };
}

function mkNode(name: string, o: { labels?: Record<string, string>; taints?: { key: string; effect: string }[]; unschedulable?: boolean } = {}): Node {
  return { metadata: { name, labels: o.labels ?? {} }, spec: { ...(o.taints ? { taints: o.taints } : {}), ...(o.unschedulable ? { unschedulable: true } : {}) } } as Node;
}

let seq = 0;
function dsPod(name: string, o: { hash?: string; ready?: boolean; phase?: string; deleting?: boolean; created?: string } = {}): Pod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: `u-${name}-${++seq}`,
      creationTimestamp: o.created ?? '2025-01-01T00:00:00Z',
      labels: { app: 'agent', [CONTROLLER_REVISION_HASH_LABEL]: o.hash ?? 'new' },
      ...(o.deleting ? { deletionTimestamp: '2025-01-01T00:01:00Z' } : {}),
    },
    spec: { nodeName: 'n1', containers: [{ name: 'a' }] },
    status: { phase: (o.phase ?? 'Running') as never, conditions: o.ready === false ? [] : [{ type: 'Ready', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' }] },
  };
}

test('nodeShouldRunDaemonPod: nodeSelector and taints decide; NoSchedule keeps a running pod, NoExecute does not; cordon and not-ready are tolerated', (t) => {
  const ds = mkDS({ nodeSelector: { disk: 'ssd' } });
  t.deepEqual(nodeShouldRunDaemonPod(mkNode('n1', { labels: { disk: 'ssd' } }), ds), { shouldRun: true, shouldContinueRunning: true });
  t.deepEqual(nodeShouldRunDaemonPod(mkNode('n1', { labels: { disk: 'hdd' } }), ds), { shouldRun: false, shouldContinueRunning: false }, '1.22: relabelling deletes the pod');
  const plain = mkDS();
  t.deepEqual(nodeShouldRunDaemonPod(mkNode('n1', { taints: [{ key: 'dedicated', effect: 'NoSchedule' }] }), plain), { shouldRun: false, shouldContinueRunning: true });
  t.deepEqual(nodeShouldRunDaemonPod(mkNode('n1', { taints: [{ key: 'dedicated', effect: 'NoExecute' }] }), plain), { shouldRun: false, shouldContinueRunning: false });
  t.deepEqual(nodeShouldRunDaemonPod(mkNode('n1', { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] }), plain), { shouldRun: true, shouldContinueRunning: true });
  t.deepEqual(nodeShouldRunDaemonPod(mkNode('n1', { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }, { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }] }), plain), { shouldRun: true, shouldContinueRunning: true });
  t.false(nodeShouldRunDaemonPod(mkNode('n1', { taints: [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }] }), plain).shouldRun);
  t.true(nodeShouldRunDaemonPod(mkNode('n1', { taints: [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }] }), mkDS({ hostNetwork: true })).shouldRun);
});

test('daemon pods: six infinite tolerations (seven with hostNetwork), a 300 s one replaced; the hash label; one metadata.name affinity term', (t) => {
  const tol = addOrUpdateDaemonPodTolerations(mkDS({ tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }] }).spec.template.spec).tolerations!;
  t.is(tol.length, 6);
  t.true(tol.every((x) => x.operator === 'Exists' && x.tolerationSeconds === undefined));
  t.is(addOrUpdateDaemonPodTolerations(mkDS({ hostNetwork: true }).spec.template.spec).tolerations!.length, 7);
  const tpl = createPodTemplate(mkDS().spec.template, 3, 'abc12');
  t.is(tpl.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL], 'abc12');
  t.is(tpl.metadata?.labels?.['pod-template-generation'], '3');
  const aff = replaceDaemonSetPodNodeNameNodeAffinity({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }] } } }, 'n2');
  const pod = { metadata: {}, spec: { containers: [], affinity: aff } } as Pod;
  t.is(getTargetNodeName(pod), 'n2');
  t.deepEqual((aff.nodeAffinity as { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: unknown[] } }).requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms, [
    { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] },
  ]);
  t.true(podMatchesNodeSelectorAndAffinityTerms(pod.spec, mkNode('n2')));
  t.false(podMatchesNodeSelectorAndAffinityTerms(pod.spec, mkNode('n1')), 'the scheduler binds it only to its node');
});

const noBackoff = () => undefined;

test('podsShouldBeOnNode without surge: create where no pod object exists; a terminating pod blocks the replacement; extra pods beyond the oldest deleted', (t) => {
  const ds = mkDS();
  const n1 = mkNode('n1');
  t.true(podsShouldBeOnNode(n1, undefined, ds, 'new', 0, clock, noBackoff).createOn);
  const term = podsShouldBeOnNode(n1, [dsPod('old', { deleting: true })], ds, 'new', 0, clock, noBackoff);
  t.false(term.createOn, 'W04 part A: nothing is created while the old pod terminates');
  t.deepEqual(term.podsToDelete, []);
  const two = podsShouldBeOnNode(n1, [dsPod('b', { created: '2025-01-01T00:00:05Z' }), dsPod('a')], ds, 'new', 0, clock, noBackoff);
  t.deepEqual(
    two.podsToDelete.map((p) => p.metadata.name),
    ['b'],
  );
  const gone = podsShouldBeOnNode(mkNode('n1', { taints: [{ key: 'x', effect: 'NoExecute' }] }), [dsPod('a'), dsPod('t', { deleting: true })], ds, 'new', 0, clock, noBackoff);
  t.deepEqual(
    gone.podsToDelete.map((p) => p.metadata.name),
    ['a'],
  );
});

test('podsShouldBeOnNode with surge: a replacement at once beside a terminating pod; an old pod deleted once the new one is available', (t) => {
  const ds = mkDS({ surge: 1, unavailable: 0 });
  const n1 = mkNode('n1');
  t.true(podsShouldBeOnNode(n1, [dsPod('old', { deleting: true })], ds, 'new', 0, clock, noBackoff).createOn, 'W04 part B');
  const notYet = podsShouldBeOnNode(n1, [dsPod('old', { hash: 'old' }), dsPod('new', { ready: false, created: '2025-01-01T00:00:05Z' })], ds, 'new', 0, clock, noBackoff);
  t.deepEqual(notYet.podsToDelete, []);
  const ready = podsShouldBeOnNode(n1, [dsPod('old', { hash: 'old' }), dsPod('new', { created: '2025-01-01T00:00:05Z' })], ds, 'new', 0, clock, noBackoff);
  t.deepEqual(
    ready.podsToDelete.map((p) => p.metadata.name),
    ['old'],
  );
});

test('a Failed daemon pod is deleted (FailedDaemonPod) unless in back-off, then requeued after the back-off; the back-off doubles to 15 min', (t) => {
  const ds = mkDS();
  const failed = [dsPod('f', { phase: 'Failed' })];
  const d = podsShouldBeOnNode(mkNode('n1'), failed, ds, 'new', 0, clock, noBackoff);
  t.deepEqual(
    d.failed.map((p) => p.metadata.name),
    ['f'],
  );
  t.false(d.createOn, 'the replacement comes in a later sync, after the DELETED event');
  const waiting = podsShouldBeOnNode(mkNode('n1'), failed, ds, 'new', 0, clock, () => 4 * S);
  t.deepEqual(waiting.podsToDelete, []);
  t.is(waiting.requeueAfterUs, 4 * S);
  const b = new Backoff(1 * S, 900 * S);
  b.next('k', 0);
  t.true(b.isInBackOffSinceUpdate('k', 0.5 * S));
  t.false(b.isInBackOffSinceUpdate('k', 1 * S));
  for (let i = 0; i < 12; i++) b.next('k', 1 * S);
  t.is(b.get('k'), 900 * S);
  t.false(b.isInBackOffSinceUpdate('k', 1 * S + 1801 * S), 'idle for more than 2 × 15 min: reset');
});

test('rolling update, maxSurge 0: unavailable old pods at once, available ones within maxUnavailable − unavailable; no creates', (t) => {
  const ds = mkDS({ unavailable: 1 });
  const m = new Map<string, Pod[]>([
    ['n1', [dsPod('o1', { hash: 'old' })]],
    ['n2', [dsPod('o2', { hash: 'old' })]],
    ['n3', [dsPod('o3', { hash: 'old', ready: false })]],
  ]);
  const avail = (p: Pod) => p.status?.conditions?.[0]?.status === 'True';
  const d = rollingUpdateDecision(ds, m, ['n1', 'n2', 'n3'], 'new', 0, 1, avail);
  t.deepEqual(
    d.oldPodsToDelete.map((p) => p.metadata.name),
    ['o3', 'o1'],
  );
  t.deepEqual(d.newNodesToCreate, []);
  m.set('n1', [dsPod('n1new', { ready: false })]);
  const d2 = rollingUpdateDecision(ds, m, ['n1', 'n2', 'n3'], 'new', 0, 1, avail);
  t.deepEqual(
    d2.oldPodsToDelete.map((p) => p.metadata.name),
    ['o3'],
    'an unavailable new pod uses the whole budget',
  );
});

test('rolling update with maxSurge 1: one new pod beside an available old one; the old one goes when the new is available', (t) => {
  const ds = mkDS({ surge: 1, unavailable: 0 });
  const avail = (p: Pod) => p.status?.conditions?.[0]?.status === 'True';
  const m = new Map<string, Pod[]>([
    ['n1', [dsPod('o1', { hash: 'old' })]],
    ['n2', [dsPod('o2', { hash: 'old' })]],
  ]);
  t.deepEqual(rollingUpdateDecision(ds, m, ['n1', 'n2'], 'new', 1, 0, avail), { oldPodsToDelete: [], newNodesToCreate: ['n1'] });
  m.set('n1', [dsPod('o1', { hash: 'old' }), dsPod('n1new', { ready: false })]);
  t.deepEqual(rollingUpdateDecision(ds, m, ['n1', 'n2'], 'new', 1, 0, avail).newNodesToCreate, [], 'the surge budget is in use');
  m.set('n1', [dsPod('o1', { hash: 'old' }), dsPod('n1new')]);
  const d = rollingUpdateDecision(ds, m, ['n1', 'n2'], 'new', 1, 0, avail);
  t.deepEqual(
    d.oldPodsToDelete.map((p) => p.metadata.name),
    ['o1'],
  );
  t.deepEqual(d.newNodesToCreate, ['n2']);
});
