/**
 * An event source mapping's `MaximumConcurrency`, read with GetEventSourceMapping and set with
 * UpdateEventSourceMapping (only its scaling configuration changes; the mapping keeps polling).
 */
import {
  GetEventSourceMappingCommand,
  type LambdaClient,
  UpdateEventSourceMappingCommand,
} from "@aws-sdk/client-lambda";
import type { MappingConcurrency } from "../domain/fleet-reading.ts";

/** The mapping with identifier `uuid`. */
export class LambdaMappingConcurrency implements MappingConcurrency {
  constructor(
    private readonly client: LambdaClient,
    private readonly uuid: string,
  ) {}

  async current(): Promise<number | undefined> {
    const mapping = await this.client.send(new GetEventSourceMappingCommand({ UUID: this.uuid }));
    return mapping.ScalingConfig?.MaximumConcurrency;
  }

  async set(maximum: number): Promise<void> {
    await this.client.send(
      new UpdateEventSourceMappingCommand({
        UUID: this.uuid,
        ScalingConfig: { MaximumConcurrency: maximum },
      }),
    );
  }
}
