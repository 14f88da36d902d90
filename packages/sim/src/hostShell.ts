/**
 * One host thread of a threaded run: a {@link HostCore} plus the conservative window loop
 * (DESIGN.md §4, §9; the protocol is in syncBoard.ts). In each round this host is woken for:
 * drain every batch peers announced on the board (a batch is posted before its count is
 * raised, so it is always taken before the round runs); process every event below the bound
 * the coordinator computed, B_h = min(target, stop time, min_q (V_q + C(q→h))) with C the
 * shortest inter-host message chain (placement.ts windowMatrix); post one msgpackr batch per
 * destination host; publish Q, S, M; arrive — and coordinate the next round if last.
 *
 * Hosts with nothing below their bound are not woken. Waits are bounded; a failure raises the
 * board's abort flag so no peer waits for a host that will not come.
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { NEVER, type ActorFactory, type Fault, type RunFailure } from '@podsim/api';
import type { HostControl, HostInit, HostMetrics, SegmentResult, TraceChunk, WireEnvelope } from '@podsim/api/protocol/control';
import { HostCore, SimulationError } from './hostCore.js';
import { CMD_RUN, SyncBoard } from './syncBoard.js';
import { decodeBatch, encodeBatch } from './batch.js';
import { Chaos, type ChaosConfig } from './chaos.js';

/** HostInit plus the engine's test-only knobs (not part of the control-plane vocabulary). */
export interface ShellInit extends HostInit {
  readonly chaos?: ChaosConfig;
}

/** Events processed between liveness beats inside one long window. */
const BEAT_EVERY = 4096;
/** Atomics.wait slice while waiting for peers, wall ms. */
const WAIT_SLICE_MS = 20;
/** Spin before sleeping for the next window when the main thread gives none (loads of one word). */
export const DEFAULT_SPIN = 200;

/** Loads `spec.module` and returns its factory export. */
export async function loadFactory(module: string, exportName = 'createActor'): Promise<ActorFactory> {
  const mod = (await import(module)) as Record<string, unknown>;
  const f = mod[exportName];
  if (typeof f !== 'function') throw new Error(`actor module ${module} has no function export ${JSON.stringify(exportName)}`);
  return f as ActorFactory;
}

export class HostShell implements HostControl {
  private cfg!: HostInit;
  private core!: HostCore;
  private board!: SyncBoard;
  private peers: Array<MessagePort | undefined> = [];
  private toMain!: MessagePort;
  private h = 0;
  private n = 1;
  private spin = DEFAULT_SPIN;
  /** Outgoing envelopes of the current round, per destination host. */
  private out: WireEnvelope[][] = [];
  private outMin: number[] = [];
  private mailboxOut: WireEnvelope[] = [];
  private recv: number[] = [];
  private failure: RunFailure | undefined;
  /** Test-only scheduling noise at synchronisation points (undefined = off). */
  private chaos: Chaos | undefined;

  private busyWindows = 0;
  private batchesSent = 0;
  private bytesSent = 0;
  private remoteMessages = 0;
  private waitMs = 0;

