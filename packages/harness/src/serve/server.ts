/**
 * `podsim serve`'s HTTP server (node:http, plain HTTP/1.1 on 127.0.0.1 by default): reads each
 * request with a body cap (413), lets http.ts decide what it is, and answers — fixed documents
 * directly, API requests through the gateway mailbox, watches as newline-delimited JSON streams
 * kept open until the client goes away (`res.on('close')` → ApiUnwatch), the apiserver ends them
 * (ERROR event), `timeoutSeconds` passes, or the server stops. Every failure is a metav1.Status;
 * no request can take the server down or hang it (the gateway bounds each request in wall time).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stringify as stringifyYaml } from 'yaml';
import type { Status } from '@podsim/api';
import { Gateway, type GatewayOptions, type WatchSink } from './gateway.js';
import { DEFAULT_MAX_BODY_BYTES, badRequest, entityTooLarge, internalError, route, type OutputFormat } from './http.js';
import type { ServePlan } from './servePlan.js';

export interface ServeOptions extends GatewayOptions {
  /** Default 127.0.0.1 (loopback only). */
  readonly host?: string;
  /** Default 0 (any free port). */
  readonly port?: number;
  /** Request body cap in bytes (default 3 MiB, as kube-apiserver). */
  readonly maxBodyBytes?: number;
  /** Open watch streams allowed at once (default 1000); more get 429. */
  readonly maxWatches?: number;
  /** One line per request (`GET /api/v1/... 200 3ms`), e.g. to stderr. */
  readonly log?: (line: string) => void;
  /**
   * Bytes a watch stream may have queued unsent before the server closes it if its client has
   * stopped reading (no bytes taken for {@link WATCH_STALL_MS}), as the apiserver's watch cache
   * terminates a watcher whose buffer stays full past its budget (`cacheWatcher.add` →
   * `forgetWatcher`). A stream over 16× this is closed even while it reads. Default 1 MiB. The
   * client re-watches from the last resourceVersion it read (client-go's reflector), or
   * re-lists after 410 Expired.
   */
  readonly maxWatchBufferBytes?: number;
}

/** What the server counts of its watch streams. */
export interface WatchStats {
  /** Watch streams closed because their client stopped reading. */
  slowClosed: number;
  /** The most bytes any watch stream had queued unsent (at most the bound plus one event). */
  maxQueuedBytes: number;
}

export interface RunningServer {
  /** `http://host:port` */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly gateway: Gateway;
  /** Manifests the plan could not create (one message each). */
  readonly warnings: readonly string[];
  readonly watchStats: Readonly<WatchStats>;
  /** Ends every watch stream and connection, stops the simulation. Idempotent. */
  close(): Promise<void>;
}

/** Default {@link ServeOptions.maxWatchBufferBytes}. */
export const DEFAULT_MAX_WATCH_BUFFER_BYTES = 1024 * 1024;
/** Wall ms without progress (the socket took no bytes) after which a stream over its bound is closed. */
export const WATCH_STALL_MS = 250;
/** A stream over this many times its bound is closed even while its client reads (not during its initial replay). */
const WATCH_HARD_FACTOR = 16;

function tooMany(): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too many open watches; close some and retry', reason: 'TooManyRequests', details: { retryAfterSeconds: 1 }, code: 429 };
}

function write(res: ServerResponse, head: boolean, status: number, body: unknown, format: OutputFormat = 'json', contentType?: string): void {
  if (res.headersSent || res.writableEnded) return;
  if (body instanceof Uint8Array) {
    // A binary answer (the protobuf `/openapi/v2`), sent as it is.
    res.writeHead(status, { 'Content-Type': contentType ?? 'application/octet-stream', 'Content-Length': body.byteLength, 'Cache-Control': 'no-cache, private' });
    res.end(head ? undefined : body);
    return;
  }
  let text: string;
  if (typeof body === 'string' && contentType?.startsWith('text/')) text = body;
  else if (format === 'yaml') text = stringifyYaml(body);
  else text = JSON.stringify(body);
  const ct = contentType ?? (format === 'yaml' ? 'application/yaml' : 'application/json');
  res.writeHead(status, { 'Content-Type': ct, 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
  res.end(head ? undefined : text);
}

/** Reads the body, or reports that it passed `max` bytes (the rest is then discarded). */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | 'tooLarge'> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > max) {
      resolve('tooLarge');
      return;
    }
    const chunks: Buffer[] = [];
    let n = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      if (over) return;
      n += c.length;
      if (n > max) {
        over = true;
        chunks.length = 0;
        resolve('tooLarge');
      } else chunks.push(c);
    });
    req.on('end', () => {
      if (!over) resolve(Buffer.concat(chunks));
    });
    req.on('error', () => {
      if (!over) resolve(Buffer.alloc(0));
    });
  });
}

/**
 * Starts the simulation of `plan` and serves it. Resolves once the port listens and the plan's
 * manifests exist; rejects if the engine cannot start or the port cannot be bound.
 */
