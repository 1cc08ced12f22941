/**
 * Test reads of an object store: an object's whole text (tests read small files, so holding one is
 * fine; the product streams).
 */
import type { ObjectStore } from "../../shared/domain/object-store.ts";

/** The object's text; empty when it is absent. */
export async function objectText(objects: ObjectStore, key: string): Promise<string> {
  const body = await objects.read(key);
  if (!body) return "";
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}
