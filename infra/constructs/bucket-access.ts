/**
 * Exactly the S3 actions a function's code calls on the pipeline bucket, under one prefix: the
 * bucket's `grantRead`/`grantPut` would also give `s3:List*` and `s3:GetBucket*` on the whole
 * bucket and the object-lock actions (legal hold, retention), which no function uses. Reads are
 * GetObject; writes PutObject (single and multipart parts) and AbortMultipartUpload; a listing
 * is ListBucket limited to the prefix by the `s3:prefix` condition.
 */
import * as iam from "aws-cdk-lib/aws-iam";
import type * as s3 from "aws-cdk-lib/aws-s3";

/** What a function does under the prefix. */
export interface ObjectAccess {
  readonly read?: boolean;
  readonly write?: boolean;
  readonly list?: boolean;
}

/** Grants `grantee` `access` to the objects of `bucket` under `prefix`. */
export function grantObjects(
  bucket: s3.IBucket,
  grantee: iam.IGrantable,
  prefix: string,
  access: ObjectAccess,
): void {
  const objects = bucket.arnForObjects(`${prefix}*`);
  const statements: iam.PolicyStatement[] = [];
  if (access.read)
    statements.push(new iam.PolicyStatement({ actions: ["s3:GetObject"], resources: [objects] }));
  if (access.write)
    statements.push(
      new iam.PolicyStatement({ actions: ["s3:PutObject", "s3:AbortMultipartUpload"], resources: [objects] }),
    );
  if (access.list)
    statements.push(
      new iam.PolicyStatement({
        actions: ["s3:ListBucket"],
        resources: [bucket.bucketArn],
        conditions: { StringLike: { "s3:prefix": [`${prefix}*`] } },
      }),
    );
  for (const statement of statements) grantee.grantPrincipal.addToPrincipalPolicy(statement);
}
