/** Merge patch, JSON patch and the strategic-merge-patch subset kubectl and the kubelet send. */
import test from 'ava';
import { applyPatch, isPatchError, jsonPatch, mergePatch, strategicMergePatch } from '../src/patch.js';

const pod = {
  metadata: { name: 'p', labels: { a: '1', b: '2' }, finalizers: ['x/one'] },
  spec: {
    containers: [
      { name: 'c', image: 'busybox:1.36', command: ['sleep', '3600'], env: [{ name: 'A', value: '1' }] },
      { name: 'd', image: 'nginx' },
    ],
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%' } },
  },
  status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'PodScheduled', status: 'True' }] },
};

test('merge patch (RFC 7386): maps merge, null deletes, lists replace; input untouched', (t) => {
  const before = JSON.stringify(pod);
  const out = mergePatch(pod, { metadata: { labels: { a: null, c: '3' } }, spec: { containers: [{ name: 'c', image: 'x' }] } }) as typeof pod;
  t.deepEqual(out.metadata.labels, { b: '2', c: '3' } as never);
  t.deepEqual(out.spec.containers, [{ name: 'c', image: 'x' }] as never);
  t.is(JSON.stringify(pod), before);
});

test('strategic merge: containers merge by name, keeping fields the patch does not mention (kubectl apply)', (t) => {
  const out = strategicMergePatch(pod, { spec: { $setElementOrder: undefined, containers: [{ name: 'c', image: 'busybox:1.37' }] } }) as typeof pod;
  t.deepEqual(out.spec.containers[0], { name: 'c', image: 'busybox:1.37', command: ['sleep', '3600'], env: [{ name: 'A', value: '1' }] });
  t.is(out.spec.containers.length, 2);
});

test('strategic merge: $setElementOrder reorders, $patch: delete removes an item, env merges by name', (t) => {
  const out = strategicMergePatch(pod, {
    spec: {
      '$setElementOrder/containers': [{ name: 'd' }, { name: 'c' }],
      containers: [{ name: 'c', env: [{ name: 'B', value: '2' }] }, { name: 'x', $patch: 'delete' }],
    },
  }) as typeof pod;
  t.deepEqual(out.spec.containers.map((c) => c.name), ['d', 'c']);
  t.deepEqual(out.spec.containers[1].env, [{ name: 'A', value: '1' }, { name: 'B', value: '2' }]);
});

test('strategic merge: status conditions merge by type (the kubelet status patch)', (t) => {
  const out = strategicMergePatch(pod, {
    metadata: { uid: 'u' },
    status: { '$setElementOrder/conditions': [{ type: 'PodScheduled' }, { type: 'Ready' }], conditions: [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady' }] },
  }) as typeof pod & { metadata: { uid: string } };
  t.deepEqual(out.status.conditions, [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'False', reason: 'ContainersNotReady' }] as never);
  t.is(out.metadata.uid, 'u');
});

test('strategic merge: $retainKeys drops unlisted keys (Deployment strategy switch to Recreate)', (t) => {
  const out = strategicMergePatch(pod, { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: null, type: 'Recreate' } } }) as typeof pod;
  t.deepEqual(out.spec.strategy, { type: 'Recreate' } as never);
});

test('strategic merge: finalizers are a merge-strategy primitive list; $deleteFromPrimitiveList removes', (t) => {
  const add = strategicMergePatch(pod, { metadata: { finalizers: ['x/two'] } }) as typeof pod;
  t.deepEqual(add.metadata.finalizers, ['x/one', 'x/two']);
  const del = strategicMergePatch(add, { metadata: { '$deleteFromPrimitiveList/finalizers': ['x/one'] } }) as typeof pod;
  t.deepEqual(del.metadata.finalizers, ['x/two']);
});

test('strategic merge: $patch: replace on a map replaces it', (t) => {
  const out = strategicMergePatch(pod, { metadata: { labels: { $patch: 'replace', z: '9' } } }) as typeof pod;
  t.deepEqual(out.metadata.labels, { z: '9' } as never);
});

