/**
 * What `podsim serve` runs: the actors of a scenario's cluster (apiserver, kube-controller-manager,
 * kube-scheduler, a kubelet and a CRI runtime per node; scenario/compile.ts builds them) or of a
 * default cluster of N nodes, plus the manifests to create at virtual time 0. The scenario driver
 * runs only with `timeline` (then it never stops the run); otherwise the gateway creates the
 * manifests itself, as `kubectl create` would. Fault steps keep their compiled static times.
 */
import type { KubeObject, ResourceName } from '@podsim/api';
import type { LatencyConfig } from '@podsim/sim';
import type { Fault } from '@podsim/api';
import { isClusterScoped, resourceOfKind } from '../driver/driver.js';
import { DRIVER_ACTOR, type DriverConfig, type DriverStep } from '../driver/steps.js';
import { compileScenario, type ActorPlan } from '../scenario/compile.js';
import { loadScenario, loadScenarioText, type LoadedScenario } from '../scenario/load.js';
import { ScenarioError, formatIssue } from '../scenario/source.js';

const CENTURY_US = 100 * 365 * 86_400 * 1_000_000;

/** One object to create at start. */
export interface ServeManifest {
  readonly resource: ResourceName;
  readonly namespace?: string;
  readonly object: KubeObject;
}

export interface ServePlan {
  /** Where the cluster comes from (`default cluster`, or the scenario file). */
  readonly source: string;
  readonly seed: number;
  readonly placement: string;
  readonly epochUnixSeconds: number;
  readonly nodes: readonly string[];
  readonly actors: readonly ActorPlan[];
  readonly latency: LatencyConfig;
  readonly faults: readonly Fault[];
  /** Created by the gateway at virtual time 0, in this order (namespaces first). */
  readonly manifests: readonly ServeManifest[];
  /** The scenario's load warnings (`file:line:col: warning: …`: skipped kinds, fields not simulated), as `podsim run` prints them. */
  readonly warnings: readonly string[];
}

export interface ServePlanOptions {
  /** Scenario file; without it a default cluster of `nodes` nodes. */
  readonly scenario?: string;
  /** Default 2 (only without a scenario). */
  readonly nodes?: number;
  readonly seed?: number;
  /** Run the scenario's steps (paced like everything else); default false. */
  readonly timeline?: boolean;
  /** Wall-clock instant of virtual time 0 (object timestamps). */
  readonly epochUnixSeconds: number;
}

/** The default cluster, written as a scenario so it compiles exactly like one. */
function defaultScenario(nodes: number): LoadedScenario {
  const names = Array.from({ length: nodes }, (_, i) => `node-${i + 1}`);
  const text = ['kind: Scenario', 'name: podsim-serve', 'cluster:', `  nodes: [${names.map((n) => `{name: ${n}}`).join(', ')}]`, 'steps: [{sleep: 0s}]', ''].join('\n');
  return loadScenarioText('podsim-serve-default.yaml', text);
}

/** Builds the plan. Throws ScenarioError for a bad scenario file. */
export function servePlan(o: ServePlanOptions): ServePlan {
  const nodes = o.nodes ?? 2;
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > 5000) {
    throw new ScenarioError([{ file: '--nodes', line: 0, column: 0, field: 'nodes', message: 'expected an integer from 1 to 5000' }]);
  }
  const sc = o.scenario !== undefined ? loadScenario(o.scenario) : defaultScenario(nodes);
  const plan = compileScenario(sc, o.seed !== undefined ? { seed: o.seed } : {});
  const namespace = sc.doc.cluster.namespace ?? 'default';
  const timeline = o.scenario !== undefined && (o.timeline ?? false);
  const actors: ActorPlan[] = [];
  for (const a of plan.actors) {
    if (a.id !== DRIVER_ACTOR) actors.push(a);
    else if (timeline) {
      // The driver calls stopRun after its last step; a final sleep of a century keeps the
      // cluster running after the timeline instead.
      const cfg = a.config as DriverConfig;
      const last = cfg.steps[cfg.steps.length - 1];
      const keepAlive: DriverStep = { index: cfg.steps.length, line: last?.line ?? 0, kind: 'sleep', durationUs: CENTURY_US };
      actors.push({ ...a, config: { ...cfg, steps: [...cfg.steps, keepAlive] } satisfies DriverConfig });
    }
  }
  const manifests: ServeManifest[] = [];
  if (!timeline) {
    const objects = sc.manifests.map((m) => {
      const o2 = structuredClone(m.object) as KubeObject;
      const resource = resourceOfKind(o2.kind)!;
      if (!isClusterScoped(resource)) o2.metadata = { ...o2.metadata, namespace: o2.metadata.namespace ?? namespace };
      return { resource, ...(isClusterScoped(resource) ? {} : { namespace: o2.metadata.namespace }), object: o2 };
    });
    // Namespaces first: the ones declared, then the ones the objects need that do not exist yet.
    const declared = new Set(objects.filter((m) => m.resource === 'namespaces').map((m) => m.object.metadata.name));
    manifests.push(...objects.filter((m) => m.resource === 'namespaces'));
    for (const ns of new Set(objects.map((m) => m.namespace).filter((n): n is string => n !== undefined))) {
      if (ns !== 'default' && ns !== 'kube-system' && !declared.has(ns)) {
        manifests.push({ resource: 'namespaces', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
      }
    }
    manifests.push(...objects.filter((m) => m.resource !== 'namespaces'));
  }
  return {
    source: o.scenario ?? 'default cluster',
    seed: plan.seed,
    placement: plan.placement,
    epochUnixSeconds: o.epochUnixSeconds,
    nodes: plan.nodes,
    actors,
    latency: plan.latency,
    faults: plan.faults,
    manifests,
    warnings: [
      ...plan.warnings.map((w) => formatIssue(w)),
      // serve runs the cluster for kubectl: nothing sends the scenario's traffic or judges its expect.
      ...(o.scenario !== undefined && sc.doc.traffic?.length ? [`${o.scenario}: warning: traffic: is not sent under podsim serve (it is evaluated by podsim run)`] : []),
      ...(o.scenario !== undefined && sc.doc.expect !== undefined ? [`${o.scenario}: warning: expect: is not judged under podsim serve (podsim run judges it)`] : []),
    ],
  };
}
