/**
 * The window protocol in one thread, for deterministic interleaving tests: real HostShells (real
 * HostCores, SyncBoard, batch codec, window loop) wired through in-memory batch queues, driven
 * by a seeded scheduler instead of threads. A host that must wait for its go word yields (its
 * `steps` generator); at every synchronisation point — in the loop and inside the board's
 * arrive/coordinate — the scheduler may run steps of other hosts first, nested, which is how a
 * thread would be pre-empted there. Any interleaving a correct protocol allows must give the
 * LocalSimulation digest; a broken one shows up as a causality violation, a wrong digest or a
 * deadlock (no host can move).
 */
import type { Placement } from '@podsim/api/protocol/control';
import type { SegmentResult } from '@podsim/api/protocol/control';
import { DEFAULT_EPOCH_UNIX_SECONDS, NEVER } from '@podsim/api';
import { HostShell, type ShellInit } from '../../src/hostShell.js';
import { SyncBoard } from '../../src/syncBoard.js';
import { assignHosts, lookaheadMatrix, windowMatrix } from '../../src/placement.js';
import { combineDigests } from '../../src/digest.js';
import { DEFAULT_LATENCY } from '../../src/localSimulation.js';
import type { Workload } from './stressWorkload.js';

/** xorshift32 in [0, 1). */
export function rng(seed: number): () => number {
  let s = (Math.imul(seed + 1, 0x9e3779b1) ^ 0x6a09e667) | 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

export interface InterleaveOptions {
  /** Probability that a synchronisation point runs other hosts first. */
  readonly preempt: number;
  /** How deep pre-emptions may nest. */
  readonly depth: number;
  /** Segment targets before the final run to the end (pauses), virtual µs. */
  readonly pauses?: readonly number[];
  /**
   * Probability that a take returns the newest queued batch of a pair instead of the oldest, as
   * when a batch too big for its ring went over the port and the next one, in the ring, is taken
   * first (default 0: in order).
   */
  readonly overtake?: number;
}

export interface InterleaveResult {
  readonly digest: string;
  /** Times a point ran another host's steps in between. */
  readonly preemptions: number;
  readonly rounds: number;
}

/** Builds the hosts of `w` under `placement` in this thread and runs it to the end under scheduler `seed`. */
export async function runInterleaved(w: Workload, placement: Placement, seed: number, opts: InterleaveOptions): Promise<InterleaveResult> {
  const ids = w.actors.map((a) => a.id);
  const { hostCount: n, hostOf: assign } = assignHosts(ids, placement);
  const latency = w.latency ?? DEFAULT_LATENCY;
  const windowUs = windowMatrix(lookaheadMatrix(latency, assign, n), n);
  const allActorIds = [...ids].sort();
  const hostOf = allActorIds.map((id) => assign.get(id) ?? -1);
  const sab = new SharedArrayBuffer(SyncBoard.bytes(n));
  const board = new SyncBoard(sab, n);
  const queues: Uint8Array[][] = Array.from({ length: n * n }, () => []);
  // Its own stream, so that overtake = 0 leaves the scheduler's draws (and pinned schedules) as they were.
  const takeRandom = rng(seed + 0x5eed);
  const shells: HostShell[] = [];
  for (let h = 0; h < n; h++) {
    const s = new HostShell();
    const init: ShellInit = {
      hostIndex: h,
      hostCount: n,
      seed: w.seed,
      epochUnixSeconds: DEFAULT_EPOCH_UNIX_SECONDS,
      allActorIds,
      hostOf,
      local: w.actors.filter((a) => assign.get(a.id) === h),
      latency,
      faults: w.faults,
      traceFilter: 'none',
      windowUs,
      board: sab,
      peers: [],
      toMain: { postMessage: () => undefined },
      traceChunk: 1 << 30,
      hostTimeoutMs: 1_000,
    };
    await s.init(init);
    const q = (p: number) => queues[p * n + h];
    s.useTransport({
      post: (d, bytes) => queues[h * n + d].push(bytes),
      take: (p) => (q(p).length > 1 && takeRandom() < (opts.overtake ?? 0) ? q(p).pop() : q(p).shift()),
    });
    shells.push(s);
  }

  const random = rng(seed);
  let preemptions = 0;
  let depth = 0;
  const onStack = new Array<boolean>(n).fill(false);
  let gens: Array<Generator<number, SegmentResult, void>> = [];
  let waitingOn: Array<number | undefined> = [];
  let done: Array<SegmentResult | undefined> = [];
  const runnable = (h: number) => done[h] === undefined && !onStack[h] && (waitingOn[h] === undefined || board.go(h) !== waitingOn[h] || board.aborted);
  const step = (h: number) => {
    onStack[h] = true;
    try {
      if (waitingOn[h] !== undefined) {
        shells[h].waited = board.aborted ? 'aborted' : 'go';
        waitingOn[h] = undefined;
      }
      const r = gens[h].next();
      if (r.done) done[h] = r.value;
      else waitingOn[h] = r.value;
    } finally {
      onStack[h] = false;
    }
  };
  const pick = (): number => {
    const c: number[] = [];
    for (let h = 0; h < n; h++) if (runnable(h)) c.push(h);
    return c.length === 0 ? -1 : c[Math.floor(random() * c.length)];
  };
  for (const s of shells) {
    s.interleave(() => {
      if (depth >= opts.depth || random() >= opts.preempt) return;
      depth++;
      try {
        for (let k = 1 + Math.floor(random() * 3); k > 0; k--) {
          const h = pick();
          if (h < 0) break;
          preemptions++;
          step(h);
        }
      } finally {
        depth--;
      }
    });
  }

  for (const target of [...(opts.pauses ?? []), NEVER]) {
    board.openSegment();
    gens = shells.map((s) => s.steps(target));
    waitingOn = new Array(n).fill(undefined);
    done = new Array(n).fill(undefined);
    while (done.some((d) => d === undefined)) {
      const h = pick();
      if (h < 0) throw new Error(`deadlock: no host can move (round ${board.rounds}, ${JSON.stringify(board.arrivals)})`);
      step(h);
    }
    const failed = done.find((d) => d!.status !== 'paused');
    if (failed) throw new Error(`segment ${failed.status}: ${failed.failure?.message}`);
  }
  return { digest: combineDigests(shells.flatMap((s) => s.digests())), preemptions, rounds: board.rounds };
}
