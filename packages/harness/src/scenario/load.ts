/**
 * Loading a scenario file: the YAML stream (scenario document + Kubernetes manifests, or
 * `manifests:` / `manifestFiles:`), schema validation (zod), manifest validation per kind, and
 * the `podsim.dev/*` behaviour annotations checked with the runtime's own parser
 * (`packages/api/src/behavior.ts`). Every problem becomes a {@link ScenarioIssue} with file, line
 * and field; all are collected before failing so a user fixes a file in one pass.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type * as z from 'zod';
import { APP_ANNOTATIONS, parseAppAnnotations, parseBehaviorAnnotations, type KubeObject } from '@podsim/api';
import {
  FAULT_KINDS,
  MANIFEST_KINDS,
  STEP_KEYS,
  zFaultSchemas,
  zManifests,
  zScenarioDoc,
  zStepSchemas,
  type FaultSpec,
  type ManifestKind,
  type ScenarioDoc,
  type StepKey,
  type StepSpec,
} from './schema.js';
import { ScenarioError, SourceDoc, decodeUtf8, parseYamlStream, type Path, type ScenarioIssue } from './source.js';
import { loadScheduledFaults } from './scheduled.js';
import { findUnknownFields, rootMessage } from '../serve/fieldValidation.js';

/** A Kubernetes object from the scenario, with where it was written. */
export interface LoadedManifest {
  readonly object: KubeObject;
  readonly src: SourceDoc;
  readonly path: Path;
}

/** A validated step, with where it was written. */
export interface LoadedStep {
  readonly key: StepKey;
  readonly spec: StepSpec;
  readonly fault?: FaultSpec;
  readonly src: SourceDoc;
  readonly path: Path;
}

export interface LoadedScenario {
  readonly file: string;
  readonly doc: ScenarioDoc;
  readonly src: SourceDoc;
  readonly manifests: readonly LoadedManifest[];
  readonly steps: readonly LoadedStep[];
  readonly warnings: readonly ScenarioIssue[];
  /** `Kind/name` of the manifests skipped because podsim does not simulate their kind (Service, …). */
  readonly skipped?: readonly string[];
  /** The files the scenario was read from: this file, then each `manifestFiles` entry (resolved). */
  readonly inputFiles?: readonly string[];
  /** Built in code (`loadScenarioObject`): `file` names no file on disk, so a replay is a call, not a command. */
  readonly fromObject?: boolean;
}

/** Most steps a timeline may have once every `repeat` is counted out. */
export const MAX_TIMELINE_STEPS = 100_000;

/** Reads and validates a scenario file. Throws {@link ScenarioError} on any problem. */
export function loadScenario(file: string): LoadedScenario {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw new ScenarioError([{ file, line: 0, column: 0, field: '', message: `cannot read file: ${(e as NodeJS.ErrnoException).code ?? String(e)}` }]);
  }
  const text = decodeUtf8(file, bytes);
  if (typeof text !== 'string') throw new ScenarioError([text]);
  return loadScenarioText(file, text, (p) => {
    const t = decodeUtf8(p, readFileSync(p));
    if (typeof t !== 'string') throw Object.assign(new Error(t.message), { code: `line ${t.line}: ${t.message}` });
    return t;
  });
}

