/**
 * Fills the HTML report's input (@podsim/report's {@link ReportInput}) from what the harness has
 * after a run: the {@link RunReport}, the {@link TraceModel} over the merged trace, and the
 * `client.throttle` records a report run collects. Pod lives come from the apiserver's watch
 * events (api.write); kill paths from the kubelet's spans (killPod, killContainer, preStop,
 * syncTerminatedPod), the runtime's signals and exits, the status PATCHes and the status
 * manager's final DELETE — the sequence of kuberuntime_container.go killContainer and
 * status_manager.go syncPod in v1.22.8. Nothing is guessed: a step with no record is not drawn.
 */
import { CLIENT_THROTTLE_TRACE, US_PER_SECOND, type TraceRecord } from '@podsim/api';
import {
  chooseKillPathPods,
  type ExploreSeed,
  type KillMark,
  type KillPath,
  type KillSpan,
  type PodLife,
  type ReportCheck,
  type ReportHeader,
  type ReportInput,
  type ThrottleWait,
  type TrafficSection,
} from '@podsim/report';
import type { TrafficReport } from '../traffic/evaluate.js';
import type { ApiRequest, TraceModel, Span } from '../checkers/model.js';

/** A pod's requests by its kubelet (status PATCHes, DELETEs), in trace order. */
export interface KubeletRequests {
  readonly patches: readonly ApiRequest[];
  readonly deletes: readonly ApiRequest[];
}
import type { RunReport } from '../run.js';
import { expectationFailure, NO_EXPECTATIONS, stepFailure } from '../run.js';
import { KUBERNETES_VERSION, PODSIM_VERSION } from '../version.js';
import { HARNESS_TRACE_KINDS } from '../engine.js';
import { formatClientLimits } from '../scenario/clientLimits.js';
import { ALL_INVARIANTS, type Violation } from '../checkers/invariants.js';
import type { BenchFigures } from '../bench/runBench.js';
import { exploreReplayCommand, type ExploreSummary } from '../explore/explore.js';

/** The trace filter of a run with `--report`: the harness's kinds plus the (undigested) throttle waits. */
export const REPORT_TRACE_KINDS: readonly string[] = [...HARNESS_TRACE_KINDS, CLIENT_THROTTLE_TRACE];

/** One pod's life per UID the run created (api.write events), in creation order. */
export function podLives(m: TraceModel): PodLife[] {
  const out: PodLife[] = [];
  for (const writes of m.podWrites.values()) {
    const first = writes[0];
    if (!first) continue;
    let node: string | undefined;
    let scheduledUs: number | undefined;
    let runningUs: number | undefined;
    let finishedUs: number | undefined;
    let deletedUs: number | undefined;
    let goneUs: number | undefined;
    for (const w of writes) {
      if (w.nodeName) {
        node = w.nodeName;
        scheduledUs ??= w.t;
      }
      if (w.phase === 'Running') runningUs ??= w.t;
      if (w.phase === 'Succeeded' || w.phase === 'Failed') finishedUs ??= w.t;
      if (w.deletionTimestamp !== undefined) deletedUs ??= w.t;
      if (w.event === 'DELETED') goneUs ??= w.t;
    }
    out.push({
      name: first.name,
      ...(first.namespace !== undefined ? { namespace: first.namespace } : {}),
      ...(node !== undefined ? { node } : {}),
      createdUs: first.t,
      ...(scheduledUs !== undefined ? { scheduledUs } : {}),
      ...(runningUs !== undefined ? { runningUs } : {}),
      ...(finishedUs !== undefined ? { finishedUs } : {}),
      ...(deletedUs !== undefined ? { deletedUs } : {}),
      ...(goneUs !== undefined ? { goneUs } : {}),
    });
  }
  return out.sort((a, b) => a.createdUs - b.createdUs);
}

const within = (s: Span, outer: Span) => s.begin >= outer.begin && (outer.end === undefined || (s.end !== undefined && s.end <= outer.end));

/**
 * The kill path of the pod with UID `uid` from its first accepted DELETE on: spans and instants
 * of the kubelet, runtime and apiserver (see {@link KillPath}); undefined if it was never deleted.
 * `kubeletRequests` are the pod's status PATCH and DELETE requests by its kubelet, as the
 * apiserver handled them (t ascending): the final DELETE is drawn when the apiserver took it
 * (the status manager's own record is written when the reply is back, after DELETED).
 */
