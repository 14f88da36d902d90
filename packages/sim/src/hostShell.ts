/**
 * One host thread of a threaded run: a {@link HostCore} plus the conservative window loop
 * (DESIGN.md §4, §9; the protocol and the invariants I1–I7 it relies on are in syncBoard.ts).
 * In each round this host is woken for it
 * 1. drains every batch peers announced on the board (I1: posted before announced, so all of
 *    them are there);
 * 2. processes every event below the coordinator's bound B_h = min(target, stop time,
 *    min_{q≠h} (V_q + C[q][h])) and below its own cap: each message it sends to host d,
 *    delivered at a, lowers the cap to a + C[d][h], the earliest a reply could be back (I3);
 * 3. writes one msgpackr batch per destination host (its shared ring, or its port if the batch
 *    does not fit), then raises the counts (I1), publishes Q, S, M and arrives (reading
 *    EXPECTED first, I4) — and coordinates the next round if last.
 * Each ordered pair of hosts is one batch stream (batch.ts BatchEncoder): a record shape is
 * written once per stream, so batches are decoded in the order they were sent — a batch that
 * came early (ring and port can overtake each other) waits in {@link HostShell.early}.
 * Hosts with nothing below their bound are not woken. Every wait is a loop of bounded slices
 * that re-checks its condition (I6); waiting for a window is not a failure (I7). A failure
 * raises the board's abort flag so no peer waits for a host that will not come.
 */
import { availableParallelism } from 'node:os';
import { getHeapStatistics, writeHeapSnapshot } from 'node:v8';
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { NEVER, type ActorFactory, type Fault, type RunFailure } from '@podsim/api';
import type { HostControl, HostHeapStatistics, HostInit, HostMetrics, SegmentResult, TraceChunk, WireEnvelope } from '@podsim/api/protocol/control';
import { HostCore, SimulationError } from './hostCore.js';
import { CMD_RUN, STATE_DRAIN, STATE_OUT, STATE_RUN, STATE_SYNC, SyncBoard, type WaitOutcome } from './syncBoard.js';
import { BatchDecoder, BatchEncoder, batchSeq } from './batch.js';
import { Chaos, type ChaosConfig } from './chaos.js';
import { BatchRings } from './batchRing.js';
import { formatVirtual } from './liveness.js';

/** HostInit plus what only the engine itself passes (not part of the control-plane vocabulary). */
export interface ShellInit extends HostInit {
  /** Batch rings between the hosts (batchRing.ts); absent: every batch goes over the ports. */
  readonly rings?: SharedArrayBuffer;
  /** Test-only scheduling noise (chaos.ts). */
  readonly chaos?: ChaosConfig;
}

/**
 * Events processed between liveness beats inside one long window: small, so that a window of
 * slow handlers (ms each) is never mistaken for a stuck one; a beat costs a few ns.
 */
const BEAT_EVERY = 32;
/** Atomics.wait slice while waiting for peers, wall ms. */
const WAIT_SLICE_MS = 20;
/**
 * Most loads of its go word a waiting host spins before sleeping (while hosts awake ≤ cores),
 * a few µs. The budget adapts: it doubles towards this when spins catch the signal and halves
 * (to 64) when they do not. Longer spins measured no faster on the reference machine (a 2-vCPU
 * VM: a futex hand-off costs 4–60 µs, and spinners delay the host they wait for under load).
 */
export const DEFAULT_SPIN = 2_000;
const MIN_SPIN = 64;

/** How batches travel between hosts: MessagePorts between threads, queues in protocol tests. */
export interface BatchTransport {
  /** Posts one encoded batch to host d (transferring its buffer). */
  post(d: number, bytes: Uint8Array): void;
  /** The next batch from host p, or undefined if none is there. */
  take(p: number): Uint8Array | undefined;
}

/**
 * Batches of host h: through the shared rings when they fit, else over the MessagePorts. A host
 * takes from its ring first, then from its port (the order of batches does not matter).
 */
