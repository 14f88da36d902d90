/**
 * The threaded simulation, as the harness drives it from the main thread (DESIGN.md §4–§5, §9).
 * Actors run in host worker threads chosen by the placement; the hosts advance in conservative
 * windows among themselves (see hostShell.ts) while the main thread only starts run segments,
 * injects faults and mailbox messages while paused, and collects traces, digests and metrics
 * over the comlink control plane. Any failure — an actor that throws, a host thread that dies or
 * stops answering — ends the run with a {@link SimulationError}; no call waits unboundedly.
 *
 * Mailbox actors live on the main thread in a HostCore of their own: they take no part in the
 * windows; what is sent to them is handed over at the next pause, and what they send enters the
 * run at the paused time (delivery ≥ now + link latency, so no host can have passed it).
 */
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import * as Comlink from 'comlink';
import {
  DEFAULT_EPOCH_UNIX_SECONDS,
  NEVER,
  type Actor,
  type ActorContext,
  type ActorId,
  type ActorSpec,
  type Envelope,
  type Fault,
  type Message,
  type RequestTimedOut,
  type RunFailure,
  type TraceRecord,
  type VirtualTime,
} from '@podsim/api';
import type {
  HostControl,
  HostHeapStatistics,
  HostMetrics,
  LatencyConfig,
  Placement,
  SegmentResult,
  TraceChunk,
  TraceFilter,
  WireEnvelope,
} from '@podsim/api/protocol/control';
import { HostCore, SimulationError } from './hostCore.js';
import { DEFAULT_LATENCY, sortTraces } from './localSimulation.js';
import { combineDigests } from './digest.js';
import { InvalidConfigError, assignHosts, lookaheadMatrix, windowMatrix } from './placement.js';
import { SyncBoard } from './syncBoard.js';
import { nodeEndpoint } from './comlinkNode.js';
import { parseChaos, type ChaosConfig } from './chaos.js';
import type { ShellInit } from './hostShell.js';
import { StallWatch } from './liveness.js';
import { BatchRings } from './batchRing.js';

export interface SimulationOptions {
  readonly seed: number;
  /** The actors run in host threads. Modules are absolute file URLs (see ActorSpec). */
  readonly actors: readonly ActorSpec[];
  /** Default `single`. */
  readonly placement?: Placement;
  /** Default: 100 µs minimum, 50 µs jitter on every link. */
  readonly latency?: LatencyConfig;
  readonly faults?: readonly Fault[];
  readonly traceFilter?: TraceFilter;
  readonly epochUnixSeconds?: number;
  /** A host that shows no sign of life for this long (wall ms) fails the run. Default 30 000. */
  readonly hostTimeoutMs?: number;
  /** Actor ids served by the main thread (`takeMailbox`, `send`, `request`). */
  readonly mailboxes?: readonly ActorId[];
  /** Trace records per chunk shipped from a host (default 4096). */
  readonly traceChunk?: number;
  /**
   * Park the host threads on a healthy close() and reuse them for the next Simulation of this
   * process (tests, seed sweeps): saves thread start-up and module loading (~50 ms of CPU per
   * thread). Actor modules must then keep no state at module level. Default false.
   */
  readonly reuseThreads?: boolean;
  /**
   * Most loads of its `go` word a waiting host spins before Atomics.wait (default 2000, a few
   * µs; the budget adapts between 64 and this). A host spins only while the hosts awake
   * (running or spinning) are no more than the cores, so spinners never take the core the next
   * host needs.
   */
  readonly spin?: number;
  /**
   * Test-only: seeded scheduling noise at every synchronisation point of the window protocol
   * (src/chaos.ts), to widen race windows in stress runs. Default: the PODSIM_SIM_CHAOS
   * environment variable (`seed:level`), else off. Never changes a correct run's result.
   */
  readonly chaos?: ChaosConfig;
}

/** Why a run segment ended. */
export interface RunResult {
  /**
   * `target`: reached the requested time; `stopped`: an actor's stopRun horizon; `quiescent`: no
   * events left; `interrupted`: {@link Simulation.interrupt} ended it early (`now` is the latest
   * event processed; hosts may have stopped at different times).
   */
  readonly reason: 'target' | 'stopped' | 'quiescent' | 'interrupted';
  readonly now: VirtualTime;
  readonly stopReason?: string;
}

