/**
 * The scenario's `expect:` block, evaluated over the merged trace after the run: the
 * `kubectl get pods -w` (READY, STATUS) sequence, timing windows of pod events (API created /
 * terminating / gone, runtime TERM / KILL / exit, first start, first ready row), exit codes and
 * signal counts. Pod aliases bind in order of pod creation (the apiserver's ADDED writes).
 */
import { US_PER_SECOND } from '@podsim/api';
import { formatDuration } from '../duration.js';
import type { TraceModel } from '../checkers/model.js';
import type { ExpectSpec } from '../scenario/schema.js';

export interface ExpectationResult {
  readonly kind: 'watch' | 'timing' | 'exitCode' | 'signals';
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

/** Virtual time of a pod event, or undefined if it did not happen. */
export function podEventTime(m: TraceModel, uid: string, name: string, event: string, rows: readonly WatchRow[]): number | undefined {
  const writes = m.podWrites.get(uid) ?? [];
  const procs = m.processes.filter((p) => p.podUid === uid);
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
    case 'ready':
      return rows.find((r) => r.name === name && /^(\d+)\/\1$/.test(r.ready) && r.ready !== '0/0')?.t;
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

  if (expect.watch) {
    const want = expect.watch.rows.map((r) => r.trim().split(/\s+/).join(' '));
    const only = expect.watch.pod;
    const got = rows.map((r) => `${aliasOfName.get(r.name) ?? r.name} ${r.ready} ${r.status}`).filter((g) => only === undefined || g.split(' ')[0] === only);
    const exact = (expect.watch.match ?? 'exact') === 'exact';
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
    const pod = byAlias.get(t.pod);
    const window = t.within ?? [t.at! - (t.tolerance ?? US_PER_SECOND), t.at! + (t.tolerance ?? US_PER_SECOND)];
    const expected = `${t.pod} ${t.event} ${t.within ? `within [${formatDuration(window[0])}, ${formatDuration(window[1])}]` : `at ${formatDuration(t.at!)} ± ${formatDuration(t.tolerance ?? US_PER_SECOND)}`} after ${t.since ?? 'start'}`;
    if (!pod) {
      results.push({ kind: 'timing', expected, ok: false, actual: unbound(t.pod) });
      continue;
    }
    const since = stepStart(t.since);
    const at = podEventTime(m, pod.uid, pod.name, t.event, rows);
    if (since === undefined) results.push({ kind: 'timing', expected, ok: false, actual: `step ${t.since} never ran` });
    else if (at === undefined) results.push({ kind: 'timing', expected, ok: false, actual: `${t.event} never happened to ${pod.name}` });
    else {
      const d = at - since;
      results.push({ kind: 'timing', expected, ok: d >= window[0] && d <= window[1], actual: `${t.event} after ${formatDuration(d)} (${pod.name})` });
    }
  }

  for (const x of expect.exitCodes ?? []) {
    const pod = byAlias.get(x.pod);
    const expected = `${x.pod}${x.container ? `/${x.container}` : ''} exits ${x.code}`;
    if (!pod) {
      results.push({ kind: 'exitCode', expected, ok: false, actual: unbound(x.pod) });
      continue;
    }
    const exits = m.processes.filter((p) => p.podUid === pod.uid && (!x.container || p.container === x.container) && p.exitCode !== undefined);
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
    const sigs = m.processes.filter((p) => p.podUid === pod.uid && (!x.container || p.container === x.container)).flatMap((p) => p.signals);
    const term = sigs.filter((s) => s.signal === 'SIGTERM').length;
    const kill = sigs.filter((s) => s.signal === 'SIGKILL').length;
    const ok = (x.TERM === undefined || x.TERM === term) && (x.KILL === undefined || x.KILL === kill);
    results.push({ kind: 'signals', expected, ok, actual: `TERM×${term} KILL×${kill}` });
  }
  return results;
}
