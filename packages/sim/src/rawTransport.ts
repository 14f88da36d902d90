/**
 * The raw transport rate of this machine, the ceiling the threaded engine is compared against
 * (DESIGN.md §10: report ratios against the raw transport measured in the same run). Two threads
 * (`rawWorker.ts`) exchange small envelopes in batches over one MessagePort, both directions at
 * once, with the engine's batch codec and way of waiting. One warm-up, then the median of three
 * (the machine is noisy). Used by `pnpm bench:engine` (`bench/engineBench.ts`) and by
 * `podsim bench` (`packages/harness/src/bench/runBench.ts`). Timings are reported, never asserted.
 */
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { Message } from '@podsim/api';

/** A message body; each envelope gets a copy with its own `name` and `resourceVersion`. */
export interface RawBody extends Message {
  readonly name: string;
  readonly resourceVersion: number;
}

/** What one raw worker thread is given (plain data plus its port). */
export interface RawJob {
  readonly side: 0 | 1;
  readonly port: MessagePort;
  /** Int32 words: doorbell[2], sleeping[2], consumed[2]. */
  readonly sab: SharedArrayBuffer;
  readonly messages: number;
  readonly batch: number;
  readonly inFlight: number;
  readonly spin: number;
  readonly body: RawBody;
}

/** A ~10-field body, the size of most podsim messages that are not whole objects. */
export const RAW_BODY: RawBody = {
  type: 'ApiResult',
  code: 200,
  namespace: 'default',
  name: 'pod-0',
  resourceVersion: 0,
  uid: 'c7a1f1d2',
  phase: 'Running',
  nodeName: 'node-0001',
  ready: true,
  restarts: 0,
} as RawBody;

/** One run, both directions at once between two threads; messages per second (both ways). */
async function rawOnce(messagesPerSide: number, batch: number, body: RawBody): Promise<number> {
  const ch = new MessageChannel();
  const url = new URL('./rawWorker.js', import.meta.url);
  const sab = new SharedArrayBuffer(6 * 4);
  const workers = [ch.port1, ch.port2].map(
    (port, side) =>
      new Worker(url, {
        workerData: { side: side as 0 | 1, port, sab, messages: messagesPerSide, batch, inFlight: 16, spin: 3_000, body } satisfies RawJob,
        transferList: [port],
      }),
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

/**
 * Messages per second (both directions) for batches of `batch` envelopes (rounded, at least 1),
 * `messagesPerSide` sent each way, bodies shaped like `body`.
 */
export async function measureRawTransport(batch: number, messagesPerSide = 200_000, body: RawBody = RAW_BODY): Promise<number> {
  const b = Math.max(1, Math.round(batch));
  await rawOnce(Math.ceil(messagesPerSide / 4), b, body);
  const runs = [await rawOnce(messagesPerSide, b, body), await rawOnce(messagesPerSide, b, body), await rawOnce(messagesPerSide, b, body)];
  return runs.sort((x, y) => x - y)[1];
}
