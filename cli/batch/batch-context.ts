/**
 * Where `decide batch` finds its batches: the decisions table, and the pipeline bucket (deployed)
 * or the local mode's folder, from flags or the variables `npm start` exports.
 */

import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import { START_HINT, settingFrom, UsageError } from "../args.ts";
import { awsOptions, batchFiles, batchStore } from "../aws.ts";
import type { CommandEnv } from "../command.ts";

/** The flags every batch command takes. */
export interface Flags {
  table?: string | undefined;
  bucket?: string | undefined;
  folder?: string | undefined;
  "queue-url"?: string | undefined;
  region?: string | undefined;
  profile?: string | undefined;
}

/** The table and the bucket or folder, as the flags or `env` name them. */
export interface BatchWhere {
  readonly table: string;
  readonly bucket: string | undefined;
  readonly folder: string | undefined;
  readonly aws: { readonly region?: string | undefined; readonly profile?: string | undefined };
}

/** Where the batches are: the flags, else the variables `npm start` exports (in `env`). */
export function batchWhere(values: Flags, env: CommandEnv): BatchWhere {
  const table = settingFrom("table", values.table, FUNCTION_ENV.DECISIONS_TABLE, env);
  const bucket = values.bucket || env[FUNCTION_ENV.BATCH_BUCKET];
  const folder = values.folder || env[FUNCTION_ENV.BATCH_FOLDER];
  if (!bucket && !folder)
    throw new UsageError(
      `no batch files: give --bucket NAME (deployed) or --folder DIR (local); BATCH_BUCKET and BATCH_FOLDER are not set: ${START_HINT}`,
    );
  return { table, bucket, folder, aws: { region: values.region, profile: values.profile } };
}

/** The batch store and files `where` names. */
export function context(where: BatchWhere) {
  const aws = awsOptions(where.aws);
  const { table, bucket, folder } = where;
  return {
    aws,
    table,
    bucket,
    folder,
    batches: batchStore(table, aws),
    objects: batchFiles({ bucket, folder }, aws),
  };
}

/** What {@link context} opens. */
export type BatchContext = ReturnType<typeof context>;
