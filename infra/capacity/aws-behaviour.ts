/**
 * How the AWS services behave, as documented (or, where AWS publishes no figure, as we assume it):
 * the capacity model's facts about SageMaker, Application Auto Scaling, CloudWatch, Lambda and
 * SQS, written once. These are not the pipeline's settings (those are in the template and
 * `../topology.ts`); change one here only when AWS's behaviour or our reading of it changes.
 */
export const AWS_BEHAVIOUR = {
  lambda: {
    /** An SQS event source mapping starts with five concurrent batches... */
    initialConcurrency: 5,
    /** ...and adds up to 300 concurrent executions a minute while messages remain. */
    scaleUpPerMinute: 300,
    /** The most concurrent batches one SQS mapping reaches without a MaximumConcurrency. */
    mappingCeiling: 1_250,
    /** Concurrent executions of an account in a region, by default (a quota to raise). */
    accountConcurrency: 1_000,
    /** Idle time after which the mapping's pollers scale back down. */
    scaleDownAfterSeconds: 60,
    /** CloudFormation defaults when a property is absent. */
    defaultTimeoutSeconds: 3,
    defaultMemoryMiB: 128,
    defaultBatchSize: 10,
  },
  sqs: {
    /** VisibilityTimeout when the queue sets none. */
    defaultVisibilitySeconds: 30,
  },
  sageMaker: {
    /**
     * Seconds from a scale-out decision until a new instance passes /ping and takes traffic
     * (provisioning, image pull, model download and load): AWS says "minutes"; we assume 5.
     */
    instanceStartSeconds: 300,
    /** SageMaker ends a real-time invocation the container has not answered within 60 s. */
    invocationTimeoutSeconds: 60,
    /** Target tracking's default cooldowns for SageMaker variants. */
    defaultCooldownSeconds: 300,
    /** Serverless: seconds to start a cold container (image pull and model load); an assumption. */
    serverlessColdStartSeconds: 30,
    /**
     * LEAST_OUTSTANDING_REQUESTS routes "to the instances that have more capacity"; AWS does not
     * say how many it compares. We assume the less busy of 2 drawn at random (the classic "power
     * of two choices"): worse than knowing every instance's load, so the model errs towards
     * more instances.
     */
    leastOutstandingDraws: 2,
  },
  scaling: {
    /** Target tracking scales out after this many consecutive datapoints above the target... */
    scaleOutDatapoints: 3,
    /** ...and in after this many one-minute datapoints below 90% of it (high resolution or not). */
    scaleInDatapoints: 15,
    scaleInFraction: 0.9,
    /** Standard metrics have one datapoint a minute; high-resolution SageMaker metrics every 10 s. */
    standardPeriodSeconds: 60,
    highResolutionPeriodSeconds: 10,
    /** An alarm in ALARM invokes its scaling policy again every minute while it stays there. */
    alarmRepeatSeconds: 60,
  },
} as const;

/**
 * The decide function's own time per batch outside the endpoint (table reads before the call,
 * writes and the event after): an assumption, small next to a model's seconds per item.
 */
export const FUNCTION_OVERHEAD_SECONDS = 0.1;
