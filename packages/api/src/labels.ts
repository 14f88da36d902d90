/**
 * Label selectors: k8s.io/apimachinery v0.22.8 `pkg/labels/selector.go` (`Parse`, `Requirement`,
 * `internalSelector.Matches/String/Empty`, `SelectorFromSet`) and `pkg/apis/meta/v1/helpers.go`
 * (`LabelSelectorAsSelector`, `FormatLabelSelector`). Operators: `=`, `==`, `!=`, `in`, `notin`,
 * exists (`key`), `!key`, `>`, `<`. Errors are plain `{error}` values (the apiserver turns them
 * into 400 BadRequest, controllers skip the object). Shared by the apiserver (list / watch
 * filters, validation, printers), the controllers (selectors of ReplicaSets and Deployments), the
 * runtime (CRI label filters) and the harness (`kubectl -l`).
 */
import type { LabelSelector } from './k8s/meta.js';

export type LabelOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

/** One `labels.Requirement`; `values` sorted (a set upstream). */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

/** A parsed selector: requirements sorted by key (ANDed). `nothing` matches no object. */
export interface ParsedLabelSelector {
  readonly requirements: readonly LabelRequirement[];
  readonly nothing?: boolean;
}

export const EVERYTHING: ParsedLabelSelector = { requirements: [] };

/** `Requirement.Matches`. */
export function requirementMatches(r: LabelRequirement, labels: Readonly<Record<string, string>> | undefined): boolean {
  const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = has ? labels![r.key] : undefined;
  switch (r.operator) {
    case '=':
    case '==':
    case 'in':
      return has && r.values.includes(v!);
    case '!=':
    case 'notin':
      return !has || !r.values.includes(v!);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || !/^-?\d+$/.test(v!)) return false;
      const n = Number(v);
      const bound = Number(r.values[0]);
      return r.operator === 'gt' ? n > bound : n < bound;
    }
  }
}

/** `internalSelector.Matches`. */
export function labelsMatch(sel: ParsedLabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (sel.nothing) return false;
  for (const r of sel.requirements) if (!requirementMatches(r, labels)) return false;
  return true;
}

/** `Selector.Empty()`: the selector does not restrict the selection (`{}`; a nil selector is not empty). */
export function selectorEmpty(sel: ParsedLabelSelector): boolean {
  return !sel.nothing && sel.requirements.length === 0;
}

/**
 * `labels.SelectorFromSet(set).Matches(labels)`: every key of `set` is present in `labels` with
 * the same value (an absent or empty set matches everything).
 */
export function labelSetMatches(set: Readonly<Record<string, string>> | undefined, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (!set) return true;
  for (const key in set) if (labels?.[key] !== set[key]) return false;
  return true;
}

/** `Requirement.String()`. */
export function requirementString(r: LabelRequirement): string {
  switch (r.operator) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case '=':
    case '==':
    case '!=':
      return `${r.key}${r.operator}${r.values[0]}`;
    case 'in':
    case 'notin':
      return `${r.key} ${r.operator} (${r.values.join(',')})`;
    case 'gt':
      return `${r.key}>${r.values[0]}`;
    case 'lt':
      return `${r.key}<${r.values[0]}`;
  }
}

/** `internalSelector.String()`: requirements joined with `,` (empty for Everything). */
export function labelSelectorString(sel: ParsedLabelSelector): string {
  return sel.requirements.map(requirementString).join(',');
}

function sortRequirements(rs: LabelRequirement[]): LabelRequirement[] {
  return rs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

const KEY_RE = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Validates a label key (`validation.IsQualifiedName`); returns an error message or undefined. */
export function validateLabelKey(key: string): string | undefined {
  const name = key.includes('/') ? key.slice(key.indexOf('/') + 1) : key;
  if (!KEY_RE.test(key) || name.length > 63 || key.length - name.length - 1 > 253) {
    return `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`;
  }
  return undefined;
}

/** Validates a label value (`validation.IsValidLabelValue`); returns an error message or undefined. */
export function validateLabelValue(v: string): string | undefined {
  if (v.length > 63) return 'must be no more than 63 characters';
  if (!VALUE_RE.test(v)) {
    return `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`;
  }
  return undefined;
}

// ---- parser (labels.Parse) ------------------------------------------------------------------

type Tok =
  | { t: 'id'; v: string }
  | { t: 'op'; v: '=' | '==' | '!=' | '!' | '>' | '<' | 'in' | 'notin' }
  | { t: '('; v: '(' }
  | { t: ')'; v: ')' }
  | { t: ','; v: ',' }
  | { t: 'end'; v: '' };

function lex(s: string): Tok[] | string {
  const out: Tok[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
    } else if (c === '(' || c === ')' || c === ',') {
      out.push({ t: c, v: c } as Tok);
      i++;
    } else if (c === '=' || c === '!' || c === '>' || c === '<') {
      const two = s.slice(i, i + 2);
      if (two === '==' || two === '!=') {
        out.push({ t: 'op', v: two });
        i += 2;
      } else {
        out.push({ t: 'op', v: c });
        i++;
      }
    } else {
      let j = i;
      while (j < s.length && !' \t\n\r(),=!<>'.includes(s[j])) j++;
      const word = s.slice(i, j);
      if (word === 'in' || word === 'notin') out.push({ t: 'op', v: word });
      else out.push({ t: 'id', v: word });
      i = j;
    }
  }
  out.push({ t: 'end', v: '' });
  return out;
}

