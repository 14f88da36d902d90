/**
 * The per-thread core of the engine: the actors one host thread runs, their event queue, the
 * contexts they act through, links (latency, FIFO, faults), trace and digest. It knows nothing
 * about threads: a host shell (or {@link LocalSimulation} in tests) feeds it remote envelopes,
 * tells it how far it may run (`runUntil(bound)`), and ships what it routes to other hosts.
 *
 * Ordering (DESIGN.md §4): events are processed by `(at, source actor index, source seq,
 * destination actor index)`. Actor indices are positions in the sorted list of *all* actor ids
 * in the run, and every source sequence number is drawn by the sender, so the key — and hence
 * every actor's input sequence — does not depend on which thread hosts which actor.
 */
import {
  type Actor,
  type ActorContext,
  type ActorFactory,
  type ActorId,
  type Envelope,
  type Fault,
  type Message,
  type RequestOptions,
  type RequestTimedOut,
  type RequestUnavailable,
  type RunFailure,
  type TimerId,
  type TraceRecord,
  type VirtualTime,
  CLIENT_THROTTLE_TRACE,
  IdGenerator,
  NEVER,
  Prng,
  deriveStream,
  matchesActor,
} from '@podsim/api';
import type { LatencyConfig, LinkLatency, TraceFilter, WireEnvelope } from '@podsim/api/protocol/control';
import { EventHeap } from './heap.js';
import { RunningDigest } from './digest.js';
import { deepFreezeBody, freezeModeFromEnv } from './freeze.js';

export type { LatencyConfig, LinkLatency, TraceFilter, WireEnvelope };

const EV_MSG = 0;
const EV_TIMER = 1;
const EV_CRASH = 2;
const EV_RESTART = 3;

interface TimerEntry {
  id: TimerId;
  inc: number;
  cancelled: boolean;
  payload: unknown;
  /** Set when this timer is a request timeout. */
  requestId?: number;
  /** The timeout queue holding it until it is due (request timeouts only); undefined once in the event heap. */
  fifo?: TimeoutFifo;
}

/**
 * Request timeouts of one duration, in deadline order (deadline = send time + duration, and
 * time never goes back). Almost every request is answered long before its timeout, so its
 * timer is cancelled while still here and dropped when the head passes it, instead of sitting
 * in the event heap until due (and surviving into the old generation). A live timer moves into
 * the heap before any event at or after its deadline is taken, so the event order is unchanged.
 */
class TimeoutFifo {
  items: (QueuedEvent | undefined)[] = [];
  head = 0;
  /** Drops cancelled timers at the head; the deadline of the first live one (NEVER if none). */
  firstAt(): number {
    const items = this.items;
    while (this.head < items.length && items[this.head]!.timer!.cancelled) items[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > items.length) {
      this.items = items.slice(this.head);
      this.head = 0;
    }
    return this.head < this.items.length ? this.items[this.head]!.at : NEVER;
  }
}

/** One queued event; a class so that every entry has the same shape (the heap's hot loop). */
class QueuedEvent {
  constructor(
    readonly at: number,
    readonly src: number,
    readonly seq: number,
    readonly dst: number,
    readonly kind: number,
    readonly env: WireEnvelope | undefined,
    readonly timer: TimerEntry | undefined,
    readonly fault: number,
  ) {}
}

interface PendingRequest {
  cb: (reply: Message, env: Envelope | undefined) => void;
  timer?: TimerEntry;
  to: ActorId;
  type: string;
}

/** One directed link's state, kept by the sender's host. */
class LinkState {
  /** Jitter stream `link:<from>-><to>`, created on first use. */
  rng: Prng | undefined = undefined;
  /** Delivery time of the last message: FIFO per link. */
  lastAt = 0;
  faultRngs: Map<number, Prng> | undefined = undefined;
  constructor(
    readonly minUs: number,
    readonly jitterUs: number,
    /** Indices into the fault list of transport faults matching this link. */
    readonly faults: number[],
  ) {}
}

/** Up to this many actors, a sender's links live in an array indexed by destination. */
const DENSE_LINKS_MAX = 4096;

