/**
 * The `apiserver` actor: a thin shell around {@link ApiServer}. It decodes each
 * {@link ApiRequest}, steps the pure machine at `ctx.now`, replies through `ctx.reply`, then
 * multicasts the watch events the request caused (one body per event and format, `watchIds`
 * naming the watches), and traces `api.write` per storage write and `api.request` per request
 * (fields in docs/conventions.md). With `serviceTimeUs > 0` requests queue FIFO behind a single
 * processor and are handled when their service time ends; otherwise the answer is instant.
 */
import { IdGenerator, type Actor, type ActorContext, type ApiRequest, type EndpointSlice, type Endpoints, type Envelope, type Job, type Namespace, type Node, type Pod, type Service } from '@podsim/api';
import { ANNOTATION_TOLERATE_UNREADY, LABEL_MANAGED_BY, LABEL_NODE_EXCLUDE_DISRUPTION, LABEL_SERVICE_NAME, zoneKey, type KubeObject } from '@podsim/api';
import { ApiServer, type ApiServerConfig } from '../apiServer.js';
import type { RequestContext } from '../registry/strategy.js';
import type { StorageEvent } from '../storage/interfaces.js';

const REQUEST_TYPES = new Set(['ApiGet', 'ApiList', 'ApiCreate', 'ApiUpdate', 'ApiPatch', 'ApiDelete', 'ApiWatch', 'ApiUnwatch']);

const VERBS: Record<string, string> = {
  ApiGet: 'get',
  ApiList: 'list',
  ApiCreate: 'create',
  ApiUpdate: 'update',
  ApiPatch: 'patch',
  ApiDelete: 'delete',
  ApiWatch: 'watch',
  ApiUnwatch: 'unwatch',
};

/** `eventIds`: Event uids come from their own seeded stream (see {@link RequestContext.eventUuid}). */
function requestContext(ctx: ActorContext, core: ApiServer, eventIds: IdGenerator): RequestContext {
  return {
    now: ctx.now,
    clock: core.clock,
    newId: (size, alphabet) => ctx.newId(size, alphabet),
    uuid: () => ctx.uuid(),
    eventUuid: () => eventIds.uuid(),
  };
}

/** A pod's tolerations as [key, operator, value, effect, tolerationSeconds | null] (trace data). */
function tolerationTuples(p: Pod): unknown[] {
  return (p.spec?.tolerations ?? []).map((t) => [t.key ?? '', t.operator ?? 'Equal', t.value ?? '', t.effect ?? '', t.tolerationSeconds ?? null]);
}

/** `Kind/name` of the object's controller ownerReference, if any. */
function controllerOf(o: KubeObject): string | undefined {
  const r = o.metadata.ownerReferences?.find((x) => x.controller);
  return r ? `${r.kind}/${r.name}` : undefined;
}

function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
}

