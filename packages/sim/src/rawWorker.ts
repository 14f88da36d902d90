/**
 * One side of the raw transport measurement (`rawTransport.ts`): two of these threads exchange
 * envelopes in batches over one MessagePort, both directions at once, with the engine's own
 * batch codec (one BatchEncoder/BatchDecoder stream per direction, as between two hosts) and the engine's own way of waiting: batches are taken
 * with receiveMessageOnPort, and a thread with nothing to do spins on a doorbell word in a
 * SharedArrayBuffer, then sleeps in Atomics.wait (the peer rings after posting or consuming).
 * Credit: at most `inFlight` unconsumed batches per direction. No windows, no actors: the
 * ceiling the engine is compared against.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import type { WireEnvelope } from '@podsim/api/protocol/control';
import { BatchDecoder, BatchEncoder } from './batch.js';
import type { RawBody, RawJob } from './rawTransport.js';

const job = workerData as RawJob;
const w = new Int32Array(job.sab);
const me = job.side;
const other = 1 - me;
const encoder = new BatchEncoder();
const decoder = new BatchDecoder();
const DOOR = 0;
const SLEEP = 2;
const CONSUMED = 4;

/** Message n's body: the caller's template with its own name and resourceVersion. */
function body(n: number): RawBody {
  return { ...job.body, name: `pod-${n}`, resourceVersion: n };
}

function ring(side: number): void {
  Atomics.add(w, DOOR + side, 1);
  if (Atomics.load(w, SLEEP + side)) Atomics.notify(w, DOOR + side);
}

parentPort!.once('message', () => {
  let sent = 0;
  let batches = 0;
  let received = 0;
  let check = 0;
  const t0 = performance.now();
  while (sent < job.messages || received < job.messages) {
    const bell = Atomics.load(w, DOOR + me);
    let progressed = false;
    if (sent < job.messages && batches - Atomics.load(w, CONSUMED + other) < job.inFlight) {
      const envs: WireEnvelope[] = [];
      for (let i = 0; i < job.batch && sent < job.messages; i++, sent++) {
        // The decoded envelope's shape (p and i present), as in the engine.
        envs.push({ f: me, t: other, s: sent, a: sent + 100, q: sent, b: body(sent), r: sent, fi: 1, u: undefined, p: undefined, i: undefined });
      }
      const bytes = encoder.encode(envs);
      job.port.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
      batches++;
      ring(other);
      progressed = true;
    }
    for (;;) {
      const m = receiveMessageOnPort(job.port);
      if (!m) break;
      const envs = decoder.decode(m.message as Uint8Array);
      for (const e of envs) check += (e.b as RawBody).resourceVersion & 1;
      received += envs.length;
      Atomics.add(w, CONSUMED + me, 1);
      ring(other);
      progressed = true;
    }
    if (progressed) continue;
    let k = 0;
    while (k < job.spin && Atomics.load(w, DOOR + me) === bell) k++;
    if (k < job.spin) continue;
    Atomics.store(w, SLEEP + me, 1);
    Atomics.wait(w, DOOR + me, bell, 5);
    Atomics.store(w, SLEEP + me, 0);
  }
  parentPort!.postMessage({ ms: performance.now() - t0, check });
});
parentPort!.postMessage('ready');
