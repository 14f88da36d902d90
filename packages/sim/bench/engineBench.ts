/**
 * `pnpm bench:engine`: the threaded engine against the raw transport, measured in one run on
 * this machine (DESIGN.md §10). Prints ONE JSON line:
 * - fan-out: ≥ 200 actors with timers and request/reply on 2 host threads (shards:2) →
 *   engineMsgsPerSec (every message, about half of them delivered inside their own thread) and
 *   remoteMsgsPerSec (only those that crossed between the threads); the same actors on 1 thread
 *   → singleMsgsPerSec, a figure of its own (no message crosses a thread there, so it is not
 *   compared with the transport);
 * - raw: the same envelopes (same body shape, same batch codec, the engine's mean batch size)
 *   exchanged both ways between 2 threads over one MessagePort (src/rawTransport.ts) →
 *   rawMsgsPerSec; transportRatio = remoteMsgsPerSec / rawMsgsPerSec: the share of the raw
 *   port rate the engine's cross-thread traffic reaches (an all-messages ÷ raw ratio counted the
 *   in-thread deliveries as transport and read 0.92 where the cross-thread share was 0.46);
 * - sparse: a kubelet-like 1 s relist of 127 actors against one hub on 4 host threads →
 *   windowsPerSec;
 * - determinism: a smaller fan-out under single, per-actor and shards:2 → the three digests.
 * Timings are reported, never asserted. SEED (env) picks the seed.
 */
import { loadavg } from 'node:os';
import type { ActorSpec } from '@podsim/api';
import type { LatencyConfig, Placement } from '@podsim/api/protocol/control';
import { Simulation, type SimulationMetrics } from '../src/index.js';
import { measureRawTransport } from '../src/rawTransport.js';
import { fanoutFigures } from './engineFigures.js';
import { makeGet, peerId, type FanoutConfig, type RelisterConfig } from './benchActors.js';

const seed = Number(process.env.SEED ?? 1);
const ACTORS = new URL('./benchActors.js', import.meta.url).href;
const LATENCY: LatencyConfig = { default: { minUs: 100, jitterUs: 100 } };

function fanoutActors(n: number, untilUs: number): ActorSpec[] {
  return Array.from({ length: n }, (_, i) => ({
    id: peerId('w', i),
    module: ACTORS,
    exportName: 'createFanout',
    config: { prefix: 'w', peers: n, periodUs: 1_000, fanout: 4, untilUs } satisfies FanoutConfig,
  }));
}

function sparseActors(kubelets: number, untilUs: number): ActorSpec[] {
  const hub: ActorSpec = { id: 'apiserver', module: ACTORS, exportName: 'createHub' };
  return [
    hub,
    ...Array.from({ length: kubelets }, (_, i) => ({
      id: `kubelet/node-${String(i).padStart(3, '0')}`,
      module: ACTORS,
      exportName: 'createRelister',
      config: { hub: 'apiserver', periodUs: 1_000_000, untilUs } satisfies RelisterConfig,
    })),
  ];
}

interface EngineRun {
  readonly wallSeconds: number;
  readonly metrics: SimulationMetrics;
  readonly digest: string;
}

async function runEngine(actors: ActorSpec[], placement: Placement): Promise<EngineRun> {
  const spin = process.env.SPIN === undefined ? undefined : Number(process.env.SPIN);
  const sim = await Simulation.create({ seed, actors, placement, latency: LATENCY, traceFilter: 'none', hostTimeoutMs: 60_000, spin });
  try {
    const t0 = performance.now();
    await sim.run();
    const wallSeconds = (performance.now() - t0) / 1000;
    return { wallSeconds, metrics: await sim.metrics(), digest: await sim.digest() };
  } finally {
    await sim.close();
  }
}

const round = (x: number) => Math.round(x);
const tStart = performance.now();
const loadBefore = Number(loadavg()[0].toFixed(2));

// Fan-out: 256 actors × 4 requests per virtual ms, replies included.
const FANOUT_N = Number(process.env.FANOUT_N ?? 256);
const FANOUT_US = Number(process.env.FANOUT_US ?? 300_000);
const fanShards = await runEngine(fanoutActors(FANOUT_N, FANOUT_US), 'shards:2');
const fanSingle = await runEngine(fanoutActors(FANOUT_N, FANOUT_US), 'single');
const meanBatch = Math.max(1, Math.round(fanShards.metrics.remoteMessages / fanShards.metrics.hosts.reduce((s, h) => s + h.batchesSent, 0)));
// The raw rate with the fan-out actors' own body shape (src/rawTransport.ts).
const rawMsgsPerSec = await measureRawTransport(meanBatch, Math.min(400_000, Math.ceil(fanShards.metrics.remoteMessages / 2)), makeGet(0, 'w000'));
const asRun = (r: EngineRun) => ({ wallSeconds: r.wallSeconds, messages: r.metrics.messages, remoteMessages: r.metrics.remoteMessages });
const fan = fanoutFigures(asRun(fanShards), asRun(fanSingle), rawMsgsPerSec);

// Sparse: 127 relisters + hub for 60 virtual seconds on 4 host threads.
const SPARSE_S = Number(process.env.SPARSE_S ?? 60);
const sparse = await runEngine(sparseActors(127, SPARSE_S * 1_000_000), 'shards:4');

// Determinism: a smaller fan-out under three placements.
const small = fanoutActors(24, 20_000);
const [dSingle, dPerActor, dShards2] = [
  await runEngine(small, 'single'),
  await runEngine(small, 'per-actor'),
  await runEngine(small, 'shards:2'),
];

console.log(
  JSON.stringify({
    name: 'engine',
    seed,
    rawMsgsPerSec: round(rawMsgsPerSec),
    remoteMsgsPerSec: round(fan.remoteMsgsPerSec),
    transportRatio: Number(fan.transportRatio.toFixed(3)),
    engineMsgsPerSec: round(fan.engineMsgsPerSec),
    singleMsgsPerSec: round(fan.singleMsgsPerSec),
    windowsPerSec: round(sparse.metrics.windows / sparse.wallSeconds),
    sparseWindows: sparse.metrics.windows,
    digestSingle: dSingle.digest,
    digestPerActor: dPerActor.digest,
    digestShards2: dShards2.digest,
    fanout: {
      actors: FANOUT_N,
      virtualUs: FANOUT_US,
      messages: fanShards.metrics.messages,
      remoteMessages: fanShards.metrics.remoteMessages,
      windows: fanShards.metrics.windows,
      meanBatch,
      wallSeconds: Number(fanShards.wallSeconds.toFixed(3)),
      waitMs: fanShards.metrics.hosts.map((h) => h.waitMs),
      singleMessages: fanSingle.metrics.messages,
      singleWallSeconds: Number(fanSingle.wallSeconds.toFixed(3)),
      digestsAgree: fanSingle.digest === fanShards.digest,
    },
    sparse: {
      actors: 128,
      hosts: sparse.metrics.hostCount,
      virtualSeconds: SPARSE_S,
      windows: sparse.metrics.windows,
      events: sparse.metrics.events,
      wallSeconds: Number(sparse.wallSeconds.toFixed(3)),
      waitMs: sparse.metrics.hosts.map((h) => h.waitMs),
    },
    digestsAgree: dSingle.digest === dPerActor.digest && dSingle.digest === dShards2.digest,
    wallSeconds: Number(((performance.now() - tStart) / 1000).toFixed(2)),
    // 1-minute load average before/after: other work on this 2-core machine skews every figure.
    loadAvg: [loadBefore, Number(loadavg()[0].toFixed(2))],
  }),
);
