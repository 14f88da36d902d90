/**
 * What kubectl does on the client side before it talks to the apiserver, as pure functions:
 * the `kubectl delete` flag rewrites of kubectl v0.22.8 `pkg/cmd/delete/delete.go`
 * (`DeleteOptions.Complete` / `Validate`, spec §2.10) and label-selector matching
 * (`k8s.io/apimachinery/pkg/labels` `Parse` / `Selector.Matches`, equality- and set-based forms).
 */
import type { DeleteOptions } from '@podsim/api';

/** The `kubectl delete` flags podsim models. `gracePeriod` undefined = kubectl's default −1. */
export interface DeleteFlags {
  readonly gracePeriod?: number;
  readonly force?: boolean;
  readonly now?: boolean;
}

/** Result of applying kubectl's rules: the DeleteOptions sent, or kubectl's error text. */
export type DeleteFlagsResult =
  | { readonly ok: true; readonly options: DeleteOptions; readonly gracePeriod: number; readonly warning?: string }
  | { readonly ok: false; readonly error: string };

/**
 * kubectl v0.22.8 delete flag handling:
 * `--now` = grace 1 (error together with `--grace-period`); `--grace-period=0` without `--force`
 * → 1; `--force` without a grace → 0; `--force` with grace > 0 is an error. The request carries
 * `gracePeriodSeconds` only when the result is ≥ 0, and always `propagationPolicy: Background`
 * (kubectl's default `--cascade=background`).
 */
export function deleteOptionsFromFlags(flags: DeleteFlags): DeleteFlagsResult {
  let grace = flags.gracePeriod ?? -1;
  if (flags.now) {
    if (grace !== -1) return { ok: false, error: '--now and --grace-period cannot be specified together' };
    grace = 1;
  }
  if (grace === 0 && !flags.force) grace = 1;
  if (flags.force && grace < 0) grace = 0;
  if (flags.force && grace > 0) return { ok: false, error: '--force and --grace-period greater than 0 cannot be specified together' };
  const options: DeleteOptions = grace >= 0 ? { gracePeriodSeconds: grace, propagationPolicy: 'Background' } : { propagationPolicy: 'Background' };
  const warning =
    grace === 0 && flags.force
      ? 'Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.'
      : undefined;
  return { ok: true, options, gracePeriod: grace, warning };
}

/** One requirement of a parsed label selector. */
export interface SelectorRequirement {
  readonly key: string;
  readonly op: '=' | '!=' | 'in' | 'notin' | 'exists' | '!';
  readonly values: readonly string[];
}

const KEY = /^([a-z0-9A-Z]([a-z0-9A-Z._-]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([a-z0-9A-Z._-]*[a-z0-9A-Z])?$/;
const VALUE = /^([a-z0-9A-Z]([a-z0-9A-Z._-]*[a-z0-9A-Z])?)?$/;

/** Splits on commas that are not inside parentheses. */
function splitTop(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts;
}

/**
 * Parses a label selector string (`app=minio`, `tier!=db`, `env in (a,b)`, `!canary`, `track`).
 * Returns the requirements, or an error message naming the bad part. The empty string selects
 * everything.
 */
export function parseSelector(text: string): { ok: true; reqs: SelectorRequirement[] } | { ok: false; error: string } {
  const reqs: SelectorRequirement[] = [];
  if (text.trim() === '') return { ok: true, reqs };
  for (const raw of splitTop(text)) {
    const part = raw.trim();
    let m: RegExpExecArray | null;
    let req: SelectorRequirement | undefined;
    if ((m = /^(\S+?)\s+(in|notin)\s*\(([^)]*)\)$/.exec(part))) {
      req = { key: m[1], op: m[2] as 'in' | 'notin', values: m[3].split(',').map((v) => v.trim()) };
    } else if ((m = /^(\S+?)\s*(==|!=|=)\s*(\S*)$/.exec(part))) {
      req = { key: m[1], op: m[2] === '!=' ? '!=' : '=', values: [m[3]] };
    } else if ((m = /^!\s*(\S+)$/.exec(part))) {
      req = { key: m[1], op: '!', values: [] };
    } else if (KEY.test(part)) {
      req = { key: part, op: 'exists', values: [] };
    }
    if (!req || !KEY.test(req.key) || req.values.some((v) => !VALUE.test(v))) {
      return { ok: false, error: `unable to parse requirement ${JSON.stringify(part)} in label selector ${JSON.stringify(text)}` };
    }
    reqs.push(req);
  }
  return { ok: true, reqs };
}

/** Does a label set satisfy every requirement? */
export function selectorMatches(reqs: readonly SelectorRequirement[], labels: Readonly<Record<string, string>> | undefined): boolean {
  const l = labels ?? {};
  for (const r of reqs) {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case '=':
        if (!has || v !== r.values[0]) return false;
        break;
      case '!=':
        if (has && v === r.values[0]) return false;
        break;
      case 'in':
        if (!has || !r.values.includes(v)) return false;
        break;
      case 'notin':
        if (has && r.values.includes(v)) return false;
        break;
      case 'exists':
        if (!has) return false;
        break;
      case '!':
        if (has) return false;
        break;
    }
  }
  return true;
}