/** Validates scenario text; `readFile` serves `manifestFiles` (paths relative to `file`). */
export function loadScenarioText(file: string, text: string, readFile: (path: string) => string = () => ''): LoadedScenario {
  const issues: ScenarioIssue[] = [];
  const warnings: ScenarioIssue[] = [];
  const { docs, issues: syntax } = parseYamlStream(file, text);
  if (syntax.length > 0) throw new ScenarioError(syntax);
  if (docs.length === 0) throw new ScenarioError([{ file, line: 0, column: 0, field: '', message: 'the file is empty: expected a scenario document (kind: Scenario)' }]);

  // The scenario document: the one with kind Scenario, else the first one without a kind.
  const values = docs.map((d) => d.toJS());
  let si = values.findIndex((v) => isObject(v) && v.kind === 'Scenario');
  if (si < 0) si = values.findIndex((v) => isObject(v) && v.kind === undefined);
  if (si < 0) {
    throw new ScenarioError([docs[0].issue([], 'no scenario document: add a document with `kind: Scenario` (cluster, steps, expect)')]);
  }
  const src = docs[si];
  // One pass reports every problem of the file: when the scenario document breaks its schema,
  // its steps, manifests and annotations are still checked from the raw values (only what
  // needs the whole document — references between steps, manifests and expectations — waits
  // for compileScenario).
  const parsed = zScenarioDoc.safeParse(values[si]);
  if (!parsed.success) issues.push(...zodIssues(src, [], parsed.error));
  const doc = parsed.success ? parsed.data : undefined;
  const rawDoc = values[si] as Record<string, unknown>;
  const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
  // compileScenario builds the scheduled faults; without a document, check their shape here.
  if (!doc) loadScheduledFaults(listOf(rawDoc.faults), src, issues);

  // Manifests: other documents, `manifests:` entries, `manifestFiles:` documents; `kind: List` expands.
  // (The schema has already named entries that are not mappings and file names that are not strings.)
  const raw: Array<{ value: unknown; src: SourceDoc; path: Path }> = [];
  docs.forEach((d, i) => i !== si && raw.push({ value: values[i], src: d, path: [] }));
  listOf(rawDoc.manifests).forEach((m, i) => isObject(m) && raw.push({ value: m, src, path: ['manifests', i] }));
  const inputFiles = [file];
  listOf(rawDoc.manifestFiles).forEach((rel, i) => {
    if (typeof rel !== 'string' || rel === '') return;
    const path = resolve(dirname(file), rel);
    inputFiles.push(path);
    let content: string;
    try {
      content = readFile(path);
    } catch (e) {
      issues.push(src.issue(['manifestFiles', i], `cannot read ${rel}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`));
      return;
    }
    // Name the file as the user would reach it from where they ran podsim (next to the scenario).
    const r = parseYamlStream(join(dirname(file), rel), content);
    issues.push(...r.issues);
    for (const d of r.docs) raw.push({ value: d.toJS(), src: d, path: [] });
  });
  const manifests: LoadedManifest[] = [];
  const skipped: string[] = [];
  // kubectl's FlattenListVisitor: `kind: List` and typed lists (`PodList`, …) with `items`,
  // nested ones too, stand for their items.
  const visit = (value: unknown, src: SourceDoc, path: Path): void => {
    if (isObject(value) && typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items)) {
      value.items.forEach((item, i) => visit(item, src, [...path, 'items', i]));
    } else manifests.push(...validateManifest(value, src, path, issues, warnings, skipped));
  };
  for (const r of raw) visit(r.value, r.src, r.path);

  const steps: LoadedStep[] = [];
  listOf(rawDoc.steps).forEach((s, i) => {
    for (const st of loadStep(s, src, ['steps', i], issues, false)) steps.push(st);
  });
  if (steps.length > MAX_TIMELINE_STEPS) {
    issues.push(src.issue(['steps'], `the timeline expands to ${steps.length} steps (repeats counted out); podsim runs at most ${MAX_TIMELINE_STEPS} steps`));
  }

  if (issues.length > 0 || !doc) throw new ScenarioError(sortIssues([...issues, ...warnings]));
  return { file, doc, src, manifests, steps, warnings, skipped, inputFiles };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function sortIssues(issues: ScenarioIssue[]): ScenarioIssue[] {
  return [...issues].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.column - b.column));
}

