/**
 * The benchmark driver (actor `driver`): a clusterloader2-like load client. It creates the
 * bench's Deployments, keeps a slim pod informer (a watch on the namespace; per pod only what it
 * needs), waits until every pod is Running and Ready, then at the next whole virtual second
 * deletes everything at once — the Deployments and ReplicaSets first (propagationPolicy
 * Background, so no controller replaces a pod) and then every pod with a plain `DELETE` (the
 * pod's own terminationGracePeriodSeconds), all in the same instant — and waits until every pod
 * is gone. The deletion SLI of each pod (virtual µs from its DELETE's 200 to its DELETED watch
 * event, both seen here through the same link) and the phase times are written as one
 * `bench.result` trace record when it stops the run. `churn` mode instead creates and deletes
 * single pods at a steady rate. Mirrors what clusterloader2's pod-startup SLI measures, for
 * deletion. Counters (`bench.*`) let the harness show progress between run segments.
 */
import type { ActorContext, ApiResult, ApiWatchEvent, Deployment, Envelope, KubeObject, Message, Pod, RequestTimedOut, WatchEvent } from '@podsim/api';
import { APISERVER_ACTOR, US_PER_SECOND } from '@podsim/api';

/** Plain-data configuration of the storm / churn driver (built by `stormPlan.ts`). */
export interface StormDriverConfig {
  readonly mode: 'storm' | 'churn';
  readonly namespace: string;
  /** Deployments to create (storm); their pods are the population. */
  readonly deployments: readonly Deployment[];
  /** Total pods the deployments ask for. */
  readonly pods: number;
  /** Virtual µs after which the storm gives up (pods never ready / never gone). */
  readonly timeoutUs: number;
  /** Virtual µs at which the load starts (Deployments created, churn begins): after every node has booted. Default 0. */
  readonly startAtUs?: number;
  /** Churn: pods created (and deleted) per virtual second, the pod template, and for how long. */
  readonly churn?: {
    readonly ratePerSecond: number;
    /** Virtual µs at which creations stop (they start at `startAtUs`). */
    readonly durationUs: number;
    /** A pod stays this long after it is Running before its DELETE. */
    readonly lifetimeUs: number;
    readonly template: Pod;
  };
}

/** Record the driver writes at the end (`bench.result`). Times are virtual µs. */
export interface StormResult {
  readonly mode: 'storm' | 'churn';
  readonly pods: number;
  /** When every pod was Running and Ready (storm). */
  readonly readyAtUs?: number;
  /** When the mass DELETE was sent (storm) / the first DELETE (churn). */
  readonly deleteAtUs?: number;
  /** When the last pod's DELETED arrived. */
  readonly lastDeletedUs?: number;
  readonly created: number;
  readonly deleted: number;
  /** Pods (by UID) created but never DELETED when the run ended. */
  readonly notDeleted: number;
  /** DELETEs that did not return 200/404. */
  readonly deleteErrors: number;
  /** Pod creates that failed (churn retries each up to {@link CREATE_ATTEMPTS} times, e.g. a generateName collision). */
  readonly createErrors: number;
  /** Per deleted pod: µs from the DELETE's 200 to the DELETED event. */
  readonly latenciesUs: readonly number[];
  readonly timedOut: boolean;
}

const WATCH_ID = 'bench-pods';
/** Attempts per churn pod create (a generated name that collides with a live pod is a 500 ServerTimeout). */
export const CREATE_ATTEMPTS = 5;
const REQUEST_TIMEOUT_US = 120 * US_PER_SECOND;

const enum PodState {
  Pending = 0,
  Ready = 1,
  Deleting = 2,
}

interface PodTrack {
  readonly name: string;
  state: PodState;
  /** Virtual µs when the DELETE's reply arrived (0 = not yet). */
  acceptedAt: number;
  /** Churn: the delete timer is set. */
  scheduled: boolean;
}

type Timer = { readonly t: 'begin' } | { readonly t: 'delete' } | { readonly t: 'timeout' } | { readonly t: 'churnCreate' } | { readonly t: 'churnDelete'; readonly uid: string };

function isReady(p: Pod): boolean {
  if (p.status?.phase !== 'Running') return false;
  const conds = p.status.conditions;
  if (!conds) return false;
  for (const c of conds) if (c.type === 'Ready') return c.status === 'True';
  return false;
}

export class StormDriver {
  private readonly pods = new Map<string, PodTrack>();
  private readonly replicaSets = new Set<string>();
  private readyCount = 0;
  private created = 0;
  private deleted = 0;
  private deleteErrors = 0;
  private readonly latencies: number[] = [];
  private readyAtUs: number | undefined;
  private deleteAtUs: number | undefined;
  private lastDeletedUs: number | undefined;
  private deleting = false;
  private finished = false;
  private churnSent = 0;
  /** Churn creates answered 201, and creates given up on. */
  private churnCreated = 0;
  private churnFailed = 0;
  private createErrors = 0;
  private announced = false;

