/** `equality.Semantic.DeepEqual` as the kubelet and the controllers use it. */
import test from 'ava';
import { deepEqual, deriveStream, objectsEqualExcept } from '../src/index.js';

test('deepEqual: structure, not identity or key order', (t) => {
  t.true(deepEqual({ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 }));
  t.false(deepEqual({ a: 1, b: [1, { c: 'x' }] }, { a: 1, b: [1, { c: 'y' }] }));
  t.false(deepEqual([1, 2], [2, 1]));
  t.false(deepEqual([1], { 0: 1 }));
  t.false(deepEqual({ 0: 1 }, [1]));
  t.true(deepEqual(null, null));
  t.false(deepEqual(null, {}));
  t.false(deepEqual('1', 1));
});

test('deepEqual: an undefined property equals an absent one (omitempty), null does not', (t) => {
  t.true(deepEqual({ a: 1, b: undefined }, { a: 1 }));
  t.true(deepEqual({ a: 1 }, { a: 1, b: undefined }));
  t.false(deepEqual({ a: 1, b: null }, { a: 1 }));
  t.false(deepEqual({ a: 1 }, { a: 1, b: null }));
  t.false(deepEqual({ a: 1, b: 2 }, { a: 1 }));
  t.false(deepEqual({ a: 1 }, { a: 1, b: 2 }));
});

test('objectsEqualExcept(a, b, k) answers deepEqual({ ...a, [k]: b[k] }, b) (the status manager\'s isPodStatusByKubeletEqual without the copy), over random objects', (t) => {
  const rng = deriveStream(19, 'objectsEqualExcept');
  const keys = ['phase', 'conditions', 'hostIP', 'podIPs', 'startTime'];
  const leaf = (): unknown => [undefined, null, 'a', 'b', 1, [], ['a'], { x: 1 }, { x: undefined }][rng.int(9)];
  const obj = (): Record<string, unknown> => {
    const o: Record<string, unknown> = {};
    for (const k of keys) if (rng.float() < 0.6) o[k] = leaf();
    return o;
  };
  let equal = 0;
  for (let i = 0; i < 5000; i++) {
    const a = obj();
    // Half the pairs start as a copy of `a` with one field redrawn, so that equal pairs are common.
    const b = rng.float() < 0.5 ? { ...a, [keys[rng.int(keys.length)]]: leaf() } : obj();
    const want = deepEqual({ ...a, conditions: b.conditions }, b);
    if (want) equal++;
    t.is(objectsEqualExcept(a, b, 'conditions'), want, JSON.stringify([a, b]));
  }
  t.true(equal > 500 && equal < 4500, `${equal} equal pairs`);
});
