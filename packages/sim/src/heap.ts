/**
 * Binary min-heaps. {@link MinHeap} is generic over a caller-supplied order (used by actor
 * packages for their own queues); {@link EventHeap} is the engine's event queue, specialised to
 * the global event key (time, source actor, source sequence, destination actor) so that the hot
 * loop compares numbers inline. Both sift with a hole (one write per level, no swaps).
 */
export class MinHeap<T> {
  private readonly items: T[] = [];
  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    let i = a.length;
    a.push(item);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(item, a[p])) break;
      a[i] = a[p];
      i = p;
    }
    a[i] = item;
  }

  pop(): T | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop()!;
    const n = a.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const m = r < n && this.less(a[r], a[l]) ? r : l;
        if (!this.less(a[m], last)) break;
        a[i] = a[m];
        i = m;
      }
      a[i] = last;
    }
    return top;
  }
}

/** What {@link EventHeap} orders: the engine's global event key. */
export interface EventKey {
  /** Virtual time, µs. */
  readonly at: number;
  /** Source actor index (−1 for engine faults). */
  readonly src: number;
  /** Source sequence number. */
  readonly seq: number;
  /** Destination actor index. */
  readonly dst: number;
}

function keyLess(x: EventKey, y: EventKey): boolean {
  if (x.at !== y.at) return x.at < y.at;
  if (x.src !== y.src) return x.src < y.src;
  if (x.seq !== y.seq) return x.seq < y.seq;
  return x.dst < y.dst;
}

/** The engine's event queue: a min-heap on {@link EventKey}. */
export class EventHeap<T extends EventKey> {
  private a: T[] = [];

  get size(): number {
    return this.a.length;
  }

  /**
   * Drops every item for which `keep` is false and restores the heap (Floyd's bottom-up build,
   * O(n)). Pop order of the kept items is unchanged: the key is a total order.
   */
  retain(keep: (item: T) => boolean): void {
    const a = this.a.filter(keep);
    for (let i = (a.length >> 1) - 1; i >= 0; i--) {
      const item = a[i];
      let j = i;
      for (;;) {
        let m = 2 * j + 1;
        if (m >= a.length) break;
        if (m + 1 < a.length && keyLess(a[m + 1], a[m])) m++;
        if (!keyLess(a[m], item)) break;
        a[j] = a[m];
        j = m;
      }
      a[j] = item;
    }
    this.a = a;
  }

  peek(): T | undefined {
    return this.a[0];
  }

  push(item: T): void {
    const a = this.a;
    let i = a.length;
    a.push(item);
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = a[p];
      if (!keyLess(item, parent)) break;
      a[i] = parent;
      i = p;
    }
    a[i] = item;
  }

  pop(): T | undefined {
    const a = this.a;
    const n = a.length - 1;
    if (n < 0) return undefined;
    const top = a[0];
    const last = a.pop()!;
    if (n > 0) {
      let i = 0;
      for (;;) {
        let m = 2 * i + 1;
        if (m >= n) break;
        if (m + 1 < n && keyLess(a[m + 1], a[m])) m++;
        const child = a[m];
        if (!keyLess(child, last)) break;
        a[i] = child;
        i = m;
      }
      a[i] = last;
    }
    return top;
  }
}
