/**
 * A seed's fault schedule for `podsim explore` (FoundationDB / TigerBeetle simulators: the faults
 * come from the seed, so one seed reproduces the whole run). Entry j of `explore.faults` draws how
 * many faults it adds from the stream `explore:<j>:<kind>` (a Poisson count with mean
 * rate × level) and the k-th fault's fields from `explore:<j>:<kind>#<k>`: a fault never depends
 * on another entry, on how many came before it, or on whether another one was removed.
 */
import { deriveStream, matchesActor, type Prng } from '@podsim/api';
import type { ExploreFaultSpec, ExploreSpec, FaultSpec } from '../scenario/schema.js';
import type { ScheduledFault } from '../scenario/scheduled.js';

const S = 1_000_000;

/** Named fault levels for `--faults` (multipliers of every rate). */
export const FAULT_LEVELS: Readonly<Record<string, number>> = { none: 0, low: 0.5, medium: 1, high: 2 };

/** Defaults of the drawn ranges, virtual µs. */
export const EXPLORE_DEFAULTS = {
  forUs: [10 * S, 30 * S],
  delayUs: [1 * S, 5 * S],
  downForUs: [2 * S, 20 * S],
  runtimeErrorCalls: ['StopContainer', 'StopPodSandbox'],
  runtimeDelayCalls: ['StopPodSandbox', 'StopContainer'],
} as const;

/** Bound on faults per entry and run (a huge rate × level must not make a run unbounded). */
const MAX_PER_ENTRY = 200;

/** Fault kinds that drop or duplicate messages inside a live watch stream (TCP does neither). */
export const UNREALISTIC_EXPLORE_KINDS: readonly string[] = ['drop', 'duplicate', 'partition'];

/** What the draw picks targets from. */
export interface ExploreTargets {
  readonly nodes: readonly string[];
  /** Actor ids of the API clients that `disconnect` may hit (kubelets, controller manager, scheduler). */
  readonly clients: readonly string[];
}

/** Poisson(λ) by Knuth's product of uniforms (λ ≤ 100 here). */
function poisson(rng: Prng, lambda: number): number {
  if (lambda <= 0) return 0;
  const limit = Math.exp(-lambda);
  let k = 0;
  let p = rng.float();
  while (p > limit && k < MAX_PER_ENTRY) {
    k++;
    p *= rng.float();
  }
  return k;
}

function pick<T>(rng: Prng, list: readonly T[]): T {
  return list[rng.int(list.length)];
}

/** A duration from a fixed value or a [min, max] range (uniform, integer µs). */
function range(rng: Prng, r: number | readonly [number, number] | undefined, dflt: readonly [number, number]): number {
  const [lo, hi] = r === undefined ? dflt : typeof r === 'number' ? [r, r] : r;
  return lo + Math.floor(rng.float() * (hi - lo + 1));
}

/** The default links of delay / drop / duplicate / partition: each kubelet ⇄ apiserver. */
function defaultLinks(t: ExploreTargets): Array<{ from: string; to: string }> {
  return t.nodes.flatMap((n) => [
    { from: `kubelet/${n}`, to: 'apiserver' },
    { from: 'apiserver', to: `kubelet/${n}` },
  ]);
}