/** One hosted actor: identity, incarnation state and its context. */
interface LocalActor {
  readonly idx: number;
  readonly id: ActorId;
  readonly factory: ActorFactory;
  readonly config: unknown;
  actor: Actor | null;
  incarnation: number;
  startedAt: number;
  seq: number;
  traceSeq: number;
  nextTimer: number;
  nextRequest: number;
  timers: Map<TimerId, TimerEntry>;
  pending: Map<number, PendingRequest>;
  /**
   * Crash faults (by index) holding the actor down: added at the crash, removed at that fault's
   * restart. The actor comes back only when none is left (a kubeletRestart inside a nodeDown
   * must not revive a kubelet on a dead node); a crash without restart holds it for good.
   */
  readonly downBy: Set<number>;
  /** The actor's durable store (`ActorContext.durable`): survives its crashes, like its links. */
  readonly durable: Map<string, unknown>;
  /** Outgoing links of this actor, by destination index (state survives restarts). */
  readonly links: Map<number, LinkState> | Array<LinkState | undefined>;
  rng: Prng;
  streams: Map<string, Prng>;
  ids: IdGenerator;
  digest: RunningDigest;
  ctx: ActorContext;
}

/** Configuration of one host core. Everything here must be identical on every host of a run. */
export interface HostCoreOptions {
  readonly seed: number;
  readonly epochUnixSeconds: number;
  /** Every actor id of the run (any order; sorted internally). */
  readonly allActorIds: readonly ActorId[];
  /** The actors this host runs, with their factories. */
  readonly local: ReadonlyArray<{ readonly id: ActorId; readonly factory: ActorFactory; readonly config?: unknown }>;
  readonly latency: LatencyConfig;
  readonly faults?: readonly Fault[];
  readonly traceFilter?: TraceFilter;
  /**
   * Called for every envelope addressed to an actor on another host. The shell batches them per
   * destination host. Envelopes share body objects (a multicast): encode each body once.
   */
  readonly routeRemote?: (env: WireEnvelope) => void;
  /**
   * Deep-freeze every delivered body (src/freeze.ts), so an actor mutating a shared body throws.
   * Default: the `PODSIM_FREEZE=1` environment variable. Test aid; never changes a correct run.
   */
  readonly freezeBodies?: boolean;
}

/** Thrown out of `runUntil` when an actor handler throws: the run is over. */
export class SimulationError extends Error {
  constructor(readonly failure: RunFailure) {
    super(failure.message);
    this.name = 'SimulationError';
  }
}

/** Smallest link minimum latency: the lookahead L of the conservative windows (DESIGN.md §4). */
export function lookaheadUs(latency: LatencyConfig): number {
  let l = latency.default.minUs;
  for (const o of latency.links ?? []) l = Math.min(l, o.minUs);
  return l;
}

/**
 * Largest link minimum latency: after `stopRun` at t every host finishes the events before
 * t + this, which no host can have passed yet whatever the placement.
 */
export function stopHorizonUs(latency: LatencyConfig): number {
  let h = latency.default.minUs;
  for (const o of latency.links ?? []) h = Math.max(h, o.minUs);
  return h;
}

export class HostCore {
  readonly actorIds: readonly ActorId[];
  private readonly indexOf = new Map<ActorId, number>();
  private readonly locals: (LocalActor | undefined)[];
  private readonly localList: LocalActor[] = [];
  private readonly queue = new EventHeap<QueuedEvent>();
  private readonly faults: Fault[];
  private readonly typeHashes = new Map<string, number>();
  private readonly horizon: number;
  private readonly collect: (kind: string) => boolean;
  private started = false;
  private readonly freezeBodies: boolean;

  /** Current virtual time (the time of the event being processed). */
  now: VirtualTime = 0;
  /** Exclusive end of the run once an actor called stopRun (NEVER until then). */
  stopAt: VirtualTime = NEVER;
  /**
   * Exclusive end of the current window as lowered while it runs (NEVER = only the bound given to
   * `runUntil`). A host shell lowers it from `routeRemote` (a message sent to another host may
   * come back) and resets it when a window starts; LocalSimulation never touches it.
   */
  windowCap: VirtualTime = NEVER;
  stopReason: string | undefined;
  /** Collected trace records, in processing order (merge across hosts by (t, actor, seq)). */
  traces: TraceRecord[] = [];
  readonly counters = new Map<string, number>();
  /** Events processed so far. */
  processed = 0;
  /** Messages routed (local + remote). */
  messagesSent = 0;
  private currentType = '';
  private currentActor = '';
  /**
   * Cancelled timers still in the queue (a reply cancels its request's timeout, which would
   * otherwise sit in the heap until it was due: with 60 s timeouts, tens of entries per pod).
   */
  private cancelledQueued = 0;
  /** Request-timeout queues by duration, and the earliest live deadline among them. */
  private readonly timeoutFifos = new Map<number, TimeoutFifo>();
  private nextTimeoutAt = NEVER;

