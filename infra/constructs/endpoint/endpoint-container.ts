/**
 * What the real-time (or serverless) and the async decision endpoints share: the one image (a
 * prebuilt `-c imageUri`, or the Dockerfile built as an asset, CUDA for a GPU instance type), the
 * endpoint's own log group with its retention, and the execution role that pulls that image,
 * reads the model archive and writes those logs. Created in the endpoint construct's own scope,
 * so the resources keep their ids.
 */
import { fileURLToPath } from "node:url";
import * as ecrAssets from "aws-cdk-lib/aws-ecr-assets";
import { Platform } from "aws-cdk-lib/aws-ecr-assets";
import type * as iam from "aws-cdk-lib/aws-iam";
import type * as logs from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";
import { endpointLogGroupName, endpointLogRetention } from "./endpoint-log-retention.ts";
import { ecrRepositoryArn, endpointRole } from "./endpoint-role.ts";

/** What {@link endpointContainer} needs. */
export interface EndpointContainerProps {
  /** Bucket and key of the model archive. */
  readonly modelBucket: string;
  readonly modelKey: string;
  /** A prebuilt image instead of building the Dockerfile. */
  readonly imageUri?: string | undefined;
  /** Whether the instance type has a GPU (the CUDA image). */
  readonly gpu: boolean;
  /** The endpoint's name; undefined where CloudFormation names it (serverless: its logs stay under `/aws/sagemaker/Endpoints/*`). */
  readonly name: string | undefined;
}

/** The image URI, the execution role, and the log retention (a named endpoint only). */
export interface EndpointContainer {
  readonly image: string;
  readonly role: iam.Role;
  /** The endpoint's log group and its retention; the endpoint depends on it, so it exists before SageMaker logs. */
  readonly logs: logs.LogRetention | undefined;
}

/** The image, log retention and role of a decision endpoint, in `scope` (ids `Image`, `Role` and the retention's). */
export function endpointContainer(scope: Construct, props: EndpointContainerProps): EndpointContainer {
  const asset = props.imageUri
    ? undefined
    : new ecrAssets.DockerImageAsset(scope, "Image", {
        directory: fileURLToPath(new URL("../../..", import.meta.url)),
        file: props.gpu ? "endpoint/Dockerfile.gpu" : "endpoint/Dockerfile",
        platform: Platform.LINUX_AMD64,
        exclude: ["node_modules", ".cache", "cdk.out", ".git", "test-output"],
      });
  const image = props.imageUri ?? asset!.imageUri;
  const logs = props.name ? endpointLogRetention(scope, props.name) : undefined;
  const role = endpointRole(
    scope,
    {
      modelBucket: props.modelBucket,
      modelKey: props.modelKey,
      logGroupName: props.name ? endpointLogGroupName(props.name) : undefined,
    },
    asset ? asset.repository.repositoryArn : ecrRepositoryArn(image),
  );
  return { image, role, logs };
}
