/**
 * The scenario's `expect:` block, evaluated over the merged trace after the run: the
 * `kubectl get pods -w` (READY, STATUS) sequence, timing windows of pod events (API created /
 * terminating / gone, runtime TERM / KILL / exit, first start, first ready row), exit codes and
 * signal counts. Pod aliases bind in order of pod creation (the apiserver's ADDED writes).
 */
import { US_PER_SECOND } from '@podsim/api';
import { formatAgainstWindow, formatDuration } from '../duration.js';
import type { TraceModel } from '../checkers/model.js';
import type { ExpectSpec } from '../scenario/schema.js';

export interface ExpectationResult {
  readonly kind: 'watch' | 'timing' | 'exitCode' | 'signals' | 'grace' | 'counts' | 'replicaSet' | 'job' | 'output' | 'traffic' | 'node' | 'podReady';
  /** What was expected, in the scenario's words. */
  readonly expected: string;
  readonly ok: boolean;
  /** What happened (on failure: the difference). */
  readonly actual: string;
}

/** A printed `kubectl get pods -w` row with the columns the expectations read. */
export interface WatchRow {
  readonly t: number;
  readonly event: string;
  readonly cells: readonly string[];
  readonly columns: readonly string[];
  readonly name: string;
  readonly ready: string;
  readonly status: string;
}

/** The printed rows of every table watch, in arrival order, with their watch's column names. */
export function watchRows(m: TraceModel): WatchRow[] {
  const cols = new Map<string, string[]>();
  const out: WatchRow[] = [];
  for (const r of m.watchRows) {
    const d = (r.data ?? {}) as Record<string, unknown>;
    const id = String(d.watchId);
    if (Array.isArray(d.columns)) cols.set(id, d.columns as string[]);
    const columns = cols.get(id) ?? ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'];
    const cells = (d.cells as string[] | undefined) ?? [];
    if (cells.length === 0) continue;
    const at = (c: string) => cells[columns.indexOf(c)] ?? '';
    out.push({ t: r.t, event: String(d.event), cells, columns, name: at('NAME'), ready: at('READY'), status: at('STATUS') });
  }
  return out;
}

/** Pods in order of creation: uid, name. */
export function podsByCreation(m: TraceModel): Array<{ uid: string; name: string; namespace?: string; createdAt: number }> {
  const out: Array<{ uid: string; name: string; namespace?: string; createdAt: number }> = [];
  for (const w of m.writes) if (w.resource === 'pods' && w.event === 'ADDED') out.push({ uid: w.uid, name: w.name, namespace: w.namespace, createdAt: w.t });
  return out;
}

/**
 * Virtual time of a pod event, or undefined if it did not happen. Runtime events (TERM, KILL,
 * exit, running) count only `container`'s processes when it is given.
 */
export function podEventTime(m: TraceModel, uid: string, name: string, event: string, rows: readonly WatchRow[], container?: string): number | undefined {
  const writes = m.podWrites.get(uid) ?? [];
  const procs = m.processesOf(uid).filter((p) => container === undefined || p.container === container);
  const signal = (s: string) => Math.min(...procs.flatMap((p) => p.signals.filter((x) => x.signal === s).map((x) => x.t)));
  const fin = (v: number) => (Number.isFinite(v) ? v : undefined);
  switch (event) {
    case 'created':
      return writes.find((w) => w.event === 'ADDED')?.t;
    case 'terminating':
      return writes.find((w) => w.deletionTimestamp !== undefined)?.t;
    case 'gone':
      return writes.find((w) => w.event === 'DELETED')?.t;
    case 'TERM':
      return fin(signal('SIGTERM'));
    case 'KILL':
      return fin(signal('SIGKILL'));
    case 'exit': {
      // The exit that ended the pod: the first exit at or after its first stop signal, else the last exit.
      const term = Math.min(signal('SIGTERM'), signal('SIGKILL'));
      const exits = procs.filter((p) => p.exitedAt !== undefined && p.exitCode !== undefined).map((p) => p.exitedAt!);
      const after = exits.filter((t) => t >= term);
      return after.length ? Math.min(...after) : exits.length ? Math.max(...exits) : undefined;
    }
    case 'running':
      return procs.length ? Math.min(...procs.map((p) => p.startedAt)) : undefined;
    case 'ready': {
      // The first watch row showing every container ready; when no `watch` printed that (there
      // was no watch step, or it had stopped), the first API write in which every container is
      // ready — the write such a row would have shown.
      // Rows are by name: a StatefulSet's replacement has its predecessor's name, so only the
      // rows within this uid's lifetime (created … gone) are its own.
      const born = writes.find((w) => w.event === 'ADDED')?.t ?? -Infinity;
      const died = writes.find((w) => w.event === 'DELETED')?.t ?? Infinity;
      return rows.find((r) => r.name === name && r.t >= born && r.t <= died && /^(\d+)\/\1$/.test(r.ready) && r.ready !== '0/0')?.t ?? writes.find((w) => w.ready)?.t;
    }
  }
  return undefined;
}

