/** `equality.Semantic.DeepEqual` as the kubelet and the controllers use it. */
import test from 'ava';
import { deepEqual } from '../src/index.js';

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
