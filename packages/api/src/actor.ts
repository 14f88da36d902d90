/**
 * The actor contract (DESIGN.md §3). An actor is a deterministic state machine: the engine hands
 * it one message or timer at a virtual time, and everything it may do goes through its
 * {@link ActorContext}: read `now`, send, request/reply, set and cancel timers, draw random
 * numbers and ids, write trace records. Nothing else — no wall clock, no real timers, no threads
 * (a lint rule enforces this for actor packages).
 *
 * Handlers are synchronous. Kubernetes goroutines (a pod worker, a container kill) are modelled
 * as explicit state plus callbacks that the engine invokes when a reply or timer arrives;
 * Promises are not used because the engine delivers events from a synchronous loop.
 */
import type { VirtualTime, DurationUs } from './time.js';
import type { Prng } from './prng.js';

/**
 * A stable actor name, unique in the run: `apiserver`, `kubelet/node-1`, `runtime/node-1`,
 * `controllers`, `scheduler`, `driver`. Ordering of same-time events uses the index of the id
 * in the sorted list of all actor ids, so ids must not depend on placement.
 */
export type ActorId = string;

/** Every message body is a plain object (msgpackr-encodable) with a string discriminant. */
export interface Message {
  readonly type: string;
}

/** What the engine delivers to an actor's `receive`. Bodies are immutable once sent. */
export interface Envelope<B extends Message = Message> {
  readonly from: ActorId;
  readonly to: ActorId;
  /** Virtual time at which the sender sent it. */
  readonly sentAt: VirtualTime;
  /** Virtual time of delivery (= sentAt + link latency, FIFO per link). */
  readonly at: VirtualTime;
  /** The sender's sequence number; with `at` and `from` it is the global ordering key. */
  readonly seq: number;
  readonly body: B;
  /** Set when the sender used `ctx.request`: pass the envelope to `ctx.reply`. */
  readonly requestId?: number;
}

/** Delivered to a request's callback instead of a reply when `timeoutUs` passed first. */
export interface RequestTimedOut extends Message {
  readonly type: 'RequestTimedOut';
  readonly to: ActorId;
  readonly request: string;
}

/**
 * Delivered to a request's callback (sent with `failFast`) when no connection could carry it:
 * `refused`, the destination was down at delivery; `reset`, it had restarted since the request
 * was sent; `unreachable`, a partition separated them and the sender's incarnation started after
 * the partition began (a fresh process has no connection and cannot open one).
 */
export interface RequestUnavailable extends Message {
  readonly type: 'RequestUnavailable';
  readonly to: ActorId;
  readonly request: string;
  readonly reason: 'refused' | 'reset' | 'unreachable';
}

export interface RequestOptions {
  /**
   * Virtual µs after which the callback receives {@link RequestTimedOut} (and a late reply is
   * dropped). Without it a request whose reply never comes (dropped by a fault, target crashed)
   * simply never calls back.
   */
  readonly timeoutUs?: DurationUs;
  /**
   * Fail at once, with {@link RequestUnavailable}, when no connection can carry the request,
   * instead of losing it and waiting for `timeoutUs`: the destination is down or restarted since
   * the request was sent (a local socket — the kubelet's CRI client and containerd's unix socket —
   * refuses connect() and resets a broken connection), or a partition lies between them and this
   * incarnation started after it began (a process started during a network outage cannot
   * connect; one that was connected before just loses its packets, as over an established TCP
   * connection). Without it such a request is simply lost.
   */
  readonly failFast?: boolean;
}

/**
 * What an actor keeps across its own crash and restart, as a process keeps files on disk (for
 * the runtime: containerd's bolt metadata and the CRI plugin's status checkpoints under
 * `/var/lib/containerd`). The engine holds one store per actor for the whole run, on the host
 * thread that runs the actor, and hands the same store to every incarnation; nothing else reads
 * it, so it is placement-independent as long as the actor's own writes are deterministic.
 * Values are kept as given (no copy): an incarnation must not write to what an earlier one
 * stored, only read it — the earlier incarnation is dead, so what it left is what was "on disk"
 * at the crash. A {@link Map} satisfies this interface.
 */
export interface DurableStore {
  get(key: string): unknown;
  set(key: string, value: unknown): unknown;
  delete(key: string): boolean;
}

/** Opaque handle for a pending timer. */
export type TimerId = number;

/** One trace record, as actors write it and the engine collects it. */
export interface TraceRecord {
  /** Virtual µs. */
  readonly t: VirtualTime;
  readonly actor: ActorId;
  /** Per-actor record sequence number (orders records with equal `t` from one actor). */
  readonly seq: number;
  /** Dotted kind, e.g. `cri.SIGTERM`, `api.watch`, `kubelet.syncTerminatingPod`. */
  readonly kind: string;
  /** Short deterministic human summary; part of the trace digest. */
  readonly msg: string;
  /** Optional structured data for checkers and reports (not part of the digest). */
  readonly data?: Record<string, unknown>;
}