export interface SimulationMetrics {
  readonly hostCount: number;
  /** Events processed on all hosts. */
  readonly events: number;
  /** Messages sent by all actors (mailboxes included). */
  readonly messages: number;
  /** Messages that crossed between host threads. */
  readonly remoteMessages: number;
  /** Window rounds. */
  readonly windows: number;
  /** `ctx.count` counters summed over hosts. */
  readonly counters: Record<string, number>;
  readonly hosts: HostMetrics[];
}

/** A host worker thread with its control proxy (pooled across simulations when reused). */
interface HostThread {
  readonly worker: Worker;
  readonly api: Comlink.Remote<HostControl>;
}

interface Host extends HostThread {
  readonly index: number;
  readonly port: MessagePort;
  readonly actors: ActorId[];
  /** This simulation's error/exit listeners (removed when the thread is parked). */
  readonly listeners: { error: (err: unknown) => void; exit: (code: number) => void };
}

/** Parked host threads (Simulation option reuseThreads), unref'd so they never keep a process alive. */
const parked: HostThread[] = [];
const PARKED_MAX = 16;
const WORKER_URL = new URL('./hostWorker.js', import.meta.url);

function takeThread(reuse: boolean): HostThread {
  const t = reuse ? parked.pop() : undefined;
  if (t) {
    t.worker.ref();
    return t;
  }
  const worker = new Worker(WORKER_URL);
  const thread = { worker, api: Comlink.wrap<HostControl>(nodeEndpoint(worker)) };
  // A thread that ends while parked must not be handed out again.
  worker.once('exit', () => {
    const i = parked.indexOf(thread);
    if (i >= 0) parked.splice(i, 1);
  });
  return thread;
}

/** Mailbox actor: records what it receives; its context is captured for sends from outside. */
function mailboxActor(box: Envelope[], ctxs: Map<ActorId, ActorContext>): Actor {
  return {
    start(ctx) {
      ctxs.set(ctx.self, ctx);
    },
    receive(_ctx, env) {
      box.push(env);
    },
  };
}

export class Simulation {
  private readonly hosts: Host[] = [];
  private readonly traceRecords: TraceRecord[] = [];
  private readonly boxes = new Map<ActorId, Envelope[]>();
  private readonly boxCtx = new Map<ActorId, ActorContext>();
  private readonly mailboxCore: HostCore;
  private readonly pendingInject: WireEnvelope[][];
  private failure: RunFailure | undefined;
  private running = false;
  private closed = false;
  private deathResolve!: (f: RunFailure) => void;
  private readonly death: Promise<RunFailure>;
  private _now: VirtualTime = 0;
  private _stopAt: VirtualTime = NEVER;
  private _stopReason: string | undefined;

  private constructor(
    readonly options: SimulationOptions,
    private readonly board: SyncBoard,
    readonly hostOf: readonly number[],
    readonly allActorIds: readonly ActorId[],
  ) {
    this.death = new Promise((resolve) => (this.deathResolve = resolve));
    const mailboxes = options.mailboxes ?? [];
    for (const id of mailboxes) this.boxes.set(id, []);
    this.pendingInject = Array.from({ length: board.hostCount }, () => []);
    this.mailboxCore = new HostCore({
      seed: options.seed,
      epochUnixSeconds: options.epochUnixSeconds ?? DEFAULT_EPOCH_UNIX_SECONDS,
      allActorIds,
      local: mailboxes.map((id) => ({ id, factory: () => mailboxActor(this.boxes.get(id)!, this.boxCtx) })),
      latency: options.latency ?? DEFAULT_LATENCY,
      faults: options.faults,
      traceFilter: options.traceFilter,
      routeRemote: (env) => this.pendingInject[hostOf[env.t]].push(env),
    });
    this.mailboxCore.start();
  }

