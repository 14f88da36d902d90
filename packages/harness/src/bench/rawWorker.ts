/**
 * One side of the raw transport measurement of `podsim bench` (`rawTransport.ts`): two of these
 * threads exchange small envelopes in batches over one MessagePort, both directions at once,
 * with the engine's own batch codec (`@podsim/sim/batch`) and the engine's way of waiting
 * (receiveMessageOnPort, a doorbell word in a SharedArrayBuffer, a short spin, then
 * Atomics.wait). No windows, no actors: the ceiling the engine is compared against.
 */
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import type { WireEnvelope } from '@podsim/api/protocol/control';
import { decodeBatch, encodeBatch } from '@podsim/sim/batch';

export interface RawJob {
  readonly side: 0 | 1;
  readonly port: MessagePort;
  /** Int32 words: doorbell[2], sleeping[2], consumed[2]. */
  readonly sab: SharedArrayBuffer;
  readonly messages: number;
  readonly batch: number;
  readonly inFlight: number;
  readonly spin: number;
}

/** A ~10-field body, the size of most podsim messages that are not whole objects. */
function body(n: number) {
  return { type: 'ApiResult', code: 200, namespace: 'default', name: `pod-${n}`, resourceVersion: n, uid: 'c7a1f1d2', phase: 'Running', nodeName: 'node-0001', ready: true, restarts: 0 };
}

const job = workerData as RawJob;
const w = new Int32Array(job.sab);
const me = job.side;
const other = 1 - me;
const DOOR = 0;
const SLEEP = 2;
const CONSUMED = 4;

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
        envs.push({ f: me, t: other, s: sent, a: sent + 100, q: sent, b: body(sent), r: sent, fi: 1, p: undefined, i: undefined });
      }
      const bytes = encodeBatch(envs);
      job.port.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
      batches++;
      ring(other);
      progressed = true;
    }
    for (;;) {
      const m = receiveMessageOnPort(job.port);
      if (!m) break;
      const envs = decodeBatch(m.message as Uint8Array);
      for (const e of envs) check += (e.b as unknown as { resourceVersion: number }).resourceVersion & 1;
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
