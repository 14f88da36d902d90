/**
 * Liveness of a threaded run (DESIGN.md §9 "Crashes": no run ever hangs, and a host that stops
 * answering ends the run with a useful message). Hosts publish on the board what they are doing
 * (syncBoard.ts STATE_*) and beat as they make progress; {@link StallWatch} runs on the main
 * thread and tells a stuck host from a waiting one: a host that waits for its next window is
 * idle, not stuck, however long it waits, as long as some host makes progress.
 */
import type { ActorId, RunFailure } from '@podsim/api';
import { STATE_DRAIN, STATE_OUT, STATE_RUN, STATE_SYNC, STATE_WAIT, type SyncBoard } from './syncBoard.js';

const NEVER = Number.MAX_SAFE_INTEGER;

/** Virtual µs as `1h2m3.000004s (3723000004 µs)` for messages. */
export function formatVirtual(us: number): string {
  if (!Number.isFinite(us) || us >= NEVER) return 'the end of time';
  const h = Math.floor(us / 3_600_000_000);
  const m = Math.floor((us % 3_600_000_000) / 60_000_000);
  const s = (us % 60_000_000) / 1_000_000;
  const hm = `${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}`;
  return `${hm}${s}s (${us} µs)`;
}

/** A host as the diagnosis names it. */
export interface HostLabel {
  readonly index: number;
  readonly actors: readonly ActorId[];
}

export function hostName(h: HostLabel): string {
  return `host ${h.index} (${h.actors.join(', ')})`;
}

/** What a host in `state` is doing, in words (for HostUnresponsive messages). */
export function describeState(board: SyncBoard, hosts: readonly HostLabel[], h: number): string {
  switch (board.state(h)) {
    case STATE_OUT:
      return 'it has not started the run segment (its thread is blocked or gone)';
    case STATE_RUN:
      return `it is processing its window up to ${formatVirtual(board.bound(h))} (an actor handler may be stuck)`;
    case STATE_DRAIN: {
      const p = board.waitOn(h);
      return `it waits for a batch that ${p >= 0 && p < hosts.length ? hostName(hosts[p]) : `host ${p}`} announced but that never arrived`;
    }
    case STATE_SYNC:
      return `it is posting its batches and arriving at the end of round ${board.rounds}`;
    case STATE_WAIT:
      return `it waits for its go signal (round ${board.rounds}: ${board.arrivals.arrived} of ${board.arrivals.expected} arrivals)`;
    default:
      return `unknown state ${board.state(h)}`;
  }
}

/**
 * The main thread's stall detector for one run segment. `check(nowMs, done)` (called every few
 * hundred wall ms) returns a HostUnresponsive failure when
 * - a host that is working (not waiting for its go signal, not done) shows no progress — no
 *   heartbeat, no change of state — for `timeoutMs`: that host is named, with its actors, its
 *   virtual time and what it is doing; or
 * - every host still in the segment waits for its go signal and no round completes for
 *   `timeoutMs` (a lost wake-up would look like this): every host is named.
 * Hosts waiting while others make progress are never reported, however long they wait.
 */
export class StallWatch {
  private readonly beats: number[];
  private readonly states: number[];
  private readonly since: number[];
  private progress: number;
  private progressSince: number;

  constructor(
    private readonly board: SyncBoard,
    private readonly hosts: readonly HostLabel[],
    private readonly timeoutMs: number,
    private readonly seed: number,
    nowMs: number,
  ) {
    this.beats = hosts.map((h) => board.heartbeat(h.index));
    this.states = hosts.map((h) => board.state(h.index));
    this.since = hosts.map(() => nowMs);
    this.progress = board.progress();
    this.progressSince = nowMs;
  }

  check(nowMs: number, done: readonly boolean[]): RunFailure | undefined {
    const board = this.board;
    const p = board.progress();
    if (p !== this.progress) {
      this.progress = p;
      this.progressSince = nowMs;
    }
    let waiting = 0;
    let inSegment = 0;
    for (const host of this.hosts) {
      const h = host.index;
      if (done[h]) continue;
      inSegment++;
      const b = board.heartbeat(h);
      const s = board.state(h);
      if (b !== this.beats[h] || s !== this.states[h]) {
        this.beats[h] = b;
        this.states[h] = s;
        this.since[h] = nowMs;
      }
      if (s === STATE_WAIT) {
        waiting++;
        continue;
      }
      if (nowMs - this.since[h] > this.timeoutMs) {
        const t = board.now(h);
        return {
          kind: 'HostUnresponsive',
          message: `${hostName(host)} made no progress for ${this.timeoutMs} ms at virtual ${formatVirtual(t)}: ${describeState(board, this.hosts, h)}`,
          actor: host.actors.length === 1 ? host.actors[0] : undefined,
          seed: this.seed,
          t,
        };
      }
    }
    if (inSegment > 0 && waiting === inSegment && nowMs - this.progressSince > this.timeoutMs) {
      let t = NEVER;
      for (const host of this.hosts) if (!done[host.index]) t = Math.min(t, board.now(host.index));
      const { arrived, expected } = board.arrivals;
      const active = this.hosts.filter((h) => board.isActive(h.index)).map(hostName);
      return {
        kind: 'HostUnresponsive',
        message:
          `no host made progress for ${this.timeoutMs} ms at virtual ${formatVirtual(t)}: every host waits for its go signal ` +
          `(round ${board.rounds}: ${arrived} of ${expected} arrivals; active: ${active.join('; ') || 'none'}) — a lost wake-up`,
        seed: this.seed,
        t,
      };
    }
    return undefined;
  }
}