  constructor(private readonly opts: HostCoreOptions) {
    this.actorIds = [...opts.allActorIds].sort();
    this.actorIds.forEach((id, i) => {
      if (this.indexOf.has(id)) throw new Error(`duplicate actor id ${id}`);
      this.indexOf.set(id, i);
    });
    this.locals = new Array(this.actorIds.length);
    this.faults = [...(opts.faults ?? [])];
    this.horizon = stopHorizonUs(opts.latency);
    this.freezeBodies = opts.freezeBodies ?? freezeModeFromEnv();
    const f = opts.traceFilter ?? 'all';
    this.collect = f === 'all' ? () => true : f === 'none' ? () => false : (k) => f.some((p) => k.startsWith(p));
    for (const l of opts.local) {
      const idx = this.indexOf.get(l.id);
      if (idx === undefined) throw new Error(`local actor ${l.id} is not in allActorIds`);
      const la = this.makeLocal(idx, l.id, l.factory, l.config);
      this.locals[idx] = la;
      this.localList.push(la);
    }
    this.localList.sort((a, b) => a.idx - b.idx);
  }

  /** Index of an actor id in the run's sorted actor list (throws for unknown ids). */
  index(id: ActorId): number {
    const i = this.indexOf.get(id);
    if (i === undefined) throw new Error(`unknown actor ${JSON.stringify(id)}`);
    return i;
  }

  isLocal(idx: number): boolean {
    return this.locals[idx] !== undefined;
  }

  /** Starts every local actor at time 0 and schedules the crash faults of local actors. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.faults.forEach((f, i) => this.scheduleFault(f, i));
    for (const la of this.localList) this.startIncarnation(la);
  }

  /**
   * Adds a fault while the run is paused (control plane). Crash faults in the past of `now`
   * take effect at `now`. Returns its index.
   */
  addFault(f: Fault): number {
    const i = this.faults.length;
    this.faults.push(f);
    if (f.kind !== 'crash') {
      // Extend the fault list of the links already in use; their FIFO watermark and jitter
      // stream must survive (clearing them let later messages overtake earlier ones).
      for (const la of this.localList) {
        la.links.forEach((l: LinkState | undefined, to: number) => {
          if (l && this.transportFaultMatches(f, la.id, this.actorIds[to])) l.faults.push(i);
        });
      }
    }
    if (this.started) this.scheduleFault(f, i);
    return i;
  }

  /** Time of the earliest queued event (NEVER if none). */
  nextEventTime(): VirtualTime {
    return Math.min(this.queue.peek()?.at ?? NEVER, this.nextTimeoutAt);
  }

  /**
   * Queues envelopes that arrived from other hosts. Throws if one is due before `now`: the
   * window synchronisation let this host run past a message it had not yet received.
   */
  deliverRemote(envs: Iterable<WireEnvelope>): void {
    for (const e of envs) {
      if (e.a < this.now) {
        throw new Error(`causality violation: ${this.actorIds[e.f]} → ${this.actorIds[e.t]} due at ${e.a} µs arrived at ${this.now} µs`);
      }
      // A decoded multicast body is shared by this host's recipients: freeze it as a local one.
      if (this.freezeBodies) deepFreezeBody(e.b);
      this.queue.push(new QueuedEvent(e.a, e.f, e.q, e.t, EV_MSG, e, undefined, -1));
    }
  }

