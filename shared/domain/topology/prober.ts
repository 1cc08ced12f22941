/**
 * The endpoint prober's part of the topology (issue 42, item 3): while a blue/green deployment's
 * new fleet bakes, the product sends the endpoint known items of its own every minute, so the
 * rollback alarms judge a fleet that was tried whatever the upstream traffic is, and the "silent"
 * alarm judges the prober's calls alone (a quiet hour no longer rolls a healthy fleet back by
 * luck). Its numbers are named here once: the function, its construct and the deployment
 * simulation all read them.
 */

/** The prober's schedule, its calls, and the metrics it publishes. */
export const ENDPOINT_PROBER = {
  /** Runs this many seconds apart (EventBridge's finest rate). */
  periodSeconds: 60,
  /**
   * Known items sent per run while the new fleet bakes, one after another. During the canary a
   * call reaches the new fleet with about a third's chance (its half of the new capacity beside
   * the whole old one), so 4 calls a minute leave it without one for five minutes in (2/3)^20,
   * about 3 in 10,000 windows, and give its refusal and latency alarms calls to judge.
   */
  callsPerRun: 4,
  /** Per call: one known item takes about 1.5 s cold, so this passes a fleet several times slower. */
  callTimeoutMs: 10_000,
  /** The function's timeout: every call of a run at its timeout, and the DescribeEndpoint before. */
  timeoutSeconds: 50,
  /** The metrics' `service` dimension. */
  service: "endpoint-prober",
  /**
   * Published every run: calls sent; replies (a decision or a busy answer: the fleet was
   * reached and spoke, and the refusal alarm judges what it said); answers (a decision that
   * reads as the contract asks). The silent alarm reads `replies`.
   */
  metrics: { calls: "ProbeCalls", replies: "ProbeReplies", answers: "ProbeAnswers" },
  /**
   * The silent rollback alarm's metric math: `baking` is the capacity follower's flag, `replies`
   * the prober's. A minute of the bake is silent when the prober heard no reply, or published
   * nothing (it did not run: a fleet nobody tried still cannot pass); upstream calls count for
   * nothing here, so their chance gaps cannot roll a healthy fleet back.
   */
  silentWhileBaking: "IF(FILL(baking, 0) > 0 AND FILL(replies, 0) < 1, 1, 0)",
  /** The known items' ids: this prefix and the call's number in its run. */
  itemIdPrefix: "deployment-probe-",
} as const;
