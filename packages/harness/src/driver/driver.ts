/**
 * The scenario driver: a user at a terminal running kubectl against the cluster, as an actor.
 * It executes the compiled timeline ({@link DriverStep}) at virtual times through the apiserver
 * protocol (`packages/api/src/protocol/apiserver.ts`), keeps a pod informer for `kubectl wait`,
 * runs `kubectl get pods -w` as a Table watch (rows printed by the apiserver's own printer, as
 * real kubectl receives them) and records `driver.step` / `driver.watch` trace records. When the
 * timeline ends it calls `ctx.stopRun`. Mirrors kubectl v0.22.8 `pkg/cmd/{apply,create,delete,
 * scale,wait,get}` at the level of API calls made; client-side printing happens in the harness.
 */
import type {
  ActorContext,
  ApiResult,
  ApiWatchEvent,
  Envelope,
  KubeList,
  KubeObject,
  Message,
  Pod,
  RequestTimedOut,
  ResourceName,
  Table,
  WatchEvent,
} from '@podsim/api';
import { APISERVER_ACTOR, CLIENT_THROTTLE_TRACE } from '@podsim/api';
import { parseLabelSelector, type ParsedLabelSelector } from '@podsim/api';
import { TokenBucket } from '@podsim/controllers';
import { PodInformer, conditionHolds } from './informer.js';
import { WaitTally } from './waitTally.js';
import { KUBECTL_BURST, KUBECTL_QPS, type ApplyStep, type CordonStep, type DeleteStep, type DrainStep, type DriverConfig, type DriverStep, type EvictStep, type FaultStep, type PatchStep, type ScaleStep, type TaintStep, type WaitStep, type WatchStep } from './steps.js';
import {
  EVICTION_RETRY_US,
  WAIT_FOR_DELETE_POLL_US,
  abortLines,
  aggregateError,
  checkErrLines,
  evictionOutcome,
  goDuration,
  podsForDeletion,
  daemonSetLookups,
  type DaemonSetLookup,
  statusErrorText,
} from './drain.js';

/** Virtual µs after which an unanswered API call counts as failed (a fault ate it). */
export const API_CALL_TIMEOUT_US = 30_000_000;
/** Poll period for `delete --wait` on non-pod resources (pods use the informer). */
const DELETE_POLL_US = 1_000_000;
const INFORMER_WATCH = 'driver-informer';

/** The resource a manifest kind is served under (podsim's served kinds). */
export function resourceOfKind(kind: string | undefined): ResourceName | undefined {
  switch (kind) {
    case 'Pod':
      return 'pods';
    case 'Node':
      return 'nodes';
    case 'Namespace':
      return 'namespaces';
    case 'ReplicaSet':
      return 'replicasets';
    case 'Deployment':
      return 'deployments';
    case 'PodDisruptionBudget':
      return 'poddisruptionbudgets';
    case 'Job':
      return 'jobs';
    case 'DaemonSet':
      return 'daemonsets';
    case 'StatefulSet':
      return 'statefulsets';
    case 'PersistentVolumeClaim':
      return 'persistentvolumeclaims';
    case 'Service':
      return 'services';
    case 'Endpoints':
      return 'endpoints';
    default:
      return undefined;
  }
}

/** How kubectl names a resource's kind in its output (`pod`, `deployment.apps`). */
export function kubectlKind(resource: ResourceName): string {
  switch (resource) {
    case 'deployments':
      return 'deployment.apps';
    case 'replicasets':
      return 'replicaset.apps';
    case 'poddisruptionbudgets':
      return 'poddisruptionbudget.policy';
    case 'jobs':
      return 'job.batch';
    case 'daemonsets':
      return 'daemonset.apps';
    case 'statefulsets':
      return 'statefulset.apps';
    case 'controllerrevisions':
      return 'controllerrevision.apps';
    case 'endpoints':
      return 'endpoints';
    case 'endpointslices':
      return 'endpointslice.discovery.k8s.io';
    default:
      return resource.replace(/s$/, '');
  }
}

/** Cluster-scoped resources carry no namespace in requests. */
export function isClusterScoped(resource: ResourceName): boolean {
  return resource === 'nodes' || resource === 'namespaces';
}

type TimerPayload =
  | { readonly t: 'step' }
  | { readonly t: 'waitTimeout'; readonly step: number }
  | { readonly t: 'deletePoll'; readonly step: number }
  | { readonly t: 'drainEvict'; readonly step: number; readonly pod: number }
  | { readonly t: 'drainPoll'; readonly step: number; readonly pod: number }
  | { readonly t: 'stop' }
  | { readonly t: 'throttled'; readonly id: number };

interface ActiveWait {
  readonly step: DriverStep;
  /** For `gone`: the UIDs that must disappear. */
  readonly uids?: Set<string>;
  /** For non-pod `delete --wait`: objects polled with GET until 404 or a new UID. */
  readonly polled?: Array<{ resource: ResourceName; namespace?: string; name: string; uid: string }>;
  readonly condition: WaitStep['condition'];
  readonly target?: WaitStep['target'];
  readonly selector?: ParsedLabelSelector;
  readonly count: number;
  /** Pod conditions, judged incrementally (waitTally.ts); non-pod deletes poll instead. */
  readonly tally?: WaitTally;
  readonly timer: number;
  /** Recorded with the step's end (`delete --wait`: what kubectl printed). */
  readonly detail?: Record<string, unknown>;
}

/** A `kubectl drain` in progress: its evictions and waits run side by side, one per pod (upstream's goroutines). */
interface ActiveDrain {
  readonly step: DrainStep;
  /** What kubectl printed so far (stdout and stderr, in order). */
  readonly output: string[];
  /** The global `--timeout` deadline, from when the evictions began (virtual µs). */
  readonly deadlineUs: number;
  readonly pods: readonly Pod[];
  outstanding: number;
  /** One error per pod that failed, in the order they failed. */
  readonly errors: string[];
}