function threadTransport(h: number, peers: ReadonlyArray<MessagePort | undefined>, rings: BatchRings | undefined): BatchTransport {
  return {
    post: (d, bytes) => {
      if (!rings?.put(h, d, bytes)) peers[d]!.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
    },
    take: (p) => rings?.take(p, h) ?? (receiveMessageOnPort(peers[p]!)?.message as Uint8Array | undefined),
  };
}

/** Loads `spec.module` and returns its factory export. */
export async function loadFactory(module: string, exportName = 'createActor'): Promise<ActorFactory> {
  const mod = (await import(module)) as Record<string, unknown>;
  const f = mod[exportName];
  if (typeof f !== 'function') throw new Error(`actor module ${module} has no function export ${JSON.stringify(exportName)}`);
  return f as ActorFactory;
}

export class HostShell implements HostControl {
  private cfg!: ShellInit;
  private core!: HostCore;
  private board!: SyncBoard;
  private peers: Array<MessagePort | undefined> = [];
  private toMain!: MessagePort;
  private h = 0;
  private n = 1;
  private spin = DEFAULT_SPIN;
  /** Current adaptive spin budget (MIN_SPIN … spin). */
  private spinBudget = MIN_SPIN;
  private cores = 1;
  /** Outgoing envelopes of the current round, per destination host. */
  private out: WireEnvelope[][] = [];
  private outMin: number[] = [];
  /** C[d][h] per destination d: a message delivered at host d at a may be back here at a + this. */
  private backUs: number[] = [];
  private mailboxOut: WireEnvelope[] = [];
  private recv: number[] = [];
  /** One batch stream per peer: the encoder towards it, the decoder of what it sends. */
  private encoders: BatchEncoder[] = [];
  private decoders: BatchDecoder[] = [];
  /**
   * Batches taken before their turn, per peer, by sequence number: a batch too big for its ring
   * goes over the port, and the next one, back in the ring, can be taken first (or be taken
   * before it is announced).
   */
  private early: Array<Map<number, Uint8Array>> = [];
  private failure: RunFailure | undefined;
  /**
   * Called at every synchronisation point (undefined = nothing): the chaos option's noise in
   * threads, or the in-memory protocol tests' interleaver (see {@link interleave}).
   */
  private point: (() => void) | undefined;
  /** How the last wait for the go word ended (set by the driver of {@link steps}). */
  waited: WaitOutcome = 'go';
  private transport!: BatchTransport;

  private busyWindows = 0;
  /** The board's INTERRUPT word, read between events (Simulation.interrupt). */
  private readonly isInterrupted = (): boolean => this.board.interrupted;
  private batchesSent = 0;
  private bytesSent = 0;
  private remoteMessages = 0;
  private waitMs = 0;

