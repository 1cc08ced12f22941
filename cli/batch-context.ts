/**
 * Where `decide batch` finds its batches: the decisions table, and the pipeline bucket (deployed)
 * or the local mode's folder, from flags or the variables `npm start` exports.
 */
import { START_HINT, settingFrom, UsageError } from "./args.ts";
import { awsOptions, batchFiles, batchStore } from "./aws.ts";

/** The flags every batch command takes. */
export interface Flags {
  table?: string | undefined;
  bucket?: string | undefined;
  folder?: string | undefined;
  "queue-url"?: string | undefined;
  region?: string | undefined;
  profile?: string | undefined;
}

/** The batch store and files the flags (or the variables `npm start` exports) name. */
export function context(values: Flags) {
  const aws = awsOptions(values);
  const table = settingFrom("table", values.table, "DECISIONS_TABLE");
  const bucket = values.bucket || process.env.BATCH_BUCKET;
  const folder = values.folder || process.env.BATCH_FOLDER;
  if (!bucket && !folder)
    throw new UsageError(
      `no batch files: give --bucket NAME (deployed) or --folder DIR (local); BATCH_BUCKET and BATCH_FOLDER are not set: ${START_HINT}`,
    );
  return {
    aws,
    table,
    bucket,
    folder,
    batches: batchStore(table, aws),
    objects: batchFiles({ bucket, folder }, aws),
  };
}
