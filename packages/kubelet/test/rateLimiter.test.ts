import test from 'ava';
import { TokenBucket } from '../src/rateLimiter.js';
import { ApiClient } from '../src/apiClient.js';
import { FakeEnv, S } from './fakeEnv.js';

test('token bucket: burst 10 at once, then one every 200 ms at 5 QPS', (t) => {
  const b = new TokenBucket(5, 10, 0);
  const delays = Array.from({ length: 13 }, () => b.reserve(0));
  t.deepEqual(delays.slice(0, 10), Array(10).fill(0));
  t.deepEqual(delays.slice(10), [200_000, 400_000, 600_000]);
  // After a second of idling 5 tokens are back.
  const b2 = new TokenBucket(5, 10, 0);
  for (let i = 0; i < 10; i++) b2.reserve(0);
  t.is(b2.reserve(S), 0);
});

test('ApiClient sends 300 requests over ~58 s at 5 QPS / burst 10 (C22 arithmetic)', (t) => {
  const env = new FakeEnv(undefined, (_req, reply) => reply({ type: 'ApiResult', code: 200, body: { kind: 'Status' } as never }));
  const c = new ApiClient(env, 5, 10);
  for (let i = 0; i < 300; i++) c.request({ type: 'ApiGet', resource: 'pods', name: `p${i}` }, () => {});
  env.runUntil(100 * S);
  const times = env.apiCalls.map((c) => c.t);
  t.is(times.length, 300);
  t.is(times[9], 0);
  t.is(times[299], 58 * S);
});