/** Evaluates `expect` (everything except invariants, which the run report handles). */
export function evaluateExpectations(m: TraceModel, expect: ExpectSpec | undefined, stepIds: Readonly<Record<string, number>>): ExpectationResult[] {
  if (!expect) return [];
  const results: ExpectationResult[] = [];
  const pods = podsByCreation(m);
  const aliases = expect.pods ?? [];
  const byAlias = new Map(aliases.map((a, i) => [a, pods[i]]));
  const aliasOfName = new Map<string, string>();
  aliases.forEach((a, i) => pods[i] && aliasOfName.set(pods[i].name, a));
  const rows = watchRows(m);
  const unbound = (alias: string) => `pod ${alias} was never created (only ${pods.length} pod(s) were)`;

  const watches = expect.watch === undefined ? [] : Array.isArray(expect.watch) ? expect.watch : [expect.watch];
  for (const watch of watches) {
    const want = watch.rows.map((r) => r.trim().split(/\s+/).join(' '));
    const only = watch.pod;
    const got = rows.map((r) => `${aliasOfName.get(r.name) ?? r.name} ${r.ready} ${r.status}`).filter((g) => only === undefined || g.split(' ')[0] === only);
    const exact = (watch.match ?? 'exact') === 'exact';
    let ok: boolean;
    let actual: string;
    if (exact) {
      ok = want.length === got.length && want.every((w, i) => w === got[i]);
      const i = want.findIndex((w, k) => w !== got[k]);
      actual = ok
        ? `${got.length} rows as expected`
        : `row ${i + 1}: expected "${want[i] ?? '(end)'}", got "${got[i] ?? '(end)'}"; printed: ${got.map((g) => `"${g}"`).join(', ')}`;
    } else {
      let k = 0;
      for (const g of got) if (k < want.length && g === want[k]) k++;
      ok = k === want.length;
      actual = ok ? 'all rows appeared in order' : `"${want[k]}" did not appear after "${want[k - 1] ?? '(start)'}"; printed: ${got.map((g) => `"${g}"`).join(', ')}`;
    }
    results.push({ kind: 'watch', expected: `${only ? `${only}'s rows ` : ''}${exact ? 'exactly' : 'in order'}: ${want.map((w) => `"${w}"`).join(', ')}`, ok, actual });
  }

  const stepStart = (id: string | undefined): number | undefined => {
    if (id === undefined || id === 'start') return 0;
    const index = stepIds[id];
    return m.driverSteps.find((r) => (r.data as { index?: number; ph?: string }).index === index && (r.data as { ph?: string }).ph === 'B')?.t;
  };
  for (const t of expect.timings ?? []) {
    const window = t.within ?? [t.at! - (t.tolerance ?? US_PER_SECOND), t.at! + (t.tolerance ?? US_PER_SECOND)];
    const every = t.pod === '*';
    const of = t.of ?? 'each';
    const who = `${every ? (of === 'each' ? 'every pod' : `the ${of} pod`) : t.pod}${t.container ? `/${t.container}` : ''}`;
    const from = t.after !== undefined ? `its ${t.after}` : (t.since ?? 'start');
    const expected = `${who} ${t.event} ${t.within ? `within [${formatDuration(window[0])}, ${formatDuration(window[1])}]` : `at ${formatDuration(t.at!)} ± ${formatDuration(t.tolerance ?? US_PER_SECOND)}`} after ${from}`;
    const targets = every ? pods : byAlias.get(t.pod) ? [byAlias.get(t.pod)!] : [];
    if (targets.length === 0) {
      results.push({ kind: 'timing', expected, ok: false, actual: every ? 'no pod was created' : unbound(t.pod) });
      continue;
    }
    const since = stepStart(t.since);
    if (t.after === undefined && since === undefined) {
      results.push({ kind: 'timing', expected, ok: false, actual: `step ${t.since} never ran` });
      continue;
    }
    // Per pod: the delay from the reference (step or own event) to the event; pods without the
    // reference event are left out when `after:` is used with `*`.
    const measured: Array<{ name: string; d?: number }> = [];
    for (const pod of targets) {
      const base = t.after !== undefined ? podEventTime(m, pod.uid, pod.name, t.after, rows, t.container) : since;
      if (base === undefined) {
        if (!every) measured.push({ name: `${pod.name} (no ${t.after})` });
        continue;
      }
      const at = podEventTime(m, pod.uid, pod.name, t.event, rows, t.container);
      measured.push({ name: pod.name, ...(at !== undefined ? { d: at - base } : {}) });
    }
    const inWindow = (d: number) => d >= window[0] && d <= window[1];
    const happened = measured.filter((x) => x.d !== undefined) as Array<{ name: string; d: number }>;
    // Pods that never reached the event. `each` and `last` need every pod to reach it (the last
    // pod's time is not known while one never did), so they fail and name them; `first` is the
    // earliest pod that did, so it is defined as long as one did.
    const missing = measured.filter((x) => x.d === undefined).map((x) => x.name);
    if (!every || of === 'each') {
      const bad = happened.find((x) => !inWindow(x.d));
      const ds = happened.map((x) => x.d);
      const ok = measured.length > 0 && missing.length === 0 && bad === undefined;
      const actual = missing.length
        ? `${t.event} never happened to ${namePods(missing)}`
        : bad
          ? `${t.event} after ${formatAgainstWindow(bad.d, window[0], window[1])} (${bad.name})`
          : measured.length === 0
            ? `no pod had its ${t.after}`
            : happened.length === 1
              ? `${t.event} after ${formatDuration(ds[0])} (${happened[0].name})`
              : `${happened.length} pods: ${t.event} after ${formatDuration(Math.min(...ds))} … ${formatDuration(Math.max(...ds))}`;
      results.push({ kind: 'timing', expected, ok, actual });
    } else {
      const pick = happened.reduce<{ name: string; d: number } | undefined>((b, x) => (!b || (of === 'first' ? x.d < b.d : x.d > b.d) ? x : b), undefined);
      const incomplete = of === 'last' && missing.length > 0;
      results.push({
        kind: 'timing',
        expected,
        ok: pick !== undefined && !incomplete && inWindow(pick.d),
        actual: !pick
          ? `${t.event} never happened to any pod`
          : incomplete
            ? `${t.event} never happened to ${namePods(missing)} (${happened.length} of ${measured.length} pods had it, the latest after ${formatDuration(pick.d)})`
            : `${t.event} after ${formatAgainstWindow(pick.d, window[0], window[1])} (${pick.name}, ${happened.length} of ${measured.length} pods had it)`,
      });
    }
  }

  for (const x of expect.exitCodes ?? []) {
    const pod = byAlias.get(x.pod);
    const expected = `${x.pod}${x.container ? `/${x.container}` : ''} exits ${x.code}`;
    if (!pod) {
      results.push({ kind: 'exitCode', expected, ok: false, actual: unbound(x.pod) });
      continue;
    }
    const exits = m.processesOf(pod.uid).filter((p) => (!x.container || p.container === x.container) && p.exitCode !== undefined);
    const last = exits[exits.length - 1];
    results.push({
      kind: 'exitCode',
      expected,
      ok: last?.exitCode === x.code,
      actual: last ? `exited ${last.exitCode}${last.reason ? ` (${last.reason})` : ''}` : 'no container exit was recorded',
    });
  }

  for (const x of expect.signals ?? []) {
    const pod = byAlias.get(x.pod);
    const parts = [x.TERM !== undefined ? `TERM×${x.TERM}` : '', x.KILL !== undefined ? `KILL×${x.KILL}` : ''].filter(Boolean).join(' ');
    const expected = `${x.pod}${x.container ? `/${x.container}` : ''} receives ${parts}`;
    if (!pod) {
      results.push({ kind: 'signals', expected, ok: false, actual: unbound(x.pod) });
      continue;
    }
    const sigs = m.processesOf(pod.uid).filter((p) => !x.container || p.container === x.container).flatMap((p) => p.signals);
    const term = sigs.filter((s) => s.signal === 'SIGTERM').length;
    const kill = sigs.filter((s) => s.signal === 'SIGKILL').length;
    const ok = (x.TERM === undefined || x.TERM === term) && (x.KILL === undefined || x.KILL === kill);
    results.push({ kind: 'signals', expected, ok, actual: `TERM×${term} KILL×${kill}` });
  }

  for (const g of expect.grace ?? []) {
    const pod = byAlias.get(g.pod);
    const seqs = graceSequences(m, pod, g.container);
    for (const field of ['request', 'deletionGracePeriodSeconds', 'killPod', 'stopContainer'] as const) {
      const want = g[field];
      if (want === undefined) continue;
      const expected = `${g.pod}${g.container ? `/${g.container}` : ''} ${field} grace ${fmtGraces(want)}`;
      if (!pod) {
        results.push({ kind: 'grace', expected, ok: false, actual: unbound(g.pod) });
        continue;
      }
      const got = seqs[field];
      results.push({ kind: 'grace', expected, ok: got.length === want.length && got.every((v, i) => v === want[i]), actual: fmtGraces(got) });
    }
  }

  if (expect.counts) {
    const c = expect.counts;
    const got = podCounts(m);
    for (const field of ['maxPods', 'podsAtEnd', 'runningAtEnd'] as const) {
      if (c[field] === undefined) continue;
      results.push({ kind: 'counts', expected: `${field} ${c[field]}`, ok: got[field] === c[field], actual: `${field} ${got[field]}` });
    }
  }

  for (const r of expect.replicaSets ?? []) {
    const writes = m.writes.filter((w) => w.resource === 'replicasets' && w.event !== 'DELETED');
    const name = r.name ?? writes[0]?.name;
    const own = writes.filter((w) => w.name === name && w.statusReplicas !== undefined);
    const from = r.since !== undefined ? stepStart(r.since) : 0;
    // Since a step: the value current when it began, then every later write.
    const start = from === undefined ? own.length : Math.max(0, own.findIndex((w) => w.t >= from) - 1);
    const values = collapse(own.slice(start < 0 ? own.length : start).map((w) => w.statusReplicas!));
    const expected = `ReplicaSet ${name ?? '(none)'} status.replicas ${r.statusReplicas.join(' → ')}${r.since !== undefined ? ` from ${r.since}` : ''}`;
    const ok = values.length === r.statusReplicas.length && values.every((v, i) => v === r.statusReplicas[i]);
    results.push({ kind: 'replicaSet', expected, ok, actual: values.length ? values.join(' → ') : 'never written' });
  }

  for (const j of expect.jobs ?? []) {
    const writes = m.writes.filter((w) => w.resource === 'jobs');
    const name = j.name ?? writes[0]?.name;
    const from = stepStart(j.since);
    const what = j.event === 'gone' ? 'gone' : `${j.event}${j.reason !== undefined ? ` (${j.reason})` : ''}`;
    const expected = `Job ${name ?? '(none)'} ${what} within [${formatDuration(j.within[0])}, ${formatDuration(j.within[1])}] after ${j.since ?? 'start'}`;
    const hit = writes.find((w) => w.name === name && (j.event === 'gone' ? w.event === 'DELETED' : w.jobCondition === j.event && (j.reason === undefined || w.jobReason === j.reason)));
    if (from === undefined) {
      results.push({ kind: 'job', expected, ok: false, actual: `step ${j.since} never ran` });
      continue;
    }
    if (!hit) {
      const last = [...writes].reverse().find((w) => w.name === name && w.jobCondition !== undefined);
      results.push({ kind: 'job', expected, ok: false, actual: last ? `${last.jobCondition}${last.jobReason ? ` (${last.jobReason})` : ''} instead` : `never ${what}` });
      continue;
    }
    const d = hit.t - from;
    results.push({ kind: 'job', expected, ok: d >= j.within[0] && d <= j.within[1], actual: `${what} after ${formatAgainstWindow(d, j.within[0], j.within[1])}` });
  }
  // The last write of an object at or before `t` (undefined: not created yet).
  const stateAt = (resource: string, name: string, t: number) => {
    let last: (typeof m.writes)[number] | undefined;
    for (const w of m.writes) {
      if (w.t > t) break;
      if (w.resource === resource && w.name === name) last = w;
    }
    return last && last.event !== 'DELETED' ? last : undefined;
  };
  const fmtAt = (since: string | undefined, at: number) => `${at / US_PER_SECOND}s${since !== undefined ? ` after ${since}` : ''}`;
  for (const n of expect.nodes ?? []) {
    const from = stepStart(n.since);
    const what = [n.ready !== undefined ? `Ready=${n.ready}` : '', n.taints !== undefined ? `taints [${n.taints.join(', ')}]` : ''].filter(Boolean).join(', ');
    const expected = `node ${n.node} ${what} at ${fmtAt(n.since, n.at)}`;
    if (from === undefined) {
      results.push({ kind: 'node', expected, ok: false, actual: `step ${n.since} never ran` });
      continue;
    }
    if (from + n.at > m.endUs) {
      results.push({ kind: 'node', expected, ok: false, actual: `the run ended ${formatDuration(m.endUs - from)} after ${n.since ?? 'start'}, before that time: nothing was checked` });
      continue;
    }
    const w = stateAt('nodes', n.node, from + n.at);
    if (!w) {
      results.push({ kind: 'node', expected, ok: false, actual: 'no such Node then' });
      continue;
    }
    const taints = [...(w.taints ?? [])].sort();
    const okReady = n.ready === undefined || w.nodeReady === n.ready;
    const okTaints = n.taints === undefined || (taints.length === n.taints.length && [...n.taints].sort().every((x, i) => x === taints[i]));
    results.push({ kind: 'node', expected, ok: okReady && okTaints, actual: `Ready=${w.nodeReady ?? '(none)'}${w.nodeReadyReason ? ` (${w.nodeReadyReason})` : ''}, taints [${taints.join(', ')}]` });
  }
  for (const r of expect.podReady ?? []) {
    const pod = byAlias.get(r.pod);
    const expected = `pod ${r.pod} Ready condition ${r.ready} at ${fmtAt(r.since, r.at)}`;
    const from = stepStart(r.since);
    if (!pod || from === undefined) {
      results.push({ kind: 'podReady', expected, ok: false, actual: !pod ? unbound(r.pod) : `step ${r.since} never ran` });
      continue;
    }
    if (from + r.at > m.endUs) {
      results.push({ kind: 'podReady', expected, ok: false, actual: `the run ended ${formatDuration(m.endUs - from)} after ${r.since ?? 'start'}, before that time: nothing was checked` });
      continue;
    }
    let last: string | undefined;
    for (const w of m.podWrites.get(pod.uid) ?? []) {
      if (w.t > from + r.at) break;
      if (w.podReady !== undefined) last = w.podReady;
    }
    results.push({ kind: 'podReady', expected, ok: last === r.ready, actual: `Ready condition ${last ?? '(none)'}` });
  }

  for (const o of expect.output ?? []) {
    const index = stepIds[o.step];
    const end = m.driverSteps.find((r) => (r.data as { index?: number; ph?: string }).index === index && (r.data as { ph?: string }).ph === 'E');
    const lines = ((end?.data as { output?: string[] } | undefined)?.output ?? []).map(String);
    let k = 0;
    for (const l of lines) if (k < o.contains.length && l.includes(o.contains[k])) k++;
    results.push({
      kind: 'output',
      expected: `step ${o.step} prints ${o.contains.map((c) => JSON.stringify(c)).join(', ')}`,
      ok: end !== undefined && k === o.contains.length,
      actual: end === undefined ? `step ${o.step} did not finish` : lines.length ? lines.map((l) => JSON.stringify(l)).join(', ') : 'nothing printed',
    });
  }
  return results;
}

/** Pod names for a message: all of them up to 5, else the first 5 and how many more (`a, b, … and 95 more (100 pods)`). */
function namePods(names: readonly string[]): string {
  const shown = names.slice(0, 5).join(', ');
  return names.length <= 5 ? shown : `${shown} and ${names.length - 5} more (${names.length} pods)`;
}

/** Distinct consecutive values (`[30, 30, 0]` → `[30, 0]`). */
function collapse<T>(xs: readonly T[]): T[] {
  return xs.filter((x, i) => i === 0 || x !== xs[i - 1]);
}

const fmtGraces = (xs: ReadonlyArray<number | null>) => (xs.length ? `[${xs.map((x) => (x === null ? 'unset' : String(x))).join(', ')}]` : '[] (none)');

/**
 * The grace periods along one pod's deletion (each collapsed to distinct consecutive values): the
 * driver's DELETE and eviction requests for its name while it existed (null: no gracePeriodSeconds), the
 * apiserver's deletionGracePeriodSeconds, the kubelet's killPod grace and StopContainer timeouts.
 */
export function graceSequences(
  m: TraceModel,
  pod: { uid: string; name: string; namespace?: string; createdAt: number } | undefined,
  container?: string,
): Record<'request' | 'deletionGracePeriodSeconds' | 'killPod' | 'stopContainer', Array<number | null>> {
  if (!pod) return { request: [], deletionGracePeriodSeconds: [], killPod: [], stopContainer: [] };
  const writes = m.podWrites.get(pod.uid) ?? [];
  const gone = writes.find((w) => w.event === 'DELETED')?.t ?? Infinity;
  const request = m.requests
    .filter(
      (r) =>
        r.client === 'driver' &&
        (r.verb === 'delete' || (r.verb === 'create' && r.subresource === 'eviction')) &&
        r.resource === 'pods' &&
        r.name === pod.name &&
        r.t >= pod.createdAt &&
        r.t <= gone,
    )
    .map((r) => r.gracePeriodSeconds ?? null);
  const dgps = writes.filter((w) => w.deletionGracePeriodSeconds !== undefined).map((w) => w.deletionGracePeriodSeconds!);
  const killPod = m
    .spansOf('kubelet.killPod')
    .filter((s) => s.podUid === pod.uid && typeof s.data.gracePeriod === 'number')
    .map((s) => s.data.gracePeriod as number);
  const stop = m
    .spansOf('kubelet.killContainer')
    .filter((s) => s.podUid === pod.uid && (container === undefined || s.data.container === container))
    .map((s) => s.endData?.gracePeriod)
    .filter((g): g is number => typeof g === 'number');
  return { request: collapse(request), deletionGracePeriodSeconds: collapse(dgps), killPod: collapse(killPod), stopContainer: collapse(stop) };
}

/** The most pod objects that existed at once, the pod objects and running containers at the end. */
export function podCounts(m: TraceModel): { maxPods: number; podsAtEnd: number; runningAtEnd: number } {
  let live = 0;
  let maxPods = 0;
  for (const w of m.writes) {
    if (w.resource !== 'pods') continue;
    if (w.event === 'ADDED') maxPods = Math.max(maxPods, ++live);
    else if (w.event === 'DELETED') live--;
  }
  return { maxPods, podsAtEnd: live, runningAtEnd: m.processes.filter((p) => p.exitedAt === undefined).length };
}
