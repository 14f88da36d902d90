/**
 * The one msgpackr codec (DESIGN.md §5). Every thread encodes with its own `Packr` of the same
 * configuration: records on, record definitions written inline in each packed value (no shared
 * structures to keep in sync between threads), which a per-window batch amortises.
 *
 * `encode` copies the result out of msgpackr's shared scratch buffer (STACK.md P8): posting or
 * transferring the scratch-backed Buffer would clone 8 KB or detach earlier results.
 */
import { Packr } from 'msgpackr';

function makePackr(): Packr {
  return new Packr({ useRecords: true, mapsAsObjects: true, moreTypes: false });
}

let packr: Packr | undefined;

/** Encodes a plain value into a fresh, exactly-sized Uint8Array (safe to post or transfer). */
export function encode(value: unknown): Uint8Array {
  packr ??= makePackr();
  const scratch = packr.pack(value);
  const out = new Uint8Array(scratch.length);
  out.set(scratch);
  return out;
}

/**
 * Decodes what {@link encode} produced. Accepts views over SharedArrayBuffer too (copied first,
 * because msgpackr's native string reader rejects them: STACK.md P9).
 */
export function decode<T = unknown>(bytes: Uint8Array): T {
  packr ??= makePackr();
  const plain = bytes.buffer instanceof SharedArrayBuffer ? bytes.slice() : bytes;
  return packr.unpack(plain) as T;
}
