/**
 * `pnpm bench:engine`: the threaded engine against the raw transport, measured in one run on
 * this machine (DESIGN.md §10). Prints ONE JSON line:
 * - fan-out: ≥ 200 actors with timers and request/reply on 2 host threads (shards:2) →
 *   engineMsgsPerSec; the same actors on 1 thread → singleMsgsPerSec;
 * - raw: the same envelopes (same body shape, same batch codec, the engine's mean batch size)
 *   exchanged both ways between 2 threads over one MessagePort → rawMsgsPerSec; ratio =
 *   engineMsgsPerSec / rawMsgsPerSec;
 * - sparse: a kubelet-like 1 s relist of 127 actors against one hub on 4 host threads →
 *   windowsPerSec;
 * - determinism: a smaller fan-out under single, per-actor and shards:2 → the three digests.
 * Timings are reported, never asserted. SEED (env) picks the seed.
 */
import { loadavg } from 'node:os';
import { MessageChannel, Worker } from 'node:worker_threads';
import type { ActorSpec } from '@podsim/api';
import type { LatencyConfig, Placement } from '@podsim/api/protocol/control';
import { Simulation, type SimulationMetrics } from '../src/index.js';
import { peerId, type FanoutConfig, type RelisterConfig } from './benchActors.js';

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

/** Both directions at once between two threads; returns messages per second (both ways). */
async function rawOnce(messagesPerSide: number, batch: number): Promise<number> {
  const ch = new MessageChannel();
  const url = new URL('./rawWorker.js', import.meta.url);
  const sab = new SharedArrayBuffer(6 * 4);
  const workers = [ch.port1, ch.port2].map(
    (port, side) =>
      new Worker(url, { workerData: { side, port, sab, messages: messagesPerSide, batch, inFlight: 16, spin: 3_000 }, transferList: [port] }),
  );
  try {
    // Start both sides together, once both are ready.
    await Promise.all(workers.map((w) => new Promise((resolve) => w.once('message', resolve))));
    const done = workers.map(
      (w) =>
        new Promise<{ ms: number }>((resolve, reject) => {
          w.once('message', resolve);
          w.once('error', reject);
        }),
    );
    for (const w of workers) w.postMessage('go');
    const res = await Promise.all(done);
    return (2 * messagesPerSide) / (Math.max(...res.map((r) => r.ms)) / 1000);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** The raw rate: one warm-up, then the median of three runs (the machine is noisy). */
async function runRaw(messagesPerSide: number, batch: number): Promise<number> {
  await rawOnce(Math.ceil(messagesPerSide / 4), batch);
  const runs = [await rawOnce(messagesPerSide, batch), await rawOnce(messagesPerSide, batch), await rawOnce(messagesPerSide, batch)];
  return runs.sort((a, b) => a - b)[1];
}

const round = (x: number) => Math.round(x);
const tStart = performance.now();
const loadBefore = Number(loadavg()[0].toFixed(2));

// Fan-out: 256 actors × 4 requests per virtual ms, replies included.
const FANOUT_N = Number(process.env.FANOUT_N ?? 256);
const FANOUT_US = Number(process.env.FANOUT_US ?? 300_000);
const fanShards = await runEngine(fanoutActors(FANOUT_N, FANOUT_US), 'shards:2');
const fanSingle = await runEngine(fanoutActors(FANOUT_N, FANOUT_US), 'single');
const engineMsgsPerSec = fanShards.metrics.messages / fanShards.wallSeconds;
const meanBatch = Math.max(1, Math.round(fanShards.metrics.remoteMessages / fanShards.metrics.hosts.reduce((s, h) => s + h.batchesSent, 0)));
const rawMsgsPerSec = await runRaw(Math.min(400_000, Math.ceil(fanShards.metrics.remoteMessages / 2)), meanBatch);

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
    engineMsgsPerSec: round(engineMsgsPerSec),
    ratio: Number((engineMsgsPerSec / rawMsgsPerSec).toFixed(3)),
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
      singleMsgsPerSec: round(fanSingle.metrics.messages / fanSingle.wallSeconds),
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
