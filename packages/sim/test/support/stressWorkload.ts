/**
 * The stress runner's workloads (bench/stress.ts), shared with the regression tests that pin the
 * seeds it found: a cluster-shaped set of synthetic actors (stressActors.ts) with latencies,
 * link overrides and faults drawn from the seed, and the LocalSimulation digest to compare with.
 */
import type { ActorFactory, ActorSpec, Fault } from '@podsim/api';
import type { LatencyConfig } from '@podsim/api/protocol/control';
import { LocalSimulation } from '../../src/index.js';
import * as stressActors from './stressActors.js';
import type { AgentConfig, DriverConfig, HubConfig, QuietConfig, RuntimeConfig } from './stressActors.js';

const MODULE = new URL('./stressActors.js', import.meta.url).href;

/** A small deterministic generator for the workload's shape (not the engine's streams). */
export function shape(seed: number): () => number {
  let s = (Math.imul(seed, 2654435761) ^ 0x5bd1e995) | 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

export interface Workload {
  readonly seed: number;
  readonly actors: ActorSpec[];
  readonly latency: LatencyConfig;
  readonly faults: Fault[];
  readonly untilUs: number;
}

/** A cluster-shaped workload: hub, scheduler, controllers, driver, 1–3 nodes (agent + runtime). */
export function workload(seed: number): Workload {
  const r = shape(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const nodes = int(1, 3);
  const untilUs = int(200, 1_500) * 1_000;
  const periodUs = int(2, 20) * 1_000;
  const ids: string[] = [];
  const actors: ActorSpec[] = [];
  const add = (id: string, exportName: string, config: unknown) => {
    ids.push(id);
    actors.push({ id, module: MODULE, exportName, config });
  };
  const watchers: string[] = ['kube-controller-manager', 'kube-scheduler'];
  for (let i = 1; i <= nodes; i++) {
    watchers.push(`kubelet/node-${i}`);
    add(`kubelet/node-${i}`, 'createAgent', { hub: 'apiserver', runtime: `runtime/node-${i}`, periodUs, untilUs } satisfies AgentConfig);
    add(`runtime/node-${i}`, 'createRuntime', { agent: `kubelet/node-${i}`, diesEveryUs: r() < 0.5 ? int(5, 50) * 1_000 : 0, untilUs } satisfies RuntimeConfig);
  }
  add('apiserver', 'createHub', { watchers } satisfies HubConfig);
  add('kube-scheduler', 'createQuiet', { hub: 'apiserver', tickUs: int(1, 10) * 1_000, writeProbability: 0.01, untilUs } satisfies QuietConfig);
  add('kube-controller-manager', 'createQuiet', { hub: 'apiserver', tickUs: int(5, 50) * 1_000, writeProbability: 0.2, untilUs } satisfies QuietConfig);
  add('driver', 'createDriver', { hub: 'apiserver', burstAtUs: Math.floor(untilUs * (0.5 + r() / 2)), burst: int(1, 20), stop: r() < 0.7 } satisfies DriverConfig);
  const latency: LatencyConfig = {
    default: { minUs: int(20, 200), jitterUs: int(0, 120) },
    links: [
      { from: 'kubelet/*', to: 'runtime/*', minUs: int(1, 30), jitterUs: int(0, 20) },
      { from: 'runtime/*', to: 'kubelet/*', minUs: int(1, 30), jitterUs: int(0, 20) },
      ...(r() < 0.5 ? [{ from: 'apiserver', to: '*', minUs: int(50, 300), jitterUs: int(0, 100) }] : []),
    ],
  };
  const faults: Fault[] = [];
  if (r() < 0.5) faults.push({ kind: 'crash', actor: 'runtime/node-1', atUs: int(1, untilUs / 1_000) * 1_000, restartAfterUs: int(1, 50) * 1_000 });
  if (r() < 0.3) faults.push({ kind: 'delay', from: 'apiserver', to: 'kubelet/*', delayUs: int(100, 5_000), startUs: 0, endUs: untilUs / 2 });
  if (r() < 0.3) faults.push({ kind: 'drop', from: 'kubelet/*', to: 'apiserver', probability: 0.1, startUs: 0 });
  return { seed, actors, latency, faults, untilUs };
}


/** The reference digest: the whole workload in one LocalSimulation. */
export function localDigest(w: Workload): string {
  const sim = new LocalSimulation({
    seed: w.seed,
    latency: w.latency,
    faults: w.faults,
    actors: w.actors.map((a) => ({ id: a.id, factory: (stressActors as unknown as Record<string, ActorFactory>)[a.exportName!], config: a.config })),
  });
  sim.runUntil();
  return sim.digest();
}
