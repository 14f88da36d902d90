/**
 * Pair-test rig for the controllers: the real apiserver actor, kube-controller-manager and
 * kube-scheduler over LocalSimulation, plus two small test actors:
 * - `test-client` runs API requests on a timeline and watches pods (objects and the
 *   apiserver-printed Table, as `kubectl get pods -w`), ReplicaSets and Deployments, recording
 *   every event as a `test.watch` trace and every reply as `test.result`;
 * - `fake-kubelet` stands in for the kubelets: it marks pods bound to its nodes Running/Ready
 *   after `startDelayUs`, and finishes a graceful deletion with the kubelet's final
 *   `DELETE gracePeriodSeconds=0` (UID precondition) `stopDelayUs` after it sees the
 *   deletionTimestamp (annotation `test/stop-after-seconds` overrides per pod).
 * `PODSIM_TEST_SEED` changes the default seed (to run the pair tests over other seeds).
 */
import type { Actor, ActorContext, ApiRequest, ApiResult, ApiWatchEvent, Deployment, Fault, KubeObject, Node, Pod, PodTemplateSpec, ReplicaSet, Table, TraceRecord } from '@podsim/api';
import { Clock, DEFAULT_EPOCH_UNIX_SECONDS } from '@podsim/api';
import { LocalSimulation, type LocalActorDef, type TraceFilter } from '@podsim/sim';
import { createActor as createApiserver } from '@podsim/apiserver/actor/apiserverActor';
import { createActor as createKcm, type ControllerName, type KubeControllerManagerConfig } from '../../src/actor/kubeControllerManagerActor.js';
import { createActor as createScheduler, type KubeSchedulerConfig } from '../../src/actor/kubeSchedulerActor.js';

export const S = 1_000_000;
export const MS = 1_000;

/** One timeline step of the test client: a request, or one computed from the pods it sees. */
export interface Step {
  readonly at: number;
  readonly req: ApiRequest | ((pods: ReadonlyMap<string, Pod>) => ApiRequest);
  readonly label?: string;
}

export interface FakeKubeletConfig {
  readonly nodes: readonly string[];
  readonly startDelayUs?: number;
  readonly stopDelayUs?: number;
}

export interface ClusterOptions {
  readonly steps: readonly Step[];
  readonly seed?: number;
  readonly untilUs: number;
  readonly kcm?: KubeControllerManagerConfig | false;
  readonly scheduler?: KubeSchedulerConfig | false;
  readonly kubelet?: FakeKubeletConfig | false;
  readonly faults?: readonly Fault[];
  /** Trace kinds to collect (default all). */
  readonly traceFilter?: TraceFilter;
  /** The test client's watches (default true; benchmarks turn them off). */
  readonly watches?: boolean;
}

const clock = new Clock(DEFAULT_EPOCH_UNIX_SECONDS);

function testClient(steps: readonly Step[], watches = true): () => Actor {
  const pods = new Map<string, Pod>();
  return () => ({
    start(ctx: ActorContext) {
      if (watches)
        for (const [watchId, resource, asTable] of [
        ['test-pods', 'pods', false],
        ['test-pods-table', 'pods', true],
        ['test-rs', 'replicasets', false],
        ['test-deploy', 'deployments', false],
      ] as const) {
        ctx.request('apiserver', { type: 'ApiWatch', resource, watchId, asTable } as ApiRequest, () => {});
      }
      steps.forEach((s, i) => ctx.setTimer(s.at, i));
    },
    receive(ctx, env) {
      if (env.body.type !== 'ApiWatchEvent') return;
      const ev = env.body as unknown as ApiWatchEvent;
      for (const id of ev.watchIds) {
        if (!id.startsWith('test-')) continue;
        if (id === 'test-pods-table') {
          const t = ev.event.object as Table;
          const row = t.rows?.[0];
          if (!row) continue;
          ctx.trace('test.row', `${ev.event.type} ${row.cells.join(' ')}`, { type: ev.event.type, cells: row.cells });
        } else {
          const o = ev.event.object as KubeObject;
          if (id === 'test-pods') {
            if (ev.event.type === 'DELETED') pods.delete(o.metadata.uid ?? '');
            else pods.set(o.metadata.uid ?? '', o as Pod);
          }
          ctx.trace('test.watch', `${id} ${ev.event.type} ${o.metadata?.name}`, { watch: id, type: ev.event.type, object: o });
        }
      }
    },
    onTimer(ctx, payload) {
      const s = steps[payload as number];
      const req = typeof s.req === 'function' ? s.req(pods) : s.req;
      ctx.request('apiserver', req, (r) => {
        const res = r as ApiResult;
        ctx.trace('test.result', `${s.label ?? req.type} → ${res.code}`, { label: s.label, code: res.code, body: res.body, request: req });
      });
    },
  });
}

