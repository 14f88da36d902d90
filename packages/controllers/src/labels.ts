/**
 * Label selectors: apimachinery `metav1.LabelSelectorAsSelector` (`pkg/apis/meta/v1/helpers.go`)
 * and `labels.Selector.Matches`. A nil selector matches nothing, an empty one everything;
 * matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist) are ANDed.
 */
import type { LabelSelector } from '@podsim/api';

export type Labels = Readonly<Record<string, string>> | undefined;

/** A compiled selector. */
export interface Selector {
  matches(labels: Labels): boolean;
  /** True for the empty selector `{}` (matches everything). */
  readonly empty: boolean;
}

const NOTHING: Selector = { matches: () => false, empty: false };
const EVERYTHING: Selector = { matches: () => true, empty: true };

/**
 * Compiles a `LabelSelector`. Returns a string error (the `Invalid` message) for operators that
 * need values but have none, or unknown operators; callers log it and skip the object, like
 * upstream controllers do.
 */
export function labelSelectorAsSelector(sel: LabelSelector | undefined): Selector | string {
  if (sel === undefined || sel === null) return NOTHING;
  const ml = sel.matchLabels ? Object.entries(sel.matchLabels) : [];
  const me = sel.matchExpressions ?? [];
  if (ml.length === 0 && me.length === 0) return EVERYTHING;
  for (const r of me) {
    if ((r.operator === 'In' || r.operator === 'NotIn') && (!r.values || r.values.length === 0)) {
      return `values: Invalid value: ${JSON.stringify(r.values ?? [])}: for 'in', 'notin' operators, values set can't be empty`;
    }
    if (r.operator !== 'In' && r.operator !== 'NotIn' && r.operator !== 'Exists' && r.operator !== 'DoesNotExist') {
      return `"${String(r.operator)}" is not a valid pod selector operator`;
    }
  }
  return {
    empty: false,
    matches(labels: Labels): boolean {
      for (const [k, v] of ml) if (labels?.[k] !== v) return false;
      for (const r of me) {
        const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
        const val = has ? labels![r.key] : undefined;
        switch (r.operator) {
          case 'In':
            if (!has || !r.values!.includes(val!)) return false;
            break;
          case 'NotIn':
            if (has && r.values!.includes(val!)) return false;
            break;
          case 'Exists':
            if (!has) return false;
            break;
          case 'DoesNotExist':
            if (has) return false;
            break;
        }
      }
      return true;
    },
  };
}

/** Convenience: compile-and-match, treating an invalid selector as matching nothing. */
export function selectorMatches(sel: LabelSelector | undefined, labels: Labels): boolean {
  const s = labelSelectorAsSelector(sel);
  return typeof s !== 'string' && s.matches(labels);
}

/** `labels.SelectorFromSet(set).Matches`: every key of `set` is present with the same value. */
export function setMatches(set: Labels, labels: Labels): boolean {
  if (!set) return true;
  for (const key of Object.keys(set)) if (labels?.[key] !== set[key]) return false;
  return true;
}
