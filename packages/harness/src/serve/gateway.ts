/**
 * The `gateway` of `podsim serve`: a mailbox actor (packages/sim Simulation `mailboxes`) through
 * which HTTP requests enter the simulation, and the pacing loop that makes virtual time follow
 * the wall clock × speed. The loop alternates: send what HTTP handlers queued (mailbox sends are
 * only allowed while the run is paused; they enter at the paused virtual time), run the engine up
 * to the paced target, then route what reached the mailbox — replies resolve their request's
 * Promise, `ApiWatchEvent`s go to the watch streams whose ids they list. Every request has a
 * wall-clock bound (504), so nothing waits forever; an engine failure fails every waiter (503).
 */
import {
  APISERVER_ACTOR,
  US_PER_SECOND,
  type ApiRequest,
  type ApiResult,
  type ApiUnwatch,
  type ApiWatch,
  type ApiWatchEvent,
  type KubeObject,
  type Status,
  type Table,
  type WatchEvent,
} from '@podsim/api';
import type { Placement } from '@podsim/api/protocol/control';
import { Simulation, SimulationError } from '@podsim/sim';
import { resolveModule } from '../engine.js';
import { serviceUnavailable, timeoutStatus } from './http.js';
import type { ServePlan } from './servePlan.js';

/** The gateway's actor id (docs/conventions.md). */
export const GATEWAY_ACTOR = 'gateway';

/** Receives the events of one watch. */
export interface WatchSink {
  event(ev: WatchEvent<KubeObject | Table | Status>): void;
  /** The watch ended on the server side (an ERROR event such as 410 Expired, or shutdown). */
  end(): void;
}

export interface GatewayOptions {
  /** Virtual seconds per wall second (default 1). */
  readonly speed?: number;
  /** Run the engine unpaced to this virtual µs before pacing starts (default 0). */
  readonly warpUs?: number;
  /** Wall ms between engine segments while nothing is in flight (default 10). */
  readonly tickMs?: number;
  /** Wall ms after which an unanswered request gets a 504 Status (default 30 000). */
  readonly requestTimeoutMs?: number;
  /** Called once if the engine fails (an actor threw, a host died); the gateway is then closed. */
  readonly onFailure?: (message: string) => void;
}

interface WatchEntry {
  readonly sink: WatchSink;
  /** Events that arrived before the HTTP layer opened the stream. */
  buffer: WatchEvent<KubeObject | Table | Status>[] | undefined;
}

/** Segments never cover more than this much wall time's worth of virtual time (request latency bound). */
const MAX_SEGMENT_WALL_MS = 100;

export class Gateway {
  private readonly ops: Array<() => void> = [];
  private readonly waiters = new Set<(r: ApiResult) => void>();
  private readonly watches = new Map<string, WatchEntry>();
  private nextWatch = 0;
  private stray = 0;
  private inflight = 0;
  private wake: (() => void) | undefined;
  private closing = false;
  private failed: string | undefined;
  private loopDone: Promise<void> = Promise.resolve();
  private baseWallMs = 0;
  private baseUs = 0;
  private readonly speed: number;
  private readonly tickMs: number;
  private readonly requestTimeoutMs: number;

  private constructor(
    private readonly sim: Simulation,
    private readonly opts: GatewayOptions,
  ) {
    this.speed = opts.speed ?? 1;
    this.tickMs = opts.tickMs ?? 10;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
  }