function statusMessage(body: unknown): string {
  const b = body as { message?: string; reason?: string } | undefined;
  return b?.message ?? b?.reason ?? 'error';
}

function isTimeout(reply: Message): reply is RequestTimedOut {
  return reply.type === 'RequestTimedOut';
}

export class Driver {
  private readonly steps: readonly DriverStep[];
  private next = 0;
  /** Scheduled start of the next step (virtual µs); sleeps advance it exactly. */
  private cursor = 0;
  private span = 0;
  private currentSpan = 0;
  private readonly informer = new PodInformer();
  private informerWatch = INFORMER_WATCH;
  private informerGen = 0;
  private wait: ActiveWait | undefined;
  private tableWatch: { id: string; printedHeader: boolean; wide: boolean } | undefined;
  private tableWatchSeq = 0;
  private drain: ActiveDrain | undefined;
  private done = false;
  /**
   * resourceVersion of the driver's own latest pod write (create / delete reply). A wait is
   * judged only once the informer has caught up with it — read-your-writes, so `delete` then
   * `wait --for=ready` does not see the deleted pod as still live because the reply outran the
   * watch event.
   */
  private ownPodWriteRv = 0;
  /**
   * The current kubectl command's client rate limiter (a new process per step: a full bucket).
   * Simplification: a `drain` with `wait: false` that is still polling goes on through the
   * buckets of the steps after it.
   */
  private limiter: TokenBucket | undefined;
  /** Requests held back by the limiter, by timer id. */
  private readonly throttled = new Map<number, () => void>();
  private throttledSeq = 0;

  constructor(private readonly config: DriverConfig) {
    this.steps = config.steps;
  }

  start(ctx: ActorContext): void {
    this.startInformer(ctx);
    this.schedule(ctx);
  }

  receive(ctx: ActorContext, env: Envelope): void {
    const body = env.body as Message;
    if (body.type !== 'ApiWatchEvent') return;
    const ev = body as unknown as ApiWatchEvent;
    if (ev.watchIds.includes(this.informerWatch)) this.onInformerEvent(ctx, ev.event as WatchEvent<KubeObject>);
    if (this.tableWatch && ev.watchIds.includes(this.tableWatch.id)) this.onTableEvent(ctx, ev.event);
  }

  onTimer(ctx: ActorContext, payload: unknown): void {
    const p = payload as TimerPayload;
    switch (p.t) {
      case 'step':
        return this.runStep(ctx);
      case 'waitTimeout':
        if (this.wait && this.wait.step.index === p.step) {
          const w = this.wait;
          this.wait = undefined;
          const timeoutUs = w.step.kind === 'wait' || w.step.kind === 'delete' ? w.step.timeoutUs : 0;
          this.finish(ctx, w.step, false, `timed out after ${timeoutUs / 1e6}s waiting for ${w.condition}`, w.detail);
        }
        return;
      case 'deletePoll':
        if (this.wait && this.wait.step.index === p.step) this.pollDeleted(ctx);
        return;
      case 'drainEvict':
        if (this.drain && this.drain.step.index === p.step) this.drainEvict(ctx, this.drain, p.pod);
        return;
      case 'drainPoll':
        if (this.drain && this.drain.step.index === p.step) this.drainPoll(ctx, this.drain, p.pod);
        return;
      case 'stop':
        ctx.stopRun('timeline finished');
        return;
      case 'throttled': {
        const send = this.throttled.get(p.id);
        this.throttled.delete(p.id);
        send?.();
        return;
      }
    }
  }

  // ---- timeline -----------------------------------------------------------------------------

  private schedule(ctx: ActorContext): void {
    if (this.next >= this.steps.length) {
      if (!this.done) {
        this.done = true;
        // A trailing sleep still has to elapse (the cursor is ahead of now), then the drain.
        const wait = Math.max(0, this.cursor - ctx.now) + (this.config.drainUs ?? 0);
        if (wait > 0) ctx.setTimer(wait, { t: 'stop' } satisfies TimerPayload);
        else ctx.stopRun('timeline finished');
      }
      return;
    }
    const step = this.steps[this.next];
    if (step.atUs !== undefined && step.atUs > this.cursor) this.cursor = step.atUs;
    ctx.setTimer(Math.max(0, this.cursor - ctx.now), { t: 'step' } satisfies TimerPayload);
  }

  private runStep(ctx: ActorContext): void {
    const step = this.steps[this.next++];
    this.currentSpan = ++this.span;
    const limits = this.config.kubectl ?? { qps: KUBECTL_QPS, burst: KUBECTL_BURST };
    this.limiter = new TokenBucket(limits.qps, limits.burst, ctx.now);
    ctx.trace('driver.step', `#${step.index} ${step.kind} ${describe(step)}`, {
      index: step.index,
      id: step.id,
      step: step.kind,
      ph: 'B',
      span: this.currentSpan,
    });
    switch (step.kind) {
      case 'sleep':
        this.cursor += step.durationUs;
        return this.finish(ctx, step, true);
      case 'apply':
      case 'create':
        return this.runApply(ctx, step, 0, []);
      case 'delete':
        return this.runDelete(ctx, step);
      case 'scale':
        return this.runScale(ctx, step);
      case 'patch':
        return this.runPatch(ctx, step);
      case 'wait':
        return this.runWait(ctx, step);
      case 'watch':
        return this.runWatch(ctx, step);
      case 'fault':
        return this.runFault(ctx, step);
      case 'cordon':
      case 'uncordon':
        return this.runCordon(ctx, step);
      case 'taint':
        return this.runTaint(ctx, step);
      case 'evict':
        return this.runEvict(ctx, step);
      case 'drain':
        return this.runDrain(ctx, step);
    }
  }

