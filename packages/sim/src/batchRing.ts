/**
 * Batch rings: one single-producer single-consumer byte ring per ordered pair of hosts in a
 * SharedArrayBuffer, the cheap path for window batches (DESIGN.md §10 "Batch everything that
 * crosses a thread"): writing a batch is a copy and one Atomics.store, taking it a copy and one
 * Atomics.store — no structured clone, no port lock, no buffer transfer (a MessagePort
 * round costs ~8 µs per small batch on the reference machine, more than encoding it).
 *
 * A record is a 4-byte length then the bytes, padded to 4; a record that would cross the end
 * leaves a WRAP marker and starts again at 0. Positions are cumulative byte counts (mod 2^32);
 * the producer publishes `tail` after writing (so a consumer that sees the new tail sees the
 * bytes, I1 in syncBoard.ts), the consumer publishes `head` after copying out. A batch that does
 * not fit (ring full, or larger than half the ring) is refused: the caller posts it on the
 * MessagePort instead, so a later batch in the ring can be taken before an earlier one on the
 * port: the receiving shell restores the stream's order by the batches' sequence numbers
 * (batch.ts BatchEncoder) and takes every announced one.
 */

const WRAP = 0xffffffff;
/** Budget for all rings of a run (bytes); each ring gets a power of two within [MIN, MAX]. */
const TOTAL_BYTES = 16 << 20;
const MIN_RING = 4 << 10;
const MAX_RING = 256 << 10;

export class BatchRings {
  /** Per ring: head, tail (Int32 views of u32 byte counters). */
  private readonly ctl: Int32Array;
  private readonly bytes: Uint8Array;
  private readonly words: DataView;
  readonly ringBytes: number;

  /** Bytes of shared memory for `hostCount` hosts (0 for a single host: no rings). */
  static bytes(hostCount: number): number {
    const rings = hostCount * hostCount;
    return hostCount < 2 ? 0 : 8 * rings + rings * BatchRings.ringSize(hostCount);
  }

  static ringSize(hostCount: number): number {
    const pairs = Math.max(1, hostCount * (hostCount - 1));
    let size = MAX_RING;
    while (size > MIN_RING && size * pairs > TOTAL_BYTES) size >>= 1;
    return size;
  }

  constructor(
    readonly sab: SharedArrayBuffer,
    private readonly n: number,
  ) {
    this.ringBytes = BatchRings.ringSize(n);
    const rings = n * n;
    this.ctl = new Int32Array(sab, 0, 2 * rings);
    this.bytes = new Uint8Array(sab, 8 * rings, rings * this.ringBytes);
    this.words = new DataView(sab, 8 * rings, rings * this.ringBytes);
  }

  /**
   * Host p writes one batch for host d. Returns false if it does not fit (the caller posts it
   * on the port instead). Only host p calls this for the pair p → d.
   */
  put(p: number, d: number, batch: Uint8Array): boolean {
    const size = this.ringBytes;
    const ring = p * this.n + d;
    const need = 4 + ((batch.length + 3) & ~3);
    if (need > size >>> 1) return false;
    const head = Atomics.load(this.ctl, 2 * ring) >>> 0;
    let tail = this.ctl[2 * ring + 1] >>> 0;
    let at = tail % size;
    // A record never crosses the end: leave a WRAP marker and start at 0.
    const waste = at + need > size ? size - at : 0;
    if (((tail - head) >>> 0) + waste + need > size) return false;
    const base = ring * size;
    if (waste > 0) {
      this.words.setUint32(base + at, WRAP, true);
      tail = (tail + waste) >>> 0;
      at = 0;
    }
    this.words.setUint32(base + at, batch.length, true);
    this.bytes.set(batch, base + at + 4);
    Atomics.store(this.ctl, 2 * ring + 1, (tail + need) | 0);
    return true;
  }

  /** Host d takes the next batch host p wrote (a fresh, unshared copy), or undefined. */
  take(p: number, d: number): Uint8Array | undefined {
    const size = this.ringBytes;
    const ring = p * this.n + d;
    const tail = Atomics.load(this.ctl, 2 * ring + 1) >>> 0;
    let head = this.ctl[2 * ring] >>> 0;
    if (head === tail) return undefined;
    const base = ring * size;
    let at = head % size;
    let len = this.words.getUint32(base + at, true);
    if (len === WRAP) {
      head = (head + size - at) >>> 0;
      at = 0;
      len = this.words.getUint32(base, true);
    }
    const out = this.bytes.slice(base + at + 4, base + at + 4 + len);
    Atomics.store(this.ctl, 2 * ring, (head + 4 + ((len + 3) & ~3)) | 0);
    return out;
  }
}
