/**
 * podsim from a team's own tests, through `@podsim/harness` only (no deep imports): build a
 * scenario in code, run it, and judge the typed result. The question it answers is the one in
 * the README: "deleting N pods whose preStop sleeps S seconds, how long until they are all gone?"
 */
import { runScenario, type RunReport, type ScenarioObject } from '@podsim/harness';

export interface PreStopDrill {
  /** Deployment replicas. */
  readonly replicas: number;
  /** `preStop: sleep` seconds (exec hook). */
  readonly preStopSeconds: number;
  /** `terminationGracePeriodSeconds`. */
  readonly graceSeconds: number;
  readonly seed?: number;
}

/** The scenario: one node, a Deployment of `replicas` pods with a preStop sleep, all pods deleted by label. */
export function preStopScenario(d: PreStopDrill): ScenarioObject {
  return {
    name: `prestop-${d.preStopSeconds}s-x${d.replicas}`,
    cluster: { seed: d.seed ?? 1, nodes: [{ name: 'n1' }] },
    manifests: [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: {
          replicas: d.replicas,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              terminationGracePeriodSeconds: d.graceSeconds,
              containers: [{ name: 'app', image: 'nginx:1.21', lifecycle: { preStop: { exec: { command: ['sleep', String(d.preStopSeconds)] } } } }],
            },
          },
        },
      },
    ],
    steps: [
      { apply: 'all' },
      { wait: { for: 'ready', selector: 'app=web', count: d.replicas, timeout: '2m' } },
      { id: 'scale', scale: { kind: 'deployment', name: 'web', replicas: 0 } },
      { wait: { for: 'gone', selector: 'app=web', timeout: '5m' } },
    ],
  };
}

/** Virtual seconds from the scale-down to the last pod gone, from a finished run. */
export function lastGoneSeconds(r: RunReport): number {
  const scale = r.steps.find((s) => s.id === 'scale')!;
  const gone = r.pods.map((p) => p.goneAt ?? Infinity);
  return (Math.max(...gone) - scale.startUs) / 1e6;
}

export async function runPreStopDrill(d: PreStopDrill): Promise<{ report: RunReport; lastGoneSeconds: number }> {
  const report = await runScenario(preStopScenario(d));
  return { report, lastGoneSeconds: lastGoneSeconds(report) };
}