  /**
   * Processes, in key order, every queued event with `at < bound` (and `< stopAt`, `< windowCap`,
   * both read before each event), or at most `maxEvents` of them (a host thread uses that to
   * report liveness during a long window), stopping early once `interrupted()` says so (checked
   * between events). Returns the number of events processed. Throws
   * {@link SimulationError} if a handler throws.
   */
  runUntil(bound: VirtualTime, maxEvents = Infinity, interrupted?: () => boolean): number {
    if (!this.started) this.start();
    let n = 0;
    while (n < maxEvents) {
      // A Ctrl-C (the board's INTERRUPT word): stop between two events; one event of a large
      // cluster (a controller sync over 20k pods) can take a tenth of a second.
      if (interrupted !== undefined && n > 0 && interrupted()) break;
      let top = this.queue.peek();
      if (this.nextTimeoutAt <= (top ? top.at : bound)) {
        this.migrateTimeouts(top ? top.at : bound);
        top = this.queue.peek();
      }
      if (!top || top.at >= bound || top.at >= this.stopAt || top.at >= this.windowCap) break;
      this.queue.pop();
      this.now = top.at;
      this.dispatch(top);
      n++;
    }
    this.processed += n;
    return n;
  }

  /** Per-actor digests of the local actors: `[actorId, hex]`. */
  digests(): Array<[string, string]> {
    return this.localList.map((la) => [la.id, la.digest.hex()]);
  }

  /** Removes and returns the collected trace records. */
  drainTraces(): TraceRecord[] {
    const t = this.traces;
    this.traces = [];
    return t;
  }

  /**
   * Injects a message from outside the simulation (the harness, the HTTP facade), as if sent by
   * actor `from` at `now` (a registered actor id; the caller owns its sequence space through
   * `seq`, which must increase). Used while the run is paused.
   */
  injectFrom(from: ActorId, to: ActorId, body: Message, seq: number, at: VirtualTime): void {
    const e: WireEnvelope = { f: this.index(from), t: this.index(to), s: at, a: at, q: seq, b: body, r: undefined, fi: undefined, u: undefined, p: undefined, i: undefined };
    this.route(e);
  }

  // ---- internals -------------------------------------------------------------------------

  private makeLocal(idx: number, id: ActorId, factory: ActorFactory, config: unknown): LocalActor {
    const la: LocalActor = {
      idx,
      id,
      factory,
      config,
      actor: null,
      incarnation: 0,
      startedAt: 0,
      seq: 0,
      traceSeq: 0,
      nextTimer: 1,
      nextRequest: 1,
      timers: new Map(),
      pending: new Map(),
      downBy: new Set(),
      durable: new Map(),
      links: this.actorIds.length <= DENSE_LINKS_MAX ? new Array<LinkState | undefined>(this.actorIds.length) : new Map(),
      rng: deriveStream(this.opts.seed, `actor:${id}#0`),
      streams: new Map(),
      ids: undefined as unknown as IdGenerator,
      digest: new RunningDigest(),
      ctx: undefined as unknown as ActorContext,
    };
    la.ids = new IdGenerator(la.rng);
    la.ctx = this.makeContext(la);
    return la;
  }

  private startIncarnation(la: LocalActor): void {
    la.incarnation++;
    la.startedAt = this.now;
    la.timers = new Map();
    la.pending = new Map();
    la.streams = new Map();
    la.rng = deriveStream(this.opts.seed, `actor:${la.id}#${la.incarnation}`);
    la.ids = new IdGenerator(deriveStream(this.opts.seed, `ids:${la.id}#${la.incarnation}`));
    la.digest.num(la.incarnation);
    this.currentActor = la.id;
    this.currentType = 'start';
    try {
      const made: unknown = la.factory(la.id, la.config);
      // A factory that returns no actor would run as a silent no-op (a user module's mistake).
      if (typeof made !== 'object' || made === null || typeof (made as Actor).receive !== 'function') {
        throw new Error(`the actor factory for ${la.id} returned ${describeNonActor(made)}, not an actor (an object with a receive(ctx, envelope) method)`);
      }
      la.actor = made as Actor;
      la.actor.start?.(la.ctx);
    } catch (err) {
      throw this.failure(err, la.id, 'start');
    }
  }

  private scheduleFault(f: Fault, i: number): void {
    if (f.kind !== 'crash') return;
    const idx = this.indexOf.get(f.actor);
    if (idx === undefined) throw new Error(`crash fault names unknown actor ${f.actor}`);
    if (!this.locals[idx]) return;
    const at = Math.max(f.atUs, this.now);
    this.queue.push(new QueuedEvent(at, -1, 2 * i, idx, EV_CRASH, undefined, undefined, i));
    if (f.restartAfterUs !== undefined) {
      this.queue.push(new QueuedEvent(at + f.restartAfterUs, -1, 2 * i + 1, idx, EV_RESTART, undefined, undefined, i));
    }
  }

