import test from 'ava';
import { BatchRings } from '../src/batchRing.js';
import { rng } from './support/interleave.js';

const rings = (hosts: number) => new BatchRings(new SharedArrayBuffer(BatchRings.bytes(hosts)), hosts);
const batch = (len: number, fill: number) => new Uint8Array(len).fill(fill & 0xff);

test('a batch put on the ring p → d is taken by d from p, once, as an unshared copy', (t) => {
  const r = rings(3);
  t.true(r.put(0, 2, Uint8Array.of(1, 2, 3, 4, 5)));
  t.is(r.take(1, 2), undefined, 'other pairs are separate rings');
  t.is(r.take(0, 1), undefined);
  const got = r.take(0, 2)!;
  t.deepEqual([...got], [1, 2, 3, 4, 5]);
  t.false(got.buffer instanceof SharedArrayBuffer, 'msgpackr reads it directly');
  t.is(r.take(0, 2), undefined);
});

test('ring sizes shrink with the number of host pairs and stay within the memory budget', (t) => {
  t.is(BatchRings.bytes(1), 0);
  t.is(BatchRings.ringSize(2), 256 << 10);
  t.is(BatchRings.ringSize(24), 16 << 10);
  t.is(BatchRings.ringSize(1_000), 4 << 10);
  t.true(BatchRings.bytes(6) <= 16 << 20);
});

test('a full ring or an oversized batch is refused (the caller posts it on the port); space comes back as d takes', (t) => {
  const r = rings(2);
  const size = r.ringBytes;
  t.false(r.put(0, 1, batch(size / 2, 1)), 'more than half a ring never fits');
  let n = 0;
  while (r.put(0, 1, batch(1_000, n))) n++;
  t.true(n >= Math.floor(size / 1_004) - 1 && n <= Math.floor(size / 1_004), `${n} records of 1004 bytes in ${size}`);
  t.deepEqual([...r.take(0, 1)!.subarray(0, 2)], [0, 0]);
  t.true(r.put(0, 1, batch(1_000, 200)), 'room again after a take');
});

test('random sizes through wrap-arounds: every batch comes out once, intact, in order', (t) => {
  const r = rings(2);
  const random = rng(11);
  const queue: Uint8Array[] = [];
  const same = (a: Uint8Array | undefined, b: Uint8Array | undefined) => (a === undefined || b === undefined ? a === b : Buffer.compare(a, b) === 0);
  let seq = 0;
  let large = 0;
  let bad = 0;
  for (let step = 0; step < 20_000; step++) {
    if (random() < 0.55) {
      const len = Math.floor(random() * random() * r.ringBytes * 0.3);
      const b = batch(len, seq);
      if (r.put(0, 1, b)) {
        queue.push(b);
        seq++;
        if (len > r.ringBytes / 8) large++;
      }
    } else if (!same(r.take(0, 1), queue.shift())) {
      bad++;
    }
  }
  for (let got = r.take(0, 1); got; got = r.take(0, 1)) if (!same(got, queue.shift())) bad++;
  t.is(bad, 0);
  t.is(queue.length, 0);
  t.true(seq > 5_000 && large > 100, `${seq} batches, ${large} large ones (wrap-arounds)`);
});
