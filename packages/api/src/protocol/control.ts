/**
 * Harness ↔ host-thread control plane (DESIGN.md §5 "Control plane"): the typed calls the main
 * thread makes on each host worker through comlink (start a run segment, inject envelopes and
 * faults, read metrics, digests and traces), and the wire shapes shared by every thread of one
 * run. Nothing here is on the hot path: per-window data travels as msgpackr batches over
 * MessagePorts and the window signals through a SharedArrayBuffer (packages/sim).
 */
import type { ActorId, ActorSpec, Message, TraceRecord } from '../actor.js';
import type { RunFailure } from '../errors.js';
import type { Fault } from '../faults.js';
import type { VirtualTime } from '../time.js';

/** Latency of one link: `minUs` + a uniform integer in [0, jitterUs], drawn per message. */
export interface LinkLatency {
  readonly minUs: number;
  readonly jitterUs: number;
}

/** Link latency model: the first matching override (actor patterns) wins, else `default`. */
export interface LatencyConfig {
  readonly default: LinkLatency;
  readonly links?: ReadonlyArray<LinkLatency & { readonly from: string; readonly to: string }>;
}

/** Which trace records are collected: all, none, or kinds starting with one of the prefixes. */
export type TraceFilter = 'all' | 'none' | readonly string[];

/**
 * Where actors run: `single` (one host thread), `per-actor` (one host thread per actor), or
 * `shards:N` (N host threads) or `nodes:N` (N host threads, each node's actors together, the
 * control plane on its own); see packages/sim/src/placement.ts for the assignment.
 */
export type Placement = 'single' | 'per-actor' | `shards:${number}` | `nodes:${number}`;

/**
 * An envelope as it crosses threads: actor indices (positions in the sorted list of all actor
 * ids of the run) instead of ids, short keys.
 */
export interface WireEnvelope {
  /** source actor index */
  f: number;
  /** destination actor index */
  t: number;
  /** sentAt, virtual µs */
  s: number;
  /** delivery time, virtual µs */
  a: number;
  /** source sequence */
  q: number;
  /** body */
  b: Message;
  /** requestId (when the sender expects a reply) */
  r?: number;
  /** sender incarnation (with r) */
  fi?: number;
  /** 1: a request sent with `failFast` (answered with RequestUnavailable when no connection can carry it) */
  u?: number;
  /** replyTo: the requestId this answers */
  p?: number;
  /** incarnation of the requester the reply is for */
  i?: number;
}

/**
 * Everything one host thread needs to take part in a run. Identical on every host except
 * `hostIndex`, `local` and the ports.
 */
export interface HostInit {
  readonly hostIndex: number;
  readonly hostCount: number;
  readonly seed: number;
  readonly epochUnixSeconds: number;
  /** Every actor id of the run, sorted (mailbox ids included). */
  readonly allActorIds: readonly ActorId[];
  /** Host index per actor index of `allActorIds`; -1 = a mailbox on the main thread. */
  readonly hostOf: readonly number[];
  /** The actors this host runs. */
  readonly local: readonly ActorSpec[];
  readonly latency: LatencyConfig;
  readonly faults: readonly Fault[];
  readonly traceFilter: TraceFilter;
  /**
   * Window bound matrix, row-major `hostCount × hostCount`, virtual µs: entry `q * hostCount + h`
   * is the least total minimum latency of a message chain from host q to host h (≥ 1 hop
   * between hosts; for q = h a round trip). Host h may run to `min_q (E_q + entry)`.
   */
  readonly windowUs: readonly number[];
  /** The run's window board (layout in packages/sim/src/syncBoard.ts). */
  readonly board: SharedArrayBuffer;
  /** Data ports to the other hosts, indexed by host (undefined at `hostIndex`). */
  readonly peers: ReadonlyArray<MessagePortLike | undefined>;
  /** Data port to the main thread (trace chunks). */
  readonly toMain: MessagePortLike;
  /** Trace records per shipped chunk. */
  readonly traceChunk: number;
  /** Bound on any single wait for peers, wall ms (the run is aborted by the main thread first). */
  readonly hostTimeoutMs: number;
  /** Spin iterations before Atomics.wait in the window barrier (tuning; default in sim). */
  readonly spin?: number;
}