/**
 * `labels.Parse`: the string form (`app=web,tier!=db,env in (a,b),!legacy`). Returns the parsed
 * selector, or `{error}` with upstream-style text (`found 'x', expected: …`, or
 * `unable to parse requirement: …` for an invalid key or value).
 */
export function parseLabelSelector(input: string): ParsedLabelSelector | { error: string } {
  const toks = lex(input);
  if (typeof toks === 'string') return { error: toks };
  let p = 0;
  const reqs: LabelRequirement[] = [];
  // Structural errors are reported as the parser's own text; requirement validation errors are
  // wrapped like `NewRequirement` failures ("unable to parse requirement: …").
  const err = (msg: string) => ({ error: msg });
  const reqErr = (msg: string) => ({ error: `unable to parse requirement: ${msg}` });
  if (toks[0].t === 'end') return EVERYTHING;
  for (;;) {
    let tok = toks[p];
    let op: LabelOperator;
    let key: string;
    let values: string[] = [];
    if (tok.t === 'op' && tok.v === '!') {
      p++;
      tok = toks[p];
      if (tok.t !== 'id') return err(`found '${tok.v}', expected: identifier after '!'`);
      key = tok.v;
      op = '!';
      p++;
    } else {
      if (tok.t !== 'id') return err(`found '${tok.v}', expected: !, identifier, or 'end of string'`);
      key = tok.v;
      p++;
      tok = toks[p];
      if (tok.t === 'end' || tok.t === ',') {
        op = 'exists';
      } else if (tok.t === 'op' && (tok.v === '=' || tok.v === '==' || tok.v === '!=' || tok.v === '>' || tok.v === '<')) {
        op = tok.v === '>' ? 'gt' : tok.v === '<' ? 'lt' : tok.v;
        p++;
        const vt = toks[p];
        if (vt.t === 'id') {
          values = [vt.v];
          p++;
        } else if (vt.t === 'end' || vt.t === ',') {
          values = [''];
        } else {
          return err(`found '${vt.v}', expected: identifier`);
        }
        if ((op === 'gt' || op === 'lt') && !/^-?\d+$/.test(values[0])) {
          return reqErr(`for 'Gt', 'Lt' operators, the value must be an integer`);
        }
      } else if (tok.t === 'op' && (tok.v === 'in' || tok.v === 'notin')) {
        op = tok.v;
        p++;
        if (toks[p].t !== '(') return err(`found '${toks[p].v}', expected: '('`);
        p++;
        const set = new Set<string>();
        for (;;) {
          const vt = toks[p];
          if (vt.t === 'id') {
            set.add(vt.v);
            p++;
          } else if (vt.t === ',' || vt.t === ')') {
            set.add('');
          } else {
            return err(`found '${vt.v}', expected: ',', ')' or identifier`);
          }
          const nt = toks[p];
          if (nt.t === ',') {
            p++;
            continue;
          }
          if (nt.t === ')') {
            p++;
            break;
          }
          return err(`found '${nt.v}', expected: ',' or ')'`);
        }
        values = [...set].sort();
      } else {
        return err(`found '${tok.v}', expected: in, notin, =, ==, !=, gt, lt`);
      }
    }
    const kerr = validateLabelKey(key);
    if (kerr) return reqErr(`key: Invalid value: ${JSON.stringify(key)}: ${kerr}`);
    for (const v of values) {
      if (op === 'gt' || op === 'lt') continue;
      const verr = validateLabelValue(v);
      if (verr) return reqErr(`values[0][${key}]: Invalid value: ${JSON.stringify(v)}: ${verr}`);
    }
    reqs.push({ key, operator: op, values });
    const sep = toks[p];
    if (sep.t === 'end') break;
    if (sep.t !== ',') return err(`found '${sep.v}', expected: ',' or 'end of string'`);
    p++;
  }
  return { requirements: sortRequirements(reqs) };
}

/**
 * `metav1.LabelSelectorAsSelector`: an absent selector matches nothing, an empty one everything.
 * Returns `{error}` for an invalid operator or missing values (validation normally prevents it).
 */
export function labelSelectorAsSelector(ls: LabelSelector | undefined | null): ParsedLabelSelector | { error: string } {
  if (!ls) return { requirements: [], nothing: true };
  const reqs: LabelRequirement[] = [];
  for (const [k, v] of Object.entries(ls.matchLabels ?? {})) reqs.push({ key: k, operator: '=', values: [v] });
  for (const e of ls.matchExpressions ?? []) {
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (!e.values?.length) return { error: `for 'in', 'notin' operators, values set can't be empty` };
        reqs.push({ key: e.key, operator: e.operator === 'In' ? 'in' : 'notin', values: [...new Set(e.values)].sort() });
        break;
      case 'Exists':
        reqs.push({ key: e.key, operator: 'exists', values: [] });
        break;
      case 'DoesNotExist':
        reqs.push({ key: e.key, operator: '!', values: [] });
        break;
      default:
        return { error: `${JSON.stringify(e.operator)} is not a valid pod selector operator` };
    }
  }
  return { requirements: sortRequirements(reqs) };
}

/** `metav1.FormatLabelSelector`: `app=web`, `<none>` for an empty selector, `<error>` when invalid. */
export function formatLabelSelector(ls: LabelSelector | undefined | null): string {
  const sel = labelSelectorAsSelector(ls);
  if ('error' in sel) return '<error>';
  const s = labelSelectorString(sel);
  return s.length === 0 ? '<none>' : s;
}
