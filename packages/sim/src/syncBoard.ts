/**
 * The window board: the SharedArrayBuffer through which host threads synchronise the
 * conservative windows (DESIGN.md §4, §9 "Synchronization"). No postMessage round trip per
 * window: each host publishes its figures for round r into a double-buffered slot, then arrives
 * at a shared counter; everyone waits (short spin, then Atomics.wait with a timeout) until all
 * hosts have arrived, then reads the others' round-r figures.
 *
 * Layout (H hosts). Int32 words: ABORT, ARRIVED, FAILED_HOST+1, pad, heartbeat[H],
 * sent[H×H] (cumulative batches p → d, at p·H + d). Float64 words (8-aligned, after the int32
 * area), per parity k ∈ {0,1} and host p: next own event (Q), stop time (S), then the earliest
 * delivery of the messages p sent to each host d this round (M[d]).
 */

const I_ABORT = 0;
const I_ARRIVED = 1;
const I_FAILED = 2;
const I_HEARTBEAT = 4;

/** Why a wait for peers ended without them. */
export type WaitOutcome = 'ok' | 'aborted' | 'timeout';

export class SyncBoard {
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  private readonly sentBase: number;
  private readonly slotStride: number;
  private readonly parityStride: number;

  /** Bytes needed for `hostCount` hosts. */
  static bytes(hostCount: number): number {
    return SyncBoard.intBytes(hostCount) + 8 * 2 * hostCount * (2 + hostCount);
  }

  private static intBytes(hostCount: number): number {
    const words = I_HEARTBEAT + hostCount + hostCount * hostCount;
    return Math.ceil((4 * words) / 8) * 8;
  }

  constructor(
    readonly sab: SharedArrayBuffer,
    readonly hostCount: number,
  ) {
    const ib = SyncBoard.intBytes(hostCount);
    this.i32 = new Int32Array(sab, 0, ib / 4);
    this.f64 = new Float64Array(sab, ib, 2 * hostCount * (2 + hostCount));
    this.sentBase = I_HEARTBEAT + hostCount;
    this.slotStride = 2 + hostCount;
    this.parityStride = hostCount * this.slotStride;
  }

  // ---- figures -----------------------------------------------------------------------------

  /** Index of host p's slot for round r in {@link f64}: Q at +0, S at +1, M[d] at +2+d. */
  slot(r: number, p: number): number {
    return (r & 1) * this.parityStride + p * this.slotStride;
  }

  /** Cumulative number of batches host p has posted to host d. */
  sent(p: number, d: number): number {
    return Atomics.load(this.i32, this.sentBase + p * this.hostCount + d);
  }

  addSent(p: number, d: number): void {
    Atomics.add(this.i32, this.sentBase + p * this.hostCount + d, 1);
  }

  // ---- liveness and abort ------------------------------------------------------------------

  beat(h: number): void {
    Atomics.add(this.i32, I_HEARTBEAT + h, 1);
  }

  heartbeat(h: number): number {
    return Atomics.load(this.i32, I_HEARTBEAT + h);
  }

  get aborted(): boolean {
    return Atomics.load(this.i32, I_ABORT) !== 0;
  }

  /** Host that failed first (its own failure report wins), or -1. */
  get failedHost(): number {
    return Atomics.load(this.i32, I_FAILED) - 1;
  }

  /** Raises the abort flag and wakes every waiter. `host` (≥ 0) records who failed first. */
  abort(host = -1): void {
    if (host >= 0) Atomics.compareExchange(this.i32, I_FAILED, 0, host + 1);
    Atomics.store(this.i32, I_ABORT, 1);
    Atomics.notify(this.i32, I_ARRIVED);
  }

  // ---- the barrier -------------------------------------------------------------------------

  /** Announces that this host has published its round-r figures. */
  arrive(r: number): void {
    const v = Atomics.add(this.i32, I_ARRIVED, 1) + 1;
    if (v === Math.imul(this.hostCount, r)) Atomics.notify(this.i32, I_ARRIVED);
  }

  /**
   * Waits until every host has arrived for round r: `spin` loads first, then Atomics.wait in
   * slices of `sliceMs`, calling `onSlice` (heartbeat) between slices. Gives up when the abort
   * flag is raised, or after `timeoutMs` of wall time.
   */
  awaitAll(r: number, spin: number, sliceMs: number, timeoutMs: number, onSlice: () => void): WaitOutcome {
    const target = Math.imul(this.hostCount, r);
    const i32 = this.i32;
    let v = Atomics.load(i32, I_ARRIVED);
    if ((v - target) | 0) {
      for (let k = 0; k < spin && (v - target) | 0; k++) v = Atomics.load(i32, I_ARRIVED);
    }
    if (((v - target) | 0) >= 0) return Atomics.load(i32, I_ABORT) ? 'aborted' : 'ok';
    let waited = 0;
    for (;;) {
      if (Atomics.load(i32, I_ABORT)) return 'aborted';
      v = Atomics.load(i32, I_ARRIVED);
      if (((v - target) | 0) >= 0) return 'ok';
      const res = Atomics.wait(i32, I_ARRIVED, v, sliceMs);
      if (res === 'timed-out') {
        waited += sliceMs;
        onSlice();
        if (waited >= timeoutMs) return 'timeout';
      }
    }
  }
}
