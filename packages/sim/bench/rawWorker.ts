/**
 * The raw transport measurement of bench/engineBench.ts: two of these threads exchange the
 * benchmark's envelopes in batches over one MessagePort, both directions at once, with the
 * engine's own batch codec (encodeBatch/decodeBatch) and at most `inFlight` unconsumed batches
 * per direction (counters in a SharedArrayBuffer). No windows, no actors: the ceiling.
 */
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import type { WireEnvelope } from '@podsim/api/protocol/control';
import { decodeBatch, encodeBatch } from '../src/batch.js';
import { makeGet } from './benchActors.js';

interface RawJob {
  readonly side: 0 | 1;
  readonly port: MessagePort;
  readonly sab: SharedArrayBuffer;
  readonly messages: number;
  readonly batch: number;
  readonly inFlight: number;
}

const job = workerData as RawJob;
const counters = new Int32Array(job.sab);
// counters[0]: ready count; counters[1 + side]: batches consumed by `side`.
Atomics.add(counters, 0, 1);
while (Atomics.load(counters, 0) < 2);

let sent = 0;
let received = 0;
let sentBatches = 0;
let check = 0;
const other = 1 - job.side;
const drain = () => {
  for (;;) {
    const m = receiveMessageOnPort(job.port);
    if (!m) return;
    const envs = decodeBatch(m.message as Uint8Array);
    for (const e of envs) check += (e.b as unknown as { resourceVersion: number }).resourceVersion & 1;
    received += envs.length;
    Atomics.add(counters, 1 + job.side, 1);
  }
};
const t0 = performance.now();
while (sent < job.messages || received < job.messages) {
  if (sent < job.messages && sentBatches - Atomics.load(counters, 1 + other) < job.inFlight) {
    const envs: WireEnvelope[] = [];
    for (let i = 0; i < job.batch && sent < job.messages; i++, sent++) {
      envs.push({ f: job.side, t: other, s: sent, a: sent + 100, q: sent, b: makeGet(sent, 'w000'), r: sent, fi: 1 });
    }
    const bytes = encodeBatch(envs);
    job.port.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
    sentBatches++;
  }
  drain();
}
parentPort!.postMessage({ ms: performance.now() - t0, check });
