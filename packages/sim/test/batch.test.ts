import test from 'ava';
import type { WireEnvelope } from '@podsim/api/protocol/control';
import { BatchDecoder, BatchEncoder, batchSeq, decodeBatch, encodeBatch } from '../src/batch.js';

const env = (q: number, body: unknown): WireEnvelope => ({ f: 0, t: 1, s: q, a: q + 100, q, b: body as WireEnvelope['b'], r: undefined, fi: undefined, u: undefined, p: undefined, i: undefined });
const pod = (n: number) => ({ kind: 'ApiResult', object: { metadata: { name: `pod-${n}`, namespace: 'default', resourceVersion: String(n) }, status: { phase: 'Running' } } });

test('a batch stream round-trips envelopes and writes each record shape once per stream', (t) => {
  const enc = new BatchEncoder();
  const dec = new BatchDecoder();
  const sizes: number[] = [];
  for (let n = 1; n <= 5; n++) {
    const bytes = enc.encode([env(n, pod(n))]);
    t.is(batchSeq(bytes), n);
    sizes.push(bytes.length);
    t.deepEqual(dec.decode(bytes), decodeBatch(encodeBatch([env(n, pod(n))])));
  }
  // The first batch defines the shapes; the later ones, with the same shapes, are smaller than
  // the self-contained encoding that redefines them every time.
  t.true(sizes[1] < sizes[0], `${sizes}`);
  t.true(sizes[4] + 4 < encodeBatch([env(5, pod(5))]).length, `${sizes[4]} vs ${encodeBatch([env(5, pod(5))]).length}`);
});

test('a batch stream refuses a batch out of order instead of misreading its shapes', (t) => {
  const enc = new BatchEncoder();
  const first = enc.encode([env(1, pod(1))]);
  const second = enc.encode([env(2, pod(2))]);
  const dec = new BatchDecoder();
  t.throws(() => dec.decode(second), { message: 'batch stream: got batch 2, expected batch 1' });
  t.is(dec.decode(first)[0].q, 1);
});

test('streams are independent: two encoders in one thread do not share shapes', (t) => {
  const a = new BatchEncoder();
  const b = new BatchEncoder();
  a.encode([env(1, pod(1))]);
  const fromB = b.encode([env(1, { kind: 'Other', x: 1 })]);
  t.deepEqual(new BatchDecoder().decode(fromB)[0].b, { kind: 'Other', x: 1 });
});
