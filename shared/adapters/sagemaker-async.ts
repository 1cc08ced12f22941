/**
 * SageMaker's InvokeEndpointAsync: queues an object already in S3 on an async endpoint and
 * answers at once with the inference id and where the answers will be written; nothing waits on
 * the model. The local mode points the client at its stand-in (`infra/local/async-endpoint.ts`)
 * with `AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME`. A refusal (throttling, an unknown endpoint, the
 * service unreachable) is an {@link EndpointUnavailableError}: the submit step reports the group's
 * messages back, and they come again.
 */
import { InvokeEndpointAsyncCommand, type SageMakerRuntimeClient } from "@aws-sdk/client-sagemaker-runtime";
import type { AsyncInvocation, AsyncInvoked, InvokesAsync } from "../domain/async/async-objects.ts";
import { EndpointUnavailableError } from "../domain/errors.ts";
import { ASYNC_LANE } from "../domain/topology.ts";

/** Invokes async endpoints through the SageMaker runtime client. */
export class SageMakerAsyncInvoker implements InvokesAsync {
  constructor(private readonly client: SageMakerRuntimeClient) {}

  async invoke(invocation: AsyncInvocation): Promise<AsyncInvoked> {
    try {
      const output = await this.client.send(
        new InvokeEndpointAsyncCommand({
          EndpointName: invocation.endpointName,
          InputLocation: invocation.inputLocation,
          InferenceId: invocation.inferenceId,
          ContentType: ASYNC_LANE.contentType,
          Accept: ASYNC_LANE.contentType,
          InvocationTimeoutSeconds: ASYNC_LANE.invocationTimeoutSeconds,
          RequestTTLSeconds: ASYNC_LANE.requestTtlSeconds,
        }),
      );
      if (!output.InferenceId || !output.OutputLocation)
        throw new Error("the answer named no inference id or output location");
      return { inferenceId: output.InferenceId, outputLocation: output.OutputLocation };
    } catch (error) {
      throw new EndpointUnavailableError(
        `InvokeEndpointAsync on ${invocation.endpointName} failed: ${(error as Error).name}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
}