test('JSON patch (RFC 6902): add, replace, remove, test, move, copy; failures are 422', (t) => {
  const out = jsonPatch(pod, [
    { op: 'add', path: '/metadata/labels/c', value: '3' },
    { op: 'replace', path: '/spec/containers/0/image', value: 'img' },
    { op: 'remove', path: '/metadata/labels/a' },
    { op: 'test', path: '/metadata/name', value: 'p' },
    { op: 'copy', from: '/metadata/labels/b', path: '/metadata/labels/d' },
    { op: 'move', from: '/metadata/labels/c', path: '/metadata/labels/e' },
    { op: 'add', path: '/metadata/finalizers/-', value: 'x/end' },
  ]) as typeof pod;
  t.deepEqual(out.metadata.labels, { b: '2', d: '2', e: '3' } as never);
  t.is(out.spec.containers[0].image, 'img');
  t.deepEqual(out.metadata.finalizers, ['x/one', 'x/end']);
  const bad = jsonPatch(pod, [{ op: 'test', path: '/metadata/name', value: 'q' }]);
  t.true(isPatchError(bad));
  t.true(isPatchError(jsonPatch(pod, [{ op: 'remove', path: '/nope' }])));
  t.true(isPatchError(applyPatch('merge', pod, [1, 2])));
});

test("JSON patch failures are worded as evanphx/json-patch v4 words them (the 422's message kubectl prints)", (t) => {
  const msg = (ops: unknown[]) => {
    const r = jsonPatch(pod, ops);
    return isPatchError(r) ? r.patchError : 'applied';
  };
  t.is(msg([{ op: 'replace', path: '/metadata/labels/zz', value: 'v' }]), 'replace operation does not apply: doc is missing key: /metadata/labels/zz: missing value');
  t.is(msg([{ op: 'replace', path: '/spec/nope/x', value: 'v' }]), 'replace operation does not apply: doc is missing path: /spec/nope/x: missing value');
  t.is(msg([{ op: 'add', path: '/spec/nope/x', value: 'v' }]), 'add operation does not apply: doc is missing path: "/spec/nope/x": missing value');
  t.is(msg([{ op: 'add', path: '/spec/containers/5', value: {} }]), 'unable to access invalid index: 5: invalid index referenced');
  t.is(msg([{ op: 'remove', path: '/metadata/labels/zz' }]), 'unable to remove nonexistent key: zz: missing value');
  t.is(msg([{ op: 'remove', path: '/spec/nope/x' }]), 'remove operation does not apply: doc is missing path: "/spec/nope/x": missing value');
  t.is(msg([{ op: 'move', from: '/metadata/labels/zz', path: '/metadata/labels/y' }]), 'move operation does not apply: doc is missing from path: /metadata/labels/zz: missing value');
  t.is(msg([{ op: 'copy', from: '/metadata/labels/b', path: '/spec/nope/y' }]), 'copy operation does not apply: doc is missing destination path: /spec/nope/y: missing value');
  t.is(msg([{ op: 'test', path: '/metadata/name', value: 'q' }]), 'testing value /metadata/name failed: test failed');
});

test('bug: an unknown $patch directive was merged as if absent (200); now ErrBadPatchType, as strategicpatch v0.22.8 mergeMap / mergeSliceWithSpecialElements answer', (t) => {
  // In a map, only replace and delete are directives (handleDirectiveInMergeMap); `merge` too is refused there.
  for (const d of ['nope', 'merge']) {
    const out = strategicMergePatch(pod, { metadata: { labels: { $patch: d, z: '9' } } });
    t.deepEqual(out, { patchError: `unknown patch type: ${d} in map: map[$patch:${d} z:9]`, code: 500 }, d);
  }
  t.deepEqual(strategicMergePatch(pod, { spec: { strategy: { $patch: 5 } } }), { patchError: 'unknown patch type: %!s(float64=5) in map: map[$patch:5]', code: 500 });
  // In a list item of a merge-keyed list: delete and replace, `merge` is "not yet", a delete needs the merge key.
  t.deepEqual(strategicMergePatch(pod, { spec: { containers: [{ name: 'c', $patch: 'bogus', ports: [{ containerPort: 80 }] }] } }), {
    patchError: 'unknown patch type: bogus in map: map[$patch:bogus name:c ports:[map[containerPort:80]]]',
    code: 500,
  });
  t.deepEqual(strategicMergePatch(pod, { spec: { containers: [{ name: 'c', $patch: 'merge' }] } }), { patchError: 'merging lists cannot yet be specified in the patch', code: 500 });
  t.deepEqual(strategicMergePatch(pod, { spec: { containers: [{ image: 'x', $patch: 'delete' }] } }), { patchError: 'map: map[$patch:delete image:x] does not contain declared merge key: name', code: 500 });
});