/** Draws one fault of entry `e` (its fields only; the start time is drawn by the caller). */
function drawOne(rng: Prng, e: ExploreFaultSpec, t: ExploreTargets, atUs: number, healAfterUs: number): FaultSpec {
  const node = () => pick(rng, e.nodes ?? t.nodes);
  // Every fault is over by healAfter: the healing phase has no faults at all.
  const lasting = (us: number) => Math.max(1, Math.min(us, healAfterUs - atUs));
  const forUs = () => lasting(range(rng, e.for, EXPLORE_DEFAULTS.forUs));
  switch (e.kind) {
    case 'kubeletRestart':
      return { kind: 'kubeletRestart', node: node(), downFor: lasting(range(rng, e.downFor, EXPLORE_DEFAULTS.downForUs)) };
    case 'nodeDown':
      return { kind: 'nodeDown', node: node(), for: forUs() };
    case 'runtimeError':
      return { kind: 'runtimeError', node: node(), call: pick(rng, e.calls ?? EXPLORE_DEFAULTS.runtimeErrorCalls), code: e.code ?? 'Unknown', for: forUs() };
    case 'runtimeDelay':
      return { kind: 'runtimeDelay', node: node(), call: pick(rng, e.calls ?? EXPLORE_DEFAULTS.runtimeDelayCalls), delay: range(rng, e.delay, EXPLORE_DEFAULTS.delayUs), for: forUs() };
    case 'slowUnmount':
      return { kind: 'slowUnmount', node: node(), for: forUs() };
    case 'disconnect':
      return { kind: 'disconnect', client: pick(rng, e.clients ?? t.clients), for: forUs() };
    case 'delay': {
      const l = pick(rng, e.links ?? defaultLinks(t));
      return { kind: 'delay', from: l.from, to: l.to, delay: range(rng, e.delay, EXPLORE_DEFAULTS.delayUs), for: forUs() };
    }
    case 'drop': {
      const l = pick(rng, e.links ?? defaultLinks(t));
      return { kind: 'drop', from: l.from, to: l.to, probability: e.probability ?? 1, for: forUs() };
    }
    case 'duplicate': {
      const l = pick(rng, e.links ?? defaultLinks(t));
      return { kind: 'duplicate', from: l.from, to: l.to, probability: e.probability ?? 1, delay: range(rng, e.delay, EXPLORE_DEFAULTS.delayUs), for: forUs() };
    }
    case 'partition': {
      const l = pick(rng, e.links ?? defaultLinks(t));
      return { kind: 'partition', a: l.from, b: l.to, for: forUs() };
    }
  }
}

/**
 * The fault schedule of `seed` at fault `level` (a multiplier of every rate), sorted by start
 * time then id. Ids are `<kind>-<entry>.<n>`.
 */
export function drawFaults(ex: ExploreSpec, targets: ExploreTargets, seed: number, level: number): ScheduledFault[] {
  const out: ScheduledFault[] = [];
  const [from, to] = ex.window;
  ex.faults.forEach((e, j) => {
    const n = poisson(deriveStream(seed, `explore:${j}:${e.kind}`), e.rate * level);
    for (let k = 0; k < n; k++) {
      const rng = deriveStream(seed, `explore:${j}:${e.kind}#${k}`);
      const atUs = from + Math.floor(rng.float() * Math.max(1, to - from));
      out.push({ id: `${e.kind}-${j}.${k}`, atUs, fault: drawOne(rng, e, targets, atUs, ex.healAfter) });
    }
  });
  return out.sort((a, b) => a.atUs - b.atUs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Problems with an explore section against the cluster (messages; the caller adds file and line). */
export function checkExplore(ex: ExploreSpec, t: ExploreTargets & { readonly actorIds: readonly string[] }): Array<{ path: (string | number)[]; message: string }> {
  const out: Array<{ path: (string | number)[]; message: string }> = [];
  if (ex.window[0] > ex.window[1]) out.push({ path: ['explore', 'window'], message: 'the window ends before it starts' });
  if (ex.window[1] > ex.healAfter) out.push({ path: ['explore', 'window'], message: 'faults must start before healAfter (the window ends after it)' });
  ex.faults.forEach((e, j) => {
    e.nodes?.forEach((n, i) => {
      if (!t.nodes.includes(n)) out.push({ path: ['explore', 'faults', j, 'nodes', i], message: `no node ${JSON.stringify(n)} in cluster.nodes` });
    });
    e.clients?.forEach((c, i) => {
      if (!t.clients.some((id) => matchesActor(c, id))) out.push({ path: ['explore', 'faults', j, 'clients', i], message: `${JSON.stringify(c)} matches no API client (${t.clients.join(', ')})` });
    });
    e.links?.forEach((l, i) => {
      for (const end of ['from', 'to'] as const) {
        if (!t.actorIds.some((id) => matchesActor(l[end], id))) out.push({ path: ['explore', 'faults', j, 'links', i, end], message: `${JSON.stringify(l[end])} matches no actor` });
      }
    });
    for (const [k, v] of [['for', e.for], ['delay', e.delay], ['downFor', e.downFor]] as const) {
      if (Array.isArray(v) && v[0] > v[1]) out.push({ path: ['explore', 'faults', j, k], message: 'the range ends before it starts' });
    }
  });
  return out;
}
