/**
 * Reproducible ids. nanoid's `customRandom` over a seeded {@link Prng}, so generated pod name
 * suffixes and UIDs are the same for the same seed (DESIGN.md §5).
 */
import { customRandom } from 'nanoid';
import type { Prng } from './prng.js';

/**
 * The alphabet of `k8s.io/apimachinery/pkg/util/rand.String` ("bcdfghjklmnpqrstvwxz2456789"),
 * which `generateName` and ReplicaSet pod names use for their 5-character suffix.
 */
export const KUBE_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const HEX = '0123456789abcdef';
const DEFAULT_ALPHABET = 'useandom26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict';

/** Seeded id generation for one actor (or one purpose). */
export class IdGenerator {
  private readonly cache = new Map<string, () => string>();
  constructor(private readonly prng: Prng) {}

  /** A nanoid of `size` characters over `alphabet` (default: nanoid's URL-safe alphabet). */
  id(size = 21, alphabet = DEFAULT_ALPHABET): string {
    const key = `${size}:${alphabet}`;
    let gen = this.cache.get(key);
    if (!gen) {
      gen = customRandom(alphabet, size, (n) => this.prng.fill(new Uint8Array(n)));
      this.cache.set(key, gen);
    }
    return gen();
  }

  /** A UUID-shaped id (8-4-4-4-12 lowercase hex), as the apiserver assigns to `metadata.uid`. */
  uuid(): string {
    const h = this.id(32, HEX);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[this.prng.int(4)]}${h.slice(17, 20)}-${h.slice(20)}`;
  }
}