export function killPathOf(m: TraceModel, uid: string, kubeletRequests: KubeletRequests = { patches: [], deletes: [] }): KillPath | undefined {
  const writes = m.podWrites.get(uid) ?? [];
  const del = writes.find((w) => w.deletionTimestamp !== undefined);
  if (!del) return undefined;
  const gone = writes.find((w) => w.event === 'DELETED');
  const node = [...writes].reverse().find((w) => w.nodeName)?.nodeName;
  const label = del.namespace && del.namespace !== 'default' ? `${del.namespace}/${del.name}` : del.name;
  const spans: KillSpan[] = [{ step: 'Terminating', beginUs: del.t, ...(gone ? { endUs: gone.t } : {}), detail: `deletionGracePeriodSeconds ${del.deletionGracePeriodSeconds ?? '?'}` }];
  const marks: KillMark[] = [{ step: 'DELETE', t: del.t, detail: `accepted, grace ${del.deletionGracePeriodSeconds ?? '?'}s` }];
  const of = (kind: string) => (m.index.spansByPod.get(`${kind}|${uid}`) ?? []).filter((s) => s.begin >= del.t);
  const end = (s: Span) => (s.end !== undefined ? { endUs: s.end } : {});
  const preStops = of('kubelet.preStop');
  const kills = of('kubelet.killContainer');
  for (const kp of of('kubelet.killPod')) {
    spans.push({ step: 'killPod', beginUs: kp.begin, ...end(kp), detail: `gracePeriodOverride ${String(kp.data.gracePeriod ?? 'nil')}` });
    // StopPodSandbox goes once every container's kill returned, and killPod ends when it returns.
    const inner = kills.filter((k) => within(k, kp));
    if (kp.end !== undefined && inner.every((k) => k.end !== undefined)) {
      const from = inner.length ? Math.max(...inner.map((k) => k.end!)) : kp.begin;
      spans.push({ step: 'StopPodSandbox', beginUs: from, endUs: kp.end });
    }
  }
  for (const p of preStops) {
    spans.push({ step: 'preStop', container: String(p.data.container ?? ''), beginUs: p.begin, ...end(p), ...(p.endData?.timedOut ? { detail: 'timed out' } : {}) });
  }
  for (const k of kills) {
    // killContainer runs the preStop hook first; StopContainer(grace) follows it.
    const container = String(k.data.container ?? '');
    const hook = preStops.filter((p) => String(p.data.container ?? '') === container && within(p, k) && p.end !== undefined);
    const from = hook.length ? Math.max(...hook.map((p) => p.end!)) : k.begin;
    spans.push({ step: 'StopContainer', container, beginUs: from, ...end(k), detail: `timeout ${String(k.endData?.gracePeriod ?? k.data.gracePeriod ?? '?')}s` });
  }
  for (const s of of('kubelet.sync')) {
    if (s.data.work === 'TerminatedPodWork') spans.push({ step: 'syncTerminatedPod', beginUs: s.begin, ...end(s), detail: 'volumes unmounted, cgroup removed' });
  }
  for (const p of m.processesOf(uid)) {
    for (const sig of p.signals) if (sig.t >= del.t) marks.push({ step: sig.signal, t: sig.t, container: p.container, ...(sig.timeout !== undefined ? { detail: `StopContainer timeout ${sig.timeout}s` } : {}) });
    if (p.exitedAt !== undefined && p.exitedAt >= del.t) marks.push({ step: 'exit', t: p.exitedAt, container: p.container, detail: `exit ${p.exitCode ?? '?'}${p.reason ? ` (${p.reason})` : ''}` });
  }
  const during = (t: number) => t >= del.t && (gone === undefined || t <= gone.t);
  for (const r of kubeletRequests.patches) if (during(r.t)) marks.push({ step: 'status PATCH', t: r.t, detail: `→ ${r.code}` });
  for (const r of kubeletRequests.deletes) if (during(r.t)) marks.push({ step: 'final DELETE', t: r.t, detail: `grace ${r.gracePeriodSeconds ?? '?'}, → ${r.code}` });
  if (gone) marks.push({ step: 'DELETED', t: gone.t });
  marks.sort((a, b) => a.t - b.t);
  return { pod: label, ...(node !== undefined ? { node } : {}), deleteUs: del.t, ...(gone ? { goneUs: gone.t } : {}), spans, marks };
}