  constructor(private readonly config: StormDriverConfig) {}

  start(ctx: ActorContext): void {
    this.api(ctx, { type: 'ApiWatch', resource: 'pods', namespace: this.config.namespace, watchId: WATCH_ID } as Message, (r) => {
      if (r.code !== 200) throw new Error(`bench driver: pod watch refused: ${r.code}`);
    });
    ctx.setTimer(this.config.timeoutUs, { t: 'timeout' } satisfies Timer);
    if ((this.config.startAtUs ?? 0) > 0) ctx.setTimer(this.config.startAtUs!, { t: 'begin' } satisfies Timer);
    else this.begin(ctx);
  }

  /** Creates the Deployments (storm) or starts the creations (churn). */
  private begin(ctx: ActorContext): void {
    if (this.config.mode === 'churn') {
      ctx.setTimer(0, { t: 'churnCreate' } satisfies Timer);
      return;
    }
    for (const d of this.config.deployments) {
      this.api(ctx, { type: 'ApiCreate', resource: 'deployments', namespace: this.config.namespace, object: d } as Message, (r) => {
        if (r.code >= 300) throw new Error(`bench driver: creating deployment ${d.metadata.name} failed: ${r.code}`);
      });
    }
  }

  receive(ctx: ActorContext, env: Envelope): void {
    if (env.body.type !== 'ApiWatchEvent') return;
    const ev = (env.body as unknown as ApiWatchEvent).event as WatchEvent<KubeObject>;
    if (ev.type === 'ERROR') throw new Error('bench driver: the pod watch ended (ERROR event); the bench cannot relist');
    const pod = ev.object as Pod;
    const uid = pod.metadata.uid!;
    let t = this.pods.get(uid);
    if (ev.type === 'DELETED') {
      if (!t) return;
      this.pods.delete(uid);
      if (t.state === PodState.Ready) this.readyCount--;
      this.deleted++;
      ctx.count('bench.deleted');
      if (t.acceptedAt > 0) this.latencies.push(ctx.now - t.acceptedAt);
      this.lastDeletedUs = ctx.now;
      this.checkDone(ctx);
      return;
    }
    if (!t) {
      t = { name: pod.metadata.name!, state: PodState.Pending, acceptedAt: 0, scheduled: false };
      this.pods.set(uid, t);
      this.created++;
      ctx.count('bench.created');
      const ref = pod.metadata.ownerReferences?.find((r) => r.controller);
      if (ref?.kind === 'ReplicaSet') this.replicaSets.add(ref.name);
    }
    if (t.state === PodState.Deleting) return;
    if (pod.metadata.deletionTimestamp) {
      if (t.state === PodState.Ready) this.readyCount--;
      t.state = PodState.Deleting;
      return;
    }
    const ready = isReady(pod);
    if (ready && t.state === PodState.Pending) {
      t.state = PodState.Ready;
      this.readyCount++;
      ctx.count('bench.ready');
      if (this.config.mode === 'churn' && !t.scheduled) {
        // DELETEs go out on whole virtual seconds (the rate stays steady), so the first one is
        // known a lifetime ahead and the harness can pause exactly there to time the phases.
        t.scheduled = true;
        const at = Math.ceil((ctx.now + this.config.churn!.lifetimeUs) / US_PER_SECOND) * US_PER_SECOND;
        if (this.deleteAtUs === undefined && !this.announced) {
          this.announced = true;
          ctx.count('bench.deleteAtS', at / US_PER_SECOND);
        }
        ctx.setTimer(at - ctx.now, { t: 'churnDelete', uid } satisfies Timer);
      }
    } else if (!ready && t.state === PodState.Ready) {
      t.state = PodState.Pending;
      this.readyCount--;
    }
    if (this.config.mode === 'storm' && !this.deleting && this.readyCount === this.config.pods && this.pods.size === this.config.pods) {
      this.deleting = true;
      this.readyAtUs = ctx.now;
      // The mass delete starts at the next whole virtual second: a time the harness can pause at
      // (it reads `bench.deleteAtS`) to time the creation and deletion phases separately.
      const at = (Math.floor(ctx.now / US_PER_SECOND) + 1) * US_PER_SECOND;
      ctx.count('bench.deleteAtS', at / US_PER_SECOND);
      ctx.setTimer(at - ctx.now, { t: 'delete' } satisfies Timer);
    }
  }

