/**
 * Small pure helpers: `apiequality.Semantic.DeepEqual` for JSON-shaped values (an absent key and
 * an `undefined` value are equal, as Go's zero values would be), and resource quantity parsing
 * (`resource.Quantity` for the cpu / memory / pods requests admission compares).
 */

/** Structural equality of JSON-like values; `undefined` properties count as absent. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let na = 0;
  for (const k in ao) {
    if (ao[k] === undefined) continue;
    na++;
    if (!deepEqual(ao[k], bo[k])) return false;
  }
  let nb = 0;
  for (const k in bo) if (bo[k] !== undefined) nb++;
  return na === nb;
}

const SUFFIX: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
};

/** Parses a `resource.Quantity` string ("100m", "1.5", "128Mi") to a number; NaN if malformed. */
export function parseQuantity(q: string | undefined): number {
  if (q === undefined) return 0;
  const m = /^([0-9.]+)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(q.trim());
  if (!m) return NaN;
  return Number(m[1]) * SUFFIX[m[2] ?? ''];
}