  /** Ends the current step, traces its result and schedules the next one. */
  private finish(ctx: ActorContext, step: DriverStep, ok: boolean, error?: string, detail?: Record<string, unknown>): void {
    ctx.trace('driver.step', `#${step.index} ${step.kind} ${ok ? 'ok' : `failed: ${error}`}`, {
      index: step.index,
      id: step.id,
      step: step.kind,
      ph: 'E',
      span: this.currentSpan,
      ok,
      ...(error !== undefined ? { error } : {}),
      ...(detail ?? {}),
    });
    if (step.kind === 'wait' || step.kind === 'drain' || (step.kind === 'delete' && step.wait)) this.cursor = Math.max(this.cursor, ctx.now);
    this.schedule(ctx);
  }

  /**
   * One request of the current kubectl command, sent once its client's token bucket allows
   * (client-go `request.tryThrottle`: the request waits, it is never refused). `limited: false`
   * for the driver's own informer, which is no kubectl command.
   */
  private api(ctx: ActorContext, body: Message, onReply: (r: ApiResult) => void, onTimeout: () => void, limited = true): void {
    const waitUs = limited && this.limiter ? this.limiter.reserve(ctx.now) : 0;
    if (waitUs > 0) {
      // Only when the report asks (CLIENT_THROTTLE_TRACE is not digested): kubectl's own client limit.
      if (ctx.tracing(CLIENT_THROTTLE_TRACE)) ctx.trace(CLIENT_THROTTLE_TRACE, `kubectl ${body.type} waited ${waitUs}us`, { client: 'kubectl', waitUs, qps: this.limiter!.qps, burst: this.limiter!.burst });
      const id = ++this.throttledSeq;
      this.throttled.set(id, () => this.send(ctx, body, onReply, onTimeout));
      ctx.setTimer(waitUs, { t: 'throttled', id } satisfies TimerPayload);
      return;
    }
    this.send(ctx, body, onReply, onTimeout);
  }

  private send(ctx: ActorContext, body: Message, onReply: (r: ApiResult) => void, onTimeout: () => void): void {
    ctx.request<ApiResult>(
      APISERVER_ACTOR,
      body,
      (reply) => {
        if (isTimeout(reply)) return onTimeout();
        const req = body as { type: string; resource?: string };
        if (req.resource === 'pods' && (req.type === 'ApiCreate' || req.type === 'ApiDelete' || req.type === 'ApiUpdate') && reply.code < 300) {
          const rv = Number((reply.body as KubeObject).metadata?.resourceVersion);
          if (rv > this.ownPodWriteRv) this.ownPodWriteRv = rv;
        }
        onReply(reply);
      },
      { timeoutUs: API_CALL_TIMEOUT_US },
    );
  }

  // ---- apply / create -------------------------------------------------------------------------

  /**
   * Creates (or, for `apply`, creates or updates) `step.objects[i …]` one after another. Each
   * object leaves kubectl's line in the step's output: `deployment.apps/web created` /
   * `configured`, or `Error from server (Forbidden): …` with the Status message.
   */
  private runApply(ctx: ActorContext, step: ApplyStep, i: number, results: Array<{ name: string; code: number; line: string; message?: string }>): void {
    if (i >= step.objects.length) {
      const failed = results.filter((r) => r.code >= 300);
      return this.finish(
        ctx,
        step,
        failed.length === 0,
        failed.length ? failed.map((f) => `${f.name}: ${f.code}${f.message ? ` ${f.message}` : ''}`).join(', ') : undefined,
        { results: results.map(({ name, code }) => ({ name, code })), output: results.map((r) => r.line) },
      );
    }
    const obj = step.objects[i];
    const resource = resourceOfKind(obj.kind)!;
    const namespace = isClusterScoped(resource) ? undefined : obj.metadata.namespace;
    const name = obj.metadata.name ?? obj.metadata.generateName ?? '?';
    const next = (code: number, body: unknown, verb: 'created' | 'configured') => {
      const stored = (code < 300 ? (body as KubeObject | undefined)?.metadata?.name : undefined) ?? name;
      const line = code < 300 ? `${kubectlKind(resource)}/${stored} ${verb}` : code === 504 ? `Error from server (Timeout): ${kubectlKind(resource)} "${name}": no answer from the apiserver` : serverError(body);
      const message = code >= 300 && code !== 504 ? statusMessage(body) : undefined;
      this.runApply(ctx, step, i + 1, [...results, { name: `${obj.kind}/${name}`, code, line, ...(message ? { message } : {}) }]);
    };
    this.api(
      ctx,
      { type: 'ApiCreate', resource, namespace, object: obj } as Message,
      (r) => {
        if (r.code === 409 && step.kind === 'apply' && obj.metadata.name) return this.applyUpdate(ctx, resource, namespace, obj, (u) => next(u.code, u.body, 'configured'));
        next(r.code, r.body, 'created');
      },
      () => next(504, undefined, 'created'),
    );
  }

  /** `kubectl apply` on an existing object: GET, then PUT with the new spec/labels/annotations. */
  private applyUpdate(ctx: ActorContext, resource: ResourceName, namespace: string | undefined, obj: KubeObject, next: (r: { code: number; body?: unknown }) => void): void {
    const name = obj.metadata.name!;
    this.api(
      ctx,
      { type: 'ApiGet', resource, namespace, name } as Message,
      (r) => {
        if (r.code !== 200) return next(r);
        const cur = r.body as KubeObject & Record<string, unknown>;
        const merged = {
          ...cur,
          ...obj,
          metadata: {
            ...cur.metadata,
            labels: obj.metadata.labels ?? cur.metadata.labels,
            annotations: obj.metadata.annotations ?? cur.metadata.annotations,
          },
        } as KubeObject;
        if ('status' in cur) (merged as unknown as Record<string, unknown>).status = cur.status;
        this.api(ctx, { type: 'ApiUpdate', resource, namespace, name, object: merged } as Message, (u) => next(u), () => next({ code: 504 }));
      },
      () => next({ code: 504 }),
    );
  }

