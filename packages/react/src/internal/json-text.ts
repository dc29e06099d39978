/**
 * `value` as JSON text to compare options by, a Headers object by its entries: JSON shows one as
 * `{}`, so a changed token compared equal. (Its entries come sorted and lower-cased.)
 */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, (_, v) => (v instanceof Headers ? [...v] : v));
}
