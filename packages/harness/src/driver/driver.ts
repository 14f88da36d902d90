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
  RequestTimedOut,
  ResourceName,
  Table,
  WatchEvent,
} from '@podsim/api';
import { APISERVER_ACTOR } from '@podsim/api';
import { parseLabelSelector, type ParsedLabelSelector } from '@podsim/api';
import { PodInformer, conditionHolds } from './informer.js';
import type { ApplyStep, DeleteStep, DriverConfig, DriverStep, FaultStep, PatchStep, ScaleStep, WaitStep, WatchStep } from './steps.js';

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
  | { readonly t: 'stop' };

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
  readonly timer: number;
  /** Recorded with the step's end (`delete --wait`: what kubectl printed). */
  readonly detail?: Record<string, unknown>;
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
  private done = false;
  /**
   * resourceVersion of the driver's own latest pod write (create / delete reply). A wait is
   * judged only once the informer has caught up with it — read-your-writes, so `delete` then
   * `wait --for=ready` does not see the deleted pod as still live because the reply outran the
   * watch event.
   */
  private ownPodWriteRv = 0;

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
      case 'stop':
        ctx.stopRun('timeline finished');
        return;
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
    if (step.kind === 'wait' || (step.kind === 'delete' && step.wait)) this.cursor = Math.max(this.cursor, ctx.now);
    this.schedule(ctx);
  }

  private api(ctx: ActorContext, body: Message, onReply: (r: ApiResult) => void, onTimeout: () => void): void {
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

  private runApply(ctx: ActorContext, step: ApplyStep, i: number, results: Array<{ name: string; code: number }>): void {
    if (i >= step.objects.length) {
      const failed = results.filter((r) => r.code >= 300);
      return this.finish(
        ctx,
        step,
        failed.length === 0,
        failed.length ? failed.map((f) => `${f.name}: ${f.code}`).join(', ') : undefined,
        { results },
      );
    }
    const obj = step.objects[i];
    const resource = resourceOfKind(obj.kind)!;
    const namespace = isClusterScoped(resource) ? undefined : obj.metadata.namespace;
    const name = obj.metadata.name ?? obj.metadata.generateName ?? '?';
    const next = (code: number) => this.runApply(ctx, step, i + 1, [...results, { name: `${obj.kind}/${name}`, code }]);
    this.api(
      ctx,
      { type: 'ApiCreate', resource, namespace, object: obj } as Message,
      (r) => {
        if (r.code === 409 && step.kind === 'apply' && obj.metadata.name) return this.applyUpdate(ctx, resource, namespace, obj, next);
        next(r.code);
      },
      () => next(504),
    );
  }

  /** `kubectl apply` on an existing object: GET, then PUT with the new spec/labels/annotations. */
  private applyUpdate(ctx: ActorContext, resource: ResourceName, namespace: string | undefined, obj: KubeObject, next: (code: number) => void): void {
    const name = obj.metadata.name!;
    this.api(
      ctx,
      { type: 'ApiGet', resource, namespace, name } as Message,
      (r) => {
        if (r.code !== 200) return next(r.code);
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
        this.api(ctx, { type: 'ApiUpdate', resource, namespace, name, object: merged } as Message, (u) => next(u.code), () => next(504));
      },
      () => next(504),
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
        this.deleteEach(ctx, step, names, i + 1, [...results, { name: names[i], code: r.code, ...(uid ? { uid } : {}), ...(error ? { error } : {}) }]);
      },
      () => this.deleteEach(ctx, step, names, i + 1, [...results, { name: names[i], code: 504 }]),
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
      this.wait = { step, condition: 'gone', uids: new Set(deleted.map((r) => r.uid!)), count: 0, timer, detail: { results, output } };
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
      this.wait = { step, condition: 'gone', uids, count: 0, timer };
    } else {
      this.wait = { step, condition: step.condition, target: t, selector, count: step.count, timer };
    }
    this.checkWait(ctx);
  }

  private checkWait(ctx: ActorContext): void {
    const w = this.wait;
    if (!w || w.polled || this.informer.rv < this.ownPodWriteRv) return;
    let holds: boolean;
    if (w.condition === 'gone') holds = [...w.uids!].every((u) => !this.informer.has(u));
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
    );
  }

  private onInformerEvent(ctx: ActorContext, event: WatchEvent<KubeObject>): void {
    if (event.type === 'ERROR') {
      // 410 Gone or similar: relist by restarting the watch (synthetic ADDED events refill the cache).
      ctx.trace('driver.informer', `watch error: ${statusMessage(event.object)}; restarting`);
      this.informer.clear();
      this.startInformer(ctx);
      return;
    }
    this.informer.apply(event);
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
      return `--for=${step.condition} ${step.target.name ?? (step.target.selector !== undefined ? `-l ${step.target.selector}` : '--all')}`;
    case 'sleep':
      return duration(step.durationUs);
    case 'watch':
      return step.action;
    case 'fault':
      return step.summary;
  }
}
