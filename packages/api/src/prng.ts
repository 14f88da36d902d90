/**
 * Seeded pseudo-random numbers. Algorithm: sfc32 (Chris Doty-Humphrey's Small Fast Counting
 * generator, from PractRand), seeded through cyrb128 string hashing. Each purpose gets its own
 * stream derived from the run seed and a stable name (DESIGN.md §9 "Randomness streams"), so
 * adding draws in one place never shifts the draws of another.
 */

/** cyrb128: a 128-bit string hash (public domain, bryc). Returns four 32-bit words. */
export function cyrb128(str: string): [number, number, number, number] {
  let h1 = 1779033703, h2 = 3144134277, h3 = 1013904242, h4 = 2773480762;
  for (let i = 0, k; i < str.length; i++) {
    k = str.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

/** A seeded generator. Not thread-shared: every actor and purpose owns its own instance. */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** `key` is any stable string, usually `${seed}/${purpose}` (see {@link deriveStream}). */
  constructor(key: string) {
    [this.a, this.b, this.c, this.d] = cyrb128(key);
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  /** Uniform 32-bit unsigned integer. */
  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform float in [0, 1). */
  float(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [0, n). `n` must be a positive integer ≤ 2^32. */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  /** Uniform integer in [lo, hi] (inclusive). */
  between(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  /**
   * `wait.Jitter(d, maxFactor)` from k8s.io/apimachinery: d + random × maxFactor × d
   * (a maxFactor ≤ 0 means 1). Returns an integer (same unit as `d`).
   */
  jitter(d: number, maxFactor: number): number {
    const f = maxFactor <= 0 ? 1 : maxFactor;
    return Math.floor(d + this.float() * f * d);
  }

  /** Fills `bytes` with random bytes (for nanoid's customRandom). */
  fill(bytes: Uint8Array): Uint8Array {
    for (let i = 0; i < bytes.length; i += 4) {
      let v = this.nextUint32();
      for (let j = 0; j < 4 && i + j < bytes.length; j++, v >>>= 8) bytes[i + j] = v & 0xff;
    }
    return bytes;
  }
}

/** The generator for one purpose of one run: `deriveStream(seed, "actor:kubelet/node-1")`. */
export function deriveStream(seed: number | string, purpose: string): Prng {
  return new Prng(`${seed}/${purpose}`);
}
