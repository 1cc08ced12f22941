/**
 * The endpoint's instance counts from SageMaker's DescribeEndpoint: the variant's
 * CurrentInstanceCount (in service) and DesiredInstanceCount, and whether a blue/green
 * deployment's new fleet is baking (its pending deployment's variant status says so).
 */
import { DescribeEndpointCommand, type SageMakerClient } from "@aws-sdk/client-sagemaker";
import { EndpointUnavailableError } from "../domain/errors.ts";
import type { EndpointFleet, FleetCounts } from "../domain/fleet-reading.ts";

/** One real-time endpoint's fleet. */
export class SageMakerFleet implements EndpointFleet {
  constructor(
    private readonly client: SageMakerClient,
    private readonly endpointName: string,
  ) {}

  async counts(): Promise<FleetCounts> {
    const described = await this.client
      .send(new DescribeEndpointCommand({ EndpointName: this.endpointName }))
      .catch((error: unknown) => {
        throw new EndpointUnavailableError(
          `could not describe endpoint ${this.endpointName}: ${(error as Error).message}`,
          { cause: error },
        );
      });
    const variants = described.ProductionVariants ?? [];
    const pending = described.PendingDeploymentSummary?.ProductionVariants ?? [];
    return {
      inService: variants.reduce((sum, v) => sum + (v.CurrentInstanceCount ?? 0), 0),
      desired: variants.reduce((sum, v) => sum + (v.DesiredInstanceCount ?? v.CurrentInstanceCount ?? 0), 0),
      baking: pending.some((v) => (v.VariantStatus ?? []).some((s) => s.Status === "Baking")),
    };
  }
}
