/**
 * Incremental evaluation of a `kubectl wait` over many pods. kubectl v0.22.8 (`pkg/cmd/wait`)
 * judges each object as its watch event arrives; the driver judged the whole set again on every
 * informer event, O(pods) each — O(pods²) over a 20k-pod rollout or deletion (the run spent its
 * time in label matching). The tally keeps, per condition, the sets the verdict needs and updates
 * them for the one pod an event names; {@link conditionHolds} over {@link PodInformer.select} is
 * the reference it must agree with (a rebuild after a relist uses exactly that path).
 */
import type { Pod } from '@podsim/api';
import { labelsMatch, type ParsedLabelSelector } from '@podsim/api';
import { podIsReady, podIsRunning, type PodInformer } from './informer.js';
import type { WaitCondition } from './steps.js';

export class WaitTally {
  /** Matching pods (all conditions but gone). */
  private readonly matched = new Set<string>();
  /** exists/terminating: matching pods without a deletionTimestamp; running/ready: those that do not hold. */
  private readonly bad = new Set<string>();
  /** running/ready: matching pods without a deletionTimestamp. */
  private readonly live = new Set<string>();
  /** gone: the UIDs still in the informer. */
  private readonly remaining: Set<string>;
  /** Set by a relist: the sets are rebuilt from the informer at the next check. */
  private stale = true;

  constructor(
    private readonly condition: WaitCondition,
    private readonly count: number,
    private readonly target: { readonly namespace?: string; readonly name?: string } | undefined,
    private readonly selector: ParsedLabelSelector | undefined,
    /** gone: the UIDs that matched when the wait began. */
    uids?: ReadonlySet<string>,
  ) {
    this.remaining = new Set(uids ?? []);
    this.total = this.remaining.size;
  }

  /** gone: how many pods matched when the wait began (`count` N of them must go; 0: all). */
  private readonly total: number;

  /** The informer was cleared (a relist follows): rebuild before the next verdict. */
  invalidate(): void {
    this.stale = true;
  }

  /** One pod changed (`pod` undefined: it was deleted). */
  update(uid: string, pod: Pod | undefined): void {
    if (this.stale) return;
    if (this.condition === 'gone') {
      if (pod === undefined) this.remaining.delete(uid);
      return;
    }
    this.matched.delete(uid);
    this.bad.delete(uid);
    this.live.delete(uid);
    if (pod && this.matches(pod)) this.add(uid, pod);
  }

  /** Whether the condition holds now. */
  holds(informer: PodInformer): boolean {
    if (this.stale) this.rebuild(informer);
    switch (this.condition) {
      case 'gone':
        return this.count > 0 ? this.total - this.remaining.size >= this.count : this.remaining.size === 0;
      case 'exists':
        return this.matched.size >= this.count;
      case 'terminating':
        return this.matched.size >= this.count && this.bad.size === 0;
      case 'running':
      case 'ready':
        return this.live.size >= this.count && this.bad.size === 0;
    }
  }

  private rebuild(informer: PodInformer): void {
    this.stale = false;
    if (this.condition === 'gone') {
      for (const u of [...this.remaining]) if (!informer.has(u)) this.remaining.delete(u);
      return;
    }
    this.matched.clear();
    this.bad.clear();
    this.live.clear();
    for (const p of informer.select(this.target?.namespace, this.target?.name, this.selector)) this.add(p.metadata.uid!, p);
  }

  private matches(p: Pod): boolean {
    const t = this.target;
    if (t?.namespace !== undefined && p.metadata.namespace !== t.namespace) return false;
    if (t?.name !== undefined && p.metadata.name !== t.name) return false;
    return !this.selector || labelsMatch(this.selector, p.metadata.labels);
  }

  private add(uid: string, p: Pod): void {
    this.matched.add(uid);
    const terminating = p.metadata.deletionTimestamp !== undefined;
    if (this.condition === 'terminating') {
      if (!terminating) this.bad.add(uid);
    } else if ((this.condition === 'running' || this.condition === 'ready') && !terminating) {
      this.live.add(uid);
      if (!(this.condition === 'running' ? podIsRunning(p) : podIsReady(p))) this.bad.add(uid);
    }
  }
}
