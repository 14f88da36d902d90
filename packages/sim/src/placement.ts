/**
 * Placement (DESIGN.md §5): which host thread runs which actor, and the lookahead between host
 * threads that the conservative windows rely on. Placement is configuration only — the event
 * order, hence the trace and digest, never depend on it.
 */
import { matchesActor, type ActorId, type RunFailure } from '@podsim/api';
import type { LatencyConfig, Placement } from '@podsim/api/protocol/control';

/** Thrown for a configuration the engine cannot run (bad placement, zero lookahead, …). */
export class InvalidConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidConfigError';
  }
}

/** Parses a placement string; throws {@link InvalidConfigError} on anything else. */
export function parsePlacement(p: string): { kind: 'single' } | { kind: 'per-actor' } | { kind: 'shards' | 'nodes'; n: number } {
  if (p === 'single') return { kind: 'single' };
  if (p === 'per-actor') return { kind: 'per-actor' };
  const m = /^(shards|nodes):(\d+)$/.exec(p);
  if (m && Number(m[2]) >= 1) return { kind: m[1] as 'shards' | 'nodes', n: Number(m[2]) };
  throw new InvalidConfigError(`placement ${JSON.stringify(p)}: expected "single", "per-actor", "shards:N" or "nodes:N" (N ≥ 1)`);
}

/**
 * The node an actor belongs to for `nodes:N`: the part of its id after the first `/`
 * (`kubelet/node-7` and `runtime/node-7` → `node-7`); undefined for control-plane actors, whose
 * ids have no `/` (apiserver, kube-controller-manager, kube-scheduler, a driver).
 */
export function nodeOf(id: ActorId): string | undefined {
  const i = id.indexOf('/');
  return i < 0 ? undefined : id.slice(i + 1);
}

/**
 * Assigns actors to hosts. `ids` are the hosted actors (mailboxes excluded); the result maps
 * each id to a host index in [0, hostCount). `shards:N` deals the sorted ids round-robin, except
 * that with N ≥ 2 `apiserver` (the hub every other actor talks to) gets shard 0 to itself.
 * `nodes:N` keeps each node's actors together (kubelet/X with runtime/X, see {@link nodeOf}, so
 * their 100 µs link stays inside one thread): with N ≥ 2 the control plane gets host 0 and the
 * nodes, in sorted order, are dealt round-robin over hosts 1 … N−1; the lookahead between
 * threads is then the node ↔ control-plane latency. Hosts left empty (more shards than actors)
 * are dropped.
 */
export function assignHosts(ids: readonly ActorId[], placement: Placement): { hostCount: number; hostOf: Map<ActorId, number> } {
  const p = parsePlacement(placement);
  const sorted = [...ids].sort();
  const raw = new Map<ActorId, number>();
  if (p.kind === 'single') sorted.forEach((id) => raw.set(id, 0));
  else if (p.kind === 'per-actor') sorted.forEach((id, i) => raw.set(id, i));
  else if (p.kind === 'nodes') {
    const nodes = [...new Set(sorted.map(nodeOf).filter((n) => n !== undefined))].sort();
    const slot = new Map(nodes.map((n, i) => [n, p.n < 2 ? 0 : 1 + (i % (p.n - 1))]));
    for (const id of sorted) {
      const n = nodeOf(id);
      raw.set(id, n === undefined ? 0 : slot.get(n)!);
    }
  } else if (p.n >= 2 && sorted.includes('apiserver')) {
    raw.set('apiserver', 0);
    sorted.filter((id) => id !== 'apiserver').forEach((id, i) => raw.set(id, 1 + (i % (p.n - 1))));
  } else sorted.forEach((id, i) => raw.set(id, i % p.n));
  // Renumber densely so that every host runs at least one actor.
  const used = [...new Set(raw.values())].sort((a, b) => a - b);
  const dense = new Map(used.map((h, i) => [h, i]));
  const hostOf = new Map<ActorId, number>();
  for (const [id, h] of raw) hostOf.set(id, dense.get(h)!);
  return { hostCount: used.length, hostOf };
}