  /**
   * Spawns the host threads, loads every actor module in them and starts nothing yet (time 0
   * runs with the first `runUntil`). Rejects with a {@link SimulationError}: `InvalidConfig`
   * for a bad placement, duplicate ids, a 0 µs link between hosts or a module that does not
   * load; `HostDied` / `HostUnresponsive` if a host fails while starting.
   */
  static async create(options: SimulationOptions): Promise<Simulation> {
    const seed = options.seed;
    const latency = options.latency ?? DEFAULT_LATENCY;
    const mailboxes = options.mailboxes ?? [];
    const hostTimeoutMs = options.hostTimeoutMs ?? 30_000;
    let chaos: ChaosConfig | undefined;
    let hostCount: number;
    let assign: Map<ActorId, number>;
    let lookahead: number[];
    const allActorIds = [...options.actors.map((a) => a.id), ...mailboxes].sort();
    try {
      for (let i = 1; i < allActorIds.length; i++) {
        if (allActorIds[i] === allActorIds[i - 1]) throw new InvalidConfigError(`duplicate actor id ${JSON.stringify(allActorIds[i])}`);
      }
      if (options.actors.length === 0) throw new InvalidConfigError('a simulation needs at least one actor');
      ({ hostCount, hostOf: assign } = assignHosts(
        options.actors.map((a) => a.id),
        options.placement ?? 'single',
      ));
      lookahead = windowMatrix(lookaheadMatrix(latency, assign, hostCount), hostCount);
      try {
        chaos = options.chaos ?? parseChaos(process.env.PODSIM_SIM_CHAOS);
      } catch (err) {
        throw new InvalidConfigError((err as Error).message);
      }
    } catch (err) {
      if (err instanceof InvalidConfigError) throw new SimulationError({ kind: 'InvalidConfig', message: err.message, seed });
      throw err;
    }
    const hostOf = allActorIds.map((id) => assign.get(id) ?? -1);
    const board = new SyncBoard(new SharedArrayBuffer(SyncBoard.bytes(hostCount)), hostCount);
    const rings = hostCount > 1 ? new SharedArrayBuffer(BatchRings.bytes(hostCount)) : undefined;
    const sim = new Simulation(options, board, hostOf, allActorIds);

    // One bidirectional channel per pair of hosts, one per host to the main thread.
    const peers: Array<Array<MessagePort | undefined>> = Array.from({ length: hostCount }, () => new Array(hostCount));
    for (let p = 0; p < hostCount; p++) {
      for (let d = p + 1; d < hostCount; d++) {
        const ch = new MessageChannel();
        peers[p][d] = ch.port1;
        peers[d][p] = ch.port2;
      }
    }
    const inits: Promise<void>[] = [];
    for (let h = 0; h < hostCount; h++) {
      const main = new MessageChannel();
      const thread = takeThread(options.reuseThreads ?? false);
      const actors = options.actors
        .filter((a) => assign.get(a.id) === h)
        .map((a) => a.id)
        .sort();
      const listeners = {
        error: (err: unknown) => sim.hostDied(host, `threw ${err instanceof Error ? err.message : String(err)}`),
        exit: (code: number) => sim.hostDied(host, `exited with code ${code}`),
      };
      const host: Host = { ...thread, index: h, port: main.port1, actors, listeners };
      sim.hosts.push(host);
      thread.worker.on('error', listeners.error);
      thread.worker.on('exit', listeners.exit);
      const local = options.actors.filter((a) => assign.get(a.id) === h);
      const init: ShellInit = {
        hostIndex: h,
        hostCount,
        seed,
        epochUnixSeconds: options.epochUnixSeconds ?? DEFAULT_EPOCH_UNIX_SECONDS,
        allActorIds,
        hostOf,
        local,
        latency,
        faults: options.faults ?? [],
        traceFilter: options.traceFilter ?? 'all',
        windowUs: lookahead,
        board: board.sab,
        peers: peers[h],
        toMain: main.port2,
        traceChunk: options.traceChunk ?? 4096,
        hostTimeoutMs,
        spin: options.spin,
        chaos,
        rings,
      };
      const ports = [...peers[h].filter((p): p is MessagePort => p !== undefined), main.port2];
      inits.push(host.api.init(Comlink.transfer(init, ports as unknown as Parameters<typeof Comlink.transfer>[1])));
    }
    try {
      // Starting threads and loading modules on a busy machine can take a while (seconds under
      // a load of 15 on 2 cores): init gets at least 60 s.
      await sim.guard(Promise.all(inits), 'init', Math.max(hostTimeoutMs, 60_000));
    } catch (err) {
      await sim.close();
      if (err instanceof SimulationError) throw err;
      throw new SimulationError({ kind: 'InvalidConfig', message: err instanceof Error ? err.message : String(err), seed });
    }
    return sim;
  }

