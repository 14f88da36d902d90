/**
 * DefaultTolerationSeconds admission on UPDATE (issue #15 item 4; `plugin/pkg/admission/
 * defaulttolerationseconds` registers for Create and Update of pods, not subresources): a PUT or
 * a patch that leaves the default not-ready / unreachable tolerations out gets them back, so the
 * update passes pod-update validation — before, podsim ran the plugin on create only and the same
 * PUT was refused (422 "pod updates may not change fields other than …").
 */
import test from 'ava';
import type { Pod, Toleration } from '@podsim/api';
import { Harness, status } from './helpers.js';

const DEFAULTS: Toleration[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
];

test('a PUT of a pod without the default tolerations (kubectl replace of the original manifest) succeeds and keeps them', (t) => {
  const h = new Harness();
  const created = h.createPod('p');
  t.deepEqual(created.spec.tolerations, DEFAULTS);
  const body = structuredClone(created);
  delete body.spec.tolerations;
  body.metadata.labels = { tier: 'web' };
  const r = h.req({ type: 'ApiUpdate', resource: 'pods', namespace: 'default', name: 'p', object: body as never });
  t.is(r.code, 200, status(r).message);
  const stored = h.get('p').body as Pod;
  t.deepEqual(stored.spec.tolerations, DEFAULTS);
  t.deepEqual(stored.metadata.labels, { tier: 'web' });
});

test('a json patch removing the tolerations gets the defaults back; a user toleration for the key is kept, no default added for it', (t) => {
  const h = new Harness();
  h.createPod('p');
  const r = h.req({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name: 'p', patchType: 'json', patch: [{ op: 'remove', path: '/spec/tolerations' }] });
  t.is(r.code, 200, status(r).message);
  t.deepEqual((h.get('p').body as Pod).spec.tolerations, DEFAULTS);
  // A toleration the user added with its own seconds covers the key.
  const own: Toleration = { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 };
  const h2 = new Harness();
  h2.createPod('q', { tolerations: [own] });
  t.deepEqual((h2.get('q').body as Pod).spec.tolerations, [own, DEFAULTS[0]]);
});

test('the status subresource is not admitted: an UpdateStatus never changes spec.tolerations', (t) => {
  const h = new Harness();
  const created = h.createPod('p');
  const body = structuredClone(created);
  body.status = { ...body.status, phase: 'Running' };
  const r = h.req({ type: 'ApiUpdate', resource: 'pods', namespace: 'default', name: 'p', subresource: 'status', object: body as never });
  t.is(r.code, 200, status(r).message);
  t.deepEqual((h.get('p').body as Pod).spec.tolerations, DEFAULTS);
});
