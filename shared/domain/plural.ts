/**
 * Counts in words: "1 line", "2 lines", "1,200 labels". One place, so that no message says
 * "1 audit samples".
 */

/** `count` and its noun, singular for one (`plural` when the noun does not just take an s). */
export function counted(count: number, noun: string, plural = `${noun}s`): string {
  return `${count.toLocaleString("en-US")} ${count === 1 ? noun : plural}`;
}