  // ---- delete ---------------------------------------------------------------------------------

  private runDelete(ctx: ActorContext, step: DeleteStep): void {
    const t = step.target;
    if (t.name !== undefined) return this.deleteEach(ctx, step, [t.name], 0, []);
    this.api(
      ctx,
      { type: 'ApiList', resource: t.resource, namespace: t.namespace, labelSelector: t.selector } as Message,
      (r) => {
        if (r.code !== 200) return this.finish(ctx, step, false, `list ${t.resource}: ${r.code} ${statusMessage(r.body)}`);
        let items = (r.body as KubeList).items;
        if (step.count !== undefined) items = this.informer.oldestFirst(items.filter((o) => o.metadata.deletionTimestamp === undefined)).slice(0, step.count);
        const names = items.map((o) => o.metadata.name!).filter(Boolean);
        if (names.length === 0) return this.finish(ctx, step, true, undefined, { results: [], note: 'No resources found' });
        this.deleteEach(ctx, step, names, 0, []);
      },
      () => this.finish(ctx, step, false, 'list timed out'),
    );
  }

  private deleteEach(
    ctx: ActorContext,
    step: DeleteStep,
    names: readonly string[],
    i: number,
    results: Array<{ name: string; code: number; uid?: string; error?: string }>,
  ): void {
    if (i >= names.length) return this.afterDelete(ctx, step, results);
    const t = step.target;
    this.api(
      ctx,
      { type: 'ApiDelete', resource: t.resource, namespace: t.namespace, name: names[i], options: step.options } as Message,
      (r) => {
        const uid = r.code < 300 ? (r.body as KubeObject).metadata?.uid ?? (r.body as { details?: { uid?: string } }).details?.uid : undefined;
        // kubectl prints a failure as `Error from server (<reason>): <message>`.
        const st = r.body as { reason?: string; message?: string };
        const error = r.code >= 300 && r.code !== 404 && st?.reason && st.message ? `Error from server (${st.reason}): ${st.message}` : undefined;
        // Appended in place: a 20k-pod delete copied the list once per pod.
        results.push({ name: names[i], code: r.code, ...(uid ? { uid } : {}), ...(error ? { error } : {}) });
        this.deleteEach(ctx, step, names, i + 1, results);
      },
      () => {
        results.push({ name: names[i], code: 504 });
        this.deleteEach(ctx, step, names, i + 1, results);
      },
    );
  }

  private afterDelete(ctx: ActorContext, step: DeleteStep, results: Array<{ name: string; code: number; uid?: string; error?: string }>): void {
    // With --all / -l kubectl ignores NotFound (another deleter won the race); by name it is an error.
    const ignoreNotFound = step.target.name === undefined;
    const failed = results.filter((r) => r.code >= 300 && !(ignoreNotFound && r.code === 404));
    // What kubectl prints: its warning (stderr), then one line per object (delete.go PrintObj).
    const kind = kubectlKind(step.target.resource);
    const output = [
      ...(step.warning !== undefined ? [`warning: ${step.warning}`] : []),
      ...results
        .filter((r) => !(ignoreNotFound && r.code === 404))
        .map((r) =>
          r.code < 300
            ? `${kind} "${r.name}" ${step.verb}`
            : r.code === 404
              ? `Error from server (NotFound): ${step.target.resource} "${r.name}" not found`
              : (r.error ?? `Error from server: ${step.target.resource} "${r.name}": ${r.code}`),
        ),
    ];
    if (failed.length > 0 || !step.wait) {
      return this.finish(ctx, step, failed.length === 0, failed.length ? failed.map((f) => `${f.name}: ${f.code}`).join(', ') : undefined, {
        results,
        output,
      });
    }
    const deleted = results.filter((r) => r.code < 300 && r.uid);
    const timer = ctx.setTimer(step.timeoutUs, { t: 'waitTimeout', step: step.index } satisfies TimerPayload);
    if (step.target.resource === 'pods') {
      const uids = new Set(deleted.map((r) => r.uid!));
      this.wait = { step, condition: 'gone', uids, count: 0, tally: new WaitTally('gone', 0, undefined, undefined, uids), timer, detail: { results, output } };
      this.checkWait(ctx);
    } else {
      const polled = deleted.map((r) => ({ resource: step.target.resource, namespace: step.target.namespace, name: r.name, uid: r.uid! }));
      this.wait = { step, condition: 'gone', polled, count: 0, timer, detail: { results, output } };
      this.pollDeleted(ctx);
    }
  }

  /** One GET per still-present object; done when each is 404 or has a new UID. */
  private pollDeleted(ctx: ActorContext): void {
    const w = this.wait!;
    const polled = w.polled!;
    if (polled.length === 0) return this.completeWait(ctx, w);
    let outstanding = polled.length;
    const still: typeof polled = [];
    for (const o of polled) {
      this.api(
        ctx,
        { type: 'ApiGet', resource: o.resource, namespace: o.namespace, name: o.name } as Message,
        (r) => {
          if (r.code === 200 && (r.body as KubeObject).metadata.uid === o.uid) still.push(o);
          if (--outstanding === 0) this.afterPoll(ctx, w, still);
        },
        () => {
          still.push(o);
          if (--outstanding === 0) this.afterPoll(ctx, w, still);
        },
      );
    }
  }

