/**
 * `pnpm bench:apiserver`: the apiserver actor on the threaded engine with 1,000 watchers on 2
 * host threads (placement shards:2 = the apiserver alone on one thread, watchers and load on
 * the other). Prints ONE JSON line with requests/s and watch events delivered/s for:
 * - `selector`: 1,000 kubelet-like watchers (`spec.nodeName=<node>`), pods spread over them;
 * - `broadcast`: 1,000 watchers of every pod (each write reaches all of them in one multicast);
 * and, side by side in the same run, the same `selector` load on one thread (`single`) and the
 * pure ApiServer core without any engine (`core`), as ratios. Each pod lifecycle is 4 requests
 * (create, status PATCH, DELETE, DELETE grace 0 + UID) and 5 storage writes.
 * Timings are reported, never asserted. SEED, PODS, BROADCAST_PODS (env) adjust the run.
 */
import type { ActorSpec, ApiRequest, Pod } from '@podsim/api';
import { IdGenerator, Prng } from '@podsim/api';
import type { Placement } from '@podsim/api/protocol/control';
import { Simulation, type SimulationMetrics } from '@podsim/sim';
import { ApiServer } from '../src/apiServer.js';
import type { LoadConfig, WatcherConfig } from './benchActors.js';

const seed = Number(process.env.SEED ?? 1);
const WATCHERS = 1_000;
const LOADS = 8;
const PODS = Number(process.env.PODS ?? 16_000);
const BROADCAST_PODS = Number(process.env.BROADCAST_PODS ?? 400);
const ACTORS = new URL('./benchActors.js', import.meta.url).href;
const APISERVER = new URL('../src/actor/apiserverActor.js', import.meta.url).href;

const nodeName = (i: number) => `node-${String(i).padStart(4, '0')}`;

function actors(selector: boolean, pods: number): ActorSpec[] {
  const specs: ActorSpec[] = [{ id: 'apiserver', module: APISERVER, config: { historySize: 10_000 } }];
  for (let i = 0; i < WATCHERS; i++) {
    const config: WatcherConfig = selector ? { fieldSelector: `spec.nodeName=${nodeName(i)}` } : {};
    specs.push({ id: `kubelet/${nodeName(i)}`, module: ACTORS, exportName: 'createWatcher', config });
  }
  for (let i = 0; i < LOADS; i++) {
    const config: LoadConfig = { index: i, pods: Math.ceil(pods / LOADS), nodes: WATCHERS, periodUs: 50 };
    specs.push({ id: `load-${i}`, module: ACTORS, exportName: 'createLoad', config });
  }
  return specs;
}

interface Measured {
  readonly wallSeconds: number;
  readonly requests: number;
  readonly watchEvents: number;
  readonly lifecycles: number;
  readonly metrics: SimulationMetrics;
  readonly digest: string;
}

async function runEngine(selector: boolean, pods: number, placement: Placement): Promise<Measured> {
  const sim = await Simulation.create({ seed, actors: actors(selector, pods), placement, latency: { default: { minUs: 100, jitterUs: 20 } }, traceFilter: 'none', hostTimeoutMs: 120_000 });
  try {
    const t0 = performance.now();
    await sim.run();
    const wallSeconds = (performance.now() - t0) / 1000;
    const metrics = await sim.metrics();
    return {
      wallSeconds,
      requests: metrics.counters['api.requests'] ?? 0,
      watchEvents: metrics.counters['bench.watchEvents'] ?? 0,
      lifecycles: metrics.counters['bench.lifecycles'] ?? 0,
      metrics,
      digest: await sim.digest(),
    };
  } finally {
    await sim.close();
  }
}

/** The same request sequence straight into the pure core (1,000 registered selector watches). */
function runCore(pods: number): { wallSeconds: number; requests: number; deliveries: number } {
  const api = new ApiServer({ historySize: 10_000 });
  const ids = new IdGenerator(new Prng(`${seed}/core`));
  let now = 0;
  const rctx = () => ({ now, clock: api.clock, newId: (n: number, a: string) => ids.id(n, a), uuid: () => ids.uuid() });
  api.bootstrap(rctx());
  for (let i = 0; i < WATCHERS; i++) api.handle({ type: 'ApiWatch', resource: 'pods', watchId: 'pods', fieldSelector: `spec.nodeName=${nodeName(i)}` }, `kubelet/${nodeName(i)}`, rctx());
  api.drain();
  let requests = 0;
  let deliveries = 0;
  const call = (req: ApiRequest) => {
    const r = api.handle(req, 'load', rctx());
    requests++;
    for (const d of api.drain()) deliveries += d.to.length;
    if (r.code >= 300) throw new Error(`${req.type} ${r.code}`);
    return r;
  };
  const t0 = performance.now();
  for (let n = 0; n < pods; n++) {
    now += 50;
    const name = `core-${n}`;
    const created = call({ type: 'ApiCreate', resource: 'pods', namespace: 'default', object: { metadata: { name, labels: { app: 'bench' } }, spec: { nodeName: nodeName(n % WATCHERS), containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '3600'] }] } } as Pod });
    const uid = (created.body as Pod).metadata.uid;
    call({ type: 'ApiPatch', resource: 'pods', namespace: 'default', name, subresource: 'status', patchType: 'strategic', patch: { metadata: { uid }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], podIPs: [{ ip: '10.0.0.1' }] } } });
    call({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name, options: { propagationPolicy: 'Background' } });
    call({ type: 'ApiDelete', resource: 'pods', namespace: 'default', name, options: { gracePeriodSeconds: 0, preconditions: { uid } } });
  }
  return { wallSeconds: (performance.now() - t0) / 1000, requests, deliveries };
}

const tStart = performance.now();
const rate = (x: number, s: number) => Math.round(x / s);

const core = runCore(PODS);
const selector = await runEngine(true, PODS, 'shards:2');
const single = await runEngine(true, PODS, 'single');
const broadcast = await runEngine(false, BROADCAST_PODS, 'shards:2');

const summary = (m: Measured) => ({
  pods: m.lifecycles,
  requests: m.requests,
  watchEventsDelivered: m.watchEvents,
  wallSeconds: Number(m.wallSeconds.toFixed(3)),
  requestsPerSec: rate(m.requests, m.wallSeconds),
  watchEventsPerSec: rate(m.watchEvents, m.wallSeconds),
  hosts: m.metrics.hostCount,
  windows: m.metrics.windows,
  remoteMessages: m.metrics.remoteMessages,
});

console.log(
  JSON.stringify({
    name: 'apiserver',
    seed,
    watchers: WATCHERS,
    hostThreads: selector.metrics.hostCount,
    requestsPerSec: rate(selector.requests, selector.wallSeconds),
    watchEventsPerSec: rate(selector.watchEvents, selector.wallSeconds),
    broadcastWatchEventsPerSec: rate(broadcast.watchEvents, broadcast.wallSeconds),
    selector: summary(selector),
    broadcast: summary(broadcast),
    single: { ...summary(single), digestsAgree: single.digest === selector.digest },
    core: { pods: PODS, requestsPerSec: rate(core.requests, core.wallSeconds), deliveriesPerSec: rate(core.deliveries, core.wallSeconds) },
    ratios: {
      shards2OverSingle: Number((selector.wallSeconds > 0 ? single.wallSeconds / selector.wallSeconds : 0).toFixed(3)),
      engineOverCore: Number((rate(selector.requests, selector.wallSeconds) / rate(core.requests, core.wallSeconds)).toFixed(3)),
    },
    wallSeconds: Number(((performance.now() - tStart) / 1000).toFixed(2)),
  }),
);
