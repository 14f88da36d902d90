/**
 * `pods/{name}/eviction` (eviction.go, v1.22.8, no PodDisruptionBudgets): what kubectl drain sees
 * — 201 Success and a graceful delete of the pod with the Eviction's options, 404 / 400 / 409 as
 * upstream answers them, and the resourceVersion precondition upstream adds for Pending pods.
 */
import test from 'ava';
import type { ApiResult, DeleteOptions, Pod } from '@podsim/api';
import { Harness, status } from './helpers.js';

function evict(h: Harness, name: string, deleteOptions?: DeleteOptions, extra: { apiVersion?: string; bodyName?: string; dryRun?: boolean } = {}): ApiResult {
  return h.req({
    type: 'ApiCreate',
    resource: 'pods',
    namespace: 'default',
    name,
    subresource: 'eviction',
    object: {
      apiVersion: extra.apiVersion ?? 'policy/v1',
      kind: 'Eviction',
      metadata: { name: extra.bodyName ?? name, namespace: 'default' },
      ...(deleteOptions ? { deleteOptions } : {}),
    } as never,
    ...(extra.dryRun ? { dryRun: true } : {}),
  });
}

function running(h: Harness, name: string, spec: Partial<Pod['spec']> = {}): Pod {
  const pod = h.createPod(name, { nodeName: 'node-1', ...spec });
  h.setPhase(name, 'Running');
  return pod;
}

test('evicting a running pod deletes it gracefully with its own terminationGracePeriodSeconds and answers 201 Success', (t) => {
  const h = new Harness();
  running(h, 'p', { terminationGracePeriodSeconds: 45 });
  const r = h.at(10).req({ type: 'ApiCreate', resource: 'pods', namespace: 'default', name: 'p', subresource: 'eviction', object: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p' } } as never });
  t.is(r.code, 201);
  t.is(status(r).status, 'Success');
  const pod = h.get('p').body as Pod;
  t.is(pod.metadata.deletionGracePeriodSeconds, 45);
  t.is(pod.metadata.deletionTimestamp, h.api.clock.format(55_000_000));
});

test("the Eviction's deleteOptions decide the grace (kubectl drain --grace-period=5); policy/v1beta1 is accepted too", (t) => {
  const h = new Harness();
  running(h, 'p');
  const r = evict(h, 'p', { gracePeriodSeconds: 5 }, { apiVersion: 'policy/v1beta1' });
  t.is(r.code, 201);
  t.is((h.get('p').body as Pod).metadata.deletionGracePeriodSeconds, 5);
});

test('grace 0 in the options removes the pod at once; a second eviction of it is 404 NotFound', (t) => {
  const h = new Harness();
  running(h, 'p');
  t.is(evict(h, 'p', { gracePeriodSeconds: 0 }).code, 201);
  t.is(h.get('p').code, 404);
  const again = evict(h, 'p');
  t.is(again.code, 404);
  t.is(status(again).message, 'pods "p" not found');
});

test('a terminal (Succeeded) pod is deleted directly; an unscheduled Pending pod goes at once (grace 0)', (t) => {
  const h = new Harness();
  h.createPod('done', { nodeName: 'node-1' });
  h.setPhase('done', 'Succeeded');
  t.is(evict(h, 'done').code, 201);
  t.is(h.get('done').code, 404);
  h.createPod('pending');
  t.is(evict(h, 'pending').code, 201);
  t.is(h.get('pending').code, 404);
});

test('a pod already being deleted is evicted without shortening its grace unless the options ask for less', (t) => {
  const h = new Harness();
  running(h, 'p');
  h.at(1).req({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name: 'p', options: {} });
  const before = (h.get('p').body as Pod).metadata.deletionTimestamp;
  t.is(evict(h, 'p').code, 201);
  t.is((h.get('p').body as Pod).metadata.deletionTimestamp, before);
});

test("the client's preconditions hold: a stale resourceVersion is 409 Conflict, a wrong uid too, and the pod stays", (t) => {
  const h = new Harness();
  const pod = running(h, 'p');
  const stale = evict(h, 'p', { preconditions: { resourceVersion: pod.metadata.resourceVersion } });
  t.is(stale.code, 409);
  t.is(status(stale).reason, 'Conflict');
  const uid = evict(h, 'p', { preconditions: { uid: 'not-the-uid' } });
  t.is(uid.code, 409);
  t.falsy((h.get('p').body as Pod).metadata.deletionTimestamp);
});

test('the name in the body must be the URL name (400); dryRun=All leaves the pod alone', (t) => {
  const h = new Harness();
  running(h, 'p');
  const bad = evict(h, 'p', undefined, { bodyName: 'q' });
  t.is(bad.code, 400);
  t.is(status(bad).message, 'name in URL does not match name in Eviction object');
  t.is(evict(h, 'p', undefined, { dryRun: true }).code, 201);
  t.falsy((h.get('p').body as Pod).metadata.deletionTimestamp);
});

test('a mistyped Eviction body is a 400 naming the field', (t) => {
  const h = new Harness();
  running(h, 'p');
  const r = evict(h, 'p', { gracePeriodSeconds: 'soon' as never });
  t.is(r.code, 400);
  t.regex(status(r).message!, /Eviction\.deleteOptions\.gracePeriodSeconds/);
});