  private afterPoll(ctx: ActorContext, w: ActiveWait, still: NonNullable<ActiveWait['polled']>): void {
    if (this.wait !== w) return;
    w.polled!.splice(0, w.polled!.length, ...still);
    if (still.length === 0) return this.completeWait(ctx, w);
    ctx.setTimer(DELETE_POLL_US, { t: 'deletePoll', step: w.step.index } satisfies TimerPayload);
  }

  // ---- scale ----------------------------------------------------------------------------------

  private runScale(ctx: ActorContext, step: ScaleStep): void {
    this.api(
      ctx,
      {
        type: 'ApiPatch',
        resource: step.resource,
        namespace: step.namespace,
        name: step.name,
        patchType: 'merge',
        patch: { spec: { replicas: step.replicas } },
      } as Message,
      (r) =>
        this.finish(ctx, step, r.code < 300, r.code < 300 ? undefined : `${r.code} ${statusMessage(r.body)}`, {
          code: r.code,
          output: [r.code < 300 ? `${kubectlKind(step.resource)}/${step.name} scaled` : `Error from server: ${statusMessage(r.body)}`],
        }),
      () => this.finish(ctx, step, false, 'patch timed out'),
    );
  }

  // ---- patch / set image ------------------------------------------------------------------------

  private runPatch(ctx: ActorContext, step: PatchStep): void {
    this.api(
      ctx,
      { type: 'ApiPatch', resource: step.resource, namespace: step.namespace, name: step.name, patchType: step.patchType, patch: step.patch } as Message,
      (r) =>
        this.finish(ctx, step, r.code < 300, r.code < 300 ? undefined : `${r.code} ${statusMessage(r.body)}`, {
          code: r.code,
          output: [r.code < 300 ? step.success : `Error from server: ${statusMessage(r.body)}`],
        }),
      () => this.finish(ctx, step, false, 'patch timed out'),
    );
  }

  // ---- wait -----------------------------------------------------------------------------------

  private runWait(ctx: ActorContext, step: WaitStep): void {
    const t = step.target;
    const parsed = t.selector !== undefined ? parseLabelSelector(t.selector) : undefined;
    // The compiler validated the selector; a failure here is a programmer error.
    if (parsed && 'error' in parsed) throw new Error(parsed.error);
    const selector = parsed;
    const timer = ctx.setTimer(step.timeoutUs, { t: 'waitTimeout', step: step.index } satisfies TimerPayload);
    if (step.condition === 'gone') {
      const uids = new Set(this.informer.select(t.namespace, t.name, selector).map((p) => p.metadata.uid!));
      if (step.count > uids.size) {
        // The pods that can go are fixed when the wait begins: fewer than `count` can never all be gone.
        ctx.cancelTimer(timer);
        this.finish(ctx, step, false, `count ${step.count}: only ${uids.size} pod${uids.size === 1 ? '' : 's'} matched when the wait began`);
        return;
      }
      this.wait = { step, condition: 'gone', uids, count: step.count, tally: new WaitTally('gone', step.count, undefined, undefined, uids), timer };
    } else {
      this.wait = { step, condition: step.condition, target: t, selector, count: step.count, tally: new WaitTally(step.condition, step.count, t, selector), timer };
    }
    this.checkWait(ctx);
  }

  private checkWait(ctx: ActorContext): void {
    const w = this.wait;
    if (!w || w.polled || this.informer.rv < this.ownPodWriteRv) return;
    let holds: boolean;
    if (w.tally) holds = w.tally.holds(this.informer);
    else if (w.condition === 'gone') holds = [...w.uids!].every((u) => !this.informer.has(u));
    else holds = conditionHolds(w.condition, this.informer.select(w.target!.namespace, w.target!.name, w.selector), w.count);
    if (holds) this.completeWait(ctx, w);
  }

  private completeWait(ctx: ActorContext, w: ActiveWait): void {
    this.wait = undefined;
    ctx.cancelTimer(w.timer);
    this.finish(ctx, w.step, true, undefined, w.detail);
  }

  private startInformer(ctx: ActorContext): void {
    this.informerWatch = `${INFORMER_WATCH}-${this.informerGen++}`;
    this.api(
      ctx,
      { type: 'ApiWatch', resource: 'pods', namespace: this.config.informerNamespace, watchId: this.informerWatch } as Message,
      (r) => {
        if (r.code !== 200) throw new Error(`driver: pod informer watch refused: ${r.code} ${statusMessage(r.body)}`);
      },
      () => ctx.trace('driver.informer', 'watch request timed out'),
      false,
    );
  }

