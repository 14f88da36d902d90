/**
 * Issue #20 item 6: watches whose client stops reading are closed once their unsent buffer
 * passes the bound (as the apiserver's watch cache drops a slow watcher), instead of buffering
 * without limit. A bounded load (until the idle watchers are closed, ≤ 20 s; 20 writers + 6
 * watchers, 127.0.0.1 only) creates and
 * deletes pods while 5 watchers idle: their streams are closed with at most the bound queued,
 * the server keeps answering, and a client that re-watches from its last resourceVersion (or
 * re-lists after 410, as client-go's reflector) ends with exactly the server's pods.
 */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../src/serve/server.js';
import { servePlan } from '../src/serve/servePlan.js';

const BOUND = 256 * 1024;
/** The load runs until the 5 idle watchers are closed, at most this long (wall ms). */
const LOAD_MS = 20_000;
const WRITERS = 20;

interface PodJson {
  metadata: { name: string; resourceVersion: string };
}

/** A watch over a raw socket that does not read until `resume()`: its bytes pile up server-side. */
function idleWatch(port: number, path: string): { socket: Socket; closed: Promise<void>; text: () => string; resume: () => void } {
  const socket = connect(port, '127.0.0.1');
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n`);
  socket.pause();
  const chunks: Buffer[] = [];
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => {});
  return {
    socket,
    closed,
    text: () => Buffer.concat(chunks).toString('utf8'),
    resume: () => {
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.resume();
    },
  };
}

/** The complete watch-event lines of a chunked HTTP response (a truncated last line is dropped). */
function watchLines(raw: string): Array<{ type: string; object: PodJson }> {
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  // De-chunk loosely: keep the lines that parse as events.
  const out: Array<{ type: string; object: PodJson }> = [];
  for (const line of body.split(/\r?\n/)) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as { type: string; object: PodJson });
    } catch {
      // A line cut by the close.
    }
  }
  return out;
}

test('idle watchers are closed at the buffer bound during a pod create/delete load; the server answers; a re-watching client loses nothing', async (t) => {
  t.timeout(60_000);
  const dir = mkdtempSync(join(tmpdir(), 'podsim-load-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const scenario = join(dir, 'cluster.yaml');
  writeFileSync(scenario, 'kind: Scenario\ncluster:\n  nodes: [{name: node-1}]\nsteps:\n  - sleep: 1s\n');
  const server = await startServer(servePlan({ scenario, epochUnixSeconds: Math.floor(Date.now() / 1000) }), { speed: 1, maxWatchBufferBytes: BOUND, log: (l) => { if (l.startsWith('closing')) t.log(l); } });
  t.teardown(() => server.close());
  const base = server.url;
  const pods = `${base}/api/v1/namespaces/default/pods`;

  const list = async () => (await (await fetch(pods)).json()) as { metadata: { resourceVersion: string }; items: PodJson[] };
  const start = await list();
  const idle = Array.from({ length: 5 }, () => idleWatch(server.port, `/api/v1/namespaces/default/pods?watch=1&resourceVersion=${start.metadata.resourceVersion}`));

  // Writers: pods nothing can schedule (a nodeSelector no node has), so a delete is immediate;
  // an 8 KiB annotation makes each watch event big enough to fill socket buffers quickly.
  const pad = 'x'.repeat(8 * 1024);
  const stop = Date.now() + LOAD_MS;
  let created = 0;
  let seq = 0;
  const loading = () => Date.now() < stop && server.watchStats.slowClosed < idle.length;
  const writer = async () => {
    while (loading()) {
      const name = `load-${seq++}`;
      const body = { apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations: { pad } }, spec: { nodeSelector: { none: 'x' }, containers: [{ name: 'c', image: 'i' }] } };
      const c = await fetch(pods, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (c.status === 201) created++;
      // Every other pod stays, so the end state is not empty.
      if (seq % 2 === 0) await (await fetch(`${pods}/${name}`, { method: 'DELETE' })).arrayBuffer();
    }
  };
  let slowestHealthMs = 0;
  const health = async () => {
    while (loading()) {
      const t0 = Date.now();
      const r = await fetch(`${base}/healthz`);
      await r.text();
      slowestHealthMs = Math.max(slowestHealthMs, Date.now() - t0);
      await new Promise((r2) => setTimeout(r2, 200));
    }
  };
  await Promise.all([...Array.from({ length: WRITERS }, writer), health()]);
  t.log(`created ${created} pods; slowest /healthz ${slowestHealthMs} ms; watch stats ${JSON.stringify(server.watchStats)}`);

  // Every idle watcher was closed by the server, with at most the bound plus one event queued.
  // (A paused client socket notices the close only once it reads again.)
  t.true(server.watchStats.slowClosed >= 5, `slowClosed ${server.watchStats.slowClosed}`);
  t.true(server.watchStats.maxQueuedBytes <= 16 * BOUND, `maxQueuedBytes ${server.watchStats.maxQueuedBytes}`);
  t.true(slowestHealthMs < 5_000, `slowest /healthz ${slowestHealthMs} ms`);

  // A client-go-like client: what the closed stream delivered, then a watch from its last
  // resourceVersion (or a re-list after 410 Expired) — its pods are the server's.
  const w = idle[0];
  w.resume();
  await Promise.race([w.closed, new Promise((r) => setTimeout(r, 10_000))]);
  t.true(w.socket.closed, 'the stream ended once the client read what was in flight');
  const state = new Map(start.items.map((p) => [p.metadata.name, p] as const));
  let rv = start.metadata.resourceVersion;
  const apply = (evs: Array<{ type: string; object: PodJson }>) => {
    for (const ev of evs) {
      if (ev.type === 'ERROR') return false;
      if (ev.type === 'DELETED') state.delete(ev.object.metadata.name);
      else state.set(ev.object.metadata.name, ev.object);
      rv = ev.object.metadata.resourceVersion;
    }
    return true;
  };
  apply(watchLines(w.text()));
  const final = await list();
  // Re-watch from the last resourceVersion read until a stream ends by its timeoutSeconds (a
  // stream cut again — the server is busy replaying to a client in the same process — is
  // re-watched the same way, as the reflector does), or re-list after 410 Expired.
  for (let attempt = 0; attempt < 10; attempt++) {
    const resumed = idleWatch(server.port, `/api/v1/namespaces/default/pods?watch=1&resourceVersion=${rv}&timeoutSeconds=2`);
    resumed.resume();
    await Promise.race([resumed.closed, new Promise((r) => setTimeout(r, 20_000))]);
    const raw = resumed.text();
    if (!apply(watchLines(raw))) {
      state.clear();
      for (const p of final.items) state.set(p.metadata.name, p);
      break;
    }
    // A stream that ended by its timeout ends with the last chunk (0 CRLF CRLF).
    if (raw.endsWith('0\r\n\r\n')) break;
  }
  t.deepEqual([...state.keys()].sort(), final.items.map((p) => p.metadata.name).sort());
  t.true(final.items.length > 0);
});
