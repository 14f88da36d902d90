/**
 * The active pods of each ReplicaSet, kept incrementally from informer events with the counts
 * `calculateStatus` and the scale-down ranking need (ready, fully labelled, per node). Upstream
 * lists and filters the namespace's pods on every sync (O(pods) per sync); here a sync costs
 * O(changes), except after a selector/template-label change or with minReadySeconds > 0.
 */
import type { Clock, ParsedLabelSelector, Pod, ReplicaSet, VirtualTime } from '@podsim/api';
import { labelSelectorAsSelector, labelSetMatches, labelsMatch } from '@podsim/api';
import { canonicalJson } from '../objects.js';
import { isPodAvailable, isPodReady } from '../podutil.js';

interface Entry {
  pod: Pod;
  ready: boolean;
  fullyLabeled: boolean;
  matches: boolean;
}

const sigCache = new WeakMap<ReplicaSet, string>();

/** Selector + template labels: what the per-pod flags depend on. */
function signature(rs: ReplicaSet): string {
  let s = sigCache.get(rs);
  if (s === undefined) {
    s = `${rs.metadata.uid}|${canonicalJson(rs.spec.selector)}|${canonicalJson(rs.spec.template?.metadata?.labels ?? {})}`;
    sigCache.set(rs, s);
  }
  return s;
}

/** Active pods whose controller reference names one ReplicaSet UID. */
export class OwnedActivePods {
  private readonly entries = new Map<string, Entry>();
  private sig = '';
  private selector: ParsedLabelSelector | undefined;
  private templateLabels: Record<string, string> | undefined;
  ready = 0;
  fullyLabeled = 0;
  mismatched = 0;
  /** Active pods per node name ('' = unscheduled): the ranks of `getPodsToDelete`. */
  readonly perNode = new Map<string, number>();

  get size(): number {
    return this.entries.size;
  }

  /** Re-derives the per-pod flags if `rs`'s selector or template labels differ from the last seen. */
  refresh(rs: ReplicaSet | undefined): void {
    if (!rs) return;
    const sig = signature(rs);
    if (sig === this.sig) return;
    this.sig = sig;
    const sel = labelSelectorAsSelector(rs.spec.selector);
    this.selector = 'error' in sel ? undefined : sel;
    this.templateLabels = rs.spec.template?.metadata?.labels;
    this.ready = this.fullyLabeled = this.mismatched = 0;
    for (const e of this.entries.values()) {
      this.flag(e);
      this.count(e, 1);
    }
  }

  /** Inserts or replaces an active pod (`rs` = its owner from the cache, if known). */
  set(key: string, pod: Pod, rs: ReplicaSet | undefined): void {
    this.refresh(rs);
    const old = this.entries.get(key);
    if (old) this.count(old, -1);
    const e: Entry = { pod, ready: false, fullyLabeled: true, matches: true };
    this.flag(e);
    this.entries.set(key, e);
    this.count(e, 1);
  }

  delete(key: string): boolean {
    const old = this.entries.get(key);
    if (!old) return false;
    this.count(old, -1);
    this.entries.delete(key);
    return true;
  }

  /** How many pods `matching()` would return (without building the list). */
  matchingCount(): number {
    return this.entries.size - this.mismatched;
  }

  /** Pods whose labels match the owner's selector (claimed), in insertion order. */
  matching(): Pod[] {
    const out: Pod[] = [];
    for (const e of this.entries.values()) if (e.matches) out.push(e.pod);
    return out;
  }

  /** Owned pods whose labels no longer match the selector (to be released). */
  mismatching(): Pod[] {
    if (this.mismatched === 0) return [];
    const out: Pod[] = [];
    for (const e of this.entries.values()) if (!e.matches) out.push(e.pod);
    return out;
  }

  /** Ready matching pods available for `minReadySeconds` at `now`. */
  available(minReadySeconds: number, now: VirtualTime, clock: Clock): number {
    if (!minReadySeconds) return this.readyMatching();
    let n = 0;
    for (const e of this.entries.values()) if (e.matches && e.ready && isPodAvailable(e.pod, minReadySeconds, now, clock)) n++;
    return n;
  }

  /** Ready pods among the matching ones. */
  readyMatching(): number {
    if (this.mismatched === 0) return this.ready;
    let n = 0;
    for (const e of this.entries.values()) if (e.matches && e.ready) n++;
    return n;
  }

  /** Fully labelled pods among the matching ones. */
  fullyLabeledMatching(): number {
    if (this.mismatched === 0) return this.fullyLabeled;
    let n = 0;
    for (const e of this.entries.values()) if (e.matches && e.fullyLabeled) n++;
    return n;
  }

  private flag(e: Entry): void {
    e.ready = isPodReady(e.pod);
    e.matches = this.selector ? labelsMatch(this.selector, e.pod.metadata.labels) : true;
    e.fullyLabeled = labelSetMatches(this.templateLabels, e.pod.metadata.labels);
  }

  private count(e: Entry, d: number): void {
    const node = e.pod.spec.nodeName ?? '';
    const n = (this.perNode.get(node) ?? 0) + d;
    if (n === 0) this.perNode.delete(node);
    else this.perNode.set(node, n);
    if (e.ready) this.ready += d;
    if (e.fullyLabeled) this.fullyLabeled += d;
    if (!e.matches) this.mismatched += d;
  }
}