export async function startServer(plan: ServePlan, opts: ServeOptions = {}): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxWatches = opts.maxWatches ?? 1000;
  const maxWatchBuffer = opts.maxWatchBufferBytes ?? DEFAULT_MAX_WATCH_BUFFER_BYTES;
  const watchStats: WatchStats = { slowClosed: 0, maxQueuedBytes: 0 };
  const { gateway, warnings } = await Gateway.start(plan, opts);
  const streams = new Set<ServerResponse>();
  let address = `${host}:0`;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    const method = (req.method ?? 'GET').toUpperCase();
    const head = method === 'HEAD';
    res.on('finish', () => opts.log?.(`${method} ${req.url} ${res.statusCode} ${(performance.now() - started).toFixed(0)}ms`));
    const body = await readBody(req, maxBody);
    if (body === 'tooLarge') {
      res.setHeader('Connection', 'close');
      write(res, head, 413, entityTooLarge(maxBody));
      // Discard what the client still sends, for a bounded time, then drop the connection.
      req.resume();
      setTimeout(() => req.destroy(), 5_000).unref();
      return;
    }
    const outcome = route({ method, url: req.url ?? '/', headers: req.headers, body }, address);
    switch (outcome.kind) {
      case 'reply':
        write(res, head, outcome.status, outcome.body, outcome.format, outcome.contentType);
        return;
      case 'api': {
        const r = await gateway.request(outcome.request);
        // RFC 7234 warn-code 299, as the apiserver's `warning.AddWarning` writes them.
        if (outcome.warnings) res.setHeader('Warning', outcome.warnings.map((w) => `299 - ${JSON.stringify(w)}`));
        write(res, head, r.code, r.body, outcome.format);
        return;
      }
      case 'watch': {
        if (gateway.watchCount >= maxWatches) {
          write(res, head, 429, tooMany());
          return;
        }
        // While over the bound: `flushed` is what the kernel had taken at the last tick, `progressAt` when it last grew.
        const stream: {
          watchId?: string;
          gone: boolean;
          timer?: NodeJS.Timeout;
          stallTimer?: NodeJS.Timeout;
          flushed: number;
          progressAt: number;
          stalledTicks: number;
          replaying: boolean;
        } = { gone: false, flushed: 0, progressAt: 0, stalledTicks: 0, replaying: false };
        // bytesWritten counts what is still queued too; what the kernel took is the difference.
        const flushedBytes = () => (res.socket ? res.socket.bytesWritten - res.socket.writableLength : 0);
        const stopStallTimer = () => {
          clearInterval(stream.stallTimer);
          stream.stallTimer = undefined;
        };
        const closeSlow = (queued: number) => {
          stopStallTimer();
          // Dropping the connection frees what is queued; an orderly end would wait behind it.
          watchStats.slowClosed++;
          opts.log?.(`closing a watch whose client stopped reading (${queued} bytes queued): ${req.url}`);
          res.destroy();
        };
        const checkStall = () => {
          if (res.destroyed || res.writableEnded || res.writableLength <= maxWatchBuffer) {
            stopStallTimer();
            return;
          }
          const f = flushedBytes();
          if (f !== stream.flushed) {
            stream.flushed = f;
            stream.progressAt = performance.now();
            stream.stalledTicks = 0;
          } else if (++stream.stalledTicks >= 5 && performance.now() - stream.progressAt >= WATCH_STALL_MS) closeSlow(res.writableLength);
        };
        res.on('close', () => {
          // The client went away (or the stream ended): free the watch in the apiserver.
          stream.gone = true;
          streams.delete(res);
          clearTimeout(stream.timer);
          clearInterval(stream.stallTimer);
          if (stream.watchId !== undefined) gateway.unwatch(stream.watchId);
        });
        const sink: WatchSink = {
          event(ev) {
            if (res.writableEnded || res.destroyed) return;
            res.write(`${JSON.stringify(ev)}\n`);
            const queued = res.writableLength;
            if (queued > watchStats.maxQueuedBytes) watchStats.maxQueuedBytes = queued;
            if (queued <= maxWatchBuffer) return;
            // The replay of a watch from an old resourceVersion comes in one burst; it is bounded by the history.
            if (queued > maxWatchBuffer * WATCH_HARD_FACTOR && !stream.replaying) closeSlow(queued);
            else if (!stream.stallTimer) {
              // Over the bound: watch for a while whether the client still takes bytes. Checked on
              // timer ticks, so a burst written in one turn of the event loop is not a stall.
              stream.flushed = flushedBytes();
              stream.progressAt = performance.now();
              stream.stalledTicks = 0;
              stream.stallTimer = setInterval(checkStall, WATCH_STALL_MS / 5);
            }
          },
          end() {
            if (!res.writableEnded) res.end();
          },
        };
        const { result, watchId: id } = await gateway.watch(outcome.request, sink);
        if (result.code !== 200) {
          write(res, head, result.code, result.body);
          return;
        }
        stream.watchId = id;
        if (stream.gone) {
          gateway.unwatch(id);
          return;
        }
        streams.add(res);
        res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
        res.flushHeaders();
        stream.replaying = true;
        gateway.openWatch(id);
        stream.replaying = false;
        if (outcome.timeoutSeconds !== undefined) {
          stream.timer = setTimeout(() => {
            gateway.unwatch(id);
            if (!res.writableEnded) res.end();
          }, outcome.timeoutSeconds * 1000);
        }
        return;
      }
    }
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A bug in the facade answers 500 and leaves the server serving.
      opts.log?.(`internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      if (!res.headersSent) write(res, false, 500, internalError(err instanceof Error ? err.message : String(err)));
      else if (!res.writableEnded) res.end();
    });
  });
  // Bounds on the request side: headers within 30 s, the whole request within 60 s.
  server.headersTimeout = 30_000;
  server.requestTimeout = 60_000;
  // A request node:http cannot even parse (bad request line, oversized headers): a 400 Status.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return;
    const body = JSON.stringify(badRequest(`malformed HTTP request: ${err.code ?? err.message}`));
    socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await gateway.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  address = `${host}:${port}`;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}`,
    host,
    port,
    gateway,
    warnings,
    watchStats,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const s of streams) if (!s.writableEnded) s.end();
        server.closeIdleConnections();
        await gateway.close();
        server.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
  };
}