/** Kill paths of the chosen deleted pods (all up to the bound, else a seeded sample; see chooseKillPathPods). */
export function killPaths(m: TraceModel, seed: number, chosen?: readonly string[]): { paths: KillPath[]; note: string; unknown: readonly string[] } {
  const deleted: Array<{ uid: string; label: string; name: string }> = [];
  for (const [uid, writes] of m.podWrites) {
    const w = writes.find((x) => x.deletionTimestamp !== undefined);
    if (w) deleted.push({ uid, name: w.name, label: w.namespace && w.namespace !== 'default' ? `${w.namespace}/${w.name}` : w.name });
  }
  // A name reused by several UIDs is drawn once per UID; the choice is by label.
  const choice = chooseKillPathPods([...new Set(deleted.map((d) => d.label))], seed, undefined, chosen);
  const want = new Set(choice.pods);
  const picked = deleted.filter((d) => want.has(d.label));
  const names = new Set(picked.map((d) => d.name));
  const byPod = new Map<string, { patches: ApiRequest[]; deletes: ApiRequest[] }>();
  for (const r of m.requests) {
    if (r.resource !== 'pods' || !r.client.startsWith('kubelet') || !names.has(r.name ?? '')) continue;
    const patch = r.verb === 'patch' && r.subresource === 'status';
    if (!patch && r.verb !== 'delete') continue;
    const k = `${r.namespace ?? ''}/${r.name}`;
    const l = byPod.get(k) ?? { patches: [], deletes: [] };
    byPod.set(k, l);
    (patch ? l.patches : l.deletes).push(r);
  }
  const paths: KillPath[] = [];
  for (const d of picked) {
    const w = m.podWrites.get(d.uid)![0];
    const p = killPathOf(m, d.uid, byPod.get(`${w.namespace ?? ''}/${w.name}`));
    if (p) paths.push(p);
  }
  return { paths, note: choice.note, unknown: choice.unknown };
}

/** The `client.throttle` records of a trace as throttle waits. */
export function throttleWaits(records: readonly TraceRecord[]): ThrottleWait[] {
  const out: ThrottleWait[] = [];
  for (const r of records) {
    if (r.kind !== CLIENT_THROTTLE_TRACE) continue;
    const d = (r.data ?? {}) as { client?: string; waitUs?: number; qps?: number; burst?: number };
    if (typeof d.waitUs !== 'number') continue;
    out.push({ t: r.t, actor: r.actor, client: d.client ?? r.actor, waitUs: d.waitUs, ...(d.qps !== undefined ? { qps: d.qps } : {}), ...(d.burst !== undefined ? { burst: d.burst } : {}) });
  }
  return out;
}

/** The checks table of a run: steps, expectations, invariants (pass, fail or unchecked). */
export function runChecks(r: RunReport): ReportCheck[] {
  const interrupted = r.end === 'interrupted' || r.end === 'failed';
  const checks: ReportCheck[] = r.steps.map((s) => ({
    group: 'step',
    name: `${s.line !== undefined ? `line ${s.line}` : `#${s.index}`}${s.id ? ` (${s.id})` : ''} ${s.kind}: ${s.summary}`,
    ok: s.ok,
    ...(s.ok ? (s.expectFailure ? { detail: `failed as expected: ${s.expectedError ?? ''}` } : {}) : { detail: stepFailure(s) }),
  }));
  for (const e of r.expectations) {
    // Traffic cut short by the run's end (traffic/evaluate.ts) is never judged, whatever the count.
    if (e.kind === 'traffic' && r.traffic?.cutShort !== undefined) {
      checks.push({ group: 'expectation', name: checkName(e), ok: 'unchecked', detail: e.actual });
      continue;
    }
    // An interrupted or crashed run never reached what an unmet expectation describes: unchecked, not failed.
    checks.push({ group: 'expectation', name: checkName(e), ok: e.ok ? true : interrupted ? 'unchecked' : false, ...(e.ok ? {} : { detail: interrupted ? `not judged (the run ${r.end}): ${e.actual}` : expectationFailure(e) }) });
  }
  for (const id of r.invariantsChecked) {
    const v = r.violations.filter((x) => x.invariant === id);
    const allowed = r.allowedViolations.filter((x) => x.invariant === id);
    checks.push({
      group: 'invariant',
      name: id,
      ok: v.length === 0,
      ...(v.length ? { detail: `${v.length} violation${v.length === 1 ? '' : 's'}; first at ${v[0].t / US_PER_SECOND}s: ${v[0].message}` } : allowed.length ? { detail: `${allowed.length} violation${allowed.length === 1 ? '' : 's'} allowed by the scenario` } : {}),
    });
  }
  return checks;
}

