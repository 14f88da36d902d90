/**
 * Shrinking a failing seed (delta debugging, Zeller's ddmin; DEMi shrinks actor schedules the
 * same way): first the drawn faults, then the timeline steps are cut down while the run still
 * violates the same invariant. Faults keep their ids, which name their random streams, so a
 * subset runs exactly as those faults would have in the full run (DESIGN.md §9). The result is
 * written as a scenario file with the faults as an explicit `faults:` list — no randomness left
 * but the seed's own (latencies, names), which the file pins with `cluster.seed`.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { LoadedScenario } from '../scenario/load.js';
import { durationText, scheduledFaultToYaml, type ScheduledFault } from '../scenario/scheduled.js';
import type { SeedPool } from './pool.js';
import type { SeedResult, SeedTask } from './runSeed.js';
import type { ExploreSpec } from '../scenario/schema.js';

/**
 * ddmin: a smallest-found subset of `items` for which `fails` holds (1-minimal: removing any one
 * item makes it pass), assuming `fails(items)`. The candidate subsets of one round are tested in
 * parallel and the first failing one in order is taken, so the result does not depend on timing.
 * Tested subsets are cached.
 */
export async function ddmin<T>(items: readonly T[], fails: (subset: readonly T[]) => Promise<boolean>): Promise<{ result: T[]; tests: number }> {
  const cache = new Map<string, Promise<boolean>>();
  let tests = 0;
  const test = (subset: readonly T[]): Promise<boolean> => {
    const key = subset.map((x) => items.indexOf(x)).join(',');
    let p = cache.get(key);
    if (!p) {
      tests++;
      p = fails(subset);
      cache.set(key, p);
    }
    return p;
  };
  const firstFailing = async (cands: readonly (readonly T[])[]) => (await Promise.all(cands.map(test))).findIndex(Boolean);
  let cur = [...items];
  if (cur.length > 0 && (await test([]))) return { result: [], tests };
  let n = 2;
  while (cur.length >= 2) {
    const size = Math.ceil(cur.length / n);
    const chunks: T[][] = [];
    for (let i = 0; i < cur.length; i += size) chunks.push(cur.slice(i, i + size));
    const i = await firstFailing(chunks);
    if (i >= 0) {
      cur = chunks[i];
      n = 2;
      continue;
    }
    if (chunks.length > 2) {
      const comps = chunks.map((_, j) => chunks.filter((__, k) => k !== j).flat());
      const k = await firstFailing(comps);
      if (k >= 0) {
        cur = comps[k];
        n = Math.max(n - 1, 2);
        continue;
      }
    }
    if (n >= cur.length) break;
    n = Math.min(cur.length, 2 * n);
  }
  return { result: cur, tests };
}

export interface ShrinkResult {
  readonly seed: number;
  readonly invariant: string;
  /** The full run. */
  readonly original: SeedResult;
  readonly faults: { readonly before: number; readonly kept: readonly string[]; readonly tests: number; readonly seconds: number };
  readonly steps: { readonly before: number; readonly kept: readonly number[]; readonly tests: number; readonly seconds: number };
  /** The run with only the kept faults and steps. */
  readonly minimal: SeedResult;
}

/** Shrinks a failing seed's faults, then its steps, keeping the first violated invariant violated. */
export async function shrinkSeed(
  pool: SeedPool,
  sc: LoadedScenario,
  seed: number,
  level: number,
  onRound?: (what: string) => void,
  defaulted?: ExploreSpec,
): Promise<ShrinkResult | { seed: number; passes: true }> {
  const file = sc.file;
  const run = (task: Omit<SeedTask, 'file' | 'seed' | 'level' | 'explore'>) => pool.run({ file, seed, level, ...task, ...(defaulted ? { explore: defaulted } : {}) });
  const original = await run({});
  if (original.ok || !original.first) return { seed, passes: true };
  const invariant = original.first.invariant;
  const still = (r: SeedResult) => r.error === undefined && r.violated.includes(invariant);

  let t0 = performance.now();
  const ids = original.faults.map((f) => f.id);
  onRound?.(`shrinking ${ids.length} fault${ids.length === 1 ? '' : 's'}`);
  const f = await ddmin(ids, async (keep) => still(await run({ keepFaults: keep })));
  const faultSeconds = (performance.now() - t0) / 1000;

  t0 = performance.now();
  const indices = sc.steps.map((_, i) => i);
  onRound?.(`shrinking ${indices.length} step${indices.length === 1 ? '' : 's'}`);
  const s = await ddmin(indices, async (keep) => still(await run({ keepFaults: f.result, keepSteps: keep })));
  const stepSeconds = (performance.now() - t0) / 1000;

  const minimal = await run({ keepFaults: f.result, keepSteps: s.result });
  return {
    seed,
    invariant,
    original,
    faults: { before: ids.length, kept: f.result, tests: f.tests, seconds: faultSeconds },
    steps: { before: indices.length, kept: s.result, tests: s.tests, seconds: stepSeconds },
    minimal,
  };
}