/**
 * Trace kind of a client-side rate-limiter wait (client-go `rest.Request.tryThrottle`: "Waited
 * for … due to client-side throttling"): one record per request that had to wait for a token,
 * `data: { client, waitUs, qps, burst }` (virtual µs), written only when the run's trace filter
 * asks for it (the HTML `--report`). The engine leaves it out of the trace digest, so a run
 * with a report has the digest of the same run without one.
 */
export const CLIENT_THROTTLE_TRACE = 'client.throttle';

/** The only door from actor logic to the outside world. */
export interface ActorContext {
  /** This actor's id. */
  readonly self: ActorId;
  /** The current virtual time in µs. Constant during one handler invocation. */
  readonly now: VirtualTime;
  /** 1 for the first incarnation; +1 after each crash/restart. */
  readonly incarnation: number;
  /**
   * This actor's {@link DurableStore}, the same object in every incarnation. Optional: a
   * context built by hand in a unit test may have none (the actor then keeps nothing across a
   * restart, as if it had no disk).
   */
  readonly durable?: DurableStore;
  /** The run seed (for reports; draw randomness through `random`/`stream`, not from this). */
  readonly seed: number;
  /** Wall-clock instant of virtual time 0, in Unix seconds (for RFC 3339 timestamps). */
  readonly epochUnixSeconds: number;

  /** Sends `body` to `to`; it arrives after the link's latency. The body must not be mutated afterwards. */
  send(to: ActorId, body: Message): void;
  /**
   * Sends the same body to several actors (a watch event to every watcher). The engine encodes
   * it once per destination thread.
   */
  multicast(to: readonly ActorId[], body: Message): void;
  /**
   * Sends a request; `onReply` runs when the reply (or a timeout) is delivered — or, with
   * `failFast`, a {@link RequestUnavailable} when the destination was down.
   */
  request<R extends Message = Message>(
    to: ActorId,
    body: Message,
    onReply: (reply: R | RequestTimedOut | RequestUnavailable, env: Envelope | undefined) => void,
    options: RequestOptions & { readonly failFast: true },
  ): void;
  request<R extends Message = Message>(
    to: ActorId,
    body: Message,
    onReply: (reply: R | RequestTimedOut, env: Envelope | undefined) => void,
    options?: RequestOptions,
  ): void;
  /** Replies to an envelope that carried a `requestId`. A no-op if it did not. */
  reply(request: Envelope, body: Message): void;

  /** Runs `actor.onTimer(ctx, payload, id)` after `delayUs` (≥ 0) virtual µs. */
  setTimer(delayUs: DurationUs, payload?: unknown): TimerId;
  /** Cancels a pending timer; unknown or fired ids are ignored. */
  cancelTimer(id: TimerId): void;

  /** Uniform float in [0,1) from this actor's stream (`actor:<id>`). */
  random(): number;
  /**
   * A separate deterministic stream for one purpose of this actor (`actor:<id>/<name>`), so
   * that draws for, e.g., jitter do not shift the draws for process exit delays.
   */
  stream(name: string): Prng;
  /** A seeded nanoid (default 21 chars, URL-safe alphabet). */
  newId(size?: number, alphabet?: string): string;
  /** A seeded UUID-shaped id. */
  uuid(): string;

  /** Writes a trace record (kind + short message; data is for checkers, not digested). */
  trace(kind: string, msg: string, data?: Record<string, unknown>): void;
  /** Is a trace kind wanted by the run's trace filter? Lets actors skip building costly records. */
  tracing(kind: string): boolean;
  /**
   * Ends the run: every event earlier than now + the run's stop horizon is still processed on
   * every thread (so the end point does not depend on placement), then the run stops.
   */
  stopRun(reason: string): void;
  /** Adds `delta` to a named counter in the run's metrics (cheap; not traced). */
  count(name: string, delta?: number): void;
}

/** An actor instance: one incarnation's state plus its handlers. */
export interface Actor {
  /** Called once when the incarnation starts (run start, or restart after a crash). */
  start?(ctx: ActorContext): void;
  /** One message. */
  receive(ctx: ActorContext, env: Envelope): void;
  /** One timer set by this incarnation. */
  onTimer?(ctx: ActorContext, payload: unknown, id: TimerId): void;
}

/**
 * How a host thread creates an actor: it imports `module` (an absolute file URL, resolved by
 * whoever builds the run configuration) and calls its export `exportName` (default
 * `createActor`) with `(id, config)`. `config` must be msgpackr/structured-clone encodable.
 */
export interface ActorSpec {
  readonly id: ActorId;
  readonly module: string;
  readonly exportName?: string;
  readonly config?: unknown;
}

/** The signature a module exports for {@link ActorSpec}. */
export type ActorFactory = (id: ActorId, config: unknown) => Actor;
