/**
 * X-Ray tracing for every function (Powertools Tracer): one tracer per process, which the SDK
 * clients are wrapped with (so traces show each call to SageMaker, DynamoDB, EventBridge and
 * SQS) and which each handler's middy chain opens a segment with. Outside Lambda it is off.
 */
import { Tracer } from "@aws-lambda-powertools/tracer";

/** The process's tracer; its service name comes from POWERTOOLS_SERVICE_NAME. */
export const tracer = new Tracer();
