import test from 'ava';
import type { Placement } from '@podsim/api/protocol/control';
import { localDigest, workload } from './support/stressWorkload.js';
import { runInterleaved } from './support/interleave.js';
import { windowBound } from '../src/syncBoard.js';

// The window protocol under many deterministic interleavings (support/interleave.ts): real hosts
// in one thread, pre-empted at every synchronisation point by a seeded scheduler. Every
// schedule must give the single-thread digest: no causality violation, no deadlock.
const PLACEMENTS: Placement[] = ['per-actor', 'shards:2', 'shards:3'];

test('60 workloads × 3 placements under random interleavings give the LocalSimulation digest', async (t) => {
  let preemptions = 0;
  for (let seed = 1; seed <= 60; seed++) {
    const w = workload(seed);
    const want = localDigest(w);
    for (const [i, p] of PLACEMENTS.entries()) {
      const pauses = seed % 3 === 0 ? [1 + ((seed * 7919) % 50_000), 120_000, 120_001] : [];
      const r = await runInterleaved(w, p, seed * 3 + i, { preempt: 0.3, depth: 2, pauses });
      t.is(r.digest, want, `workload ${seed}, ${p}, scheduler ${seed * 3 + i}`);
      preemptions += r.preemptions;
    }
  }
  t.true(preemptions > 10_000, `the scheduler pre-empted hosts (${preemptions})`);
});

// Regression pinned on the schedule that shows it: a host that adds itself to ARRIVED before
// reading EXPECTED can read the *next* round's count (the coordinator may write it as soon as
// the add lands), so two hosts coordinate one round and one of them computes bounds from figures
// a peer has not published yet. With that order (the engine before 55646ba) this schedule fails
// with "causality violation: apiserver → kubelet/node-2 due at 607102 µs arrived at 611922 µs" —
// the signature seen once in the minio example under load ("h4 … apiserver → kubelet/node-1 due
// at 320000515 µs arrived at 320085872 µs").
test('regression: workload 16, shards:3, scheduler 2 — one coordinator per round (arrive reads EXPECTED first)', async (t) => {
  const w = workload(16);
  t.is((await runInterleaved(w, 'shards:3', 2, { preempt: 0.3, depth: 2 })).digest, localDigest(w));
});

// Each host pair is one batch stream whose record shapes are written once (batch.ts
// BatchEncoder), so the receiver must decode in send order; a big batch over the port can be
// overtaken by the next one in the ring. Taking the newest queued batch first half of the time,
// the drain must still decode in order (without its reordering the first overtaken batch
// fails, e.g. "batch stream: got batch 7, expected batch 6").
test('batches taken out of order (ring overtakes port) are decoded in stream order: same digest', async (t) => {
  for (let seed = 1; seed <= 12; seed++) {
    const w = workload(seed);
    for (const p of ['per-actor', 'shards:3'] as Placement[]) {
      const r = await runInterleaved(w, p, seed, { preempt: 0.5, depth: 2, overtake: 0.5 });
      t.is(r.digest, localDigest(w), `workload ${seed}, ${p}`);
    }
  }
});

test('windowBound: B_h = min(limit, min over the other hosts of V_q + C[q][h]); h’s own events do not bound it', (t) => {
  // Three hosts; C from a chain 0 → 1 (100 µs), 1 → 2 (30 µs), everything else 500 µs.
  const C = [
    0, 100, 130,
    500, 0, 30,
    500, 500, 0,
  ];
  const V = [1_000, 50, 10_000];
  t.is(windowBound(V, 0, C, 3, 0, 1e9), 550, 'host 0: V_1 + C[1][0]');
  t.is(windowBound(V, 0, C, 3, 1, 1e9), 1_100, 'host 1: V_0 + 100, not its own 50 + a round trip');
  t.is(windowBound(V, 0, C, 3, 2, 1e9), 80, 'host 2: V_1 + 30');
  t.is(windowBound(V, 0, C, 3, 1, 900), 900, 'the target or stop time caps every bound');
  t.is(windowBound([5, 7], 0, [0, 0, 0, 0], 1, 0, 1e9), 1e9, 'a lone host runs to the limit');
});