/** `ActorFactory` for the apiserver; `config` is an {@link ApiServerConfig} (plain data). */
export function createActor(_id: string, config: unknown): Actor {
  const cfg = (config ?? {}) as ApiServerConfig;
  const serviceTimeUs = cfg.serviceTimeUs ?? 0;
  const traceOn = cfg.trace ?? true;
  let core: ApiServer;
  let eventIds: IdGenerator;
  let current: ActorContext;
  /** The client whose request is being handled (undefined for the apiserver's own writes). */
  let currentFrom: string | undefined;
  const queue: Envelope[] = [];
  let busy = false;

  const traceWrite = (ev: StorageEvent, resource: string) => {
    const ctx = current;
    ctx.count('api.writes');
    if (!traceOn || !ctx.tracing('api.write')) return;
    const m = ev.object.metadata;
    const data: Record<string, unknown> = {
      event: ev.type,
      resource,
      namespace: m.namespace ?? '',
      name: m.name ?? '',
      uid: m.uid ?? '',
      rv: m.resourceVersion ?? '',
    };
    if (m.deletionTimestamp !== undefined) data.deletionTimestamp = m.deletionTimestamp;
    if (m.deletionGracePeriodSeconds !== undefined) data.deletionGracePeriodSeconds = m.deletionGracePeriodSeconds;
    if (resource === 'pods') {
      const p = ev.object as Pod;
      if (p.status?.phase !== undefined) data.phase = p.status.phase;
      if (p.spec?.nodeName) data.nodeName = p.spec.nodeName;
      // Every container ready, as the READY column's n/n (printers.go printPod): the `ready`
      // timing reads it when no `kubectl get pods -w` printed the pod. (Trace data is not
      // part of the digest.)
      const total = p.spec?.containers?.length ?? 0;
      if (total > 0 && (p.status?.containerStatuses ?? []).filter((c) => c.ready).length === total) data.ready = true;
      // The pod's Ready condition (MarkPodsNotReady sets it False and leaves the containers alone).
      const rc = p.status?.conditions?.find((c) => c.type === 'Ready');
      if (rc) data.podReady = rc.status;
      if (p.status?.reason !== undefined) data.reason = p.status.reason;
      // Node-lifecycle invariants (spec node-lifecycle §8.6, §8.9, §8.12): the tolerations and
      // the controller owner, on the ADDED write and on a write that changed them only (the
      // checkers' model carries them forward), so a 10k-pod storm's status writes do not repeat them.
      const prev = ev.prevObject as Pod | undefined;
      if (ev.type === 'ADDED' || !prev || !sameJson(prev.spec?.tolerations, p.spec?.tolerations)) data.tolerations = tolerationTuples(p);
      const owner = controllerOf(p);
      if (ev.type === 'ADDED' || !prev || controllerOf(prev) !== owner) data.owner = owner ?? '';
    }
    if (resource === 'nodes') {
      // The Ready condition and the taints (`key:effect`) for node expectations and invariants.
      const n = ev.object as Node;
      const rc = n.status?.conditions?.find((c) => c.type === 'Ready');
      if (rc) {
        data.nodeReady = rc.status;
        if (rc.reason !== undefined) data.nodeReadyReason = rc.reason;
        if (rc.message !== undefined) data.nodeReadyMessage = rc.message;
      }
      data.taints = (n.spec?.taints ?? []).map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`);
      // Node-lifecycle invariants (§8.1, §8.2, §8.4, §8.5): who wrote it, its zone key and
      // disruption exclusion (as the NLC groups nodes), and every condition as
      // [type, status, reason, message, lastHeartbeatTime].
      if (currentFrom !== undefined) data.client = currentFrom;
      const zone = zoneKey(m.labels);
      if (zone !== '') data.zone = zone;
      if (m.labels?.[LABEL_NODE_EXCLUDE_DISRUPTION] !== undefined) data.excludeDisruption = true;
      data.conditions = (n.status?.conditions ?? []).map((c) => [c.type, c.status, c.reason ?? '', c.message ?? '', c.lastHeartbeatTime ?? '']);
    }
    if (resource === 'namespaces') {
      const phase = (ev.object as Namespace).status?.phase;
      if (phase !== undefined) data.phase = phase;
    }
    if (resource === 'replicasets' || resource === 'statefulsets') {
      const replicas = (ev.object as { status?: { replicas?: number } }).status?.replicas;
      data.statusReplicas = replicas ?? 0;
    }
    if (resource === 'jobs') {
      // The Job's finished condition (Complete / Failed, True) and its reason, for the `jobs` expectation.
      const c = (ev.object as Job).status?.conditions?.find((x) => (x.type === 'Complete' || x.type === 'Failed') && x.status === 'True');
      if (c) {
        data.jobCondition = c.type;
        if (c.reason) data.jobReason = c.reason;
      }
    }
    if (resource === 'statefulsets' || resource === 'replicasets') {
      const spec = (ev.object as { spec?: { replicas?: number; podManagementPolicy?: string } }).spec;
      data.specReplicas = spec?.replicas ?? 1;
      if (spec?.podManagementPolicy) data.podManagementPolicy = spec.podManagementPolicy;
    }
    // Issue #18: what the Service invariants read (harness/src/checkers/trafficInvariants.ts).
    if (resource === 'services') {
      const sp = (ev.object as Service).spec;
      if (sp?.publishNotReadyAddresses) data.publishNotReadyAddresses = true;
      const tol = m.annotations?.[ANNOTATION_TOLERATE_UNREADY];
      if (tol !== undefined) data.tolerateUnready = tol;
    }
    if (resource === 'endpoints') {
      const subsets = (ev.object as Endpoints).subsets ?? [];
      data.addresses = subsets.flatMap((ss) => (ss.addresses ?? []).map((a) => a.targetRef?.uid ?? a.ip));
      data.notReadyAddresses = subsets.flatMap((ss) => (ss.notReadyAddresses ?? []).map((a) => a.targetRef?.uid ?? a.ip));
      // Who wrote it: endpoint-object-size judges the controller's writes, not a user's Endpoints.
      if (currentFrom !== undefined) data.client = currentFrom;
    }
    if (resource === 'endpointslices') {
      const sl = ev.object as EndpointSlice;
      data.service = m.labels?.[LABEL_SERVICE_NAME] ?? '';
      data.managedBy = m.labels?.[LABEL_MANAGED_BY] ?? '';
      data.endpoints = (sl.endpoints ?? []).map((e) => [e.targetRef?.uid ?? e.addresses?.[0] ?? '', e.conditions?.ready ?? null, e.conditions?.serving ?? null, e.conditions?.terminating ?? null]);
    }
    if (resource === 'events') {
      // Which object an Event is about, and why (SandboxChanged, TaintManagerEviction, …).
      const e = ev.object as { reason?: string; involvedObject?: { name?: string } };
      if (e.reason !== undefined) data.eventReason = e.reason;
      if (e.involvedObject?.name !== undefined) data.involvedObject = e.involvedObject.name;
    }
    if (m.finalizers?.length) data.finalizers = m.finalizers;
    ctx.trace('api.write', `${ev.type} ${resource} ${m.namespace ? `${m.namespace}/` : ''}${m.name} rv=${m.resourceVersion}`, data);
  };

  const serve = (ctx: ActorContext, env: Envelope) => {
    current = ctx;
    const req = env.body as ApiRequest;
    if (!REQUEST_TYPES.has(req.type)) {
      ctx.reply(env, {
        type: 'ApiResult',
        code: 400,
        body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `not an apiserver request: ${req.type}`, reason: 'BadRequest', code: 400 },
      } as never);
      return;
    }
    currentFrom = env.from;
    const res = core.handle(req, env.from, requestContext(ctx, core, eventIds));
    currentFrom = undefined;
    ctx.reply(env, res);
    ctx.count('api.requests');
    // A kubelet's Lease renewal (one per node per ~10 s) is traced by its api.write alone; only a
    // failed lease request gets an api.request record (idle clusters would hold one per renewal).
    const leaseOk = res.code < 300 && (req as { resource?: string }).resource === 'leases';
    if (traceOn && !leaseOk && ctx.tracing('api.request')) {
      const r = req as ApiRequest & { resource?: string; namespace?: string; name?: string; subresource?: string };
      // A create names its object in the body (or the server generated the name).
      const created = req.type === 'ApiCreate' && !req.name ? ((res.code === 201 ? (res.body as Pod) : req.object).metadata?.name ?? '') : undefined;
      const data: Record<string, unknown> = {
        verb: VERBS[req.type],
        resource: r.resource ?? '',
        namespace: r.namespace ?? '',
        name: created ?? r.name ?? (req.type === 'ApiWatch' || req.type === 'ApiUnwatch' ? req.watchId : ''),
        code: res.code,
        client: env.from,
      };
      if (r.subresource) data.subresource = r.subresource;
      if (req.type === 'ApiDelete' && req.options?.gracePeriodSeconds !== undefined) data.gracePeriodSeconds = req.options.gracePeriodSeconds;
      // The UID precondition names the object the client meant (the kubelet's final DELETE): the
      // final-delete-own-uid checker matches on it, as the reply may never reach the client.
      if (req.type === 'ApiDelete' && req.options?.preconditions?.uid !== undefined) data.preconditionUid = req.options.preconditions.uid;
      // An eviction is a delete with the Eviction's deleteOptions (kubectl drain --grace-period).
      const evictionGrace = req.type === 'ApiCreate' && r.subresource === 'eviction' ? (req.object as { deleteOptions?: { gracePeriodSeconds?: number } }).deleteOptions?.gracePeriodSeconds : undefined;
      if (evictionGrace !== undefined) data.gracePeriodSeconds = evictionGrace;
      const what = `${r.resource ?? ''}${r.subresource ? `/${r.subresource}` : ''}`;
      ctx.trace('api.request', `${data.verb} ${what} ${r.namespace ? `${r.namespace}/` : ''}${data.name} ${res.code} from ${env.from}`, data);
    }
    for (const d of core.drain()) {
      ctx.multicast(d.to, d.body);
      ctx.count('api.watchEvents', d.to.length);
    }
  };

  return {
    start(ctx) {
      current = ctx;
      core = new ApiServer(cfg, ctx.epochUnixSeconds);
      eventIds = new IdGenerator(ctx.stream('event-uids'));
      core.onWrite(traceWrite);
      const bootstrapIds = new IdGenerator(ctx.stream('bootstrap-uids'));
      core.bootstrap(requestContext(ctx, core, eventIds), () => bootstrapIds.uuid());
    },
    receive(ctx, env) {
      if (serviceTimeUs <= 0) {
        serve(ctx, env);
        return;
      }
      queue.push(env);
      if (!busy) {
        busy = true;
        ctx.setTimer(serviceTimeUs);
      }
    },
    onTimer(ctx) {
      const env = queue.shift();
      if (env) serve(ctx, env);
      if (queue.length > 0) ctx.setTimer(serviceTimeUs);
      else busy = false;
    },
  };
}
