/**
 * Scheduled faults: faults at absolute virtual times, independent of the timeline — the
 * scenario's top-level `faults:` list (what `podsim replay --shrink` writes) and the faults
 * `podsim explore` draws for a seed. Each has a stable `id` that names its engine faults' random
 * streams (packages/api/src/faults.ts), so removing one leaves the others' draws unchanged.
 */
import type { DurationUs } from '@podsim/api';
import { US_PER_SECOND } from '@podsim/api';
import { FAULT_KINDS, zDuration, zFaultSchemas, type FaultSpec } from './schema.js';
import { durationError } from '../duration.js';
import { didYouMean, zodIssues } from './load.js';
import type { Path, ScenarioIssue, SourceDoc } from './source.js';

/** One fault at an absolute virtual time. */
export interface ScheduledFault {
  /** Stable name (`faults[3]` for the file's list, `<kind>-<entry>.<n>` for explore draws). */
  readonly id: string;
  readonly atUs: number;
  readonly fault: FaultSpec;
  /** Where it was written (for messages), if it came from the file. */
  readonly path?: Path;
}

/** Parses the scenario's `faults:` list; problems go to `issues` (file, line, field). */
export function loadScheduledFaults(list: readonly unknown[] | undefined, src: SourceDoc, issues: ScenarioIssue[]): ScheduledFault[] {
  const out: ScheduledFault[] = [];
  (list ?? []).forEach((v, i) => {
    const path: Path = ['faults', i];
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      issues.push(src.issue(path, 'a scheduled fault is a mapping: {at, kind, …} (the fields of a fault step)'));
      return;
    }
    const { at, id, ...rest } = v as Record<string, unknown>;
    const atUs = zDuration.safeParse(at);
    if (at === undefined) issues.push(src.issue(path, 'missing required field "at" (the virtual time the fault begins)'));
    else if (!atUs.success) issues.push(src.issue([...path, 'at'], durationError(at)));
    if (id !== undefined && typeof id !== 'string') issues.push(src.issue([...path, 'id'], 'expected a string'));
    const kind = rest.kind;
    if (typeof kind !== 'string' || !(FAULT_KINDS as string[]).includes(kind)) {
      issues.push(src.issue([...path, 'kind'], `unknown fault kind ${JSON.stringify(kind)}: expected one of ${FAULT_KINDS.join(', ')}${didYouMean(String(kind), FAULT_KINDS)}`));
      return;
    }
    if (kind === 'nodeDeleted') {
      // The driver performs it (a DELETE of the Node through the API, at its place in the
      // timeline); as a scheduled fault it compiled to nothing and the run passed without it.
      issues.push(src.issue([...path, 'kind'], 'nodeDeleted is a DELETE of the Node that the driver sends at its place in the timeline: write it as a step (- fault: { kind: nodeDeleted, node: … }) under steps:'));
      return;
    }
    const r = zFaultSchemas[kind as keyof typeof zFaultSchemas].safeParse(rest);
    if (!r.success) {
      issues.push(...zodIssues(src, path, r.error));
      return;
    }
    if (!atUs.success) return;
    out.push({ id: typeof id === 'string' ? id : `faults[${i}]`, atUs: atUs.data, fault: r.data as FaultSpec, path });
  });
  return out;
}

/** Duration fields of fault specs (virtual µs in a FaultSpec, duration strings in a file). */
const DURATION_FIELDS = new Set(['downFor', 'for', 'delay', 'attempt']);

/** `12.5s`-style text for virtual µs that parses back to exactly the same µs. */
export function durationText(us: DurationUs): string {
  return `${us / US_PER_SECOND}s`;
}

/** A scheduled fault as the plain data a scenario file's `faults:` item holds. */
export function scheduledFaultToYaml(f: ScheduledFault): Record<string, unknown> {
  const out: Record<string, unknown> = { at: durationText(f.atUs), id: f.id };
  for (const [k, v] of Object.entries(f.fault)) out[k] = DURATION_FIELDS.has(k) && typeof v === 'number' ? durationText(v) : v;
  return out;
}

/** One line for reports: `kubeletRestart node=node-1 downFor=12.5s`. */
export function describeFault(f: FaultSpec): string {
  const fields = Object.entries(f)
    .filter(([k]) => k !== 'kind')
    .map(([k, v]) => `${k}=${DURATION_FIELDS.has(k) && typeof v === 'number' ? durationText(v) : String(v)}`);
  return [f.kind, ...fields].join(' ');
}
