/**
 * The fan-out figures of `pnpm bench:engine` (`engineBench.ts`), computed from the measured runs
 * without running anything (so a test can pin their definitions). Only messages that crossed
 * between host threads went through the transport, so only they are compared with the raw
 * MessagePort rate; the single-thread rate is a figure of its own (no message crosses a thread).
 */

/** One measured engine run: wall seconds of `Simulation.run` (start-up excluded) and its counts. */
export interface MeasuredRun {
  readonly wallSeconds: number;
  /** Every message sent, in-thread deliveries included. */
  readonly messages: number;
  /** Messages that crossed between host threads. */
  readonly remoteMessages: number;
}

export interface FanoutFigures {
  /** All messages per wall second of the 2-thread run (in-thread deliveries included). */
  readonly engineMsgsPerSec: number;
  /** Cross-thread messages per wall second of the 2-thread run. */
  readonly remoteMsgsPerSec: number;
  /** remoteMsgsPerSec ÷ rawMsgsPerSec: the share of the raw port rate the engine's transport reaches. */
  readonly transportRatio: number;
  /** All messages per wall second of the same actors on one thread (no transport). */
  readonly singleMsgsPerSec: number;
}

/** Figures of a 2-thread run `shards` and a 1-thread run `single` of the same actors, against `rawMsgsPerSec`. */
export function fanoutFigures(shards: MeasuredRun, single: MeasuredRun, rawMsgsPerSec: number): FanoutFigures {
  const remoteMsgsPerSec = shards.wallSeconds > 0 ? shards.remoteMessages / shards.wallSeconds : 0;
  return {
    engineMsgsPerSec: shards.wallSeconds > 0 ? shards.messages / shards.wallSeconds : 0,
    remoteMsgsPerSec,
    transportRatio: rawMsgsPerSec > 0 ? remoteMsgsPerSec / rawMsgsPerSec : 0,
    singleMsgsPerSec: single.wallSeconds > 0 ? single.messages / single.wallSeconds : 0,
  };
}