function fakeKubelet(cfg: FakeKubeletConfig): () => Actor {
  const nodes = new Set(cfg.nodes);
  const started = new Set<string>();
  const stopping = new Set<string>();
  return () => ({
    start(ctx) {
      ctx.request('apiserver', { type: 'ApiWatch', resource: 'pods', watchId: 'fake-kubelet' } as ApiRequest, () => {});
    },
    receive(ctx, env) {
      if (env.body.type !== 'ApiWatchEvent') return;
      const ev = (env.body as unknown as ApiWatchEvent).event;
      if (ev.type === 'DELETED' || ev.type === 'ERROR') return;
      const p = ev.object as Pod;
      const uid = p.metadata.uid ?? '';
      if (!p.spec.nodeName || !nodes.has(p.spec.nodeName)) return;
      const ns = p.metadata.namespace ?? 'default';
      const name = p.metadata.name ?? '';
      if (p.metadata.deletionTimestamp) {
        if (stopping.has(uid)) return;
        stopping.add(uid);
        const ann = p.metadata.annotations?.['test/stop-after-seconds'];
        const d = ann !== undefined ? Number(ann) * S : (cfg.stopDelayUs ?? 2 * S);
        ctx.setTimer(d, { t: 'stop', ns, name, uid });
        return;
      }
      if (started.has(uid) || p.status?.phase === 'Running') return;
      started.add(uid);
      ctx.setTimer(cfg.startDelayUs ?? 1 * S, { t: 'start', ns, name, uid, containers: p.spec.containers.map((c) => c.name) });
    },
    onTimer(ctx, payload) {
      const p = payload as { t: string; ns: string; name: string; uid: string; containers?: string[] };
      if (p.t === 'stop') {
        ctx.request(
          'apiserver',
          { type: 'ApiDelete', resource: 'pods', namespace: p.ns, name: p.name, options: { gracePeriodSeconds: 0, preconditions: { uid: p.uid } } } as ApiRequest,
          (r) => ctx.trace('test.kubelet', `final delete ${p.name} → ${(r as ApiResult).code}`, { name: p.name, code: (r as ApiResult).code }),
        );
        return;
      }
      if (stopping.has(p.uid)) return;
      const now = clock.format(ctx.now);
      const status = {
        phase: 'Running',
        conditions: [
          { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: now },
          { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: now },
          { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: now },
          { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: now },
        ],
        containerStatuses: (p.containers ?? []).map((c) => ({
          name: c,
          state: { running: { startedAt: now } },
          lastState: {},
          ready: true,
          restartCount: 0,
          image: 'nginx',
          imageID: 'nginx',
          containerID: `containerd://${p.uid}-${c}`,
          started: true,
        })),
      };
      ctx.request(
        'apiserver',
        { type: 'ApiPatch', resource: 'pods', namespace: p.ns, name: p.name, subresource: 'status', patchType: 'merge', patch: { metadata: { uid: p.uid }, status } } as ApiRequest,
        (r) => ctx.trace('test.kubelet', `running ${p.name} → ${(r as ApiResult).code}`, { name: p.name, code: (r as ApiResult).code }),
      );
    },
  });
}

/** A pod-watch event as the test client saw it. */
export interface WatchRec<T extends KubeObject = KubeObject> {
  readonly t: number;
  readonly type: string;
  readonly object: T;
}

