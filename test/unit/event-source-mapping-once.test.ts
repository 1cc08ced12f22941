/**
 * An event source mapping's numbers (batch size, batching window, maximum concurrency) are written
 * once, in `shared/domain/topology/event-source-mapping.ts`: the CDK side builds every SQS event
 * source through `QueueConsumer`'s `eventSourceOf` from that plain data, so no other construct
 * creates an `SqsEventSource` with numbers of its own, and the batch jobs (the decide function's
 * batch lane, the batch files step) read their mappings rather than the topology's raw settings.
 * `test/infra/event-source-mappings.test.ts` checks the synthesized values; this checks that they
 * have one source.
 */
import { describe, expect, it } from "vitest";
import { codeOf, tsFiles } from "../helpers/source-files.ts";

describe("event source mappings, written once", () => {
  it("every SqsEventSource is built by QueueConsumer's eventSourceOf", () => {
    const building = tsFiles("infra/constructs").filter((file) =>
      /new\s+SqsEventSource\s*\(/.test(codeOf(file)),
    );
    expect(building).toEqual(["infra/constructs/queue-consumer.ts"]);
  });

  it("the batch jobs read their mappings, not the topology's raw batch sizes, windows or concurrencies", () => {
    const text = codeOf("infra/constructs/batch-jobs.ts");
    const raw = text.match(
      /\b(?:DECIDE_FUNCTION\.maxBatchingWindowSeconds|BATCH_FILES\.(?:batchSize|maxConcurrency))\b/g,
    );
    expect(raw ?? []).toEqual([]);
    expect(text).toMatch(/\bdecideBatchMapping\(/);
    expect(text).toMatch(/\bEVENT_SOURCE_MAPPINGS\.batchFiles\b/);
  });
});
