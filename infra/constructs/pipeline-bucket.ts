/**
 * The pipeline's bucket: calibration proposals under `calibration/` (and batch files as batch
 * jobs arrive, and the async lane's objects under `async/`). Encrypted, TLS only, no public
 * access, versioned, with lifecycle rules that keep old versions and unfinished uploads from
 * piling up and expire the async lane's objects after the queues' retention; its server access
 * logs go to a second bucket with the same protections.
 */
import { Duration, RemovalPolicy } from "aws-cdk-lib";
import * as s3 from "aws-cdk-lib/aws-s3";
import { NagSuppressions } from "cdk-nag";
import { Construct } from "constructs";
import { ASYNC_LANE, BUCKET, DECIDE_QUEUES } from "../../shared/domain/topology.ts";

/** The bucket and its access-log bucket. */
export class PipelineBucket extends Construct {
  public readonly bucket: s3.Bucket;
  public readonly accessLogs: s3.Bucket;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    // Log delivery through a bucket policy (not the legacy log-delivery ACL), whatever the app's flags.
    this.node.setContext("@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy", true);
    const protections = {
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: true,
      // Proposals and reports are the record of what was changed and why: kept when the stack
      // goes, but not left behind (empty) by a failed first create.
      removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
    } as const;
    this.accessLogs = new s3.Bucket(this, "AccessLogs", {
      ...protections,
      lifecycleRules: [
        { expiration: Duration.days(BUCKET.accessLogDays), noncurrentVersionExpiration: Duration.days(1) },
      ],
    });
    this.bucket = new s3.Bucket(this, "Bucket", {
      ...protections,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: "pipeline-bucket/",
      lifecycleRules: [
        {
          id: "old-versions-and-unfinished-uploads",
          noncurrentVersionExpiration: Duration.days(BUCKET.noncurrentVersionDays),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
        // The async lane's objects (every item twice, and its answers) are read only while a
        // message names them: a queued item, a notification or its dead letter, all gone after
        // the queues' retention; an object is open at most its tries' TTLs (under a day) before.
        {
          id: "async-lane-objects",
          prefix: ASYNC_LANE.prefixes.root,
          expiration: Duration.days(DECIDE_QUEUES.retentionDays + 1),
          noncurrentVersionExpiration: Duration.days(1),
        },
      ],
    });
    NagSuppressions.addResourceSuppressions(this.accessLogs, [
      { id: "AwsSolutions-S1", reason: "This is the access-log bucket: logging it into itself would loop" },
    ]);
  }
}
