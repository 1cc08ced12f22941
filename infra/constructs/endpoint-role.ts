/**
 * The decision endpoint's execution role: SageMaker reads the one model archive, pulls from the
 * one image repository in use (when the image is in ECR), and writes its logs.
 */
import { ArnFormat, Stack } from "aws-cdk-lib";
import * as iam from "aws-cdk-lib/aws-iam";
import { NagSuppressions } from "cdk-nag";
import type { Construct } from "constructs";

/** The role SageMaker runs the model under: the model archive, the one image repository, its logs. */
export function endpointRole(
  scope: Construct,
  props: { readonly modelBucket: string; readonly modelKey: string },
  repositoryArn: string | undefined,
): iam.Role {
  const role = new iam.Role(scope, "Role", {
    assumedBy: new iam.ServicePrincipal("sagemaker.amazonaws.com"),
    description: "Lets SageMaker pull the decision image and read the model archive",
  });
  role.addToPolicy(
    new iam.PolicyStatement({
      actions: ["s3:GetObject"],
      resources: [`arn:aws:s3:::${props.modelBucket}/${props.modelKey}`],
    }),
  );
  if (repositoryArn) {
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"],
        resources: [repositoryArn],
      }),
    );
    role.addToPolicy(new iam.PolicyStatement({ actions: ["ecr:GetAuthorizationToken"], resources: ["*"] }));
  }
  role.addToPolicy(
    new iam.PolicyStatement({
      actions: ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
      resources: [
        Stack.of(scope).formatArn({
          service: "logs",
          resource: "log-group",
          resourceName: "/aws/sagemaker/*",
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      ],
    }),
  );
  NagSuppressions.addResourceSuppressions(
    role,
    [
      {
        id: "AwsSolutions-IAM5",
        reason:
          "ecr:GetAuthorizationToken has no resource-level permissions; image pulls are limited to the one repository in use and logs to /aws/sagemaker/*",
      },
    ],
    true,
  );
  return role;
}