export interface ClusterRun {
  readonly sim: LocalSimulation;
  readonly traces: TraceRecord[];
  /** Events of one of the test client's object watches, in delivery order. */
  events<T extends KubeObject>(watch: 'test-pods' | 'test-rs' | 'test-deploy'): WatchRec<T>[];
  pods(): WatchRec<Pod>[];
  replicaSets(): WatchRec<ReplicaSet>[];
  deployments(): WatchRec<Deployment>[];
  /** Printed Table rows (`kubectl get pods -w`), as [type, NAME, READY, STATUS, RESTARTS, AGE]. */
  rows(): { t: number; type: string; cells: unknown[] }[];
  all(kind: string, pred?: (r: TraceRecord) => boolean): TraceRecord[];
  /** The objects alive at the end of the run (replaying the watch). */
  live<T extends KubeObject>(watch: 'test-pods' | 'test-rs' | 'test-deploy'): Map<string, T>;
  /** Replays a watch, calling `fn` with the live set after each event. */
  replay<T extends KubeObject>(watch: 'test-pods' | 'test-rs' | 'test-deploy', fn: (t: number, live: ReadonlyMap<string, T>, ev: WatchRec<T>) => void): void;
}

/** The controllers the rig runs by default: all but `nodelifecycle`. */
export const RIG_CONTROLLERS: readonly ControllerName[] = ['replicaset', 'deployment', 'podgc', 'garbagecollector', 'namespace', 'disruption', 'job', 'ttl-after-finished', 'daemonset', 'statefulset', 'endpoint', 'endpointslice'];

export function runCluster(o: ClusterOptions): ClusterRun {
  // Stored objects are deep-frozen: a controller that mutated an informer object would throw.
  const actors: LocalActorDef[] = [
    { id: 'apiserver', factory: createApiserver, config: { freezeObjects: true } },
    { id: 'test-client', factory: testClient(o.steps, o.watches) },
  ];
  // The fake kubelet renews no Lease and posts no node status: without the node lifecycle
  // controller's 40 s grace every node would turn Unknown and its pods be taint-evicted. Rig tests
  // of that controller list it in `kcm.controllers`.
  if (o.kcm !== false) actors.push({ id: 'kube-controller-manager', factory: createKcm, config: { controllers: RIG_CONTROLLERS, ...o.kcm } });
  if (o.scheduler !== false) actors.push({ id: 'kube-scheduler', factory: createScheduler, config: o.scheduler ?? {} });
  if (o.kubelet) actors.push({ id: 'fake-kubelet', factory: fakeKubelet(o.kubelet) });
  const sim = new LocalSimulation({ seed: o.seed ?? Number(process.env.PODSIM_TEST_SEED ?? 1), actors, faults: o.faults, traceFilter: o.traceFilter });
  sim.runUntil(o.untilUs);
  const traces = sim.traces();
  const all = (kind: string, pred?: (r: TraceRecord) => boolean) => traces.filter((r) => r.kind === kind && (!pred || pred(r)));
  const events = <T extends KubeObject>(watch: string) =>
    all('test.watch', (r) => r.data?.watch === watch).map((r) => ({ t: r.t, type: r.data!.type as string, object: r.data!.object as T }));
  const replay = <T extends KubeObject>(watch: 'test-pods' | 'test-rs' | 'test-deploy', fn: (t: number, live: ReadonlyMap<string, T>, ev: WatchRec<T>) => void) => {
    const live = new Map<string, T>();
    for (const ev of events<T>(watch)) {
      const uid = ev.object.metadata.uid ?? '';
      if (ev.type === 'DELETED') live.delete(uid);
      else live.set(uid, ev.object);
      fn(ev.t, live, ev);
    }
  };
  return {
    sim,
    traces,
    events,
    pods: () => events<Pod>('test-pods'),
    replicaSets: () => events<ReplicaSet>('test-rs'),
    deployments: () => events<Deployment>('test-deploy'),
    rows: () => all('test.row').map((r) => ({ t: r.t, type: r.data!.type as string, cells: r.data!.cells as unknown[] })),
    all,
    live: <T extends KubeObject>(watch: 'test-pods' | 'test-rs' | 'test-deploy') => {
      const m = new Map<string, T>();
      replay<T>(watch, (_t, live) => {
        m.clear();
        for (const [k, v] of live) m.set(k, v);
      });
      return m;
    },
    replay,
  };
}