  private onInformerEvent(ctx: ActorContext, event: WatchEvent<KubeObject>): void {
    if (event.type === 'ERROR') {
      // 410 Gone or similar: relist by restarting the watch (synthetic ADDED events refill the cache).
      ctx.trace('driver.informer', `watch error: ${statusMessage(event.object)}; restarting`);
      this.informer.clear();
      this.wait?.tally?.invalidate();
      this.startInformer(ctx);
      return;
    }
    this.informer.apply(event);
    const uid = (event.object as KubeObject | undefined)?.metadata?.uid;
    if (uid && (event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED')) {
      this.wait?.tally?.update(uid, event.type === 'DELETED' ? undefined : (event.object as Pod));
    }
    this.checkWait(ctx);
  }

  // ---- kubectl get pods -w ------------------------------------------------------------------

  private runWatch(ctx: ActorContext, step: WatchStep): void {
    if (step.action === 'stop') {
      if (this.tableWatch) ctx.send(APISERVER_ACTOR, { type: 'ApiUnwatch', watchId: this.tableWatch.id } as Message);
      this.tableWatch = undefined;
      return this.finish(ctx, step, true);
    }
    if (this.tableWatch) ctx.send(APISERVER_ACTOR, { type: 'ApiUnwatch', watchId: this.tableWatch.id } as Message);
    const id = `kubectl-get-pods-w-${++this.tableWatchSeq}`;
    this.tableWatch = { id, printedHeader: false, wide: step.wide ?? false };
    this.api(
      ctx,
      {
        type: 'ApiWatch',
        resource: 'pods',
        namespace: step.namespace,
        labelSelector: step.selector,
        watchId: id,
        asTable: true,
        wide: step.wide,
      } as Message,
      (r) => this.finish(ctx, step, r.code === 200, r.code === 200 ? undefined : `${r.code} ${statusMessage(r.body)}`),
      () => this.finish(ctx, step, false, 'watch request timed out'),
    );
  }

  private onTableEvent(ctx: ActorContext, event: WatchEvent<KubeObject | Table | unknown>): void {
    const w = this.tableWatch!;
    if (event.type === 'ERROR') {
      ctx.trace('driver.watch', `ERROR ${statusMessage(event.object)}`, { watchId: w.id, event: 'ERROR' });
      this.tableWatch = undefined;
      return;
    }
    if (event.type === 'BOOKMARK') return;
    const table = event.object as Table;
    const visible = (table.columnDefinitions ?? []).map((c, i) => ({ c, i })).filter(({ c }) => w.wide || c.priority === 0);
    for (const row of table.rows ?? []) {
      const cells = visible.map(({ i }) => String(row.cells[i] ?? ''));
      const meta = ((row.object ?? {}) as { metadata?: Record<string, unknown> }).metadata ?? {};
      const data: Record<string, unknown> = {
        watchId: w.id,
        event: event.type,
        cells,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
        creationTimestamp: meta.creationTimestamp,
        deletionTimestamp: meta.deletionTimestamp,
      };
      if (!w.printedHeader && visible.length > 0) {
        data.columns = visible.map(({ c }) => c.name.toUpperCase());
        w.printedHeader = true;
      }
      ctx.trace('driver.watch', `${event.type} ${cells.join(' ')}`, data);
    }
  }

  // ---- cordon / uncordon / evict / drain (kubectl v0.22.8 pkg/cmd/drain, pkg/drain) ---------------

  private runCordon(ctx: ActorContext, step: CordonStep): void {
    const output: string[] = [];
    this.cordon(ctx, step.node, step.kind === 'cordon', output, (ok, error) => this.finish(ctx, step, ok, error, { output }));
  }

  /**
   * RunCordonOrUncordon for one node: GET it (the resource builder; a failure ends kubectl with
   * the error), then PATCH spec.unschedulable unless it already has the wanted value. A refused
   * PATCH is printed and kubectl goes on (drain evicts anyway) and exits 0, as upstream does.
   */
  private cordon(ctx: ActorContext, node: string, desired: boolean, output: string[], done: (ok: boolean, error?: string) => void): void {
    const verb = desired ? 'cordon' : 'uncordon';
    this.api(
      ctx,
      { type: 'ApiGet', resource: 'nodes', name: node } as Message,
      (r) => {
        if (r.code !== 200) {
          const line = serverError(r.body);
          output.push(line);
          return done(false, line);
        }
        const current = ((r.body as KubeObject & { spec?: { unschedulable?: boolean } }).spec?.unschedulable ?? false) === true;
        if (current === desired) {
          output.push(`node/${node} already ${verb}ed`);
          return done(true);
        }
        // CreateTwoWayMergePatch of the node with spec.unschedulable flipped (false is omitempty: null).
        this.api(
          ctx,
          { type: 'ApiPatch', resource: 'nodes', name: node, patchType: 'strategic', patch: { spec: { unschedulable: desired ? true : null } } } as Message,
          (pr) => {
            output.push(pr.code < 300 ? `node/${node} ${verb}ed` : `error: unable to ${verb} node "${node}": ${statusErrorText(pr.body)}`);
            done(true);
          },
          () => {
            output.push(`error: unable to ${verb} node "${node}": request timed out`);
            done(true);
          },
        );
      },
      () => {
        output.push('Unable to connect to the server: request timed out');
        done(false, 'get node timed out');
      },
    );
  }

  /** `kubectl taint nodes` (see {@link TaintStep}). */
  private runTaint(ctx: ActorContext, step: TaintStep): void {
    const output: string[] = [];
    const fail = (line: string) => {
      output.push(line);
      this.finish(ctx, step, false, line, { output });
    };
    const spec = `${step.key}${step.value !== undefined ? `=${step.value}` : ''}${step.effect ? `:${step.effect}` : ''}`;
    this.api(
      ctx,
      { type: 'ApiGet', resource: 'nodes', name: step.node } as Message,
      (r) => {
        if (r.code !== 200) return fail(serverError(r.body));
        const old = ((r.body as KubeObject & { spec?: { taints?: { key: string; value?: string; effect: string }[] } }).spec?.taints ?? []).map((t) => ({ ...t }));
        let next: typeof old;
        if (step.remove) {
          next = old.filter((t) => !(t.key === step.key && (step.effect === undefined || t.effect === step.effect)));
          if (next.length === old.length) return fail(`error: taint ${JSON.stringify(spec)} not found`);
        } else {
          const i = old.findIndex((t) => t.key === step.key && t.effect === step.effect);
          if (i >= 0 && !step.overwrite) return fail(`error: node ${step.node} already has ${step.key} taint(s) with same effect(s) and --overwrite is false`);
          const t = { key: step.key, ...(step.value !== undefined ? { value: step.value } : {}), effect: step.effect! };
          next = i >= 0 ? old.map((x, k) => (k === i ? t : x)) : [...old, t];
        }
        this.api(
          ctx,
          { type: 'ApiPatch', resource: 'nodes', name: step.node, patchType: 'strategic', patch: { spec: { taints: next } } } as Message,
          (pr) => {
            if (pr.code >= 300) return fail(serverError(pr.body));
            output.push(`node/${step.node} ${step.remove ? 'untainted' : 'tainted'}`);
            this.finish(ctx, step, true, undefined, { output });
          },
          () => fail('Unable to connect to the server: request timed out'),
        );
      },
      () => fail('Unable to connect to the server: request timed out'),
    );
  }

  /** One POST of pods/{name}/eviction (policy/v1), printed as drain prints an eviction. */
  private runEvict(ctx: ActorContext, step: EvictStep): void {
    const output = [`evicting pod ${step.namespace}/${step.name}`];
    const pod = { metadata: { name: step.name, namespace: step.namespace } } as KubeObject;
    this.postEviction(
      ctx,
      pod,
      step.gracePeriodSeconds,
      (r) => {
        const ok = r.code < 300;
        output.push(ok ? `pod/${step.name} evicted` : `error when evicting pods/"${step.name}" -n "${step.namespace}": ${statusErrorText(r.body)}`);
        this.finish(ctx, step, ok, ok ? undefined : `${r.code} ${statusErrorText(r.body)}`, { code: r.code, output });
      },
      () => this.finish(ctx, step, false, 'eviction timed out', { output }),
    );
  }

  private postEviction(ctx: ActorContext, pod: KubeObject, gracePeriodSeconds: number | undefined, onReply: (r: ApiResult) => void, onTimeout: () => void): void {
    const { name, namespace } = pod.metadata;
    const eviction = {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name, namespace },
      deleteOptions: gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {},
    };
    this.api(ctx, { type: 'ApiCreate', resource: 'pods', namespace, name, subresource: 'eviction', object: eviction } as unknown as Message, onReply, onTimeout);
  }

