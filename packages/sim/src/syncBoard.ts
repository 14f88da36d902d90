/**
 * The window board: the SharedArrayBuffer through which host threads run the conservative
 * windows (DESIGN.md §4, §9 "Synchronization") with no postMessage round trip per window.
 *
 * A round: the hosts that are *active* (have an event below their bound) drain the batches
 * announced to them, process, post their batches, publish Q (next own event), S (stop time) and
 * M[d] (earliest delivery among what they sent to host d this round), and arrive. The last to
 * arrive is the round's coordinator: it folds the figures into the view V (V_p = earliest event
 * host p can still process, messages in flight to it included; an idle host's V carries over,
 * lowered by what was sent to it), computes every host's bound
 * B_h = min(limit, min_{q≠h} (V_q + C[q][h])) and wakes only the hosts with V_h < B_h — point to
 * point, through each host's `go` word. A host also caps its own window as it sends: a message
 * to host d delivered at a may come back no earlier than a + C[d][h] (hostShell.ts), so a host
 * that sends nothing to other hosts runs up to B_h in one round. When min V ≥ limit (target or
 * stop time) the coordinator wakes everyone to pause.
 *
 * Invariants the protocol relies on (each step names the one it keeps):
 * - I1 post before announce: a batch is posted on its port before the sender raises its
 *   cumulative count `sent[p→d]`, and M is written before the sender arrives. A woken host
 *   drains every announced batch, so it holds every message of earlier rounds.
 * - I2 the view is a lower bound: at coordination, V_p ≤ every event p can still process.
 *   Active hosts publish Q after processing; a batch not yet drained by p is in M[·][p] of the
 *   round it was posted in; an idle host's queue has not changed since its V was computed.
 * - I3 bounds: an event processed by q in a round is ≥ V_q, so anything it causes at h, directly
 *   or through other hosts in later rounds, is ≥ V_q + C[q][h] ≥ B_h (C = shortest chain of
 *   minimum link latencies, placement.ts windowMatrix). What h itself sends comes back ≥ its cap.
 *   So no message reaches h below what h has processed (HostCore checks: causality violation).
 * - I4 one coordinator per round: the coordinator of round r writes ARRIVED = 0 and EXPECTED
 *   for round r + 1 before it wakes anyone; a host reads EXPECTED before it adds itself to
 *   ARRIVED (after its add the next round's count may already be written). Exactly one host
 *   sees ARRIVED reach EXPECTED, and it alone writes V, B, active, CMD until it wakes the next
 *   round.
 * - I5 one wake per round: go[h] moves only when h is woken (for a round it is active in, or to
 *   pause); h reads it before arriving, so "go ≠ seen" means exactly "woken since". After its
 *   first wake the coordinator reads no round state (the next round may already be complete and
 *   coordinated by another host): it decides its own part beforehand.
 * - I6 no lost wake-up: the waker bumps go then reads `sleeping`; the waiter raises `sleeping`
 *   then re-reads go (sequentially consistent: one sees the other), and every Atomics.wait is a
 *   bounded slice in a loop that re-checks go and the abort flag.
 * - I7 liveness is judged on progress, not on waiting: a host in RUN, DRAIN or SYNC beats as it
 *   works; a waiting host (WAIT) is stuck only if nothing anywhere moves (simulation.ts).
 *
 * Interrupt (a Ctrl-C of the user, Simulation.interrupt): the INTERRUPT word makes every host
 * end its round at its next beat (processing less than its bound allows is always safe: I3 is an
 * upper limit) and the coordinator pause everyone, so a long window ends within BEAT_EVERY
 * events instead of at its bound. The hosts then stand at different virtual times; an
 * interrupted run is not continued.
 *
 * Layout (H hosts). Int32 words: ABORT, ARRIVED, EXPECTED, FAILED+1, ROUND, CMD, INTERRUPT, 1 spare,
 * heartbeat[H], go[H], active[H], sleeping[H], state[H], waitOn[H], sent[H×H] (cumulative
 * batches p → d at p·H + d). Float64 words (8-aligned, after the int32 area): Q[H], S[H], V[H],
 * B[H], M[H×H] (p·H + d), T[H] (each host's virtual time), then the stop time and the earliest
 * pending event at the last pause.
 */

const I_ABORT = 0;
const I_ARRIVED = 1;
const I_EXPECTED = 2;
const I_FAILED = 3;
const I_ROUND = 4;
const I_CMD = 5;
/** Set by {@link SyncBoard.interrupt}: end the current round early and pause (a Ctrl-C). */
const I_INTERRUPT = 6;
const I_HEAD = 8;

/** What the coordinator told the hosts it woke. */
export const CMD_RUN = 1;
export const CMD_PAUSE = 2;