  onTimer(ctx: ActorContext, payload: unknown): void {
    const p = payload as Timer;
    switch (p.t) {
      case 'begin':
        return this.begin(ctx);
      case 'delete':
        return this.massDelete(ctx);
      case 'timeout':
        if (!this.finished) this.finish(ctx, true);
        return;
      case 'churnCreate':
        return this.churnCreate(ctx);
      case 'churnDelete': {
        const t = this.pods.get(p.uid);
        if (t && t.state !== PodState.Deleting) this.deletePod(ctx, p.uid, t);
        return;
      }
    }
  }

  /** Everything at once: owners first (FIFO link: the apiserver sees them first), then every pod. */
  private massDelete(ctx: ActorContext): void {
    this.deleteAtUs = ctx.now;
    const ns = this.config.namespace;
    const owners = { propagationPolicy: 'Background' as const };
    for (const d of this.config.deployments) {
      this.api(ctx, { type: 'ApiDelete', resource: 'deployments', namespace: ns, name: d.metadata.name!, options: owners } as Message, (r) => this.ownerDeleted(r));
    }
    for (const rs of [...this.replicaSets].sort()) {
      this.api(ctx, { type: 'ApiDelete', resource: 'replicasets', namespace: ns, name: rs, options: owners } as Message, (r) => this.ownerDeleted(r));
    }
    for (const [uid, t] of this.pods) this.deletePod(ctx, uid, t);
  }

  private ownerDeleted(r: ApiResult): void {
    if (r.code >= 300 && r.code !== 404) this.deleteErrors++;
  }

  private deletePod(ctx: ActorContext, uid: string, t: PodTrack): void {
    if (this.deleteAtUs === undefined) this.deleteAtUs = ctx.now;
    if (t.state === PodState.Ready) this.readyCount--;
    t.state = PodState.Deleting;
    this.api(ctx, { type: 'ApiDelete', resource: 'pods', namespace: this.config.namespace, name: t.name } as Message, (r) => {
      if (r.code === 200 || r.code === 202) {
        t.acceptedAt = ctx.now;
        ctx.count('bench.deleteAccepted');
      } else if (r.code !== 404) this.deleteErrors++;
    });
  }

  // ---- churn ------------------------------------------------------------------------------------

  private churnCreate(ctx: ActorContext): void {
    const c = this.config.churn!;
    if (ctx.now >= c.durationUs) return;
    this.churnSent++;
    this.createPod(ctx, CREATE_ATTEMPTS);
    ctx.setTimer(Math.round(US_PER_SECOND / c.ratePerSecond), { t: 'churnCreate' } satisfies Timer);
  }

  private createPod(ctx: ActorContext, attempts: number): void {
    this.api(ctx, { type: 'ApiCreate', resource: 'pods', namespace: this.config.namespace, object: this.config.churn!.template } as Message, (r) => {
      if (r.code < 300) {
        this.churnCreated++;
        return;
      }
      this.createErrors++;
      if (attempts > 1) return this.createPod(ctx, attempts - 1);
      this.churnFailed++;
      this.checkDone(ctx);
    });
  }

  private checkDone(ctx: ActorContext): void {
    if (this.finished) return;
    if (this.config.mode === 'storm') {
      if (this.deleting && this.pods.size === 0) this.finish(ctx, false);
    } else if (ctx.now >= this.config.churn!.durationUs && this.pods.size === 0 && this.churnCreated + this.churnFailed === this.churnSent && this.deleted >= this.churnCreated) {
      this.finish(ctx, false);
    }
  }

  private finish(ctx: ActorContext, timedOut: boolean): void {
    this.finished = true;
    const result: StormResult = {
      mode: this.config.mode,
      pods: this.config.pods,
      ...(this.readyAtUs !== undefined ? { readyAtUs: this.readyAtUs } : {}),
      ...(this.deleteAtUs !== undefined ? { deleteAtUs: this.deleteAtUs } : {}),
      ...(this.lastDeletedUs !== undefined ? { lastDeletedUs: this.lastDeletedUs } : {}),
      created: this.created,
      deleted: this.deleted,
      notDeleted: this.pods.size,
      deleteErrors: this.deleteErrors,
      createErrors: this.createErrors,
      latenciesUs: this.latencies,
      timedOut,
    };
    ctx.trace('bench.result', `${this.config.mode}: ${this.deleted}/${this.created} deleted${timedOut ? ' (timed out)' : ''}`, result as unknown as Record<string, unknown>);
    ctx.stopRun(timedOut ? 'bench timed out' : 'bench finished');
  }

  private api(ctx: ActorContext, body: Message, onReply: (r: ApiResult) => void): void {
    ctx.request<ApiResult>(
      APISERVER_ACTOR,
      body,
      (reply: ApiResult | RequestTimedOut) => {
        if (reply.type === 'RequestTimedOut') throw new Error(`bench driver: ${body.type} timed out`);
        onReply(reply);
      },
      { timeoutUs: REQUEST_TIMEOUT_US },
    );
  }
}