  async init(cfg: ShellInit): Promise<void> {
    this.cfg = cfg;
    this.h = cfg.hostIndex;
    this.n = cfg.hostCount;
    this.spin = cfg.spin ?? DEFAULT_SPIN;
    this.cores = availableParallelism();
    this.board = new SyncBoard(cfg.board, cfg.hostCount);
    if (cfg.chaos && cfg.chaos.level > 0) {
      const c = new Chaos(cfg.chaos, cfg.hostIndex);
      this.interleave(() => c.point());
    }
    this.peers = cfg.peers as Array<MessagePort | undefined>;
    this.transport = threadTransport(this.h, this.peers, cfg.rings ? new BatchRings(cfg.rings, this.n) : undefined);
    this.toMain = cfg.toMain as MessagePort;
    this.out = Array.from({ length: this.n }, () => []);
    this.outMin = new Array<number>(this.n).fill(NEVER);
    this.backUs = Array.from({ length: this.n }, (_, d) => (d === this.h ? NEVER : cfg.windowUs[d * this.n + this.h]));
    this.recv = new Array<number>(this.n).fill(0);
    this.encoders = Array.from({ length: this.n }, () => new BatchEncoder());
    this.decoders = Array.from({ length: this.n }, () => new BatchDecoder());
    this.early = Array.from({ length: this.n }, () => new Map<number, Uint8Array>());
    const local = await Promise.all(
      cfg.local.map(async (s) => ({ id: s.id, factory: await loadFactory(s.module, s.exportName), config: s.config })),
    );
    const hostOf = cfg.hostOf;
    const core = new HostCore({
      seed: cfg.seed,
      epochUnixSeconds: cfg.epochUnixSeconds,
      allActorIds: cfg.allActorIds,
      local,
      latency: cfg.latency,
      faults: cfg.faults,
      traceFilter: cfg.traceFilter,
      routeRemote: (env) => {
        const d = hostOf[env.t];
        if (d < 0) {
          this.mailboxOut.push(env);
          return;
        }
        this.out[d].push(env);
        if (env.a < this.outMin[d]) {
          this.outMin[d] = env.a;
          // I3: whatever this message causes can be back here no earlier than a + C[d][h].
          const back = env.a + this.backUs[d];
          if (back < core.windowCap) core.windowCap = back;
        }
      },
    });
    this.core = core;
  }

  segment(targetUs: number): SegmentResult {
    if (this.failure) return this.result('failed');
    const board = this.board;
    const h = this.h;
    // The main thread diagnoses a stuck run after hostTimeoutMs; this bound is the last resort
    // (nothing anywhere moved for this long: the main thread itself is gone or blocked).
    const lastResortMs = 2 * this.cfg.hostTimeoutMs + 1_000;
    try {
      const rounds = this.steps(targetUs);
      for (;;) {
        const step = rounds.next();
        if (step.done) return step.value;
        // The loop waits for its go word to move past step.value.
        const t0 = performance.now();
        const w = board.awaitGo(h, step.value, this.spinBudget, this.cores, WAIT_SLICE_MS, lastResortMs);
        this.waitMs += performance.now() - t0;
        // Adaptive spinning: grow the budget when spinning caught the signal, shrink it when not.
        if (board.spun >= 0) this.spinBudget = Math.min(this.spin, Math.max(this.spinBudget, 2 * board.spun + MIN_SPIN));
        else this.spinBudget = Math.max(MIN_SPIN, this.spinBudget >> 1);
        if (w === 'stalled') {
          const { arrived, expected } = board.arrivals;
          const now = this.core.now;
          return this.fail(
            new SimulationError({
              kind: 'HostUnresponsive',
              message:
                `host ${h} (${this.cfg.local.map((a) => a.id).join(', ')}) waited ${lastResortMs} ms for its go signal at virtual ` +
                `${formatVirtual(now)} while no host made progress (round ${board.rounds}: ${arrived} of ${expected} arrivals)`,
              actor: this.cfg.local.length === 1 ? this.cfg.local[0].id : undefined,
              seed: this.cfg.seed,
              t: now,
            }),
          );
        }
        this.waited = w;
      }
    } catch (err) {
      // A broken engine invariant (e.g. a causality violation): fail the run, never hang it.
      return this.fail(err);
    }
  }

