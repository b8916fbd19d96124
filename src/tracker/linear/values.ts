/** Reading values out of Linear's JSON answers, where any field may be missing or of another type. */

/** The value when it is a string, else ''. */
export function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The value when it is a plain object, else null. */
export function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}
