/**
 * Pair-test rig: apiserver + kubelet + runtime over the engine (LocalSimulation), plus a small
 * test "client" actor that creates and deletes pods through the apiserver on a timeline and
 * watches pods, recording every watch event as a `client.watch` trace with a kubectl-like
 * READY/STATUS summary. Helpers read the runtime's `cri.*` and the kubelet's records back.
 */
import type { Actor, ActorContext, ApiRequest, ApiResult, ApiWatchEvent, DeleteOptions, Event, Fault, Pod, TraceRecord } from '@podsim/api';
import { LocalSimulation } from '@podsim/sim';
import { createActor as createApiserver } from '@podsim/apiserver/actor/apiserverActor';
import { createActor as createRuntime } from '@podsim/runtime/actor/runtimeActor';
import { createActor as createKubelet } from '../src/actor/kubeletActor.js';
import type { KubeletConfig } from '../src/kubeletConfig.js';

export const S = 1_000_000;
export const NODE = 'n1';

export type Step =
  | { readonly at: number; readonly create: Pod }
  | { readonly at: number; readonly delete: string; readonly options?: DeleteOptions; readonly namespace?: string };

/** One watch event as the client saw it. */
export interface Row {
  readonly t: number;
  readonly type: string;
  readonly name: string;
  readonly uid: string;
  readonly rv: string;
  readonly ready: string;
  readonly status: string;
  readonly dgps?: number;
  readonly pod: Pod;
}

/** kubectl's READY and (simplified) STATUS columns (printPod: Terminating wins when dts is set). */
export function printRow(p: Pod): { ready: string; status: string } {
  const cs = p.status?.containerStatuses ?? [];
  const ready = `${cs.filter((c) => c.ready && c.state.running).length}/${p.spec.containers.length}`;
  let status: string = p.status?.reason || p.status?.phase || 'Pending';
  for (const c of [...cs].reverse()) {
    if (c.state.waiting?.reason) status = c.state.waiting.reason;
    else if (c.state.terminated?.reason) status = c.state.terminated.reason;
  }
  if (p.metadata.deletionTimestamp) status = 'Terminating';
  return { ready, status };
}

function clientActor(steps: readonly Step[]): () => Actor {
  return () => ({
    start(ctx: ActorContext) {
      ctx.request('apiserver', { type: 'ApiWatch', resource: 'pods', watchId: 'client-pods' } as ApiRequest, () => {});
      ctx.request('apiserver', { type: 'ApiWatch', resource: 'events', watchId: 'client-events' } as ApiRequest, () => {});
      steps.forEach((s, i) => ctx.setTimer(s.at, i));
    },
    receive(ctx, env) {
      if (env.body.type !== 'ApiWatchEvent') return;
      const body = env.body as unknown as ApiWatchEvent;
      const ev = body.event;
      if (body.watchIds.includes('client-events')) {
        const e = ev.object as Event;
        if (ev.type === 'ADDED') ctx.trace('client.event', `${e.reason} ${e.involvedObject.name}: ${e.message}`, { reason: e.reason, pod: e.involvedObject.name, type: e.type, message: e.message });
        return;
      }
      const p = ev.object as Pod;
      if (!p.metadata?.uid) return;
      const { ready, status } = printRow(p);
      ctx.trace('client.watch', `${ev.type} ${p.metadata.name} ${ready} ${status}`, {
        type: ev.type,
        name: p.metadata.name,
        uid: p.metadata.uid,
        rv: p.metadata.resourceVersion,
        ready,
        status,
        dgps: p.metadata.deletionGracePeriodSeconds,
        pod: p,
      });
    },
    onTimer(ctx, payload) {
      const s = steps[payload as number];
      const cb = (r: unknown) => {
        const res = r as ApiResult;
        ctx.trace('client.result', `${'create' in s ? 'create' : 'delete'} → ${res.code}`, { code: res.code });
      };
      if ('create' in s) ctx.request('apiserver', { type: 'ApiCreate', resource: 'pods', namespace: s.create.metadata.namespace ?? 'default', object: s.create } as ApiRequest, cb);
      else ctx.request('apiserver', { type: 'ApiDelete', resource: 'pods', namespace: s.namespace ?? 'default', name: s.delete, options: s.options } as ApiRequest, cb);
    },
  });
}

export interface PairOptions {
  readonly steps: readonly Step[];
  readonly kubelet?: Partial<KubeletConfig>;
  readonly runtime?: Record<string, unknown>;
  readonly apiserver?: Record<string, unknown>;
  readonly faults?: readonly Fault[];
  readonly seed?: number;
  readonly untilS?: number;
}

export interface PairRun {
  readonly sim: LocalSimulation;
  readonly traces: TraceRecord[];
  rows(name?: string): Row[];
  /** Virtual seconds of the first record matching. */
  first(kind: string, pred?: (r: TraceRecord) => boolean): number | undefined;
  all(kind: string, pred?: (r: TraceRecord) => boolean): TraceRecord[];
}

