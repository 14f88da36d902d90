/**
 * Field selectors: k8s.io/apimachinery v0.22.8 `pkg/fields/selector.go` (`ParseSelector`: terms
 * `k=v`, `k==v`, `k!=v` joined by `,`, `\` escapes) and the per-resource selectable fields and
 * field-label conversions of kubernetes v1.22 (`pkg/registry/core/pod/strategy.go`
 * `ToSelectableFields`, `pkg/apis/core/v1/conversion.go` `AddFieldLabelConversionsFor*`,
 * event/node/namespace/replicaset strategies). A missing field reads as "" (fields.Set.Get).
 */
import type { Event, KubeObject, Node, Namespace, Pod, ReplicaSet } from '@podsim/api';

export interface FieldTerm {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

/** A parsed field selector: terms ANDed. */
export interface ParsedFieldSelector {
  readonly terms: readonly FieldTerm[];
}

export const ALL_FIELDS: ParsedFieldSelector = { terms: [] };

function unescape(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

/** Splits on an unescaped separator. */
function splitTerms(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === ',') {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

/**
 * `fields.ParseSelector`. Returns `{error}` with upstream's text
 * (`invalid selector: '<s>'; can't understand '<term>'`).
 */
export function parseFieldSelector(input: string): ParsedFieldSelector | { error: string } {
  if (input.trim() === '') return ALL_FIELDS;
  const terms: FieldTerm[] = [];
  for (const part of splitTerms(input)) {
    if (part === '') continue;
    let idx = -1;
    let op: FieldTerm['operator'] = '=';
    let opLen = 1;
    for (let i = 0; i < part.length; i++) {
      if (part[i] === '\\') {
        i++;
        continue;
      }
      if (part.startsWith('!=', i)) {
        idx = i;
        op = '!=';
        opLen = 2;
        break;
      }
      if (part.startsWith('==', i)) {
        idx = i;
        opLen = 2;
        break;
      }
      if (part[i] === '=') {
        idx = i;
        break;
      }
    }
    if (idx < 0) return { error: `invalid selector: '${input}'; can't understand '${part}'` };
    terms.push({ field: unescape(part.slice(0, idx).trim()), operator: op, value: unescape(part.slice(idx + opLen)) });
  }
  return { terms };
}

/** `Selector.Matches(fields.Set)`. */
export function fieldsMatch(sel: ParsedFieldSelector, fields: Readonly<Record<string, string>>): boolean {
  for (const t of sel.terms) {
    const v = fields[t.field] ?? '';
    if (t.operator === '=' ? v !== t.value : v === t.value) return false;
  }
  return true;
}

/** `fieldSelector.String()` (for traces). */
export function fieldSelectorString(sel: ParsedFieldSelector): string {
  return sel.terms.map((t) => `${t.field}${t.operator}${t.value}`).join(',');
}

/** Field labels each resource accepts (the `AddFieldLabelConversionFunc` allow-lists). */
export const SUPPORTED_FIELD_LABELS: Readonly<Record<string, readonly string[]>> = {
  pods: [
    'metadata.name',
    'metadata.namespace',
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'status.phase',
    'status.podIP',
    'status.podIPs',
    'status.nominatedNodeName',
  ],
  nodes: ['metadata.name', 'spec.unschedulable'],
  namespaces: ['metadata.name', 'status.phase'],
  events: [
    'metadata.name',
    'metadata.namespace',
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
  replicasets: ['metadata.name', 'metadata.namespace', 'status.replicas'],
  deployments: ['metadata.name', 'metadata.namespace'],
};

/**
 * Checks every term's field against the resource's allow-list (`ConvertFieldLabel`); returns
 * upstream's `field label not supported: <label>` for the first unsupported one.
 */
export function checkFieldLabels(resource: string, sel: ParsedFieldSelector): string | undefined {
  const ok = SUPPORTED_FIELD_LABELS[resource] ?? ['metadata.name', 'metadata.namespace'];
  for (const t of sel.terms) if (!ok.includes(t.field)) return `field label not supported: ${t.field}`;
  return undefined;
}

/** The `fields.Set` an object is matched against (`ToSelectableFields` per resource). */
export function selectableFields(resource: string, obj: KubeObject): Record<string, string> {
  const m = obj.metadata;
  const base: Record<string, string> = { 'metadata.name': m.name ?? '' };
  if (m.namespace !== undefined) base['metadata.namespace'] = m.namespace;
  switch (resource) {
    case 'pods': {
      const p = obj as Pod;
      base['spec.nodeName'] = p.spec?.nodeName ?? '';
      base['spec.restartPolicy'] = p.spec?.restartPolicy ?? '';
      base['spec.schedulerName'] = p.spec?.schedulerName ?? '';
      base['spec.serviceAccountName'] = p.spec?.serviceAccountName ?? '';
      base['status.phase'] = p.status?.phase ?? '';
      base['status.podIP'] = p.status?.podIPs?.[0]?.ip ?? '';
      base['status.nominatedNodeName'] = p.status?.nominatedNodeName ?? '';
      return base;
    }
    case 'nodes':
      base['spec.unschedulable'] = String((obj as Node).spec?.unschedulable ?? false);
      return base;
    case 'namespaces':
      base['status.phase'] = (obj as Namespace).status?.phase ?? '';
      return base;
    case 'events': {
      const e = obj as Event;
      const io = e.involvedObject ?? {};
      base['involvedObject.kind'] = io.kind ?? '';
      base['involvedObject.namespace'] = io.namespace ?? '';
      base['involvedObject.name'] = io.name ?? '';
      base['involvedObject.uid'] = io.uid ?? '';
      base['involvedObject.apiVersion'] = io.apiVersion ?? '';
      base['involvedObject.resourceVersion'] = io.resourceVersion ?? '';
      base['involvedObject.fieldPath'] = io.fieldPath ?? '';
      base['reason'] = e.reason ?? '';
      base['reportingComponent'] = e.reportingComponent ?? '';
      base['source'] = e.source?.component ?? '';
      base['type'] = e.type ?? '';
      return base;
    }
    case 'replicasets':
      base['status.replicas'] = String((obj as ReplicaSet).status?.replicas ?? 0);
      return base;
    default:
      return base;
  }
}

/**
 * The value an `=` term pins for `field`, if any (used to index watchers the way the watch
 * cache's `IndexerFuncs`/trigger functions do for `spec.nodeName`).
 */
export function equalityValue(sel: ParsedFieldSelector, field: string): string | undefined {
  for (const t of sel.terms) if (t.field === field && t.operator === '=') return t.value;
  return undefined;
}