  /** Virtual time at which the run is paused. */
  get now(): VirtualTime {
    return this._now;
  }

  /** The run's stop time once an actor called stopRun (NEVER until then). */
  get stopAt(): VirtualTime {
    return this._stopAt;
  }

  get hostCount(): number {
    return this.hosts.length;
  }

  /** Runs every event with time < `tUs` (or until the stop horizon / quiescence). */
  runUntil(tUs: VirtualTime): Promise<RunResult> {
    return this.segment(tUs);
  }

  /**
   * Ends the segment in progress (or the next one) early, within a few events of each host:
   * for a user's Ctrl-C. Safe to call at any time, from the thread that owns the simulation;
   * the run ends with reason `interrupted` and stays paused (traces, digest and metrics can be
   * read, then close it). An interrupted simulation is not meant to be run further.
   */
  interrupt(): void {
    if (!this.closed) this.board.interrupt();
  }

  /** Runs until an actor's stopRun horizon, quiescence, or `maxUs`. */
  run(opts: { maxUs?: VirtualTime } = {}): Promise<RunResult> {
    return this.segment(opts.maxUs ?? NEVER);
  }

  /** Every trace record collected so far, in (t, actor, seq) order. Works after a failure too. */
  async traces(): Promise<TraceRecord[]> {
    this.drainTracePorts();
    return sortTraces(this.traceRecords);
  }

  /**
   * Takes in the trace chunks the hosts have shipped so far, also while a segment runs (call it
   * on a timer during a long `run`): otherwise every chunk of the run waits in its port and is
   * decoded at the end — 8.5 s at once after a Ctrl-C four minutes into a 20k-pod run.
   */
  collectTraces(): void {
    if (!this.closed) this.drainHostPorts();
  }

  /**
   * Removes and returns the trace records collected so far, in (t, actor, seq) order: while
   * paused that is every record before the paused time, so successive calls give consecutive,
   * ordered slices of the trace (large runs feed them to their checkers and keep no raw trace).
   */
  takeTraces(): TraceRecord[] {
    this.drainTracePorts();
    return sortTraces(this.traceRecords.splice(0));
  }

  /** The run's traceDigest: combineDigests over every actor's running digest. */
  async digest(): Promise<string> {
    this.paused('digest');
    const per = await this.guard(Promise.all(this.hosts.map((h) => h.api.digests())), 'digests');
    return combineDigests([...per.flat(), ...this.mailboxCore.digests()]);
  }

  async metrics(): Promise<SimulationMetrics> {
    this.paused('metrics');
    const hosts = await this.guard(Promise.all(this.hosts.map((h) => h.api.metrics())), 'metrics');
    const counters: Record<string, number> = {};
    for (const m of hosts) for (const [k, v] of Object.entries(m.counters)) counters[k] = (counters[k] ?? 0) + v;
    for (const [k, v] of this.mailboxCore.counters) counters[k] = (counters[k] ?? 0) + v;
    return {
      hostCount: hosts.length,
      events: hosts.reduce((s, m) => s + m.events, 0),
      messages: hosts.reduce((s, m) => s + m.messages, 0) + this.mailboxCore.messagesSent,
      remoteMessages: hosts.reduce((s, m) => s + m.remoteMessages, 0),
      windows: hosts[0]?.windows ?? 0,
      counters,
      hosts,
    };
  }

  /**
   * The V8 heap of each host thread, read inside the thread while paused (no collection is
   * forced, so garbage not yet collected is included). Benchmarks: the actors' memory without
   * the main thread's (`process.resourceUsage().maxRSS` is the whole process).
   */
  async heapStatistics(): Promise<HostHeapStatistics[]> {
    this.paused('heapStatistics');
    return this.guard(Promise.all(this.hosts.map((h) => h.api.heapStatistics())), 'heapStatistics');
  }

