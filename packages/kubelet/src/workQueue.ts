/**
 * `pkg/kubelet/util/queue/work_queue.go` `basicWorkQueue`: UIDs with a due time; `GetWork`
 * returns (and removes) those that are due. A min-heap with lazy deletion keeps the 1 s syncCh
 * tick at O(due · log n) instead of scanning every pod (upstream scans; the result is the same).
 */
import { MinHeap } from '@podsim/sim';

interface Entry {
  readonly uid: string;
  readonly due: number;
}

export class WorkQueue {
  private readonly due = new Map<string, number>();
  private readonly heap = new MinHeap<Entry>((a, b) => a.due < b.due || (a.due === b.due && a.uid < b.uid));

  /** `Enqueue(uid, delay)`: (re)sets the UID's due time to now + delayUs. */
  enqueue(uid: string, now: number, delayUs: number): void {
    const at = now + delayUs;
    this.due.set(uid, at);
    this.heap.push({ uid, due: at });
  }

  /** `GetWork`: every UID due at or before `now`, removed from the queue. */
  getWork(now: number): string[] {
    const out: string[] = [];
    for (;;) {
      const top = this.heap.peek();
      if (!top || top.due > now) break;
      this.heap.pop();
      if (this.due.get(top.uid) !== top.due) continue; // superseded by a later enqueue
      this.due.delete(top.uid);
      out.push(top.uid);
    }
    return out;
  }

  get size(): number {
    return this.due.size;
  }
}