  private dispatch(ev: QueuedEvent): void {
    const la = this.locals[ev.dst]!;
    switch (ev.kind) {
      case EV_MSG:
        return this.deliver(la, ev.env!);
      case EV_TIMER:
        return this.fireTimer(la, ev.timer!);
      case EV_CRASH: {
        la.downBy.add(ev.fault);
        if (la.actor === null) return;
        // The old incarnation's state, timers and pending requests are gone; its timers and
        // any replies addressed to it are dropped by the incarnation checks.
        la.actor = null;
        la.timers.clear();
        la.pending.clear();
        this.engineTrace(la, 'engine.crash', `crashed (fault ${ev.fault})`);
        return;
      }
      case EV_RESTART: {
        la.downBy.delete(ev.fault);
        if (la.actor !== null) return;
        if (la.downBy.size > 0) {
          this.engineTrace(la, 'engine.stayDown', `fault ${ev.fault} over, still down (fault ${[...la.downBy].join(', ')})`);
          return;
        }
        // Messages sent while down, or to the old incarnation, are dropped at delivery
        // because their sentAt precedes the new incarnation's startedAt.
        this.startIncarnation(la);
        this.engineTrace(la, 'engine.restart', `restarted as incarnation ${la.incarnation}`);
        return;
      }
    }
  }

  private deliver(la: LocalActor, e: WireEnvelope): void {
    const type = e.b.type;
    if (la.actor === null || e.s < la.startedAt) {
      const why = la.actor === null ? 'down' : 'stale';
      if (e.u === 1 && e.r !== undefined) {
        // A local socket: nobody listens (down) or the connection broke with the old process
        // (stale). The client learns it at once; the refusal travels back like a reply.
        this.engineTrace(la, 'engine.refuse', `${why}: ${type} from ${this.actorIds[e.f]}`);
        const body: RequestUnavailable = { type: 'RequestUnavailable', to: la.id, request: type, reason: la.actor === null ? 'refused' : 'reset' };
        this.send(la, e.f, body, undefined, undefined, undefined, e.r, e.fi);
        return;
      }
      this.engineTrace(la, 'engine.drop', `${why}: ${type} from ${this.actorIds[e.f]}`);
      return;
    }
    la.digest.num(e.a);
    la.digest.num(e.f);
    la.digest.num(e.q);
    la.digest.num(this.typeHash(type));
    this.currentActor = la.id;
    this.currentType = type;
    const env: Envelope = {
      from: this.actorIds[e.f],
      to: la.id,
      sentAt: e.s,
      at: e.a,
      seq: e.q,
      body: e.b,
      requestId: e.r === undefined ? undefined : e.r * 65536 + (e.fi ?? 0),
    };
    try {
      if (e.p !== undefined) {
        if (e.i !== la.incarnation) {
          this.engineTrace(la, 'engine.drop', `stale reply: ${type} from ${env.from}`);
          return;
        }
        const pend = la.pending.get(e.p);
        if (!pend) return; // timed out already
        la.pending.delete(e.p);
        if (pend.timer) this.cancel(la, pend.timer.id);
        pend.cb(e.b, env);
      } else {
        la.actor.receive(la.ctx, env);
      }
    } catch (err) {
      throw this.failure(err, la.id, type);
    }
  }

  private fireTimer(la: LocalActor, t: TimerEntry): void {
    if (t.cancelled) {
      this.cancelledQueued--;
      return;
    }
    if (t.inc !== la.incarnation || la.actor === null) return;
    la.timers.delete(t.id);
    la.digest.num(this.now);
    la.digest.num(t.id);
    this.currentActor = la.id;
    try {
      if (t.requestId !== undefined) {
        const pend = la.pending.get(t.requestId);
        if (!pend) return;
        la.pending.delete(t.requestId);
        this.currentType = `timeout(${pend.type})`;
        const body: RequestTimedOut = { type: 'RequestTimedOut', to: pend.to, request: pend.type };
        pend.cb(body, undefined);
      } else {
        this.currentType = 'timer';
        la.actor.onTimer?.(la.ctx, t.payload, t.id);
      }
    } catch (err) {
      throw this.failure(err, la.id, this.currentType);
    }
  }