/** The header of a run report. */
export function runHeader(r: RunReport, command: 'run' | 'bench' = 'run'): ReportHeader {
  return {
    command,
    scenario: r.file,
    scenarioName: r.name,
    seed: r.seed,
    placement: r.placement,
    podsimVersion: `podsim ${PODSIM_VERSION}`,
    kubernetesVersion: KUBERNETES_VERSION,
    virtualSeconds: r.virtualSeconds,
    wallSeconds: r.wallSeconds,
    traceDigest: r.traceDigest,
    replay: r.replay,
    verdict: r.ok ? (r.expectations.length === 0 ? NO_EXPECTATIONS : 'PASS') : 'FAIL',
    ok: r.ok,
    failures: r.failures,
    end: r.end,
    notes: [formatClientLimits(r.clientLimits), ...r.warnings],
  };
}

const us = (s: number) => Math.round(s * US_PER_SECOND);

/**
 * The report's traffic section from the run's own traffic results (the `traffic` of `--json`,
 * traffic/evaluate.ts): the same counts, times converted from virtual seconds to µs, and the
 * `expect: traffic:` rows of the checks table.
 */
export function trafficSection(t: TrafficReport, checks: readonly ReportCheck[]): TrafficSection {
  return {
    sources: t.sources.map((s) => ({
      id: s.id,
      service: s.service,
      connection: s.connection,
      fromNodes: s.fromNodes,
      startUs: us(s.startSeconds),
      stopUs: us(s.stopSeconds),
      requests: s.requests,
      byOutcome: s.byOutcome,
      byCause: s.byCause as Readonly<Record<string, number>>,
      byPod: s.byPod,
      byNode: s.byNode,
      overTime: {
        startUs: us(s.overTime.startSeconds),
        bucketUs: us(s.overTime.bucketSeconds),
        counts: { served: s.overTime.served, refused: s.overTime.refused, reset: s.overTime.reset, timedOut: s.overTime.timedOut },
      },
    })),
    exposure: t.exposure.map((e) => ({
      pod: e.pod,
      ...(e.listenerClosedAt !== undefined ? { listenerClosedUs: us(e.listenerClosedAt) } : {}),
      ruleRemovedUs: Object.fromEntries(Object.entries(e.ruleRemovedAt).map(([n, s]) => [n, us(s)])),
      failedRequests: e.failedRequests,
    })),
    checks: checks.filter((c) => c.group === 'expectation' && c.name.startsWith('traffic: ')),
    notSimulated: t.unchecked,
    ...(t.cutShort !== undefined ? { cutShort: t.cutShort } : {}),
  };
}

export interface RunReportOptions {
  /** Pods whose kill paths to draw (names, `ns/name` outside default); default: all up to the bound, else a seeded sample. */
  readonly pods?: readonly string[];
  /** Called with the `pods` names that match no deleted pod (the page says so too), if any. */
  readonly onUnknownPods?: (names: readonly string[]) => void;
}

/** The report input of a `podsim run`. */
export function runReportInput(r: RunReport, m: TraceModel, records: readonly TraceRecord[], opts: RunReportOptions = {}): ReportInput {
  const kp = killPaths(m, r.seed, opts.pods);
  if (kp.unknown.length) opts.onUnknownPods?.(kp.unknown);
  const header = runHeader(r);
  const checks = runChecks(r);
  return {
    header: kp.unknown.length ? { ...header, notes: [...(header.notes ?? []), `--report-pods: no deleted pod is named ${kp.unknown.join(', ')}`] } : header,
    checks,
    ...(r.traffic ? { traffic: trafficSection(r.traffic, checks) } : {}),
    pods: podLives(m),
    killPaths: kp.paths,
    killPathNote: kp.note,
    throttle: throttleWaits(records),
    watch: r.watch,
  };
}

/** What a bench run hands the report (runBench.ts `onJudged`). */
export interface BenchJudged {
  readonly model: TraceModel;
  readonly violations: readonly Violation[];
  readonly throttle: readonly TraceRecord[];
}

/**
 * The report input of `podsim bench storm | churn`: the figures' table in the header, the
 * invariants, every pod's life (aggregated by the charts), per-node drain, a seeded sample of
 * kill paths and the rate-limit waits. The bench prints no watch rows.
 */