  async init(cfg: ShellInit): Promise<void> {
    this.cfg = cfg;
    this.chaos = cfg.chaos && cfg.chaos.level > 0 ? new Chaos(cfg.chaos, cfg.hostIndex) : undefined;
    this.h = cfg.hostIndex;
    this.n = cfg.hostCount;
    this.spin = cfg.spin ?? DEFAULT_SPIN;
    this.board = new SyncBoard(cfg.board, cfg.hostCount);
    if (this.chaos) {
      const c = this.chaos;
      this.board.chaos = () => c.point();
    }
    this.peers = cfg.peers as Array<MessagePort | undefined>;
    this.toMain = cfg.toMain as MessagePort;
    this.out = Array.from({ length: this.n }, () => []);
    this.outMin = new Array<number>(this.n).fill(NEVER);
    this.recv = new Array<number>(this.n).fill(0);
    const local = await Promise.all(
      cfg.local.map(async (s) => ({ id: s.id, factory: await loadFactory(s.module, s.exportName), config: s.config })),
    );
    const hostOf = cfg.hostOf;
    this.core = new HostCore({
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
        if (env.a < this.outMin[d]) this.outMin[d] = env.a;
      },
    });
  }

  segment(targetUs: number): SegmentResult {
    if (this.failure) return this.result('failed');
    try {
      return this.runSegment(targetUs);
    } catch (err) {
      // A broken engine invariant (e.g. a causality violation): fail the run, never hang it.
      return this.fail(err);
    }
  }

  private runSegment(targetUs: number): SegmentResult {
    const board = this.board;
    const h = this.h;
    const core = this.core;
    const windows = this.cfg.windowUs;
    // The main thread diagnoses a stuck peer after hostTimeoutMs; this bound is the last resort.
    const lastResortMs = 2 * this.cfg.hostTimeoutMs + 1_000;
    try {
      // Start (time 0) on the first segment; its messages go out with the opening round.
      core.runUntil(0);
    } catch (err) {
      return this.fail(err);
    }
    // Opening round: every host takes part (the main thread armed the board for it).
    let seen = board.go(h);
    this.chaos?.point();
    if (!this.drain()) return this.aborted();
    this.publish();
    this.chaos?.point();
    let run = board.arrive() && board.coordinate(h, windows, targetUs);
    for (;;) {
      if (!run) {
        const t0 = performance.now();
        const w = board.awaitGo(h, seen, this.spin, WAIT_SLICE_MS, lastResortMs, () => board.beat(h));
        this.waitMs += performance.now() - t0;
        if (w === 'aborted') return this.aborted();
        if (w === 'timeout') {
          return this.fail(
            new SimulationError({
              kind: 'HostUnresponsive',
              message: `host ${h} waited more than ${lastResortMs} ms for the next window`,
              seed: this.cfg.seed,
            }),
          );
        }
        this.chaos?.point();
        if (board.cmd !== CMD_RUN) {
          this.shipTraces();
          return this.result('paused');
        }
      }
      seen = board.go(h);
      this.chaos?.point();
      // An active round: take every batch announced so far, learn the stop time, process.
      if (!this.drain()) return this.aborted();
      this.chaos?.point();
      const stopAt = board.stopAt;
      if (stopAt < core.stopAt) {
        // A peer's actor stopped the run earlier: its reason wins.
        core.stopAt = stopAt;
        core.stopReason = undefined;
      }
      const bound = board.bound(h);
      this.busyWindows++;
      try {
        while (core.runUntil(bound, BEAT_EVERY) === BEAT_EVERY) board.beat(h);
      } catch (err) {
        return this.fail(err);
      }
      this.publish();
      if (core.traces.length >= this.cfg.traceChunk) this.shipTraces();
      board.beat(h);
      this.chaos?.point();
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

  flushTraces(): void {
    this.shipTraces();
  }

  stop(): void {
    this.shipTraces();
    for (const p of this.peers) p?.close();
    this.toMain.close();
  }

  // ---- internals ---------------------------------------------------------------------------

  /** Posts this round's batches, then writes Q, S and M on the board (before arriving). */
  private publish(): void {
    const board = this.board;
    for (let d = 0; d < this.n; d++) {
      const envs = this.out[d];
      if (envs.length > 0) {
        const bytes = encodeBatch(envs);
        this.peers[d]!.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
        this.chaos?.point();
        board.addSent(this.h, d);
        this.batchesSent++;
        this.bytesSent += bytes.length;
        this.remoteMessages += envs.length;
        this.out[d] = [];
      }
      this.chaos?.point();
      board.setM(this.h, d, this.outMin[d]);
      this.outMin[d] = NEVER;
    }
    this.chaos?.point();
    board.publish(this.h, this.core.nextEventTime(), this.core.stopAt);
  }

  /** Takes every batch peers announced on the board. False if the run was aborted meanwhile. */
  private drain(): boolean {
    for (let p = 0; p < this.n; p++) {
      if (p === this.h) continue;
      const expected = this.board.sent(p, this.h);
      let spins = 0;
      let since = 0;
      while (this.recv[p] < expected) {
        const m = receiveMessageOnPort(this.peers[p]!);
        if (m === undefined) {
          // The batch is posted before the count is raised, so this should not happen; stay
          // bounded anyway.
          if (++spins % 1024 === 0) {
            if (this.board.aborted) return false;
            since ||= performance.now();
            if (performance.now() - since > this.cfg.hostTimeoutMs) {
              throw new Error(`batch ${this.recv[p] + 1} from host ${p} was announced but never arrived`);
            }
          }
          continue;
        }
        this.core.deliverRemote(decodeBatch(m.message as Uint8Array));
        this.recv[p]++;
        this.chaos?.point();
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
