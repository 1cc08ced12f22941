/**
 * What SageMaker Asynchronous Inference publishes when an invocation ends (to the success or the
 * error topic), as it reaches the result function's queue: the notification's JSON itself (the
 * subscription delivers raw messages), or wrapped in SNS's envelope when it does not. Read once
 * here, with an error naming what is wrong; the result step trusts nothing else about it.
 */
import { z } from "zod";

/** One invocation's end. */
export type AsyncNotification =
  | {
      readonly status: "completed";
      readonly inferenceId: string;
      readonly inputLocation: string;
      readonly outputLocation: string;
    }
  | {
      readonly status: "failed";
      readonly inferenceId: string;
      readonly inputLocation: string;
      /** SageMaker's reason ("ClientError: Received server error (500) from model ..."). */
      readonly reason: string;
    };

const location = z.string().regex(/^s3:\/\/[^/]+\/.+/, "must be an s3:// location of an object");

const notificationSchema = z.object({
  invocationStatus: z.enum(["Completed", "Failed"]),
  inferenceId: z.string().min(1),
  requestParameters: z.object({ inputLocation: location }),
  responseParameters: z.object({ outputLocation: location.optional() }).optional(),
  failureReason: z.string().optional(),
});

/** A notification the result step cannot read: never retried, since it will not read better later. */
export class AsyncNotificationError extends Error {
  override name = "AsyncNotificationError";
}

/** The notification in a queue message body. */
export function parseAsyncNotification(body: string): AsyncNotification {
  let value: unknown;
  try {
    value = JSON.parse(body);
    // Without raw message delivery, SNS wraps the message: {"Type": "Notification", "Message": "..."}.
    const envelope = value as { Type?: unknown; Message?: unknown };
    if (envelope?.Type === "Notification" && typeof envelope.Message === "string")
      value = JSON.parse(envelope.Message);
  } catch (error) {
    throw new AsyncNotificationError(`not JSON: ${(error as Error).message}`, { cause: error });
  }
  const parsed = notificationSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AsyncNotificationError(
      `not an async inference notification: ${issue.path.join(".")} ${issue.message}`,
    );
  }
  const n = parsed.data;
  const inputLocation = n.requestParameters.inputLocation;
  if (n.invocationStatus === "Failed")
    return {
      status: "failed",
      inferenceId: n.inferenceId,
      inputLocation,
      reason: n.failureReason ?? "no failure reason given",
    };
  const outputLocation = n.responseParameters?.outputLocation;
  if (!outputLocation)
    throw new AsyncNotificationError("a completed invocation without responseParameters.outputLocation");
  return { status: "completed", inferenceId: n.inferenceId, inputLocation, outputLocation };
}

/** The notification SageMaker publishes, for the local stand-in and tests (the fields this pipeline reads, and SageMaker's others). */
export function asyncNotificationBody(
  endpointName: string,
  end:
    | { status: "completed"; inferenceId: string; inputLocation: string; outputLocation: string }
    | { status: "failed"; inferenceId: string; inputLocation: string; reason: string },
  now: Date,
): string {
  return JSON.stringify({
    awsRegion: "us-east-1",
    eventTime: now.toISOString(),
    receivedTime: now.toISOString(),
    invocationStatus: end.status === "completed" ? "Completed" : "Failed",
    ...(end.status === "failed" ? { failureReason: end.reason } : {}),
    requestParameters: { endpointName, inputLocation: end.inputLocation },
    ...(end.status === "completed"
      ? { responseParameters: { contentType: "application/jsonlines", outputLocation: end.outputLocation } }
      : {}),
    inferenceId: end.inferenceId,
    eventVersion: "1.0",
    eventSource: "aws:sagemaker",
    eventName: "InferenceResult",
  });
}
