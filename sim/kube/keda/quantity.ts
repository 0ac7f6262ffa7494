/**
 * Metric values as the HPA carries them: integers in thousandths ("milli-units"), printed as Kubernetes prints a
 * DecimalSI `resource.Quantity` (k8s.io/apimachinery/pkg/api/resource, `Quantity.String()`), which is what
 * `kubectl get hpa` shows in TARGETS.
 */

/** DecimalSI suffixes by power-of-ten exponent. */
const SUFFIXES = new Map<number, string>([
  [-3, 'm'],
  [0, ''],
  [3, 'k'],
  [6, 'M'],
  [9, 'G'],
  [12, 'T'],
  [15, 'P'],
  [18, 'E'],
]);

/**
 * A value in milli-units, as KEDA hands metric values and thresholds to the HPA (`resource.NewMilliQuantity(value *
 * 1000)`). Rounded rather than truncated so that 2.3 stays 2300m (a float product can land just below).
 */
export function toMilli(value: number): number {
  return Math.round(value * 1000);
}

/**
 * Formats milli-units in the canonical DecimalSI form: the largest exponent (a multiple of 3) that keeps the mantissa
 * an integer. 25000 → "25", 12500 → "12500m", 2000000 → "2k", 0 → "0".
 */
export function formatMilliQuantity(milli: number): string {
  let mantissa = Math.round(milli);
  if (mantissa === 0) return '0';
  let exponent = -3;
  while (mantissa % 1000 === 0 && exponent < 18) {
    mantissa /= 1000;
    exponent += 3;
  }
  return `${mantissa}${SUFFIXES.get(exponent) ?? ''}`;
}

/** A number for humans in reasons: at most three decimals, no trailing zeros. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  return String(Math.round(value * 1000) / 1000);
}