export function runPair(o: PairOptions): PairRun {
  const sim = new LocalSimulation({
    seed: o.seed ?? 1,
    actors: [
      { id: 'apiserver', factory: createApiserver, config: o.apiserver ?? {} },
      { id: `kubelet/${NODE}`, factory: createKubelet, config: { nodeName: NODE, ...o.kubelet } },
      { id: `runtime/${NODE}`, factory: createRuntime, config: { nodeName: NODE, preloadedImages: ['nginx'], ...o.runtime } },
      { id: 'client', factory: clientActor(o.steps) },
    ],
    faults: o.faults,
  });
  sim.runUntil((o.untilS ?? 120) * S);
  const traces = sim.traces();
  const all = (kind: string, pred?: (r: TraceRecord) => boolean) => traces.filter((r) => r.kind === kind && (!pred || pred(r)));
  return {
    sim,
    traces,
    rows: (name) =>
      all('client.watch', (r) => name === undefined || r.data?.name === name).map((r) => ({ t: r.t, ...(r.data as Omit<Row, 't'>) })),
    first: (kind, pred) => {
      const r = traces.find((x) => x.kind === kind && (!pred || pred(x)));
      return r ? r.t / S : undefined;
    },
    all,
  };
}

export function mkPod(name: string, opts: { tgps?: number; annotations?: Record<string, string>; containers?: Pod['spec']['containers']; volumes?: Pod['spec']['volumes'] } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', annotations: opts.annotations ?? {} },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: opts.tgps ?? 30,
      containers: opts.containers ?? [{ name: 'app', image: 'nginx' }],
      ...(opts.volumes ? { volumes: opts.volumes } : {}),
    },
  };
}

/**
 * Checks spec §14 invariants the kubelet owns over a pair run's trace; returns the violations
 * (empty = all hold). 1: no DELETED while a container of that UID runs, unless the pod was
 * force-deleted; 2: the kubelet's final DELETE only once every container of the pod exited;
 * 5: a preStop wait ends before its container's StopContainer; 8: one sync span at a time per
 * UID, in the order Sync* → Terminating+ → Terminated; 9: no container start after termination
 * began. A kubelet restart closes its open spans. (Invariant 7 is pinned by the kill timing tests.)
 */
export function checkInvariants(run: PairRun, opts: { forceDeleted?: readonly string[] } = {}): string[] {
  const out: string[] = [];
  const running = new Map<string, Set<string>>();
  const containerKey = new Map<string, string>();
  const preStopOpen = new Set<string>();
  const openSync = new Map<string, string>();
  const phase = new Map<string, number>();
  const terminating = new Set<string>();
  const order: Record<string, number> = { SyncPodWork: 0, TerminatingPodWork: 1, TerminatedPodWork: 2 };
  for (const r of run.traces) {
    const d = (r.data ?? {}) as Record<string, unknown>;
    const uid = d.podUid as string;
    switch (r.kind) {
      case 'engine.restart':
        // A crashed kubelet's open spans never close; its successor starts afresh.
        if (r.actor.startsWith('kubelet/')) {
          openSync.clear();
          preStopOpen.clear();
        }
        break;
      case 'cri.start': {
        let set = running.get(uid);
        if (!set) running.set(uid, (set = new Set()));
        set.add(d.containerId as string);
        containerKey.set(d.containerId as string, `${uid}/${d.container}`);
        if (terminating.has(uid)) out.push(`inv9: ${d.pod}/${d.container} started at ${r.t} after termination began`);
        break;
      }
      case 'cri.exit':
        running.get(uid)?.delete(d.containerId as string);
        break;
      case 'client.watch':
        if (d.type === 'DELETED' && (running.get(d.uid as string)?.size ?? 0) > 0 && !(opts.forceDeleted ?? []).includes(d.name as string)) {
          out.push(`inv1: ${d.name} removed at ${r.t} while containers run`);
        }
        break;
      case 'kubelet.finalDelete':
        if ((running.get(uid)?.size ?? 0) > 0) out.push(`inv2: final DELETE of ${d.pod} at ${r.t} while containers run`);
        break;
      case 'kubelet.preStop':
        if (d.ph === 'B') preStopOpen.add(`${uid}/${d.container}`);
        else preStopOpen.delete(`${uid}/${d.container}`);
        break;
      case 'cri.call': {
        const key = containerKey.get(d.containerId as string);
        if (r.msg.startsWith('StopContainer') && key !== undefined && preStopOpen.has(key)) out.push(`inv5: StopContainer of ${key} at ${r.t} during its preStop`);
        break;
      }
      case 'kubelet.sync': {
        const w = d.work as string;
        if (d.ph === 'B') {
          if (openSync.has(uid)) out.push(`inv8: ${w} of ${d.pod} began at ${r.t} while ${openSync.get(uid)} runs`);
          openSync.set(uid, w);
          if ((phase.get(uid) ?? 0) > order[w]) out.push(`inv8: ${d.pod} went back to ${w} at ${r.t}`);
          phase.set(uid, Math.max(phase.get(uid) ?? 0, order[w]));
          if (w !== 'SyncPodWork') terminating.add(uid);
        } else openSync.delete(uid);
        break;
      }
    }
  }
  return out;
}
