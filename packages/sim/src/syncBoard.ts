/**
 * The window board: the SharedArrayBuffer through which host threads run the conservative
 * windows (DESIGN.md §4, §9 "Synchronization") with no postMessage round trip per window.
 *
 * A round: the hosts that are *active* (have an event below their bound) process, post their
 * batches, publish Q (next own event), S (stop time) and M[d] (earliest delivery among what
 * they sent to host d this round), and arrive. The last to arrive is the round's coordinator:
 * it folds the figures into the view V (V_p = earliest pending event of host p, messages in
 * flight to it included; an idle host's V carries over, lowered by what was sent to it),
 * computes every host's bound B_h = min(limit, min_q (V_q + C[q][h])), and wakes only the
 * hosts with V_h < B_h — point to point, through each host's `go` word (a short spin, then
 * Atomics.wait). Idle hosts sleep through rounds; a coordinator that is active next round
 * continues without sleeping. When min V ≥ limit (target or stop time) it wakes everyone to
 * pause.
 *
 * Layout (H hosts). Int32 words: ABORT, ARRIVED, EXPECTED, FAILED+1, ROUND, CMD, 2 spare,
 * heartbeat[H], go[H], active[H], sleeping[H], sent[H×H] (cumulative batches p → d at
 * p·H + d). Float64
 * words (8-aligned, after the int32 area): Q[H], S[H], V[H], B[H], M[H×H] (p·H + d), then the
 * stop time and the earliest pending event at the last pause.
 */

const I_ABORT = 0;
const I_ARRIVED = 1;
const I_EXPECTED = 2;
const I_FAILED = 3;
const I_ROUND = 4;
const I_CMD = 5;
const I_HEAD = 8;

/** What the coordinator told the hosts it woke. */
export const CMD_RUN = 1;
export const CMD_PAUSE = 2;

const NEVER = Number.MAX_SAFE_INTEGER;

/** Why a wait for the go signal ended. */
export type WaitOutcome = 'go' | 'aborted' | 'timeout';

export class SyncBoard {
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  private readonly n: number;
  private readonly iHb: number;
  private readonly iGo: number;
  private readonly iAct: number;
  private readonly iSleep: number;
  private readonly iSent: number;
  private readonly fQ = 0;
  private readonly fS: number;
  private readonly fV: number;
  private readonly fB: number;
  private readonly fM: number;
  private readonly fStop: number;
  private readonly fNext: number;
  /** The coordinator's scratch list of hosts to wake. */
  private readonly toWake: number[];
  /** Test-only scheduling noise at the coordinator's steps (chaos.ts); undefined = off. */
  chaos: (() => void) | undefined = undefined;

  /** Bytes needed for `hostCount` hosts. */
  static bytes(hostCount: number): number {
    return SyncBoard.intBytes(hostCount) + 8 * (4 * hostCount + hostCount * hostCount + 2);
  }

  private static intBytes(n: number): number {
    return Math.ceil((4 * (I_HEAD + 4 * n + n * n)) / 8) * 8;
  }

  constructor(
    readonly sab: SharedArrayBuffer,
    readonly hostCount: number,
  ) {
    const n = hostCount;
    this.n = n;
    const ib = SyncBoard.intBytes(n);
    this.i32 = new Int32Array(sab, 0, ib / 4);
    this.f64 = new Float64Array(sab, ib, 4 * n + n * n + 2);
    this.iHb = I_HEAD;
    this.iGo = I_HEAD + n;
    this.iAct = I_HEAD + 2 * n;
    this.iSleep = I_HEAD + 3 * n;
    this.iSent = I_HEAD + 4 * n;
    this.fS = n;
    this.fV = 2 * n;
    this.fB = 3 * n;
    this.fM = 4 * n;
    this.fStop = 4 * n + n * n;
    this.fNext = this.fStop + 1;
    this.toWake = new Array<number>(n).fill(0);
  }

  // ---- set-up by the main thread, while every host is paused --------------------------------

  /** Prepares a segment: every host takes part in its opening round. */
  openSegment(): void {
    Atomics.store(this.i32, I_ARRIVED, 0);
    Atomics.store(this.i32, I_EXPECTED, this.n);
    for (let h = 0; h < this.n; h++) Atomics.store(this.i32, this.iAct + h, 1);
    if (this.f64[this.fStop] === 0) this.f64[this.fStop] = NEVER;
  }

  // ---- what one host publishes ---------------------------------------------------------------

  /** Host h's figures for the round it just finished (before {@link arrive}). */
  publish(h: number, q: number, stopAt: number): void {
    this.f64[this.fQ + h] = q;
    this.f64[this.fS + h] = stopAt;
  }

  /** Earliest delivery among what host p sent to host d this round (NEVER if nothing). */
  setM(p: number, d: number, at: number): void {
    this.f64[this.fM + p * this.n + d] = at;
  }

  /** Cumulative number of batches host p has posted to host d. */
  sent(p: number, d: number): number {
    return Atomics.load(this.i32, this.iSent + p * this.n + d);
  }

  addSent(p: number, d: number): void {
    Atomics.add(this.i32, this.iSent + p * this.n + d, 1);
  }

  /** Announces that this host's figures are published. True if it is the round's last (coordinator). */
  arrive(): boolean {
    // Read EXPECTED first: once this host has arrived, the coordinator may already be writing
    // the next round's count (reading it afterwards once made two hosts coordinate one round).
    const expected = Atomics.load(this.i32, I_EXPECTED);
    this.chaos?.();
    return Atomics.add(this.i32, I_ARRIVED, 1) + 1 === expected;
  }