  /** RunDrain for one node: cordon, GetPodsForDeletion, evict each, wait for each to be gone. */
  private runDrain(ctx: ActorContext, step: DrainStep): void {
    const output: string[] = [];
    this.cordon(ctx, step.node, true, output, (ok, error) => {
      if (!ok) return this.finish(ctx, step, false, error, { output });
      this.podsForDeletion(ctx, step, (list, listError) => {
        if (listError !== undefined || list.errors.length > 0) {
          const errs = listError !== undefined ? [listError] : list.errors;
          output.push(...abortLines(step.node), ...checkErrLines(errs));
          return this.finish(ctx, step, false, aggregateError(errs), { output });
        }
        if (list.warnings !== '') output.push(`WARNING: ${list.warnings}`);
        if (list.pods.length === 0) {
          output.push(`node/${step.node} drained`);
          return this.finish(ctx, step, true, undefined, { output });
        }
        const d: ActiveDrain = { step, output, deadlineUs: ctx.now + step.timeoutUs, pods: list.pods, outstanding: list.pods.length, errors: [] };
        this.drain = d;
        list.pods.forEach((_, i) => this.drainEvict(ctx, d, i));
      });
    });
  }

  /** LIST the node's pods in every namespace (field selector spec.nodeName) and filter them. */
  private podsForDeletion(ctx: ActorContext, step: DrainStep, done: (list: ReturnType<typeof podsForDeletion>, error?: string) => void): void {
    const empty = { pods: [], warnings: '', errors: [] };
    this.api(
      ctx,
      { type: 'ApiList', resource: 'pods', fieldSelector: `spec.nodeName=${step.node}` } as Message,
      (r) => {
        if (r.code !== 200) return done(empty, serverError(r.body));
        const items = (r.body as KubeList).items as Pod[];
        // daemonSetFilter GETs the DaemonSet of each daemon pod, one pod after the other.
        const lookups = daemonSetLookups(items);
        const found = new Map<string, DaemonSetLookup>();
        const next = (i: number): void => {
          if (i >= lookups.length) return done(podsForDeletion(items, { ...step, daemonSets: found }));
          const l = lookups[i];
          this.api(
            ctx,
            { type: 'ApiGet', resource: 'daemonsets', namespace: l.namespace, name: l.name } as Message,
            (g) => {
              const uid = l.pod.metadata.uid ?? '';
              found.set(uid, g.code === 200 ? { found: true } : { found: false, notFound: g.code === 404, error: statusErrorText(g.body) });
              next(i + 1);
            },
            () => done(empty, 'Unable to connect to the server: request timed out'),
          );
        };
        next(0);
      },
      () => done(empty, 'Unable to connect to the server: request timed out'),
    );
  }

  /** One pass of evictPods' loop for pod `i`: print, check the deadline, POST the eviction. */
  private drainEvict(ctx: ActorContext, d: ActiveDrain, i: number): void {
    const pod = d.pods[i];
    const { name, namespace } = pod.metadata;
    d.output.push(`evicting pod ${namespace}/${name}`);
    if (ctx.now >= d.deadlineUs) return this.drainPodDone(ctx, d, `error when evicting pods/"${name}" -n "${namespace}": global timeout reached: ${goDuration(d.step.timeoutUs)}`);
    this.postEviction(
      ctx,
      pod,
      d.step.gracePeriodSeconds,
      (r) => {
        if (this.drain !== d) return;
        const o = evictionOutcome(pod, r.code, r.body, pod.metadata.deletionTimestamp !== undefined);
        switch (o.t) {
          case 'evicted':
          case 'wait':
            return d.step.wait ? this.drainPoll(ctx, d, i) : this.drainPodDone(ctx, d);
          case 'gone':
            return this.drainPodDone(ctx, d);
          case 'retry':
            d.output.push(o.stderr);
            ctx.setTimer(EVICTION_RETRY_US, { t: 'drainEvict', step: d.step.index, pod: i } satisfies TimerPayload);
            return;
          case 'failed':
            return this.drainPodDone(ctx, d, o.error);
        }
      },
      () => {
        if (this.drain === d) this.drainPodDone(ctx, d, `error when evicting pods/"${name}" -n "${namespace}": request timed out`);
      },
    );
  }