  /**
   * Writes one V8 heap snapshot per host thread, `${prefix}-host<i>.heapsnapshot`, while paused
   * (memory diagnostics: `podsim bench storm --heap-snapshot-at`); returns the paths written.
   */
  async writeHeapSnapshots(prefix: string): Promise<string[]> {
    this.paused('writeHeapSnapshots');
    return this.guard(Promise.all(this.hosts.map((h, i) => h.api.writeHeapSnapshot(`${prefix}-host${i}.heapsnapshot`))), 'writeHeapSnapshots');
  }

  /** Adds a fault at the paused time (crash faults in the past take effect now). */
  async injectFault(f: Fault): Promise<void> {
    this.paused('injectFault');
    await this.guard(Promise.all(this.hosts.map((h) => h.api.addFault(f, this._now))), 'addFault');
    if (this._now > this.mailboxCore.now) this.mailboxCore.now = this._now;
    this.mailboxCore.addFault(f);
  }

  /** Removes and returns what mailbox `id` received up to the last pause. */
  takeMailbox(id: ActorId): Envelope[] {
    const box = this.boxes.get(id);
    if (!box) throw new Error(`${id} is not a mailbox of this simulation`);
    return box.splice(0);
  }

  /**
   * Sends `body` from mailbox `from` to `to` at the paused time; it is delivered at
   * now + link latency once the run continues. Only while paused.
   */
  send(from: ActorId, to: ActorId, body: Message): void {
    this.mailboxContext(from).send(to, body);
  }

  /** Replies from mailbox `from` to a request it took from its mailbox. Only while paused. */
  reply(from: ActorId, request: Envelope, body: Message): void {
    this.mailboxContext(from).reply(request, body);
  }

  /**
   * Sends a request from mailbox `from`; resolves with the reply envelope when it is handed
   * over at a later pause (the caller keeps the run going), or with `RequestTimedOut` after
   * `timeoutUs` of virtual time.
   */
  request<R extends Message = Message>(
    from: ActorId,
    to: ActorId,
    body: Message,
    timeoutUs?: number,
  ): Promise<{ body: R | RequestTimedOut; env?: Envelope }> {
    const ctx = this.mailboxContext(from);
    return new Promise((resolve) => {
      ctx.request<R>(to, body, (reply, env) => resolve({ body: reply, env }), timeoutUs === undefined ? undefined : { timeoutUs });
    });
  }

  /**
   * Stops every host thread: terminates it, or parks it for the next simulation (reuseThreads,
   * healthy runs only). Idempotent; traces stay readable.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    let stopped = false;
    if (!this.failure && !this.running && this.hosts.length > 0) {
      // A healthy run: let each host ship its last traces and close its ports (bounded).
      let timer: NodeJS.Timeout | undefined;
      stopped = await Promise.race([
        Promise.all(this.hosts.map((h) => h.api.stop())).then(
          () => true,
          () => false,
        ),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), 1_000);
        }),
      ]);
      clearTimeout(timer);
    }
    this.closed = true;
    this.board.abort();
    this.drainTracePorts();
    const park = stopped && (this.options.reuseThreads ?? false);
    await Promise.all(
      this.hosts.map(async (h) => {
        if (park && parked.length < PARKED_MAX) {
          h.worker.off('error', h.listeners.error);
          h.worker.off('exit', h.listeners.exit);
          h.worker.unref();
          parked.push({ worker: h.worker, api: h.api });
        } else {
          await h.worker.terminate().catch(() => undefined);
        }
      }),
    );
    this.drainTracePorts();
    for (const h of this.hosts) h.port.close();
  }

  // ---- internals ---------------------------------------------------------------------------

  private mailboxContext(from: ActorId): ActorContext {
    if (this.running) throw new Error('mailbox sends are only allowed while the simulation is paused');
    this.usable('send');
    const ctx = this.boxCtx.get(from);
    if (!ctx) throw new Error(`${from} is not a mailbox of this simulation`);
    if (this._now > this.mailboxCore.now) this.mailboxCore.now = this._now;
    return ctx;
  }

  private usable(what: string): void {
    if (this.failure) throw new SimulationError(this.failure);
    if (this.closed) throw new Error(`${what}: the simulation is closed`);
  }

  /** Control calls other than traces() would queue behind a running segment: refuse them. */
  private paused(what: string): void {
    this.usable(what);
    if (this.running) throw new Error(`${what}: only while the simulation is paused (await runUntil first)`);
  }