/**
 * Structural stand-in for node:worker_threads' MessagePort, so that this vocabulary package
 * does not import the threads module (only packages/sim does).
 */
export interface MessagePortLike {
  postMessage(value: unknown, transferList?: readonly unknown[]): void;
}

/** How one run segment (`runUntil`) ended on one host. */
export interface SegmentResult {
  /** `paused`: reached the target, the stop horizon or quiescence; `aborted`: another host failed. */
  readonly status: 'paused' | 'failed' | 'aborted';
  readonly failure?: RunFailure;
  /** Earliest pending event anywhere when the segment paused (NEVER = quiescent). */
  readonly nextEventUs: VirtualTime;
  /** The run's stop time (NEVER until an actor called stopRun). */
  readonly stopAtUs: VirtualTime;
  /** This host's stop reason if its actor set `stopAtUs`. */
  readonly stopReason?: string;
  /** Time of the last event this host processed. */
  readonly lastEventUs: VirtualTime;
  /** Envelopes addressed to mailbox actors, sent during the segment. */
  readonly mailbox: WireEnvelope[];
}

/** Figures of one host thread. */
export interface HostMetrics {
  readonly host: number;
  readonly actors: number;
  /** Events processed (messages, timers, crash/restart). */
  readonly events: number;
  /** Messages sent by this host's actors (local and remote, after faults). */
  readonly messages: number;
  /** Window rounds this host took part in (the same on every host). */
  readonly windows: number;
  /** Rounds in which this host processed at least one event. */
  readonly busyWindows: number;
  /** Data batches posted to other hosts, and their encoded bytes. */
  readonly batchesSent: number;
  readonly bytesSent: number;
  /** Envelopes this host sent to other hosts. */
  readonly remoteMessages: number;
  /** Wall ms spent waiting for peers at the window barrier. */
  readonly waitMs: number;
  readonly counters: Record<string, number>;
}

/**
 * V8 heap of one host thread (`v8.getHeapStatistics()` read inside it): what the actors on it
 * hold, without the main thread's share of the process (checkers, trace, codec buffers).
 */
export interface HostHeapStatistics {
  readonly host: number;
  /** Bytes of live objects plus garbage not yet collected (`used_heap_size`). */
  readonly usedHeapBytes: number;
  /** Bytes V8 has reserved for this isolate's heap (`total_heap_size`). */
  readonly totalHeapBytes: number;
}

/** The calls each host thread serves over comlink. All run while the run is paused. */
export interface HostControl {
  /** Imports the actor modules and builds the host. Rejects if a module cannot be loaded. */
  init(init: HostInit): Promise<void>;
  /**
   * Runs windows until every pending event anywhere is at or after `min(targetUs, stop time)`.
   * Blocks the host thread for the whole segment.
   */
  segment(targetUs: VirtualTime): SegmentResult;
  /** Queues envelopes from the main thread (mailbox sends) into this host. */
  deliver(envs: WireEnvelope[]): void;
  /** Adds a fault at the paused time `nowUs` (crash faults in the past take effect then). */
  addFault(fault: Fault, nowUs: VirtualTime): void;
  /** Per-actor running digests of the local actors: `[actorId, hex]`. */
  digests(): Array<[string, string]>;
  metrics(): HostMetrics;
  /** This thread's V8 heap (benchmarks; a read, no collection is forced). */
  heapStatistics(): HostHeapStatistics;
  /**
   * Writes a V8 heap snapshot of this host thread to `path` (`v8.writeHeapSnapshot`; memory
   * diagnostics only: it blocks the thread for seconds on a large heap) and returns the path.
   */
  writeHeapSnapshot(path: string): string;
  /** Ships every buffered trace record to the main port now. */
  flushTraces(): void;
  /** Ends the host's part of the run: ships its traces and closes its data ports. */
  stop(): void;
}

/** One chunk of trace records, posted by a host on its main port. */
export interface TraceChunk {
  readonly host: number;
  readonly records: TraceRecord[];
}
