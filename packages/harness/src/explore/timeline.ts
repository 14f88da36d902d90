/**
 * The story of one pod in a replayed run, for a person reading a failure: its API writes (what a
 * watcher saw), the requests naming it, the printed `kubectl get pods -w` rows, its kubelet's pod
 * worker syncs, kills and final DELETE, the runtime's processes and signals, and every fault that
 * hit its node — the crashes, restarts and reflector re-lists of its kubelet and runtime, the
 * transport faults on their links and the scheduled faults aimed at them — in virtual-time order.
 */
import { matchesActor, type TraceRecord } from '@podsim/api';
import type { TraceModel } from '../checkers/model.js';
import { describeFault, durationText, type ScheduledFault } from '../scenario/scheduled.js';

export interface PodRef {
  readonly uid: string;
  readonly name: string;
  readonly namespace?: string;
  /** The node it was bound to (last write that named one). */
  readonly node?: string;
}

/**
 * The pod a violation message is about: the one whose UID appears first in it, else the one
 * whose `ns/name` (or name) does — UIDs first, because a name may have been reused.
 */
export function podOfMessage(m: TraceModel, message: string): PodRef | undefined {
  const refs = [...m.podWrites].map(([uid, writes]): PodRef => {
    const last = writes[writes.length - 1];
    const node = writes.findLast((w) => w.nodeName)?.nodeName;
    return { uid, name: last.name, ...(last.namespace ? { namespace: last.namespace } : {}), ...(node ? { node } : {}) };
  });
  const first = (pos: (r: PodRef) => number) => {
    let best: { pos: number; ref: PodRef } | undefined;
    for (const ref of refs) {
      const p = pos(ref);
      if (p >= 0 && (!best || p < best.pos)) best = { pos: p, ref };
    }
    return best?.ref;
  };
  return (
    first((r) => message.indexOf(r.uid)) ??
    first((r) => message.indexOf(`${r.namespace}/${r.name}`)) ??
    first((r) => message.search(new RegExp(`\\b${r.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`)))
  );
}

/** Does a scheduled fault aim at this node's kubelet or runtime? */
function faultHitsNode(f: ScheduledFault, node: string): boolean {
  const actors = [`kubelet/${node}`, `runtime/${node}`];
  const s = f.fault;
  if ('node' in s) return s.node === node;
  if (s.kind === 'disconnect') return matchesActor(s.client, actors[0]);
  if (s.kind === 'partition') return actors.some((a) => matchesActor(s.a, a) || matchesActor(s.b, a));
  return actors.some((a) => matchesActor(s.from, a) || matchesActor(s.to, a));
}

/** The records and fault lines of one pod's story, as printable lines (`t  actor  kind  msg`). */
export function podTimeline(m: TraceModel, pod: PodRef, faults: readonly ScheduledFault[]): string[] {
  const node = pod.node;
  const nodeActors = node ? new Set([`kubelet/${node}`, `runtime/${node}`]) : new Set<string>();
  const full = pod.namespace ? `${pod.namespace}/${pod.name}` : pod.name;
  // Pods that had the same name (a pod recreated under it) belong to the story too.
  const sameName = new Set([...m.podWrites].filter(([, w]) => w[w.length - 1].name === pod.name && w[w.length - 1].namespace === pod.namespace).map(([uid]) => uid));
  const mine = (r: TraceRecord): boolean => {
    const d = (r.data ?? {}) as Record<string, unknown>;
    if (typeof d.podUid === 'string' && sameName.has(d.podUid)) return true;
    switch (r.kind) {
      case 'api.write':
        return typeof d.uid === 'string' && sameName.has(d.uid);
      case 'api.request':
        return d.resource === 'pods' && d.name === pod.name && (d.namespace ?? pod.namespace) === pod.namespace;
      case 'driver.watch':
        return Array.isArray(d.cells) && d.cells[0] === pod.name;
      default:
        if (r.kind.startsWith('engine.') || r.kind.startsWith('reflector.')) return nodeActors.has(r.actor);
        if (r.kind.startsWith('fault.')) return nodeActors.has(r.actor) || [...nodeActors].some((a) => r.msg.endsWith(` to ${a}`));
        return false;
    }
  };
  const uidOf = (r: TraceRecord) => {
    const d = (r.data ?? {}) as Record<string, unknown>;
    const u = typeof d.podUid === 'string' ? d.podUid : r.kind === 'api.write' && typeof d.uid === 'string' ? d.uid : undefined;
    return u === undefined ? '' : u.slice(0, 8);
  };
  const rows: Array<{ t: number; actor: string; kind: string; uid: string; msg: string }> = m.records.filter(mine).map((r) => ({ t: r.t, actor: r.actor, kind: r.kind, uid: uidOf(r), msg: r.msg }));
  if (node) {
    for (const f of faults) {
      if (faultHitsNode(f, node)) rows.push({ t: f.atUs, actor: 'fault', kind: f.id, uid: '', msg: describeFault(f.fault) });
    }
  }
  rows.sort((a, b) => a.t - b.t);
  const wActor = Math.max(5, ...rows.map((r) => r.actor.length));
  const wKind = Math.max(4, ...rows.map((r) => r.kind.length));
  const others = [...sameName].filter((u) => u !== pod.uid);
  return [
    `timeline of pod ${full} (uid ${pod.uid}${node ? `, node ${node}` : ''})${others.length ? `, with the other pod${others.length > 1 ? 's' : ''} named ${pod.name} (uid ${others.join(', ')})` : ''}:`,
    ...rows.map((r) => `  ${durationText(r.t).padStart(14)}  ${r.actor.padEnd(wActor)}  ${r.kind.padEnd(wKind)}  ${r.uid.padEnd(8)}  ${r.msg}`),
  ];
}
