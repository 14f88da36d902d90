/**
 * `resource.Quantity` parsing (apimachinery v0.22.8 `pkg/api/resource/quantity.go`), reduced to
 * what the scheduler's NodeResourcesFit and the kubelet's admission compare: CPU in millicores
 * (`MilliValue`, rounded up) and memory or counts in base units (`Value`, rounded up). Decimal
 * (k, M, G, T, P, E, m), binary (Ki … Ei) and exponent (1e3) forms are accepted; anything else
 * yields `undefined` (each caller decides what an unset or malformed quantity means).
 */

const SUFFIX: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
  Pi: 1024 ** 5,
  Ei: 1024 ** 6,
};

const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei))?$/;

/** The quantity as a float in base units, or undefined when malformed. */
export function parseQuantity(q: string | number | undefined): number | undefined {
  if (q === undefined) return undefined;
  if (typeof q === 'number') return Number.isFinite(q) ? q : undefined;
  const m = QUANTITY.exec(q.trim());
  if (!m) return undefined;
  const base = Number(m[1]);
  if (m[2]) return base * 10 ** Number(m[2].slice(1));
  return base * SUFFIX[m[3] ?? ''];
}

/** `Quantity.MilliValue()`: millicores for CPU (rounded up). */
export function quantityMilliValue(q: string | number | undefined): number | undefined {
  const v = parseQuantity(q);
  return v === undefined ? undefined : Math.ceil(Math.round(v * 1e9) / 1e6);
}

/** `Quantity.Value()`: base units (bytes, counts), rounded up. */
export function quantityValue(q: string | number | undefined): number | undefined {
  const v = parseQuantity(q);
  return v === undefined ? undefined : Math.ceil(Math.round(v * 1e6) / 1e6);
}