  /**
   * One run segment as a sequence of steps: yields the `seen` value of this host's go word
   * whenever it must wait for it to move (the driver then blocks — {@link segment} — or, in the
   * in-memory protocol tests, runs other hosts) and reads the outcome from {@link waited}.
   * Returns the segment's result; throws on a broken invariant (the driver fails the run).
   */
  *steps(targetUs: number): Generator<number, SegmentResult, void> {
    const board = this.board;
    const h = this.h;
    const core = this.core;
    const windows = this.cfg.windowUs;
    board.setState(h, STATE_SYNC);
    // Start (time 0) on the first segment; its messages go out with the opening round.
    core.runUntil(0);
    // Opening round: every host takes part (the main thread armed the board for it).
    let seen = board.go(h);
    this.point?.();
    if (!this.drain()) return this.aborted();
    this.publish();
    this.point?.();
    let run = board.arrive() && board.coordinate(h, windows, targetUs);
    for (;;) {
      if (!run) {
        yield seen;
        if (this.waited === 'aborted' || board.aborted) return this.aborted();
        this.point?.();
        board.setState(h, STATE_SYNC);
        if (board.cmd !== CMD_RUN) {
          this.shipTraces();
          board.setState(h, STATE_OUT);
          return this.result('paused');
        }
      }
      seen = board.go(h);
      this.point?.();
      // An active round: take every batch announced so far (I1), learn the stop time, process.
      if (!this.drain()) return this.aborted();
      this.point?.();
      const stopAt = board.stopAt;
      if (stopAt < core.stopAt) {
        // A peer's actor stopped the run earlier: its reason wins.
        core.stopAt = stopAt;
        core.stopReason = undefined;
      }
      const bound = board.bound(h);
      this.busyWindows++;
      board.setNow(h, core.nextEventTime());
      board.setState(h, STATE_RUN);
      core.windowCap = NEVER;
      while (core.runUntil(bound, BEAT_EVERY, this.isInterrupted) === BEAT_EVERY) {
        board.setNow(h, core.now);
        board.beat(h);
        this.point?.();
        // Interrupted (Ctrl-C): end the round here; the coordinator pauses everyone.
        if (board.interrupted) break;
      }
      board.setNow(h, core.now);
      board.setState(h, STATE_SYNC);
      this.publish();
      if (core.traces.length >= this.cfg.traceChunk) this.shipTraces();
      board.beat(h);
      this.point?.();
      run = board.arrive() && board.coordinate(h, windows, targetUs);
    }
  }

  deliver(envs: WireEnvelope[]): void {
    this.core.deliverRemote(envs);
  }

  addFault(fault: Fault, nowUs: number): void {
    if (nowUs > this.core.now) this.core.now = nowUs;
    this.core.addFault(fault);
  }

  digests(): Array<[string, string]> {
    return this.core.digests();
  }

  metrics(): HostMetrics {
    return {
      host: this.h,
      actors: this.cfg.local.length,
      events: this.core.processed,
      messages: this.core.messagesSent,
      windows: this.board.rounds,
      busyWindows: this.busyWindows,
      batchesSent: this.batchesSent,
      bytesSent: this.bytesSent,
      remoteMessages: this.remoteMessages,
      waitMs: Math.round(this.waitMs),
      counters: Object.fromEntries(this.core.counters),
    };
  }

  /** This thread's V8 heap: the actors' objects plus garbage not yet collected (no GC is forced). */
  heapStatistics(): HostHeapStatistics {
    const h = getHeapStatistics();
    return { host: this.h, usedHeapBytes: h.used_heap_size, totalHeapBytes: h.total_heap_size };
  }

  /** Writes this thread's heap snapshot to `path` (memory diagnostics; blocks the thread). */
  writeHeapSnapshot(path: string): string {
    return writeHeapSnapshot(path);
  }

  flushTraces(): void {
    this.shipTraces();
  }

  stop(): void {
    this.shipTraces();
    for (const p of this.peers) p?.close();
    this.toMain.close();
  }

  /**
   * Test hook: `point` runs at every synchronisation point of this host, in the window loop and
   * in the board's arrive/coordinate steps (the in-memory protocol tests run other hosts there).
   */
  interleave(point: () => void): void {
    this.point = point;
    this.board.chaos = point;
  }

  /** Test hook: batches travel through `t` instead of the MessagePorts of init. */
  useTransport(t: BatchTransport): void {
    this.transport = t;
  }

  // ---- internals ---------------------------------------------------------------------------