  private async segment(targetUs: VirtualTime): Promise<RunResult> {
    this.usable('runUntil');
    if (this.running) throw new Error('runUntil: a run segment is already in progress');
    this.running = true;
    try {
      const deliveries: Promise<void>[] = [];
      for (const h of this.hosts) {
        const envs = this.pendingInject[h.index];
        if (envs.length > 0) {
          this.pendingInject[h.index] = [];
          deliveries.push(h.api.deliver(envs));
        }
      }
      await this.guard(Promise.all(deliveries), 'deliver');
      this.board.openSegment();
      const results = await this.guardSegment(this.hosts.map((h) => h.api.segment(targetUs)));
      this.drainTracePorts();

      let stopAt = NEVER;
      let nextEvent = NEVER;
      let last = this._now;
      let stopReason: string | undefined;
      for (const r of results) {
        if (r.stopAtUs < stopAt) stopAt = r.stopAtUs;
        if (r.nextEventUs < nextEvent) nextEvent = r.nextEventUs;
        if (r.lastEventUs > last) last = r.lastEventUs;
      }
      // The reason of the actor whose stopRun set the stop time; a tie between hosts (the same
      // µs) takes the smallest reason, so the choice never depends on placement.
      for (const r of results) {
        if (r.stopReason !== undefined && r.stopAtUs === stopAt && (stopReason === undefined || r.stopReason < stopReason)) {
          stopReason = r.stopReason;
        }
      }
      this._stopAt = stopAt;
      this._stopReason = stopReason ?? this._stopReason;

      // Hand over what reached the mailboxes before the pause.
      const interrupted = this.board.interrupted;
      const limit = interrupted ? Math.min(targetUs, stopAt, last) : Math.min(targetUs, stopAt);
      for (const r of results) this.mailboxCore.deliverRemote(r.mailbox);
      this.mailboxCore.stopAt = stopAt;
      this.mailboxCore.runUntil(limit);
      if (this.mailboxCore.now > last) last = this.mailboxCore.now;
      for (const t of this.mailboxCore.drainTraces()) this.traceRecords.push(t);

      const stopped = stopAt !== NEVER && stopAt <= targetUs && nextEvent >= stopAt;
      let reason: RunResult['reason'];
      if (stopped) reason = 'stopped';
      else if (interrupted && nextEvent < Math.min(targetUs, stopAt)) reason = 'interrupted';
      else reason = nextEvent === NEVER ? 'quiescent' : 'target';
      this._now = reason === 'interrupted' ? Math.max(last, this._now) : !stopped && targetUs !== NEVER ? Math.max(targetUs, this._now) : last;
      this.mailboxCore.now = Math.max(this.mailboxCore.now, this._now);
      return { reason, now: this._now, stopReason: this._stopReason };
    } finally {
      this.running = false;
    }
  }

