/**
 * "Did you mean": the known name closest to a mistyped one.
 */

/** The candidate closest to `name`, when it is a likely typo. */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  const distance = (a: string, b: string): number => {
    const row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      let previous = row[0]!;
      row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const current = row[j]!;
        row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
        previous = current;
      }
    }
    return row[b.length]!;
  };
  const [best] = candidates
    .map((command) => ({ command, d: distance(name, command) }))
    .sort((x, y) => x.d - y.d);
  return best && best.d <= Math.max(2, Math.floor(name.length / 3)) ? best.command : undefined;
}