/** Minimum latency of the link `from → to`: the first matching override, else the default. */
export function linkMinUs(latency: LatencyConfig, from: ActorId, to: ActorId): number {
  for (const o of latency.links ?? []) if (matchesActor(o.from, from) && matchesActor(o.to, to)) return o.minUs;
  return latency.default.minUs;
}

/**
 * The lookahead matrix: entry `p * hostCount + h` is the smallest minimum link latency from any
 * actor on host p to any actor on host h (NEVER-free; the diagonal is unused and 0). Faults only
 * add delay, so this is a lower bound on every delivery p → h. Throws
 * {@link InvalidConfigError} when two hosts are joined by a 0 µs link: conservative windows
 * need a positive lookahead between threads.
 */
export function lookaheadMatrix(latency: LatencyConfig, hostOf: ReadonlyMap<ActorId, number>, hostCount: number): number[] {
  const m = new Array<number>(hostCount * hostCount).fill(Number.MAX_SAFE_INTEGER);
  for (let h = 0; h < hostCount; h++) m[h * hostCount + h] = 0;
  if (hostCount === 1) return m;
  const ids = [...hostOf.keys()];
  if (!latency.links?.length) {
    for (let i = 0; i < m.length; i++) if (m[i] !== 0) m[i] = latency.default.minUs;
  } else {
    for (const a of ids) {
      const pa = hostOf.get(a)!;
      for (const b of ids) {
        const hb = hostOf.get(b)!;
        if (pa === hb) continue;
        const k = pa * hostCount + hb;
        const l = linkMinUs(latency, a, b);
        if (l < m[k]) m[k] = l;
      }
    }
  }
  for (let p = 0; p < hostCount; p++) {
    for (let h = 0; h < hostCount; h++) {
      if (p !== h && !(m[p * hostCount + h] >= 1)) {
        throw new InvalidConfigError(
          `hosts ${p} and ${h} are joined by a link with minimum latency ${m[p * hostCount + h]} µs; ` +
            'actors on different host threads need a minimum latency ≥ 1 µs (place them together)',
        );
      }
    }
  }
  return m;
}

/**
 * The window bound matrix from the lookahead matrix `l` (see {@link lookaheadMatrix}). Entry
 * `q * hostCount + h` is the least total minimum latency of a chain of messages that leaves
 * host q and ends on host h (at least one hop): the shortest path q → h, and for q = h the
 * shortest round trip h → p → h. A host h may therefore process every event earlier than
 * `min_q (E_q + C[q][h])`: nothing pending anywhere now (E_q = q's earliest pending event,
 * messages in flight to it included) can cause a message to h before that. The bound must
 * include h's own events, because what h sends now may come back: with only
 * `min_{p≠h} (E_p + L(p→h))` a reply to h's own message arrived in h's past.
 * Unreachable pairs (a single host) are NEVER.
 */
export function windowMatrix(l: readonly number[], hostCount: number): number[] {
  const n = hostCount;
  const d = l.map((x, i) => (Math.floor(i / n) === i % n ? 0 : x));
  for (let k = 0; k < n; k++) {
    for (let i = 0; i < n; i++) {
      const ik = d[i * n + k];
      for (let j = 0; j < n; j++) if (ik + d[k * n + j] < d[i * n + j]) d[i * n + j] = ik + d[k * n + j];
    }
  }
  const c = new Array<number>(n * n).fill(Number.MAX_SAFE_INTEGER);
  for (let q = 0; q < n; q++) {
    for (let h = 0; h < n; h++) {
      if (q !== h) c[q * n + h] = d[q * n + h];
      else for (let p = 0; p < n; p++) if (p !== h) c[q * n + h] = Math.min(c[q * n + h], d[h * n + p] + l[p * n + h]);
    }
  }
  return c;
}

/** A RunFailure for a configuration error. */
export function invalidConfig(message: string, seed: number): RunFailure {
  return { kind: 'InvalidConfig', message, seed };
}
