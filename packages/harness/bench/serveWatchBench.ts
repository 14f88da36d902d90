/**
 * `podsim serve` with watchers that stop reading (issue #20 item 6): 5 idle watch streams on
 * 127.0.0.1 while 20 writers create and delete pods (8 KiB annotation each) for 15 s, with the
 * default watch bound (1 MiB) and without one, side by side. Prints one JSON line per run: pods
 * created, the streams closed as slow, the most bytes one stream had queued, and the peak growth
 * of heap + external memory of the process (the server and the simulation run in it).
 * Run: `pnpm build && node packages/harness/dist/bench/serveWatchBench.js [seconds]`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../src/serve/server.js';
import { servePlan } from '../src/serve/servePlan.js';

const seconds = Number(process.argv[2] ?? 15);

async function run(bound: 'default' | 'unbounded'): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'podsim-watch-bench-'));
  const scenario = join(dir, 'cluster.yaml');
  writeFileSync(scenario, 'kind: Scenario\ncluster:\n  nodes: [{name: node-1}]\nsteps:\n  - sleep: 1s\n');
  const server = await startServer(servePlan({ scenario, epochUnixSeconds: Math.floor(Date.now() / 1000) }), {
    speed: 1,
    ...(bound === 'unbounded' ? { maxWatchBufferBytes: Infinity } : {}),
  });
  const pods = `${server.url}/api/v1/namespaces/default/pods`;
  const idle: Socket[] = Array.from({ length: 5 }, () => {
    const s = connect(server.port, '127.0.0.1');
    s.write('GET /api/v1/namespaces/default/pods?watch=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    s.pause();
    s.on('error', () => {});
    return s;
  });
  const pad = 'x'.repeat(8 * 1024);
  const mem = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.external + m.arrayBuffers;
  };
  const base = mem();
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, mem() - base)), 100);
  const stop = Date.now() + seconds * 1000;
  let seq = 0;
  let created = 0;
  const writer = async () => {
    while (Date.now() < stop) {
      const name = `w-${seq++}`;
      const body = { apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations: { pad } }, spec: { nodeSelector: { none: 'x' }, containers: [{ name: 'c', image: 'i' }] } };
      const r = await fetch(pods, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (r.status === 201) created++;
      await r.arrayBuffer();
      if (seq % 2 === 0) await (await fetch(`${pods}/${name}`, { method: 'DELETE' })).arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 20 }, writer));
  clearInterval(sampler);
  const out = {
    name: 'serve-idle-watchers',
    bound: bound === 'default' ? '1MiB' : 'none',
    seconds,
    writers: 20,
    idleWatchers: 5,
    podsCreated: created,
    slowClosed: server.watchStats.slowClosed,
    maxQueuedMB: +(server.watchStats.maxQueuedBytes / 1e6).toFixed(2),
    peakHeapExternalMB: +(peak / 1e6).toFixed(1),
  };
  for (const s of idle) s.destroy();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
  return out;
}

for (const b of ['default', 'unbounded'] as const) console.log(JSON.stringify(await run(b)));