  /**
   * Starts the simulation of `plan` with the gateway mailbox, warps to `warpUs`, creates the
   * plan's manifests (as `kubectl create` would, in order; failures are returned as messages),
   * and starts pacing. Rejects with a SimulationError if the engine cannot start.
   */
  static async start(plan: ServePlan, opts: GatewayOptions = {}): Promise<{ gateway: Gateway; warnings: string[] }> {
    const sim = await Simulation.create({
      seed: plan.seed,
      actors: plan.actors.map((a) => ({ id: a.id, module: resolveModule(a.module), config: a.config })),
      placement: plan.placement as Placement,
      latency: plan.latency,
      faults: plan.faults,
      // A long-running server must not accumulate trace records; digests are still kept.
      traceFilter: 'none',
      epochUnixSeconds: plan.epochUnixSeconds,
      mailboxes: [GATEWAY_ACTOR],
    });
    const gw = new Gateway(sim, opts);
    const warnings: string[] = [];
    try {
      // Objects of the scenario enter at virtual time 0, before anything else happens.
      const pending = plan.manifests.map(async (m) => {
        const r = await gw.request({ type: 'ApiCreate', resource: m.resource, ...(m.namespace ? { namespace: m.namespace } : {}), object: m.object });
        if (r.code >= 300) warnings.push(`${m.object.kind}/${m.object.metadata.name ?? m.object.metadata.generateName}: ${(r.body as Status).message ?? r.code}`);
      });
      // Unpaced: the manifests are sent at t=0 (their replies come back within a millisecond of
      // virtual time), then time jumps to the warp target; pacing starts from there.
      gw.flushOps();
      await sim.runUntil(Math.max(opts.warpUs ?? 0, 1_000));
      gw.routeMailbox();
      await Promise.all(pending);
      gw.baseUs = sim.now;
      gw.baseWallMs = performance.now();
      gw.loopDone = gw.loop();
    } catch (err) {
      await sim.close();
      throw err;
    }
    return { gateway: gw, warnings };
  }

  /** Virtual µs at which the run is paused now. */
  get now(): number {
    return this.sim.now;
  }

  /** Engine failure message, once failed. */
  get failure(): string | undefined {
    return this.failed;
  }

  /**
   * Watch events that named only watches the gateway no longer has (a stream the client closed,
   * until its ApiUnwatch reaches the apiserver). Stays flat once every unwatch has arrived.
   */
  get strayEvents(): number {
    return this.stray;
  }

  /** Open watch streams. */
  get watchCount(): number {
    return this.watches.size;
  }

  /** The paced virtual time for the current wall clock. */
  private targetUs(): number {
    return this.baseUs + Math.floor((performance.now() - this.baseWallMs) * 1000 * this.speed);
  }

