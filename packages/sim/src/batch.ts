/**
 * One window's envelopes for one destination host, as one msgpackr buffer (DESIGN.md §5, §10).
 * Layout: `[bodies, numbers]`. `bodies` lists each distinct body object once — a multicast (the
 * same body sent to several actors of the destination) is encoded once per batch. `numbers`
 * holds 9 numbers per envelope: from, to, sentAt, at, seq, body index, kind (0 plain,
 * 1 request, 2 reply, 3 request sent with `failFast`), then requestId + incarnation
 * (kinds 1, 3) or replyTo + incarnation (kind 2).
 */
import { Packr, Unpackr } from 'msgpackr';
import { decode, encode, type Message } from '@podsim/api';
import type { WireEnvelope } from '@podsim/api/protocol/control';

const COLS = 9;

/**
 * Encodes envelopes into a fresh Uint8Array (safe to transfer), each body's record shapes
 * defined inline: decodable on its own, in any order. The window loop uses the stream codec
 * ({@link BatchEncoder}) instead.
 */
export function encodeBatch(envs: readonly WireEnvelope[]): Uint8Array {
  return encode(batchValue(envs));
}

/** The `[bodies, numbers]` value of a batch (layout in the module header). */
function batchValue(envs: readonly WireEnvelope[]): [Message[], number[]] {
  const bodies: Message[] = [];
  const index = new Map<Message, number>();
  const nums = new Array<number>(envs.length * COLS);
  let k = 0;
  for (const e of envs) {
    let bi = index.get(e.b);
    if (bi === undefined) {
      bi = bodies.length;
      bodies.push(e.b);
      index.set(e.b, bi);
    }
    nums[k] = e.f;
    nums[k + 1] = e.t;
    nums[k + 2] = e.s;
    nums[k + 3] = e.a;
    nums[k + 4] = e.q;
    nums[k + 5] = bi;
    if (e.r !== undefined) {
      nums[k + 6] = e.u === 1 ? 3 : 1;
      nums[k + 7] = e.r;
      nums[k + 8] = e.fi ?? 0;
    } else if (e.p !== undefined) {
      nums[k + 6] = 2;
      nums[k + 7] = e.p;
      nums[k + 8] = e.i ?? 0;
    } else {
      nums[k + 6] = 0;
      nums[k + 7] = 0;
      nums[k + 8] = 0;
    }
    k += COLS;
  }
  return [bodies, nums];
}

/** Decodes a batch; envelopes that shared a body in the sender share the decoded body. */
export function decodeBatch(bytes: Uint8Array): WireEnvelope[] {
  return envelopes(decode<[Message[], number[]]>(bytes));
}

/** The envelopes of a decoded `[bodies, numbers]` batch value. */
function envelopes([bodies, nums]: [Message[], number[]]): WireEnvelope[] {
  const n = nums.length / COLS;
  const out = new Array<WireEnvelope>(n);
  for (let j = 0, k = 0; j < n; j++, k += COLS) {
    const kind = nums[k + 6];
    // One object shape for every envelope (the engine's hot paths stay monomorphic).
    out[j] = {
      f: nums[k],
      t: nums[k + 1],
      s: nums[k + 2],
      a: nums[k + 3],
      q: nums[k + 4],
      b: bodies[nums[k + 5]],
      r: kind === 1 || kind === 3 ? nums[k + 7] : undefined,
      fi: kind === 1 || kind === 3 ? nums[k + 8] : undefined,
      u: kind === 3 ? 1 : undefined,
      p: kind === 2 ? nums[k + 7] : undefined,
      i: kind === 2 ? nums[k + 8] : undefined,
    };
  }
  return out;
}

/**
 * The codec options of {@link BatchEncoder} / {@link BatchDecoder}: the api codec's (records,
 * maps as objects), plus msgpackr's `sequential` stream mode. A fresh object per instance:
 * msgpackr stores the stream's structures array in the options object it is given, so a shared
 * one made every stream of a thread share (and misread) its shapes.
 */
const streamOptions = () => ({ useRecords: true, mapsAsObjects: true, moreTypes: false, sequential: true });

/** Bytes of the batch header: the batch's sequence number on its stream (u32, little-endian). */
const HEADER = 4;

/**
 * The encoding side of one batch stream (one host → one destination host). msgpackr's
 * `sequential` mode writes each record structure (an object shape: its key names) once per
 * stream, the first time the stream meets it, and refers to it by a one-byte id afterwards —
 * instead of redefining every shape in every batch, which cost ~40 % of the codec's time on
 * small batches (the per-actor placement: ~1.7 envelopes per batch). The receiver must
 * therefore decode the stream's batches in the order they were encoded: each batch starts with
 * its sequence number (1, 2, … — the same count the sender announces on the board), so that
 * {@link BatchDecoder} can refuse a gap instead of misreading a shape.
 */
export class BatchEncoder {
  private readonly packr = new Packr(streamOptions());
  private seq = 0;

  /** Encodes one batch (layout as {@link encodeBatch}) into a fresh Uint8Array, safe to transfer. */
  encode(envs: readonly WireEnvelope[]): Uint8Array {
    const packed = this.packr.pack(batchValue(envs));
    const out = new Uint8Array(HEADER + packed.length);
    new DataView(out.buffer).setUint32(0, ++this.seq, true);
    out.set(packed, HEADER);
    return out;
  }
}

/** The sequence number of a batch written by {@link BatchEncoder} (1 for a stream's first). */
export function batchSeq(bytes: Uint8Array): number {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
}

/**
 * The decoding side of one batch stream (see {@link BatchEncoder}). Throws if a batch comes out
 * of order (the caller, hostShell's drain, puts them in order first): decoding it would read
 * shapes the stream has not defined yet.
 */
export class BatchDecoder {
  private readonly unpackr = new Unpackr(streamOptions());
  private next = 1;

  decode(bytes: Uint8Array): WireEnvelope[] {
    const seq = batchSeq(bytes);
    if (seq !== this.next) throw new Error(`batch stream: got batch ${seq}, expected batch ${this.next}`);
    this.next++;
    // msgpackr's native string reader rejects views over a SharedArrayBuffer (STACK.md P9).
    const body = bytes.buffer instanceof SharedArrayBuffer ? bytes.slice(HEADER) : bytes.subarray(HEADER);
    return envelopes(this.unpackr.unpack(body) as [Message[], number[]]);
  }
}