export function benchReportInput(f: BenchFigures, j: BenchJudged, o: { readonly command: string; readonly table: readonly string[] }): ReportInput {
  const failures: string[] = [];
  if (f.failure) failures.push(`engine failure: ${f.failure}`);
  if (f.end !== 'stopped') failures.push(`the run ended ${f.end}, not when the driver finished`);
  if (f.created !== f.pods) failures.push(`created ${f.created} of ${f.pods} pods`);
  if (f.lost > 0) failures.push(`${f.lost} pods lost (never DELETED, or a container still running)`);
  if (f.deleteErrors > 0) failures.push(`${f.deleteErrors} DELETEs failed`);
  for (const v of f.violationSamples) failures.push(`invariant ${v}`);
  const kp = killPaths(j.model, f.seed);
  return {
    header: {
      command: 'bench',
      scenario: o.command.replace(/^pnpm podsim /, ''),
      scenarioName: `${f.scenario}: ${f.nodes.toLocaleString('en-US')} nodes, ${f.pods.toLocaleString('en-US')} pods`,
      seed: f.seed,
      placement: f.placement,
      podsimVersion: `podsim ${PODSIM_VERSION}`,
      kubernetesVersion: KUBERNETES_VERSION,
      virtualSeconds: f.virtualSeconds,
      wallSeconds: f.wallSeconds,
      traceDigest: f.traceDigest,
      replay: o.command,
      verdict: f.ok ? 'PASS' : 'FAIL',
      ok: f.ok,
      failures,
      end: f.end,
      notes: o.table,
    },
    checks: ALL_INVARIANTS.map((i) => {
      const v = j.violations.filter((x) => x.invariant === i.id);
      return { group: 'invariant' as const, name: i.id, ok: v.length === 0, ...(v.length ? { detail: `${v.length} violations; first at ${v[0].t / US_PER_SECOND}s: ${v[0].message}` } : {}) };
    }),
    pods: podLives(j.model),
    nodeDrain: true,
    killPaths: kp.paths,
    killPathNote: kp.note,
    throttle: throttleWaits(j.throttle),
  };
}

/** A shrunk failing seed for the explore report (`explore --report --shrink`). */
export interface ShrunkSeed {
  readonly seed: number;
  readonly text: string;
  readonly steps: number;
}

/**
 * The report input of `podsim explore`: the sweep's verdict, seeds per outcome, failing seeds by
 * their first violated invariant with each one's replay command and, for the seeds shrunk, the
 * shrunk scenario.
 */
export function exploreReportInput(s: ExploreSummary, o: { readonly requested: number; readonly command: string; readonly shrunk: ReadonlyMap<number, ShrunkSeed> }): ReportInput {
  const seeds: ExploreSeed[] = s.results.map((r) => {
    const g = r.ok ? undefined : s.groups.find((x) => x.seeds.some((y) => y.seed === r.seed));
    const shrunk = o.shrunk.get(r.seed);
    const outcome = r.ok ? 'pass' : r.error !== undefined ? 'error' : r.first?.invariant === 'engine' ? 'engine failure' : r.first?.invariant === 'liveness' ? 'did not heal' : 'invariant violated';
    return {
      seed: r.seed,
      outcome,
      ...(r.first ? { firstViolation: r.first.invariant, message: `at ${r.first.t / US_PER_SECOND}s: ${r.first.message}` } : r.error ? { message: r.error } : {}),
      ...(g ? { replay: exploreReplayCommand(s.file, r.seed, s.level) } : r.ok ? {} : { replay: exploreReplayCommand(s.file, r.seed, s.level) }),
      ...(shrunk ? { shrunk: shrunk.text, shrunkSteps: shrunk.steps } : {}),
    };
  });
  const ok = s.failing === 0;
  return {
    header: {
      command: 'explore',
      scenario: s.file,
      podsimVersion: `podsim ${PODSIM_VERSION}`,
      kubernetesVersion: KUBERNETES_VERSION,
      wallSeconds: s.wallSeconds,
      replay: o.command,
      verdict: ok ? 'PASS' : 'FAIL',
      ok,
      failures: s.groups.map((g) => `${g.invariant}: ${g.seeds.length} seed${g.seeds.length === 1 ? '' : 's'} (first: seed ${g.seeds[0].seed})`),
      notes: [`${s.seeds} seeds in ${s.wallSeconds.toFixed(1)}s wall on ${s.workers} worker${s.workers === 1 ? '' : 's'}, faults level ${s.level}: ${s.failing} failing`],
    },
    checks: [],
    explore: { seeds, requested: o.requested, faults: String(s.level) },
  };
}

/** A check's name: `kind: expected`, without the kind twice when the expectation names it (`traffic: plain failed ≤ 0`). */
function checkName(e: { readonly kind: string; readonly expected: string }): string {
  return `${e.kind}: ${e.expected.startsWith(`${e.kind} `) ? e.expected.slice(e.kind.length + 1) : e.expected}`;
}
