/**
 * Node taint validation (issue #15 item 6; `pkg/apis/core/validation` `ValidateNode` →
 * `validateNodeTaints` / `validateTaintEffect`, also run by the node strategy's ValidateUpdate):
 * a PATCH giving a taint the effect `Explode` used to be stored (200); it is 422 with upstream's
 * message, under upstream's own path `metadata.taints`. The `nodes/status` subresource keeps the
 * spec, so it does not validate taints.
 */
import test from 'ava';
import type { Node } from '@podsim/api';
import { Harness, status } from './helpers.js';

function withNode(): Harness {
  const h = new Harness();
  const r = h.req({ type: 'ApiCreate', resource: 'nodes', object: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'w1' } } as never });
  if (r.code !== 201) throw new Error(`node create: ${r.code}`);
  return h;
}

const patchTaints = (h: Harness, taints: unknown[]) => h.req({ type: 'ApiPatch', resource: 'nodes', name: 'w1', patchType: 'merge', patch: { spec: { taints } } });

test('bug: kubectl patch node w1 with taint effect Explode was stored (200) — now 422 metadata.taints[0].effect Unsupported value', (t) => {
  const h = withNode();
  const r = patchTaints(h, [{ key: 'maint', value: 'true', effect: 'Explode' }]);
  t.is(r.code, 422);
  t.is(status(r).message, 'Node "w1" is invalid: metadata.taints[0].effect: Unsupported value: "Explode": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"');
  t.is(status(r).details?.causes?.[0]?.field, 'metadata.taints[0].effect');
  t.is((h.get('w1', 'nodes').body as Node).spec?.taints, undefined, 'nothing stored');
});

test('a taint without an effect is Required; a duplicate key+effect pair and a bad key are refused; valid taints pass', (t) => {
  const h = withNode();
  t.regex(status(patchTaints(h, [{ key: 'maint' }])).message!, /metadata\.taints\[0\]\.effect: Required value/);
  t.regex(status(patchTaints(h, [{ key: 'a', effect: 'NoSchedule' }, { key: 'a', effect: 'NoSchedule' }])).message!, /metadata\.taints\[1\]: Duplicate value: .*taints must be unique by key and effect pair/);
  t.regex(status(patchTaints(h, [{ key: 'bad key!', effect: 'NoSchedule' }])).message!, /metadata\.taints\[0\]\.key: Invalid value: "bad key!"/);
  const ok = patchTaints(h, [{ key: 'a', effect: 'NoSchedule' }, { key: 'a', effect: 'NoExecute' }, { key: 'b', value: 'x', effect: 'PreferNoSchedule' }]);
  t.is(ok.code, 200, status(ok).message);
  t.is((h.get('w1', 'nodes').body as Node).spec?.taints?.length, 3);
});

test('a Node created with an unsupported taint effect is refused too', (t) => {
  const h = new Harness();
  const r = h.req({ type: 'ApiCreate', resource: 'nodes', object: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'w2' }, spec: { taints: [{ key: 'k', effect: 'Explode' }] } } as never });
  t.is(r.code, 422);
  t.regex(status(r).message!, /^Node "w2" is invalid: metadata\.taints\[0\]\.effect: Unsupported value: "Explode"/);
});