  /** Awaits a control call on the hosts, failing the run on death or after `timeoutMs`. */
  private async guard<T>(p: Promise<T>, what: string, timeoutMs = this.options.hostTimeoutMs ?? 30_000): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<RunFailure>((resolve) => {
      timer = setTimeout(
        () =>
          resolve({
            kind: 'HostUnresponsive',
            message: `a host did not answer ${what} within ${timeoutMs} ms`,
            seed: this.options.seed,
            t: this._now,
          }),
        timeoutMs,
      );
    });
    try {
      const r = await Promise.race([p.then((v) => ({ ok: v })), this.death.then((f) => ({ fail: f })), timeout.then((f) => ({ fail: f }))]);
      if ('ok' in r) return r.ok;
      throw await this.abortRun(r.fail, []);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Awaits one segment on every host. A worker error/exit is a dead host; a failed host's report
   * is the failure; {@link StallWatch} (liveness.ts) reports a host that makes no progress for
   * hostTimeoutMs while working, or a run in which every host waits and nothing moves — never a
   * host that merely waits for its next window while others progress.
   */
  private async guardSegment(calls: Promise<SegmentResult>[]): Promise<SegmentResult[]> {
    const timeoutMs = this.options.hostTimeoutMs ?? 30_000;
    const done = calls.map(() => false);
    const results: Array<SegmentResult | undefined> = calls.map(() => undefined);
    const watch = new StallWatch(this.board, this.hosts, timeoutMs, this.options.seed, performance.now());
    let timer: NodeJS.Timeout | undefined;
    const stall = new Promise<RunFailure>((resolve) => {
      timer = setInterval(
        () => {
          this.drainTracePorts();
          const f = watch.check(performance.now(), done);
          if (f) resolve(f);
        },
        Math.max(5, Math.min(250, timeoutMs / 4)),
      );
    });
    const all = Promise.all(
      calls.map((c, i) =>
        c.then(
          (r) => {
            done[i] = true;
            results[i] = r;
            return r;
          },
          (err: unknown): SegmentResult => {
            // The control call itself failed (the host could not even report): a dead host.
            done[i] = true;
            this.board.abort(i);
            const failure: RunFailure = {
              kind: 'HostDied',
              message: `host thread ${i} failed: ${err instanceof Error ? err.message : String(err)}`,
              seed: this.options.seed,
              t: this._now,
            };
            return { status: 'failed', failure, nextEventUs: NEVER, stopAtUs: NEVER, lastEventUs: this._now, mailbox: [] };
          },
        ),
      ),
    );
    try {
      const r = await Promise.race([all.then((v) => ({ ok: v })), this.death.then((f) => ({ fail: f })), stall.then((f) => ({ fail: f }))]);
      if ('ok' in r) {
        const failed = r.ok.filter((x) => x.status !== 'paused');
        if (failed.length === 0) return r.ok;
        const first = r.ok[this.board.failedHost]?.failure ?? failed.find((x) => x.failure)?.failure;
        throw await this.abortRun(first ?? { kind: 'HostDied', message: 'a host aborted the run', seed: this.options.seed }, []);
      }
      throw await this.abortRun(r.fail, calls);
    } finally {
      clearInterval(timer);
    }
  }

  /**
   * Ends the run: raises the abort flag, gives the healthy hosts a bounded moment to ship their
   * traces, terminates every worker, and returns the error to throw.
   */
  private async abortRun(failure: RunFailure, outstanding: Promise<unknown>[]): Promise<SimulationError> {
    if (!this.failure) this.failure = failure;
    this.board.abort();
    if (outstanding.length > 0) {
      const grace = Math.min(this.options.hostTimeoutMs ?? 30_000, 1_000);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled(outstanding),
        new Promise((resolve) => {
          timer = setTimeout(resolve, grace);
        }),
      ]);
      clearTimeout(timer);
    }
    await this.close();
    return new SimulationError(this.failure);
  }

  private hostDied(host: Host, how: string): void {
    if (this.closed) return;
    const failure: RunFailure = {
      kind: 'HostDied',
      message: `host thread ${host.index} (${host.actors.join(', ')}) ${how}`,
      actor: host.actors.length === 1 ? host.actors[0] : undefined,
      seed: this.options.seed,
      t: this._now,
    };
    if (!this.failure) this.failure = failure;
    this.board.abort();
    this.deathResolve(this.failure);
  }

  private drainTracePorts(): void {
    this.drainHostPorts();
    for (const t of this.mailboxCore.drainTraces()) this.traceRecords.push(t);
  }

  /** Takes in the trace chunks waiting in the hosts' ports. */
  private drainHostPorts(): void {
    for (const h of this.hosts) {
      for (;;) {
        const m = receiveMessageOnPort(h.port);
        if (!m) break;
        for (const rec of (m.message as TraceChunk).records) this.traceRecords.push(rec);
      }
    }
  }
}
