/**
 * Each node's applied kube-proxy view per Service over time, rebuilt from the `proxy.sync`
 * records (packages/proxy `TracedView`: a full target list, or the targets added and removed
 * since the node's previous view, or null when the rules were removed). Shared by the traffic
 * evaluation (which endpoint a new connection goes to) and the §12 checkers. Records are read in
 * trace order; one node's syncs are one actor's records, so they are in time order.
 */
import type { TraceRecord } from '@podsim/api';
import { applyTargetDelta } from '@podsim/proxy';

export type Target = readonly [string, string];

/** A node's view of one Service from `t` on (virtual µs), as its sync at `t` made it effective. */
export interface ViewPoint {
  readonly t: number;
  /** When the sync that produced it started (µs). */
  readonly startUs: number;
  /** [IP, pod UID] targets sorted by IP; null: the Service has no rules on this node. */
  readonly targets: readonly Target[] | null;
  readonly reject: boolean;
  /** Pod UIDs that left / joined the targets at this point. */
  readonly removed: readonly string[];
  readonly added: readonly string[];
  /** The Service's node ports on this node (absent: none). */
  readonly nodePorts?: readonly number[];
  /** ETP Local: IPs of the node's Ready local endpoints (the XLB chain); empty = DROP. */
  readonly local?: readonly string[];
  /** ClientIP affinity timeout in seconds (absent: no affinity rules). */
  readonly affinitySeconds?: number;
  /** The proxier's mode, when the record names it and it is not iptables. */
  readonly mode?: 'ipvs';
}

interface TracedService {
  readonly targets?: [string, string][];
  readonly add?: [string, string][];
  readonly remove?: [string, string][];
  readonly reject?: boolean;
  readonly nodePorts?: number[];
  readonly local?: string[];
  readonly affinitySeconds?: number;
}

/** node → Service key → view changes in time order. */
export function proxyViews(records: readonly TraceRecord[]): Map<string, Map<string, ViewPoint[]>> {
  const views = new Map<string, Map<string, ViewPoint[]>>();
  for (const r of records) {
    if (r.kind !== 'proxy.sync') continue;
    const d = r.data as { node: string; mode?: string; startUs?: number; services?: Record<string, TracedService | null> };
    let m = views.get(d.node);
    if (!m) views.set(d.node, (m = new Map()));
    for (const [k, v] of Object.entries(d.services ?? {})) {
      let l = m.get(k);
      if (!l) m.set(k, (l = []));
      const prev = l.at(-1)?.targets ?? null;
      let targets: readonly Target[] | null;
      if (!v) targets = null;
      else if (v.targets) targets = v.targets;
      else targets = applyTargetDelta<Target>(prev ?? [], v.remove ?? [], v.add ?? []);
      let removed: string[];
      let added: string[];
      if (v && !v.targets) {
        // A delta names its changes (a pod whose IP changed is in both: it stays).
        const addUids = new Set((v.add ?? []).map((x) => x[1]));
        const removeUids = new Set((v.remove ?? []).map((x) => x[1]));
        removed = [...removeUids].filter((u) => !addUids.has(u));
        added = [...addUids].filter((u) => !removeUids.has(u));
      } else {
        // A full list or a removal: compared with the previous view.
        const before = new Set((prev ?? []).map((x) => x[1]));
        const after = new Set((targets ?? []).map((x) => x[1]));
        removed = [...before].filter((u) => !after.has(u));
        added = [...after].filter((u) => !before.has(u));
      }
      l.push({
        t: r.t,
        startUs: d.startUs ?? r.t,
        targets,
        reject: v ? v.reject === true : false,
        removed,
        added,
        ...(v?.nodePorts ? { nodePorts: v.nodePorts } : {}),
        ...(v?.local ? { local: v.local } : {}),
        ...(v?.affinitySeconds !== undefined ? { affinitySeconds: v.affinitySeconds } : {}),
        ...(d.mode === 'ipvs' ? { mode: 'ipvs' as const } : {}),
      });
    }
  }
  return views;
}