/** What a host is doing (its `state` word), for liveness diagnosis. */
export const STATE_OUT = 0;
/** Processing events of its window (an actor handler may be running). */
export const STATE_RUN = 1;
/** Taking announced batches from its ports (waitOn = the peer). */
export const STATE_DRAIN = 2;
/** Posting batches, publishing, arriving, coordinating. */
export const STATE_SYNC = 3;
/** Waiting for its go word (idle, or for the rest of the round to arrive). */
export const STATE_WAIT = 4;

const NEVER = Number.MAX_SAFE_INTEGER;

/** Why a wait for the go signal ended. `stalled`: nothing anywhere moved for the last-resort time. */
export type WaitOutcome = 'go' | 'aborted' | 'stalled';

export class SyncBoard {
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  private readonly n: number;
  private readonly iHb: number;
  private readonly iGo: number;
  private readonly iAct: number;
  private readonly iSleep: number;
  private readonly iState: number;
  private readonly iWaitOn: number;
  private readonly iSent: number;
  private readonly fQ = 0;
  private readonly fS: number;
  private readonly fV: number;
  private readonly fB: number;
  private readonly fM: number;
  private readonly fT: number;
  private readonly fStop: number;
  private readonly fNext: number;
  /** The coordinator's scratch list of hosts to wake. */
  private readonly toWake: number[];
  /** Test-only scheduling noise at the coordinator's steps (chaos.ts); undefined = off. */
  chaos: (() => void) | undefined = undefined;

  /** Bytes needed for `hostCount` hosts. */
  static bytes(hostCount: number): number {
    return SyncBoard.intBytes(hostCount) + 8 * (5 * hostCount + hostCount * hostCount + 2);
  }

  private static intBytes(n: number): number {
    return Math.ceil((4 * (I_HEAD + 6 * n + n * n)) / 8) * 8;
  }

  constructor(
    readonly sab: SharedArrayBuffer,
    readonly hostCount: number,
  ) {
    const n = hostCount;
    this.n = n;
    const ib = SyncBoard.intBytes(n);
    this.i32 = new Int32Array(sab, 0, ib / 4);
    this.f64 = new Float64Array(sab, ib, 5 * n + n * n + 2);
    this.iHb = I_HEAD;
    this.iGo = I_HEAD + n;
    this.iAct = I_HEAD + 2 * n;
    this.iSleep = I_HEAD + 3 * n;
    this.iState = I_HEAD + 4 * n;
    this.iWaitOn = I_HEAD + 5 * n;
    this.iSent = I_HEAD + 6 * n;
    this.fS = n;
    this.fV = 2 * n;
    this.fB = 3 * n;
    this.fM = 4 * n;
    this.fT = 4 * n + n * n;
    this.fStop = this.fT + n;
    this.fNext = this.fStop + 1;
    this.toWake = new Array<number>(n).fill(0);
  }

  // ---- set-up by the main thread, while every host is paused --------------------------------