  /** waitForDelete for pod `i`: GET it every second until it is 404 or has a new UID. */
  private drainPoll(ctx: ActorContext, d: ActiveDrain, i: number): void {
    const pod = d.pods[i];
    const { name, namespace } = pod.metadata;
    const failed = (err: string) => this.drainPodDone(ctx, d, `error when waiting for pod "${name}" terminating: ${err}`);
    this.api(
      ctx,
      { type: 'ApiGet', resource: 'pods', namespace, name } as Message,
      (r) => {
        if (this.drain !== d) return;
        if (r.code === 404 || (r.code === 200 && (r.body as KubeObject).metadata.uid !== pod.metadata.uid)) {
          d.output.push(`pod/${name} evicted`);
          return this.drainPodDone(ctx, d);
        }
        if (r.code !== 200) return failed(statusErrorText(r.body));
        if (ctx.now >= d.deadlineUs) return failed(`global timeout reached: ${goDuration(d.step.timeoutUs)}`);
        ctx.setTimer(WAIT_FOR_DELETE_POLL_US, { t: 'drainPoll', step: d.step.index, pod: i } satisfies TimerPayload);
      },
      () => {
        if (this.drain === d) failed('request timed out');
      },
    );
  }

  /** One pod's eviction goroutine returned (with an error, or nil); the last one ends the drain. */
  private drainPodDone(ctx: ActorContext, d: ActiveDrain, error?: string): void {
    if (error !== undefined) d.errors.push(error);
    if (--d.outstanding > 0) return;
    this.drain = undefined;
    const step = d.step;
    if (d.errors.length === 0) {
      if (step.wait) d.output.push(`node/${step.node} drained`);
      return this.finish(ctx, step, true, undefined, { output: d.output });
    }
    // deleteOrEvictPodsSimple: list again and name the pods still there, then RunDrain's abort.
    const aggregate = aggregateError(d.errors);
    this.podsForDeletion(ctx, step, (list, listError) => {
      if (list.pods.length > 0) {
        d.output.push(`There are pending pods in node "${step.node}" when an error occurred: ${aggregate}`, ...list.pods.map((p) => `pod/${p.metadata.name}`));
      }
      const newErrs = listError !== undefined ? [listError] : list.errors;
      if (newErrs.length > 0) d.output.push('Following errors occurred while getting the list of pods to delete:', aggregateError(newErrs));
      d.output.push(...abortLines(step.node), ...checkErrLines(d.errors));
      this.finish(ctx, step, false, aggregate, { output: d.output });
    });
  }

  // ---- faults -------------------------------------------------------------------------------

  private runFault(ctx: ActorContext, step: FaultStep): void {
    if (step.deleteNode === undefined) return this.finish(ctx, step, true, undefined, { fault: step.fault });
    this.api(
      ctx,
      { type: 'ApiDelete', resource: 'nodes', name: step.deleteNode } as Message,
      (r) => this.finish(ctx, step, r.code < 300, r.code < 300 ? undefined : `${r.code} ${statusMessage(r.body)}`, { fault: step.fault, code: r.code }),
      () => this.finish(ctx, step, false, 'node delete timed out', { fault: step.fault }),
    );
  }
}

/** kubectl's `StandardErrorMessage` of an API error: `Error from server (<reason>): <message>`. */
function serverError(body: unknown): string {
  const st = body as { reason?: string; message?: string } | undefined;
  return st?.reason ? `Error from server (${st.reason}): ${st.message ?? ''}` : `Error from server: ${statusErrorText(body)}`;
}

/**
 * A one-line summary of a step. `duration` formats virtual µs: the trace messages keep plain
 * seconds (`151200s`; they are digested, so their text stays stable), reports pass a readable
 * formatter (`42h`).
 */
export function describe(step: DriverStep, duration: (us: number) => string = (us) => `${us / 1e6}s`): string {
  switch (step.kind) {
    case 'apply':
    case 'create':
      return step.objects.map((o) => `${o.kind}/${o.metadata.name ?? o.metadata.generateName}`).join(' ');
    case 'delete':
      return step.command;
    case 'scale':
      return `${step.resource}/${step.name} --replicas=${step.replicas}`;
    case 'patch':
      return step.command;
    case 'wait':
      return `--for=${step.condition} ${step.target.name ?? (step.target.selector !== undefined ? `-l ${step.target.selector}` : '--all')}${step.target.namespace !== undefined && step.target.namespace !== 'default' ? ` -n ${step.target.namespace}` : ''}`;
    case 'sleep':
      return duration(step.durationUs);
    case 'watch':
      return step.action;
    case 'fault':
      return step.summary;
    case 'cordon':
    case 'uncordon':
      return step.node;
    case 'taint':
      return `nodes ${step.node} ${step.key}${step.value !== undefined ? `=${step.value}` : ''}${step.effect ? `:${step.effect}` : ''}${step.remove ? '-' : ''}${step.overwrite ? ' --overwrite' : ''}`;
    case 'evict':
      return `${step.namespace}/${step.name}${step.gracePeriodSeconds !== undefined ? ` --grace-period=${step.gracePeriodSeconds}` : ''}`;
    case 'drain':
      return [
        step.node,
        step.gracePeriodSeconds !== undefined ? `--grace-period=${step.gracePeriodSeconds}` : '',
        step.force ? '--force' : '',
        step.ignoreDaemonsets ? '--ignore-daemonsets' : '',
        step.deleteEmptydirData ? '--delete-emptydir-data' : '',
        `--timeout=${goDuration(step.timeoutUs)}`,
      ]
        .filter(Boolean)
        .join(' ');
  }
}