  /**
   * Sends `req` to the apiserver from the gateway at the current virtual time and resolves with
   * its ApiResult — or with a 504 Status after `requestTimeoutMs` of wall time, or a 503 when the
   * simulation is closed or failed. Never rejects.
   */
  request(req: Exclude<ApiRequest, ApiWatch | { type: 'ApiUnwatch' }> | ApiWatch): Promise<ApiResult> {
    if (this.closing || this.failed) return Promise.resolve(this.unavailable());
    return new Promise((resolve) => {
      let done = false;
      const finish = (r: ApiResult) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.waiters.delete(finish);
        resolve(r);
      };
      const timer = setTimeout(
        () => finish({ type: 'ApiResult', code: 504, body: timeoutStatus(`the simulation did not answer ${req.type} within ${this.requestTimeoutMs / 1000}s`) }),
        this.requestTimeoutMs,
      );
      this.waiters.add(finish);
      this.enqueue(() => {
        this.inflight++;
        // The virtual bound frees the engine's pending entry if the apiserver never answers.
        const timeoutUs = Math.max(60 * US_PER_SECOND, Math.ceil((this.requestTimeoutMs / 1000) * this.speed * US_PER_SECOND));
        void this.sim.request<ApiResult>(GATEWAY_ACTOR, APISERVER_ACTOR, req, timeoutUs).then(({ body }) => {
          this.inflight--;
          if (body.type === 'RequestTimedOut') finish({ type: 'ApiResult', code: 504, body: timeoutStatus(`the apiserver did not answer ${req.type}`) });
          else finish(body);
        });
      });
    });
  }

  /**
   * Starts a watch. Events that arrive before {@link openWatch} are buffered, so the HTTP layer
   * can write its headers first. Resolves with the apiserver's reply and the watch id; on a non-200
   * reply the watch is already forgotten.
   */
  async watch(req: Omit<ApiWatch, 'watchId'>, sink: WatchSink): Promise<{ result: ApiResult; watchId: string }> {
    const watchId = `http-${++this.nextWatch}`;
    this.watches.set(watchId, { sink, buffer: [] });
    const result = await this.request({ ...req, watchId } as ApiWatch);
    if (result.code !== 200) {
      const had = this.watches.delete(watchId);
      // A 504 from the wall bound may leave a registered watch behind in the apiserver.
      if (had && result.code === 504) this.enqueue(() => this.sim.send(GATEWAY_ACTOR, APISERVER_ACTOR, { type: 'ApiUnwatch', watchId } as ApiUnwatch));
    }
    return { result, watchId };
  }

  /** Delivers the buffered events and streams the rest directly. */
  openWatch(watchId: string): void {
    const w = this.watches.get(watchId);
    if (!w || !w.buffer) return;
    const buffered = w.buffer;
    w.buffer = undefined;
    for (const ev of buffered) this.deliver(watchId, w, ev);
  }

  /** Stops a watch (the client went away, or its timeoutSeconds passed): ApiUnwatch to the apiserver. */
  unwatch(watchId: string): void {
    if (!this.watches.delete(watchId)) return;
    if (this.closing || this.failed) return;
    this.enqueue(() => this.sim.send(GATEWAY_ACTOR, APISERVER_ACTOR, { type: 'ApiUnwatch', watchId } as ApiUnwatch));
  }

  /** Stops pacing, ends every watch, answers every waiter with 503 and closes the engine. */
  async close(): Promise<void> {
    if (this.closing) return this.loopDone;
    this.closing = true;
    this.wake?.();
    await this.loopDone;
    this.shutdownClients('podsim serve is shutting down');
    await this.sim.close();
  }

  // ---- internals ---------------------------------------------------------------------------

  private unavailable(): ApiResult {
    return { type: 'ApiResult', code: 503, body: serviceUnavailable(this.failed ? `the simulation failed: ${this.failed}` : 'podsim serve is shutting down') };
  }

  private enqueue(op: () => void): void {
    this.ops.push(op);
    this.wake?.();
  }

  private flushOps(): void {
    for (const op of this.ops.splice(0)) op();
  }

  private shutdownClients(_why: string): void {
    for (const [, w] of this.watches) w.sink.end();
    this.watches.clear();
    for (const finish of [...this.waiters]) finish(this.unavailable());
  }

  private deliver(watchId: string, w: WatchEntry, ev: WatchEvent<KubeObject | Table | Status>): void {
    if (w.buffer) {
      w.buffer.push(ev);
      return;
    }
    w.sink.event(ev);
    if (ev.type === 'ERROR') {
      // The apiserver ended this watch (e.g. 410 Expired): the client relists.
      this.watches.delete(watchId);
      w.sink.end();
    }
  }

  private routeMailbox(): void {
    for (const env of this.sim.takeMailbox(GATEWAY_ACTOR)) {
      const body = env.body as ApiWatchEvent;
      if (body.type !== 'ApiWatchEvent') continue;
      let delivered = false;
      for (const id of body.watchIds) {
        const w = this.watches.get(id);
        if (!w) continue;
        delivered = true;
        this.deliver(id, w, body.event);
      }
      if (!delivered) this.stray++;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }

  private async loop(): Promise<void> {
    const maxStepUs = MAX_SEGMENT_WALL_MS * 1000 * this.speed;
    try {
      while (!this.closing) {
        this.flushOps();
        const target = Math.min(this.targetUs(), this.sim.now + maxStepUs);
        if (target > this.sim.now) {
          const r = await this.sim.runUntil(target);
          if (r.reason === 'stopped') throw new Error(`an actor stopped the run: ${r.stopReason ?? 'no reason given'}`);
        }
        this.routeMailbox();
        if (this.closing) break;
        if (this.ops.length > 0) continue;
        // A reply is due within a few hundred virtual µs: come back soon.
        await this.sleep(this.inflight > 0 ? 1 : this.tickMs);
      }
    } catch (err) {
      this.failed = err instanceof SimulationError ? `${err.failure.kind}${err.failure.actor ? ` in ${err.failure.actor}` : ''}: ${err.failure.message}` : String(err);
      this.shutdownClients(this.failed);
      this.opts.onFailure?.(this.failed);
    }
  }
}