  /** Prepares a segment: every host takes part in its opening round. */
  openSegment(): void {
    Atomics.store(this.i32, I_ARRIVED, 0);
    Atomics.store(this.i32, I_EXPECTED, this.n);
    for (let h = 0; h < this.n; h++) {
      Atomics.store(this.i32, this.iAct + h, 1);
      Atomics.store(this.i32, this.iState + h, STATE_OUT);
    }
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

  /** Announces that this host's figures are published (I4). True if it is the round's last (coordinator). */
  arrive(): boolean {
    // Read EXPECTED first: once this host has arrived, the coordinator may already be writing
    // the next round's count (reading it afterwards once made two hosts coordinate one round).
    const expected = Atomics.load(this.i32, I_EXPECTED);
    this.chaos?.();
    return Atomics.add(this.i32, I_ARRIVED, 1) + 1 === expected;
  }

  /** Records what host h is doing (STATE_*) and, for STATE_DRAIN, which peer it waits on. */
  setState(h: number, state: number, waitOn = -1): void {
    if (waitOn >= 0) Atomics.store(this.i32, this.iWaitOn + h, waitOn);
    Atomics.store(this.i32, this.iState + h, state);
  }

  /** Host h's virtual time (its last processed event), for diagnostics. */
  setNow(h: number, t: number): void {
    this.f64[this.fT + h] = t;
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

  /** Arrivals so far in the current round, and how many the round expects. */
  get arrivals(): { arrived: number; expected: number } {
    return { arrived: Atomics.load(this.i32, I_ARRIVED), expected: Atomics.load(this.i32, I_EXPECTED) };
  }

  state(h: number): number {
    return Atomics.load(this.i32, this.iState + h);
  }

  waitOn(h: number): number {
    return Atomics.load(this.i32, this.iWaitOn + h);
  }

  isActive(h: number): boolean {
    return Atomics.load(this.i32, this.iAct + h) === 1;
  }

  /** Host h's virtual time as it last published it. */
  now(h: number): number {
    return this.f64[this.fT + h];
  }

  /** A number that changes whenever any host makes progress (beats) or a round completes. */
  progress(): number {
    let s = Atomics.load(this.i32, I_ROUND);
    for (let h = 0; h < this.n; h++) s = (s + Atomics.load(this.i32, this.iHb + h)) | 0;
    return s;
  }

  /**
   * Waits until host h's go word moves past `seen` (I5, I6). Spins first, up to `spin` loads,
   * while it costs no peer a core (at most `cores` hosts awake: running or spinning); then
   * Atomics.wait in slices of `sliceMs`, re-checking go and the abort flag after each. Sets
   * {@link spun} to the loads it took when the spin caught the signal (-1 if it slept). Waiting is
   * not a failure: it returns `stalled` only when no host made progress and no round completed
   * for `lastResortMs` of wall time (the main thread diagnoses that first).
   */
  awaitGo(h: number, seen: number, spin: number, cores: number, sliceMs: number, lastResortMs: number): WaitOutcome {
    const i32 = this.i32;
    const at = this.iGo + h;
    Atomics.store(i32, this.iState + h, STATE_WAIT);
    let budget = spin;
    for (let k = 0; k < budget; k++) {
      if (Atomics.load(i32, at) !== seen) {
        this.spun = k;
        return 'go';
      }
      // Every 256 loads: stop spinning if the spinners and runners outnumber the cores.
      if ((k & 255) === 255 && this.awake() > cores) budget = 0;
    }
    this.spun = -1;
    // Announce the sleep before the last look (I6).
    Atomics.store(i32, this.iSleep + h, 1);
    let sig = this.progress();
    let still = 0;
    try {
      for (;;) {
        if (Atomics.load(i32, I_ABORT)) return 'aborted';
        if (Atomics.load(i32, at) !== seen) return 'go';
        if (Atomics.wait(i32, at, seen, sliceMs) === 'timed-out') {
          const s = this.progress();
          if (s !== sig) {
            sig = s;
            still = 0;
          } else if ((still += sliceMs) >= lastResortMs) {
            return 'stalled';
          }
        }
      }
    } finally {
      Atomics.store(i32, this.iSleep + h, 0);
    }
  }

  /** Loads the last {@link awaitGo} spun before the signal came, or -1 if it had to sleep. */
  spun = -1;

  /** Hosts not asleep in Atomics.wait (running, draining, spinning). */
  private awake(): number {
    let a = this.n;
    for (let p = 0; p < this.n; p++) a -= Atomics.load(this.i32, this.iSleep + p);
    return a;
  }

  // ---- the coordinator -----------------------------------------------------------------------

  /**
   * Run by the last host to arrive (I4). `c` is the window matrix (placement.ts windowMatrix),
   * `targetUs` the segment's target. Folds the round's figures into V (I2), then either wakes
   * the next round's active hosts (returns true if `self` is one of them: it continues at once)
   * or, when nothing can run before min(target, stop time), wakes everyone to pause.
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
    if (minV >= limit || Atomics.load(i32, I_INTERRUPT) !== 0) {
      f[this.fNext] = minV;
      Atomics.store(i32, I_CMD, CMD_PAUSE);
      for (let h = 0; h < n; h++) this.wake(h, h !== self);
      return false;
    }
    const wake = this.toWake;
    let active = 0;
    for (let h = 0; h < n; h++) {
      const b = windowBound(f, this.fV, c, n, h, limit);
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
    // I5: from the first wake on, the next round may complete and be coordinated by another
    // host, which rewrites the flags above: wake from the local list, decide for self first.
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

  // ---- interrupt ---------------------------------------------------------------------------

  /** Asks the hosts to pause at their next beat (any thread may call it, also mid-segment). */
  interrupt(): void {
    Atomics.store(this.i32, I_INTERRUPT, 1);
  }

  get interrupted(): boolean {
    return Atomics.load(this.i32, I_INTERRUPT) !== 0;
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

/**
 * Host h's window bound from the view: B_h = min(limit, min_{q≠h} (V_q + C[q][h])) (I3), with
 * `v[vOff + q]` = V_q and `c` the window matrix (row-major, n × n). The host's own pending events
 * do not bound it: what it sends caps its window as it goes (hostShell.ts).
 */
export function windowBound(v: ArrayLike<number>, vOff: number, c: readonly number[], n: number, h: number, limit: number): number {
  let b = limit;
  for (let q = 0; q < n; q++) {
    if (q === h) continue;
    const x = v[vOff + q] + c[q * n + h];
    if (x < b) b = x;
  }
  return b;
}
