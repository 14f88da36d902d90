/**
 * The running trace digest (DESIGN.md §9 "Digest that does not depend on placement"): each actor
 * folds its own delivered events and trace records into two 32-bit accumulators; the run digest
 * hashes the per-actor digests in actor-id order, so it is the same whichever thread ran which actor.
 */
import { createHash } from 'node:crypto';

/** A 64-bit (two-lane) running hash with murmur3-style mixing. */
export class RunningDigest {
  h1 = 0x9747b28c;
  h2 = 0x85ebca6b;

  /** Folds a 32-bit or larger integer (values beyond 2^32 fold both halves). */
  num(x: number): void {
    const lo = x >>> 0;
    const hi = Math.floor(x / 4294967296) >>> 0;
    this.mix(lo);
    if (hi !== 0) this.mix(hi);
  }

  str(s: string): void {
    this.mix(hashString(s));
  }

  private mix(k: number): void {
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    this.h1 ^= k;
    this.h1 = (this.h1 << 13) | (this.h1 >>> 19);
    this.h1 = (Math.imul(this.h1, 5) + 0xe6546b64) | 0;
    this.h2 = (Math.imul(this.h2 ^ k, 0x85ebca6b) + this.h1) | 0;
  }

  hex(): string {
    return (this.h1 >>> 0).toString(16).padStart(8, '0') + (this.h2 >>> 0).toString(16).padStart(8, '0');
  }
}

/** FNV-1a over UTF-16 code units. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Combines per-actor digests (in actor-id order) into the run's 16-hex-digit trace digest. */
export function combineDigests(perActor: ReadonlyArray<readonly [string, string]>): string {
  const h = createHash('sha256');
  for (const [id, d] of [...perActor].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) h.update(`${id}=${d};`);
  return h.digest('hex').slice(0, 16);
}