/** Reads the raw (unvalidated, as written) value at `path` inside a plain object. */
function at(value: unknown, path: readonly (string | number)[]): unknown {
  let v = value;
  for (const p of path) v = v === null || typeof v !== 'object' ? undefined : (v as Record<string | number, unknown>)[p];
  return v;
}

/**
 * The scenario file of a shrunk run: the same cluster and manifests, only the kept steps, the
 * kept faults as an explicit `faults:` list (with their ids, so they draw what they drew), the
 * explore section without fault options (its healing phase and liveness budget still apply),
 * `cluster.seed` pinned, no `expect:`. Manifest file paths are rewritten for `outFile`'s folder.
 */
export function shrunkScenarioText(sc: LoadedScenario, o: { seed: number; invariant: string; faults: readonly ScheduledFault[]; keepSteps: readonly number[]; outFile: string; command: string }): string {
  const text = readFileSync(sc.file, 'utf8');
  const docs = parseAllDocuments(text);
  const raw = sc.src.toJS() as Record<string, unknown>;
  const idx = docs.findIndex((d) => JSON.stringify(d.toJS({ maxAliasCount: 1000 })) === JSON.stringify(raw));
  const doc: Record<string, unknown> = { ...raw };
  doc.name = `${String(raw.name ?? sc.file)} (seed ${o.seed}, shrunk)`;
  doc.cluster = { ...(raw.cluster as Record<string, unknown>), seed: o.seed };
  doc.steps = o.keepSteps.map((i) => {
    const ls = sc.steps[i];
    const step = { ...(at(raw, ls.path) as Record<string, unknown>) };
    const atUs = (ls.spec as { at?: number }).at;
    if (atUs !== undefined && step.at === undefined) step.at = durationText(atUs);
    return step;
  });
  doc.faults = [...((raw.faults as unknown[] | undefined) ?? []), ...o.faults.map(scheduledFaultToYaml)];
  if (raw.explore) doc.explore = { ...(raw.explore as Record<string, unknown>), faults: [] };
  else if (sc.doc.explore) {
    // The default explore section (the file had none): written out, so that the shrunk file keeps
    // its healing phase and liveness budget and runs exactly as the minimal run did.
    const ex = sc.doc.explore;
    doc.explore = { window: ex.window.map(durationText), healAfter: durationText(ex.healAfter), livenessBudget: durationText(ex.livenessBudget), faults: [] };
  }
  delete doc.expect;
  if (Array.isArray(raw.manifestFiles)) {
    doc.manifestFiles = (raw.manifestFiles as string[]).map((m) => {
      const abs = resolve(dirname(sc.file), m);
      const rel = relative(dirname(resolve(o.outFile)), abs);
      return isAbsolute(rel) ? abs : rel;
    });
  }
  const header = [
    `# Shrunk by: ${o.command}`,
    `# Violates ${o.invariant} with ${o.faults.length} fault${o.faults.length === 1 ? '' : 's'} and ${o.keepSteps.length} step${o.keepSteps.length === 1 ? '' : 's'}.`,
    `# Run it: pnpm podsim run ${o.outFile}`,
    '',
  ].join('\n');
  // A document that began with `---` prints it again; the parts are joined with one below.
  const parts = docs.map((d, i) => (i === idx ? stringify(doc, { lineWidth: 0 }) : d.toString({ lineWidth: 0 }).replace(/^---[ \t]*\n/, '')));
  if (idx < 0) parts.unshift(stringify(doc, { lineWidth: 0 }));
  return header + parts.map((p) => p.trimEnd()).join('\n---\n') + '\n';
}