  private failure(err: unknown, actor: string, messageType: string): SimulationError {
    if (err instanceof SimulationError) return err;
    const e = err instanceof Error ? err : new Error(String(err));
    return new SimulationError({
      kind: 'ActorThrew',
      message: `actor ${actor} threw at t=${this.now}µs while handling ${messageType}: ${e.message}`,
      actor,
      t: this.now,
      messageType,
      seed: this.opts.seed,
      stack: e.stack,
    });
  }

  private typeHash(type: string): number {
    let h = this.typeHashes.get(type);
    if (h === undefined) {
      h = 0;
      for (let i = 0; i < type.length; i++) h = (Math.imul(h, 31) + type.charCodeAt(i)) | 0;
      this.typeHashes.set(type, h);
    }
    return h;
  }

  private engineTrace(la: LocalActor, kind: string, msg: string): void {
    this.record(la, kind, msg, undefined);
  }

  private record(la: LocalActor, kind: string, msg: string, data: Record<string, unknown> | undefined): void {
    // A throttle record is an observation the report asks for, never part of the digest: a run
    // with `--report` must replay to the digest of the same run without it.
    if (kind === CLIENT_THROTTLE_TRACE) {
      if (this.collect(kind)) this.traces.push({ t: this.now, actor: la.id, seq: la.traceSeq++, kind, msg, data });
      return;
    }
    const seq = la.traceSeq++;
    la.digest.num(this.now);
    la.digest.str(kind);
    la.digest.str(msg);
    if (this.collect(kind)) this.traces.push({ t: this.now, actor: la.id, seq, kind, msg, data });
  }

  private link(la: LocalActor, to: number): LinkState {
    const links = la.links;
    const l = Array.isArray(links) ? links[to] : links.get(to);
    return l ?? this.newLink(la, to);
  }

  private newLink(la: LocalActor, to: number): LinkState {
    const fromId = la.id;
    const toId = this.actorIds[to];
    let lat: LinkLatency = this.opts.latency.default;
    const overrides = this.opts.latency.links;
    if (overrides) {
      for (const o of overrides) {
        if (matchesActor(o.from, fromId) && matchesActor(o.to, toId)) {
          lat = o;
          break;
        }
      }
    }
    const faults: number[] = [];
    for (let i = 0; i < this.faults.length; i++) if (this.transportFaultMatches(this.faults[i], fromId, toId)) faults.push(i);
    const l = new LinkState(lat.minUs, lat.jitterUs, faults);
    if (Array.isArray(la.links)) la.links[to] = l;
    else la.links.set(to, l);
    return l;
  }

  /** Does transport fault `f` apply to messages `fromId → toId`? (Crash faults never do.) */
  private transportFaultMatches(f: Fault, fromId: ActorId, toId: ActorId): boolean {
    if (f.kind === 'crash') return false;
    if (f.kind === 'partition') {
      return (matchesActor(f.a, fromId) && matchesActor(f.b, toId)) || (matchesActor(f.b, fromId) && matchesActor(f.a, toId));
    }
    return matchesActor(f.from, fromId) && matchesActor(f.to, toId);
  }