  /** Posts this round's batches, then writes Q, S and M on the board (before arriving). */
  private publish(): void {
    const board = this.board;
    for (let d = 0; d < this.n; d++) {
      const envs = this.out[d];
      if (envs.length > 0) {
        const bytes = this.encoders[d].encode(envs);
        this.transport.post(d, bytes);
        this.point?.();
        board.addSent(this.h, d);
        this.batchesSent++;
        this.bytesSent += bytes.length;
        this.remoteMessages += envs.length;
        this.out[d] = [];
      }
      this.point?.();
      board.setM(this.h, d, this.outMin[d]);
      this.outMin[d] = NEVER;
    }
    this.point?.();
    board.publish(this.h, this.core.nextEventTime(), this.core.stopAt);
  }

  /** Takes every batch peers announced on the board. False if the run was aborted meanwhile. */
  private drain(): boolean {
    for (let p = 0; p < this.n; p++) {
      if (p === this.h) continue;
      const expected = this.board.sent(p, this.h);
      let spins = 0;
      let since = 0;
      const early = this.early[p];
      while (this.recv[p] < expected) {
        const want = this.recv[p] + 1;
        let bytes = early.get(want);
        if (bytes !== undefined) early.delete(want);
        else bytes = this.transport.take(p);
        if (bytes === undefined) {
          // I1 says this cannot happen (posted before announced); stay bounded anyway, and let
          // the main thread see what this host waits for.
          if (spins === 0) this.board.setState(this.h, STATE_DRAIN, p);
          if (++spins % 1024 === 0) {
            if (this.board.aborted) return false;
            since ||= performance.now();
            if (performance.now() - since > this.cfg.hostTimeoutMs) {
              throw new Error(`batch ${this.recv[p] + 1} from host ${p} was announced but did not arrive within ${this.cfg.hostTimeoutMs} ms`);
            }
          }
          continue;
        }
        if (spins > 0) {
          this.board.setState(this.h, STATE_SYNC);
          spins = 0;
          since = 0;
        }
        const seq = batchSeq(bytes);
        if (seq !== want) {
          // Sent after the one this stream needs next: keep it for its turn.
          early.set(seq, bytes);
          continue;
        }
        this.core.deliverRemote(this.decoders[p].decode(bytes));
        this.recv[p]++;
        this.point?.();
      }
    }
    return true;
  }

  private shipTraces(): void {
    if (this.core.traces.length === 0) return;
    const chunk: TraceChunk = { host: this.h, records: this.core.drainTraces() };
    this.toMain.postMessage(chunk);
  }

  /** Another host failed: ship what was recorded here and stop. */
  private aborted(): SegmentResult {
    this.board.setState(this.h, STATE_OUT);
    this.shipTraces();
    return this.result('aborted');
  }

  private fail(err: unknown): SegmentResult {
    const failure: RunFailure =
      err instanceof SimulationError
        ? err.failure
        : {
            kind: 'HostDied',
            message: `host ${this.h} failed: ${err instanceof Error ? err.message : String(err)}`,
            seed: this.cfg.seed,
            t: this.core.now,
            stack: err instanceof Error ? err.stack : undefined,
          };
    this.failure = failure;
    this.board.setState(this.h, STATE_OUT);
    this.board.abort(this.h);
    this.shipTraces();
    return this.result('failed');
  }

  private result(status: SegmentResult['status']): SegmentResult {
    const mailbox = this.mailboxOut;
    this.mailboxOut = [];
    const stopAt = Math.min(this.core.stopAt, this.board.stopAt);
    return {
      status,
      failure: this.failure,
      nextEventUs: status === 'paused' ? this.board.nextEvent : NEVER,
      stopAtUs: stopAt,
      // Only the host whose own actor set the run's stop time reports a reason.
      stopReason: this.core.stopAt === stopAt ? this.core.stopReason : undefined,
      lastEventUs: this.core.now,
      mailbox,
    };
  }
}
