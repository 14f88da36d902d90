/**
 * The raw transport rate of this machine, measured inside a `podsim bench` run (DESIGN.md §10:
 * report ratios against the raw transport measured in the same run): two threads exchange
 * ~10-field envelopes in batches of the engine's mean batch size over one MessagePort, both
 * directions at once (`rawWorker.ts`). One warm-up, then the median of three.
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import type { RawJob } from './rawWorker.js';

async function rawOnce(messagesPerSide: number, batch: number): Promise<number> {
  const ch = new MessageChannel();
  const url = new URL('./rawWorker.js', import.meta.url);
  const sab = new SharedArrayBuffer(6 * 4);
  const workers = [ch.port1, ch.port2].map(
    (port, side) =>
      new Worker(url, {
        workerData: { side: side as 0 | 1, port, sab, messages: messagesPerSide, batch, inFlight: 16, spin: 3_000 } satisfies RawJob,
        transferList: [port],
      }),
  );
  try {
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

/** Messages per second (both directions) for batches of `batch` envelopes. */
export async function measureRawTransport(batch: number, messagesPerSide = 200_000): Promise<number> {
  const b = Math.max(1, Math.round(batch));
  await rawOnce(Math.ceil(messagesPerSide / 4), b);
  const runs = [await rawOnce(messagesPerSide, b), await rawOnce(messagesPerSide, b), await rawOnce(messagesPerSide, b)];
  return runs.sort((x, y) => x - y)[1];
}