// ---- fixtures ---------------------------------------------------------------------------

export function mkNode(name: string, opts: { pods?: number; cpu?: string; memory?: string; ready?: boolean } = {}): Node {
  const allocatable: Record<string, string> = { pods: String(opts.pods ?? 110) };
  if (opts.cpu) allocatable.cpu = opts.cpu;
  if (opts.memory) allocatable.memory = opts.memory;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    status: {
      capacity: allocatable,
      allocatable,
      conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True', reason: 'KubeletReady' }],
    },
  };
}

export function createNode(at: number, node: Node): Step {
  return { at, req: { type: 'ApiCreate', resource: 'nodes', object: node }, label: `create node ${node.metadata.name}` };
}

export interface TemplateOpts {
  readonly tgps?: number;
  readonly image?: string;
  readonly cpu?: string;
  readonly annotations?: Record<string, string>;
}

export function podTemplate(app: string, o: TemplateOpts = {}): PodTemplateSpec {
  return {
    metadata: { labels: { app }, ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      terminationGracePeriodSeconds: o.tgps ?? 30,
      containers: [{ name: 'app', image: o.image ?? 'nginx:1.21', ...(o.cpu ? { resources: { requests: { cpu: o.cpu } } } : {}) }],
    },
  };
}

export function mkDeployment(
  name: string,
  replicas: number,
  o: TemplateOpts & { strategy?: Deployment['spec']['strategy']; minReadySeconds?: number } = {},
): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: podTemplate(name, o), strategy: o.strategy, minReadySeconds: o.minReadySeconds },
  };
}

export function mkReplicaSet(name: string, replicas: number, o: TemplateOpts = {}): ReplicaSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace: 'default' },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: podTemplate(name, o) },
  };
}

export function create(at: number, resource: 'pods' | 'replicasets' | 'deployments', object: KubeObject, label?: string): Step {
  return { at, req: { type: 'ApiCreate', resource, namespace: 'default', object }, label: label ?? `create ${resource} ${object.metadata.name}` };
}

export function del(at: number, resource: 'pods' | 'replicasets' | 'deployments' | 'nodes', name: string, options: Record<string, unknown> = {}, label?: string): Step {
  return {
    at,
    req: { type: 'ApiDelete', resource, namespace: resource === 'nodes' ? undefined : 'default', name, options },
    label: label ?? `delete ${resource} ${name}`,
  };
}

/** `kubectl scale deploy/<name> --replicas=n`: PATCH deployments/<name>/scale. */
export function scale(at: number, name: string, replicas: number): Step {
  return {
    at,
    req: { type: 'ApiPatch', resource: 'deployments', namespace: 'default', name, subresource: 'scale', patchType: 'merge', patch: { spec: { replicas } } },
    label: `scale ${name} ${replicas}`,
  };
}

/** `kubectl set image deploy/<name> app=<image>`: a strategic merge patch of the template. */
export function setImage(at: number, name: string, image: string): Step {
  return {
    at,
    req: {
      type: 'ApiPatch',
      resource: 'deployments',
      namespace: 'default',
      name,
      patchType: 'strategic',
      patch: { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } },
    },
    label: `set image ${name} ${image}`,
  };
}

export const secs = (us: number) => us / S;

/** Deletes the oldest live pod whose name starts with `prefix` (a user picking one from `kubectl get pods`). */
export function delOldestPod(at: number, prefix: string, options: Record<string, unknown> = {}, label?: string): Step {
  return {
    at,
    req: (pods) => {
      const cands = [...pods.values()].filter((p) => p.metadata.name?.startsWith(prefix) && !p.metadata.deletionTimestamp);
      const k = (p: Pod) => `${p.metadata.creationTimestamp ?? ''} ${p.metadata.name ?? ''}`;
      cands.sort((a, b) => (k(a) < k(b) ? -1 : k(a) > k(b) ? 1 : 0));
      const name = cands[0]?.metadata.name ?? 'none';
      return { type: 'ApiDelete', resource: 'pods', namespace: 'default', name, options };
    },
    label: label ?? `delete oldest pod ${prefix}*`,
  };
}