  // ---- what a woken host reads -----------------------------------------------------------------

  go(h: number): number {
    return Atomics.load(this.i32, this.iGo + h);
  }

  get cmd(): number {
    return Atomics.load(this.i32, I_CMD);
  }

  /** Host h's bound for the round it was woken for (exclusive, virtual µs). */
  bound(h: number): number {
    return this.f64[this.fB + h];
  }

  /** The run's stop time as the coordinator knows it (NEVER until an actor called stopRun). */
  get stopAt(): number {
    return this.f64[this.fStop];
  }

  /** Earliest pending event anywhere at the last pause (NEVER = quiescent). */
  get nextEvent(): number {
    return this.f64[this.fNext];
  }

  /** Window rounds run so far (every round in which some host processed). */
  get rounds(): number {
    return Atomics.load(this.i32, I_ROUND);
  }

  /**
   * Waits until host h's go word moves past `seen`: `spin` loads first, then Atomics.wait in
   * slices of `sliceMs`, calling `onSlice` (heartbeat) between slices. Gives up when the abort
   * flag is raised, or after `timeoutMs` of wall time.
   */
  awaitGo(h: number, seen: number, spin: number, sliceMs: number, timeoutMs: number, onSlice: () => void): WaitOutcome {
    const i32 = this.i32;
    const at = this.iGo + h;
    for (let k = 0; k < spin; k++) if (Atomics.load(i32, at) !== seen) return 'go';
    // Announce the sleep before the last look: a waker that bumps `go` either sees the flag and
    // notifies, or bumped before our look (Atomics.wait then returns at once).
    Atomics.store(i32, this.iSleep + h, 1);
    let waited = 0;
    try {
      for (;;) {
        if (Atomics.load(i32, I_ABORT)) return 'aborted';
        if (Atomics.load(i32, at) !== seen) return 'go';
        if (Atomics.wait(i32, at, seen, sliceMs) === 'timed-out') {
          waited += sliceMs;
          onSlice();
          if (waited >= timeoutMs) return 'timeout';
        }
      }
    } finally {
      Atomics.store(i32, this.iSleep + h, 0);
    }
  }

  // ---- the coordinator -----------------------------------------------------------------------

  /**
   * Run by the last host to arrive. `c` is the window matrix (placement.ts windowMatrix),
   * `targetUs` the segment's target. Folds the round's figures into V, then either wakes the
   * next round's active hosts (returns true if `self` is one of them: it continues at once) or,
   * when nothing can run before min(target, stop time), wakes everyone to pause.
   */
  coordinate(self: number, c: readonly number[], targetUs: number): boolean {
    const n = this.n;
    const f = this.f64;
    const i32 = this.i32;
    let stopAt = f[this.fStop];
    for (let p = 0; p < n; p++) {
      if (!i32[this.iAct + p]) continue;
      f[this.fV + p] = f[this.fQ + p];
      if (f[this.fS + p] < stopAt) stopAt = f[this.fS + p];
    }
    for (let p = 0; p < n; p++) {
      if (!i32[this.iAct + p]) continue;
      const m = this.fM + p * n;
      for (let d = 0; d < n; d++) if (f[m + d] < f[this.fV + d]) f[this.fV + d] = f[m + d];
    }
    this.chaos?.();
    f[this.fStop] = stopAt;
    const limit = targetUs < stopAt ? targetUs : stopAt;
    let minV = NEVER;
    for (let p = 0; p < n; p++) if (f[this.fV + p] < minV) minV = f[this.fV + p];
    if (minV >= limit) {
      f[this.fNext] = minV;
      Atomics.store(i32, I_CMD, CMD_PAUSE);
      for (let h = 0; h < n; h++) this.wake(h, h !== self);
      return false;
    }
    const wake = this.toWake;
    let active = 0;
    for (let h = 0; h < n; h++) {
      let b = limit;
      for (let q = 0; q < n; q++) {
        const x = f[this.fV + q] + c[q * n + h];
        if (x < b) b = x;
      }
      f[this.fB + h] = b;
      const on = f[this.fV + h] < b ? 1 : 0;
      i32[this.iAct + h] = on;
      if (on) wake[active++] = h;
    }
    this.chaos?.();
    Atomics.store(i32, I_ARRIVED, 0);
    Atomics.store(i32, I_EXPECTED, active);
    Atomics.add(i32, I_ROUND, 1);
    Atomics.store(i32, I_CMD, CMD_RUN);
    // From the first wake on, the next round may complete and be coordinated by another host,
    // which rewrites the flags above: wake from the local list and decide for self beforehand.
    const selfActive = i32[this.iAct + self] === 1;
    for (let k = 0; k < active; k++) {
      this.wake(wake[k], wake[k] !== self);
      this.chaos?.();
    }
    return selfActive;
  }

  private wake(h: number, notify: boolean): void {
    Atomics.add(this.i32, this.iGo + h, 1);
    // Atomics.notify is costly (a global lock in V8, a futex syscall): skip it for a spinner.
    if (notify && Atomics.load(this.i32, this.iSleep + h)) Atomics.notify(this.i32, this.iGo + h);
  }

  // ---- liveness and abort --------------------------------------------------------------------

  beat(h: number): void {
    Atomics.add(this.i32, this.iHb + h, 1);
  }

  heartbeat(h: number): number {
    return Atomics.load(this.i32, this.iHb + h);
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
    for (let h = 0; h < this.n; h++) Atomics.notify(this.i32, this.iGo + h);
  }
}
