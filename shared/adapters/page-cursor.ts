/**
 * The cursor of a paged list: the sort key of the last entry a page covered, as opaque text. Both
 * decision stores use it, so a list continues exactly where its previous page stopped whichever
 * of its partitions the next entry comes from.
 */

/** The cursor that continues a list after `sortKey`. */
export function encodeCursor(sortKey: string): string {
  return Buffer.from(JSON.stringify({ after: sortKey })).toString("base64url");
}

/** The sort key a cursor continues after; a RangeError for anything that is not such a cursor. */
export function decodeCursor(cursor: string): string {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { after?: unknown };
    if (value && typeof value.after === "string" && value.after.length > 0) return value.after;
  } catch {
    // falls through to the error below
  }
  throw new RangeError(`cursor: "${cursor.slice(0, 40)}" is not a page cursor of this list`);
}