  /**
   * Computes delivery time (latency, faults, FIFO) for a message `from → to` sent now and routes
   * it (unless a fault drops it). `r`/`fi` mark a request, `p`/`i` a reply (see WireEnvelope).
   */
  private send(la: LocalActor, to: number, body: Message, r?: number, fi?: number, u?: number, p?: number, i?: number): void {
    const l = this.link(la, to);
    const senderIncarnation = fi;
    let at = this.now + l.minUs;
    if (l.jitterUs > 0) {
      l.rng ??= deriveStream(this.opts.seed, `link:${la.id}->${this.actorIds[to]}`);
      at += l.rng.int(l.jitterUs + 1);
    }
    let duplicateDelay = -1;
    const isRequest = r !== undefined;
    for (const fi of l.faults) {
      const f = this.faults[fi] as Exclude<Fault, { kind: 'crash' }>;
      if (this.now < f.startUs || (f.endUs !== undefined && this.now >= f.endUs)) continue;
      // A duplicate fault with `requests: false` repeats messages within a stream only (watch
      // events, replies): a repeated request would open a second watch or repeat a write.
      if (f.kind === 'duplicate' && isRequest && f.requests === false) continue;
      if (f.kind === 'delay') at += f.delayUs;
      else if (f.kind === 'partition') {
        // An incarnation that started inside the partition never had a connection: with
        // failFast its request fails at once (dial error) instead of being lost with the old
        // connection's packets. The failure is a reply to itself, one link latency later.
        const unreachable = u === 1 && r !== undefined && la.startedAt >= f.startUs;
        this.record(la, 'fault.partition', `${unreachable ? 'no connection, failed' : 'dropped'} ${body.type} to ${this.actorIds[to]}`, undefined);
        la.seq++;
        if (unreachable) {
          const failed: RequestUnavailable = { type: 'RequestUnavailable', to: this.actorIds[to], request: body.type, reason: 'unreachable' };
          this.route({ f: la.idx, t: la.idx, s: this.now, a: this.now + l.minUs, q: la.seq++, b: failed, r: undefined, fi: undefined, u: undefined, p: r, i: senderIncarnation });
        }
        return;
      } else {
        l.faultRngs ??= new Map();
        let r = l.faultRngs.get(fi);
        if (!r) {
          // Named by the fault's id when it has one, so removing another fault from the list
          // (shrinking) does not shift this fault's draws (DESIGN.md §9).
          const name = f.id !== undefined ? `id=${f.id}` : String(fi);
          r = deriveStream(this.opts.seed, `fault:${name}:${la.id}->${this.actorIds[to]}`);
          l.faultRngs.set(fi, r);
        }
        if (r.float() < f.probability) {
          if (f.kind === 'drop') {
            this.record(la, 'fault.drop', `dropped ${body.type} to ${this.actorIds[to]}`, undefined);
            la.seq++;
            return;
          }
          duplicateDelay = f.delayUs ?? 0;
        }
      }
    }
    if (at < l.lastAt) at = l.lastAt;
    l.lastAt = at;
    // Every envelope gets all fields, so that the hot paths see one object shape.
    const e: WireEnvelope = { f: la.idx, t: to, s: this.now, a: at, q: la.seq++, b: body, r, fi, u, p, i };
    this.route(e);
    if (duplicateDelay >= 0) {
      this.record(la, 'fault.duplicate', `duplicated ${body.type} to ${this.actorIds[to]}`, undefined);
      const at2 = at + duplicateDelay;
      l.lastAt = Math.max(l.lastAt, at2);
      this.route({ ...e, a: at2, q: la.seq++ });
    }
  }

  private route(e: WireEnvelope): void {
    // Frozen when sent, so that a sender that changes a body after sending throws too (on one
    // thread the receiver would see the change; across threads it would not).
    if (this.freezeBodies) deepFreezeBody(e.b);
    this.messagesSent++;
    if (this.locals[e.t]) this.queue.push(new QueuedEvent(e.a, e.f, e.q, e.t, EV_MSG, e, undefined, -1));
    else if (this.opts.routeRemote) this.opts.routeRemote(e);
    else throw new Error(`no route to actor ${this.actorIds[e.t]}`);
  }

  private setTimer(la: LocalActor, delayUs: number, payload: unknown, requestId?: number): TimerEntry {
    if (!(delayUs >= 0) || !Number.isFinite(delayUs)) throw new Error(`invalid timer delay ${delayUs}`);
    const t: TimerEntry = { id: la.nextTimer++, inc: la.incarnation, cancelled: false, payload, requestId, fifo: undefined };
    la.timers.set(t.id, t);
    const d = Math.floor(delayUs);
    const ev = new QueuedEvent(this.now + d, la.idx, la.seq++, la.idx, EV_TIMER, undefined, t, -1);
    if (requestId === undefined) {
      this.queue.push(ev);
      return t;
    }
    let f = this.timeoutFifos.get(d);
    if (!f) this.timeoutFifos.set(d, (f = new TimeoutFifo()));
    f.items.push(ev);
    t.fifo = f;
    if (ev.at < this.nextTimeoutAt) this.nextTimeoutAt = ev.at;
    return t;
  }

