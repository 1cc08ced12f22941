/**
 * The decision endpoint contract suite on all four endpoint clients, against one real endpoint on
 * the tiny model: the SageMaker runtime client through AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME (the
 * `/endpoints/{name}/invocations` path, as the pipeline reaches it), plain HTTP (`/v1/systemone`),
 * batching (`{"batch": [...]}` through the runtime client), and the scorer in process. The
 * reference is the in-process endpoint on the server's own scorer.
 */
import type { SageMakerRuntimeClient } from "@aws-sdk/client-sagemaker-runtime";
import { afterAll, beforeAll } from "vitest";
import { InProcessDecisionEndpoint } from "../../endpoint/server/in-process-endpoint.ts";
import type { RunningServer } from "../../endpoint/server/server.ts";
import { BatchingDecisionEndpoint } from "../../shared/adapters/batching-endpoint.ts";
import { SageMakerDecisionEndpoint } from "../../shared/adapters/decision-endpoint.ts";
import { HttpDecisionEndpoint } from "../../shared/adapters/http-decision-endpoint.ts";
import { ENDPOINT_BATCHING, ENDPOINT_CALLS } from "../../shared/domain/topology.ts";
import { decisionEndpointContract } from "../helpers/decision-endpoint.contract.ts";
import { runtimeClientFor, startTestEndpoint } from "../helpers/endpoint.ts";

let server: RunningServer;
let runtime: SageMakerRuntimeClient;
let inProcess: InProcessDecisionEndpoint;
/** One try: a failure here is a contract failure, not something to retry past. */
const calls = { ...ENDPOINT_CALLS, attempts: 1 };

beforeAll(async () => {
  server = await startTestEndpoint();
  runtime = runtimeClientFor(server);
  inProcess = new InProcessDecisionEndpoint(server.service.scorer!, server.service.modelName!);
}, 120_000);
afterAll(async () => {
  delete process.env.AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME;
  runtime.destroy();
  await server.close();
});

const reference = () => inProcess;
decisionEndpointContract(
  "SageMaker runtime",
  () => new SageMakerDecisionEndpoint(runtime, "decision-endpoint", calls),
  reference,
);
decisionEndpointContract("HTTP", () => new HttpDecisionEndpoint(server.url, calls), reference);
decisionEndpointContract(
  "batching",
  () => new BatchingDecisionEndpoint(runtime, "decision-endpoint", { ...calls, ...ENDPOINT_BATCHING }),
  reference,
);
decisionEndpointContract("in process", () => inProcess, reference);