/** Levenshtein distance, for "did you mean" hints. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
  return d[a.length][b.length];
}

/** ` (did you mean "x"?)` when one candidate is close, else ''. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const dd = distance(word.toLowerCase(), c.toLowerCase());
    if (dd < bestD) [best, bestD] = [c, dd];
  }
  return best !== undefined && bestD <= Math.max(1, Math.floor(word.length / 3)) ? ` (did you mean ${JSON.stringify(best)}?)` : '';
}

/** zod issues → scenario issues, with friendlier wording for the common cases. */
export function zodIssues(src: SourceDoc, base: Path, error: z.ZodError, prefix?: string): ScenarioIssue[] {
  const out: ScenarioIssue[] = [];
  for (const i of error.issues) {
    const path = [...base, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    if (i.code === 'unrecognized_keys') {
      for (const k of i.keys) out.push(src.issue(path, `unknown field ${JSON.stringify(k)}`, { key: k, prefix }));
      continue;
    }
    let message = i.message;
    if (i.code === 'invalid_type' && /received undefined/.test(i.message)) message = `missing required field (expected ${i.expected})`;
    else if (i.code === 'invalid_type') message = message.replace(/^Invalid input: /, '');
    out.push(src.issue(path, message, { prefix }));
  }
  return out;
}

/**
 * One step of the timeline; a `repeat` step becomes its steps `times` times over (each copy keeps
 * the path of the step it was written as, so messages point at the file). Steps inside a repeat
 * take no `id` (it would name several steps) and no `at:`; the repeat's own `at:` applies to its
 * first step.
 */
function loadStep(value: unknown, src: SourceDoc, path: Path, issues: ScenarioIssue[], inRepeat: boolean): LoadedStep[] {
  const step = validateStep(value, src, path, issues);
  if (!step) return [];
  const common = step.spec as { id?: string; at?: number; expectFailure?: boolean };
  // expectFailure on a step that cannot fail would fail every run; on a repeat it would be dropped.
  if (common.expectFailure === true && step.key === 'sleep') issues.push(src.issue([...path, 'expectFailure'], 'a sleep step cannot fail, so expectFailure: true would fail every run'));
  if (common.expectFailure === true && step.key === 'repeat') {
    issues.push(src.issue([...path, 'expectFailure'], 'a repeat step cannot carry expectFailure: give it to the steps inside the repeat that should fail'));
  }
  if (inRepeat && common.id !== undefined) issues.push(src.issue([...path, 'id'], 'a step inside repeat cannot have an id: it runs several times'));
  if (inRepeat && common.at !== undefined) issues.push(src.issue([...path, 'at'], 'a step inside repeat cannot have at: (give it to the repeat step)'));
  if (step.key !== 'repeat') return [step];
  if (common.id !== undefined) issues.push(src.issue([...path, 'id'], 'a repeat step cannot have an id: give ids to steps outside it'));
  const r = (step.spec as { repeat: { times: number; steps: unknown[] } }).repeat;
  const body = r.steps.flatMap((v, j) => loadStep(v, src, [...path, 'repeat', 'steps', j], issues, true));
  // Nested repeats multiply: 10000 × 10000 sleeps once took 14 s and 2 GB before a stack overflow.
  if (body.length * r.times > MAX_TIMELINE_STEPS) {
    issues.push(src.issue([...path, 'repeat', 'times'], `this repeat expands to ${body.length} × ${r.times} = ${body.length * r.times} steps; podsim runs at most ${MAX_TIMELINE_STEPS} steps`));
    return [];
  }
  const out: LoadedStep[] = [];
  for (let n = 0; n < r.times; n++) for (const b of body) out.push(b);
  if (common.at !== undefined && out.length > 0) out[0] = { ...out[0], spec: { ...out[0].spec, at: common.at } as StepSpec };
  return out;
}

function validateStep(value: unknown, src: SourceDoc, path: Path, issues: ScenarioIssue[]): LoadedStep | undefined {
  if (!isObject(value)) {
    issues.push(src.issue(path, `a step is a mapping with one action (${STEP_KEYS.join(', ')})`));
    return undefined;
  }
  const actions = Object.keys(value).filter((k) => (STEP_KEYS as string[]).includes(k)) as StepKey[];
  if (actions.length === 0) {
    const other = Object.keys(value).find((k) => k !== 'id' && k !== 'at' && k !== 'expectFailure') ?? Object.keys(value)[0];
    const hint = other !== undefined ? didYouMean(other, STEP_KEYS) : '';
    issues.push(
      src.issue(path, `unknown step${other !== undefined ? ` ${JSON.stringify(other)}` : ''}: expected one of ${STEP_KEYS.join(', ')}${hint}`, {
        key: other,
      }),
    );
    return undefined;
  }
  if (actions.length > 1) {
    issues.push(src.issue(path, `a step has exactly one action; found ${actions.join(' and ')} (split it into two steps)`, { key: actions[1] }));
    return undefined;
  }
  const key = actions[0];
  const r = zStepSchemas[key].safeParse(value);
  if (!r.success) {
    issues.push(...zodIssues(src, path, r.error));
    return undefined;
  }
  const spec = r.data as StepSpec;
  if (key !== 'fault') return { key, spec, src, path };
  const f = (value as { fault: Record<string, unknown> }).fault;
  const kind = f.kind as string;
  if (!(FAULT_KINDS as string[]).includes(kind)) {
    issues.push(
      src.issue([...path, 'fault', 'kind'], `unknown fault kind ${JSON.stringify(kind)}: expected one of ${FAULT_KINDS.join(', ')}${didYouMean(String(kind), FAULT_KINDS)}`),
    );
    return undefined;
  }
  const fr = zFaultSchemas[kind as keyof typeof zFaultSchemas].safeParse(f);
  if (!fr.success) {
    issues.push(...zodIssues(src, [...path, 'fault'], fr.error));
    return undefined;
  }
  return { key, spec, fault: fr.data as FaultSpec, src, path };
}

/**
 * Kinds that create pods podsim would not run: skipping one would silently leave its pods out
 * of the simulation, so it stays an error.
 */
const WORKLOAD_KINDS = ['CronJob', 'ReplicationController'];
/** The API groups of the kinds podsim simulates (a near-miss kind there is a typo, not another kind). */
const SERVED_API_VERSIONS = ['v1', 'apps/v1', 'policy/v1', 'batch/v1'];

/**
 * One manifest: rejected when malformed (not a mapping, no apiVersion, kind or name), when a
 * workload kind podsim does not run, or when its kind looks like a misspelt served kind; skipped
 * with a warning when it is any other kind podsim does not simulate (Service, ConfigMap, …, as
 * users keep them next to their workloads); otherwise checked against its kind's schema and its
 * behaviour annotations (those even when the schema fails, so one pass reports both).
 */
function validateManifest(value: unknown, src: SourceDoc, path: Path, issues: ScenarioIssue[], warnings: ScenarioIssue[], skipped: string[]): LoadedManifest[] {
  if (!isObject(value)) {
    issues.push(src.issue(path, 'a manifest must be a mapping with apiVersion, kind and metadata'));
    return [];
  }
  const kind = value.kind;
  if (typeof kind !== 'string') {
    issues.push(src.issue(path, 'missing required field "kind"'));
    return [];
  }
  const meta = isObject(value.metadata) ? value.metadata : {};
  const prefix = `${kind}/${String(meta.name ?? meta.generateName ?? '?')}`;
  if (!(MANIFEST_KINDS as string[]).includes(kind)) {
    const served = MANIFEST_KINDS.join(', ');
    const typo = didYouMean(kind, MANIFEST_KINDS);
    if (WORKLOAD_KINDS.includes(kind) || (typo !== '' && SERVED_API_VERSIONS.includes(String(value.apiVersion)))) {
      const why = WORKLOAD_KINDS.includes(kind) ? ` (its pods would be missing from the run; podsim simulates ${served})` : `: podsim simulates ${served}${typo}`;
      issues.push(src.issue([...path, 'kind'], `unsupported kind ${JSON.stringify(kind)}${why}`));
      return [];
    }
    if (typeof value.apiVersion !== 'string') issues.push(src.issue(path, 'missing required field "apiVersion"', { prefix }));
    else if (meta.name === undefined && meta.generateName === undefined) issues.push(src.issue([...path, 'metadata'], 'missing required field "name" (or generateName)', { prefix }));
    else {
      warnings.push(src.issue([...path, 'kind'], `skipped: podsim does not simulate ${kind} (it simulates ${served})`, { prefix, warning: true }));
      skipped.push(prefix);
    }
    return [];
  }
  const r = zManifests[kind as ManifestKind].safeParse(value);
  if (!r.success) issues.push(...zodIssues(src, path, r.error, prefix));
  else if (meta.name === undefined && meta.generateName === undefined) issues.push(src.issue([...path, 'metadata'], 'missing required field "name" (or generateName)', { prefix }));
  // Fields the kind does not have (`replcas:`): refused, as kubectl's Strict field validation
  // refuses them on a cluster, against the same type table `podsim serve` uses.
  const group = typeof value.apiVersion === 'string' && value.apiVersion.includes('/') ? value.apiVersion.slice(0, value.apiVersion.indexOf('/')) : '';
  for (const u of findUnknownFields(value, rootMessage(group, kind))) {
    const key = String(u.path[u.path.length - 1]);
    issues.push(src.issue([...path, ...u.path.slice(0, -1)], `unknown field ${JSON.stringify(u.text)}${didYouMean(key, u.known)}`, { key, prefix }));
  }
  // Behaviour annotations live where the kubelet reads them: on the pod (or the pod template).
  const annPath: Path = kind === 'Pod' ? ['metadata', 'annotations'] : ['Deployment', 'ReplicaSet', 'Job', 'DaemonSet', 'StatefulSet'].includes(kind) ? ['spec', 'template', 'metadata', 'annotations'] : [];
  if (annPath.length > 0) {
    let ann: unknown = value;
    for (const p of annPath) ann = isObject(ann) ? ann[p as string] : undefined;
    // Annotations that are not all strings were named by the schema already.
    if (isObject(ann) && Object.values(ann).every((v) => typeof v === 'string')) {
      const res = parseBehaviorAnnotations(ann as Record<string, string>);
      for (const e of res.errors) issues.push(src.issue([...path, ...annPath, e.annotation], e.message, { prefix }));
      // The app (serving) annotations of issue #18 are podsim's too (packages/api/src/appBehavior.ts).
      const app = parseAppAnnotations(ann as Record<string, string>);
      for (const e of app.errors) issues.push(src.issue([...path, ...annPath, e.annotation], e.message, { prefix }));
      const appKeys: readonly string[] = Object.values(APP_ANNOTATIONS);
      for (const u of res.unknown.filter((k) => !appKeys.includes(k))) warnings.push(src.issue([...path, ...annPath, u], 'not a podsim behaviour annotation; ignored', { prefix, warning: true }));
    }
  }
  // Pod spec fields the scheduler does not run: accepted (as the apiserver would), but placement
  // would silently differ from a real cluster's, so each gets a warning naming it.
  const specPath: Path = kind === 'Pod' ? ['spec'] : annPath.length > 0 ? ['spec', 'template', 'spec'] : [];
  if (specPath.length > 0) {
    let spec: unknown = value;
    for (const p of specPath) spec = isObject(spec) ? spec[p as string] : undefined;
    if (isObject(spec)) {
      for (const [field, present] of unscheduledPodFields(spec)) {
        if (present) warnings.push(src.issue([...path, ...specPath, ...field.split('.')], `accepted, not simulated: podsim's scheduler ignores ${field} (it runs NodeUnschedulable, TaintToleration, NodeAffinity required terms and NodeResourcesFit), so pods may land where kube-scheduler would not place them`, { prefix, warning: true }));
      }
    }
  }
  if (!r.success || (meta.name === undefined && meta.generateName === undefined)) return [];
  return [{ object: r.data as unknown as KubeObject, src, path }];
}

/** The scheduling fields of a pod spec that podsim's scheduler does not honour, with whether `spec` sets them. */
function unscheduledPodFields(spec: Record<string, unknown>): Array<[string, boolean]> {
  const aff = isObject(spec.affinity) ? spec.affinity : {};
  const nodeAff = isObject(aff.nodeAffinity) ? aff.nodeAffinity : {};
  const nonEmpty = (v: unknown) => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);
  return [
    ['topologySpreadConstraints', nonEmpty(spec.topologySpreadConstraints)],
    ['affinity.podAffinity', nonEmpty(aff.podAffinity)],
    ['affinity.podAntiAffinity', nonEmpty(aff.podAntiAffinity)],
    ['affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution', nonEmpty(nodeAff.preferredDuringSchedulingIgnoredDuringExecution)],
  ];
}