  /** Moves every live request timeout due at or before `limit` into the event heap. */
  private migrateTimeouts(limit: number): void {
    let next = NEVER;
    for (const f of this.timeoutFifos.values()) {
      let at = f.firstAt();
      while (at !== NEVER && at <= limit) {
        const ev = f.items[f.head]!;
        f.items[f.head++] = undefined;
        ev.timer!.fifo = undefined;
        this.queue.push(ev);
        at = f.firstAt();
      }
      if (at < next) next = at;
    }
    this.nextTimeoutAt = next;
  }

  private cancel(la: LocalActor, id: TimerId): void {
    const t = la.timers.get(id);
    if (t) {
      t.cancelled = true;
      la.timers.delete(id);
      if (t.fifo) {
        // Still in its timeout queue: dropped when the head passes it.
        const f = t.fifo;
        t.fifo = undefined;
        const head = f.items[f.head];
        if (head !== undefined && head.timer === t) {
          const was = head.at;
          const at = f.firstAt();
          if (was === this.nextTimeoutAt && at !== was) this.nextTimeoutAt = this.earliestTimeout();
        }
        return;
      }
      // Compact once dead timers are most of the queue (bounded garbage, O(1) amortised).
      if (++this.cancelledQueued > 4096 && 2 * this.cancelledQueued > this.queue.size) {
        this.queue.retain((ev) => ev.kind !== EV_TIMER || !ev.timer!.cancelled);
        this.cancelledQueued = 0;
      }
    }
  }

  /** The earliest live request-timeout deadline (NEVER if none). */
  private earliestTimeout(): number {
    let next = NEVER;
    for (const f of this.timeoutFifos.values()) {
      const at = f.firstAt();
      if (at < next) next = at;
    }
    return next;
  }

  private makeContext(la: LocalActor): ActorContext {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const host = this;
    const ctx: ActorContext = {
      self: la.id,
      get now() {
        return host.now;
      },
      get incarnation() {
        return la.incarnation;
      },
      durable: la.durable,
      seed: this.opts.seed,
      epochUnixSeconds: this.opts.epochUnixSeconds,
      send(to, body) {
        host.send(la, host.index(to), body);
      },
      multicast(to, body) {
        for (const id of to) host.send(la, host.index(id), body);
      },
      request<R extends Message>(
        to: ActorId,
        body: Message,
        onReply: (reply: R | RequestTimedOut | RequestUnavailable, env: Envelope | undefined) => void,
        options?: RequestOptions,
      ) {
        const rid = la.nextRequest++;
        const pend: PendingRequest = { cb: onReply as PendingRequest['cb'], to, type: body.type };
        if (options?.timeoutUs !== undefined) pend.timer = host.setTimer(la, options.timeoutUs, undefined, rid);
        la.pending.set(rid, pend);
        host.send(la, host.index(to), body, rid, la.incarnation, options?.failFast ? 1 : undefined);
      },
      reply(req, body) {
        if (req.requestId === undefined) return;
        const rid = Math.floor(req.requestId / 65536);
        const inc = req.requestId % 65536;
        host.send(la, host.index(req.from), body, undefined, undefined, undefined, rid, inc);
      },
      setTimer(delayUs, payload) {
        return host.setTimer(la, delayUs, payload).id;
      },
      cancelTimer(id) {
        host.cancel(la, id);
      },
      random() {
        return la.rng.float();
      },
      stream(name) {
        let s = la.streams.get(name);
        if (!s) {
          s = deriveStream(host.opts.seed, `actor:${la.id}#${la.incarnation}/${name}`);
          la.streams.set(name, s);
        }
        return s;
      },
      newId(size, alphabet) {
        return la.ids.id(size, alphabet);
      },
      uuid() {
        return la.ids.uuid();
      },
      trace(kind, msg, data) {
        host.record(la, kind, msg, data);
      },
      tracing(kind) {
        return host.collect(kind);
      },
      stopRun(reason) {
        const at = host.now + host.horizon;
        if (at < host.stopAt) {
          host.stopAt = at;
          host.stopReason = reason;
        }
        host.record(la, 'engine.stop', reason, undefined);
      },
      count(name, delta = 1) {
        host.counters.set(name, (host.counters.get(name) ?? 0) + delta);
      },
    };
    return ctx;
  }
}

/** A short description of what a factory returned instead of an actor (`42`, `undefined`, `an object without receive`). */
function describeNonActor(v: unknown): string {
  if (v === null || v === undefined || typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'function') return 'a function';
  return 'an object without a receive method';
}
