/**
 * The pipeline's dead-letter queues, one per source, and the way home of each. A queue's own
 * dead letters (after the receive limit) go back to that queue: SQS's redrive moves them there
 * (StartMessageMoveTask without a destination, which only works for messages that arrived through
 * a redrive policy: hence one dead-letter queue per source), and a filtered replay re-sends the
 * matching ones. A rule target's dead letters hold the event the bus could not deliver (the whole
 * event, as EventBridge stores it): they go to that rule's target queue, as the rule would have
 * delivered them, and to no other consumer of the bus (putting them on the bus again would reach
 * every rule a second time, and would need the right to put the pipeline's own source on the
 * bus, which only the pipeline's functions hold). Job failures (on-failure records of the
 * asynchronously invoked functions, and the schedules' undelivered events) are listed, not moved:
 * a scheduled job runs again on its schedule. The async lane's notifications (`async-results`,
 * only where the batch lane is async) go back to their queue: a notification settled again
 * decides nothing twice.
 *
 * The CDK app, the local mode and `decide replay` read this one list.
 */

/** How a source's dead letters go home. */
export const RETURN_KIND = {
  /** Back to the queue they came from. */
  queue: "queue",
  /** The stored event, delivered to the rule's target queue as the rule would have. */
  rule: "rule",
  /** Listed only. */
  none: "none",
} as const;

/** One of {@link RETURN_KIND}. */
export type ReturnKind = (typeof RETURN_KIND)[keyof typeof RETURN_KIND];

/** Every dead-letter source and how its letters return. */
export const DEAD_LETTER_SOURCES = {
  intake: RETURN_KIND.queue,
  batch: RETURN_KIND.queue,
  "batch-files": RETURN_KIND.queue,
  review: RETURN_KIND.queue,
  "auto-action": RETURN_KIND.queue,
  "auto-rule": RETURN_KIND.rule,
  "human-rule": RETURN_KIND.rule,
  "rejected-rule": RETURN_KIND.rule,
  "requested-rule": RETURN_KIND.rule,
  "job-failures": RETURN_KIND.none,
  "async-results": RETURN_KIND.queue,
} as const satisfies Record<string, ReturnKind>;

/** A dead-letter source's name. */
export type DeadLetterSource = keyof typeof DEAD_LETTER_SOURCES;

/** Where one source's dead letters are and where they go. */
export interface DeadLetterRoute {
  /** The dead-letter queue's URL. */
  readonly dlqUrl: string;
  /** The queue they came from (kind "queue"), or the rule's target queue (kind "rule"). */
  readonly queueUrl?: string;
  /**
   * What the rule delivers to its target (kind "rule"): the whole event, or only its detail (the
   * requested rule's input path `$.detail`). @default "event"
   */
  readonly deliver?: RuleDelivery;
}

/** What a rule puts in its target queue: the whole event or its detail. */
export type RuleDelivery = "event" | "detail";

/** The routes of every source, as the stack output `DeadLetterRoutes` and `npm start` give them. */
export type DeadLetterRoutes = Partial<Record<DeadLetterSource, DeadLetterRoute>>;

/** A dead-letter route that is missing or incomplete. */
export class DeadLetterRouteError extends Error {
  override name = "DeadLetterRouteError";
  constructor(
    message: string,
    readonly source: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Whether `name` is a dead-letter source. */
export function isDeadLetterSource(name: string): name is DeadLetterSource {
  return Object.hasOwn(DEAD_LETTER_SOURCES, name);
}

/**
 * Reads the routes (JSON) and returns the one of `source`, checked complete for its kind; throws
 * {@link DeadLetterRouteError} naming what is missing.
 */
export function routeOf(routesJson: string, source: string): DeadLetterRoute & { kind: ReturnKind } {
  if (!isDeadLetterSource(source))
    throw new DeadLetterRouteError(
      `unknown dead-letter source "${source}": one of ${Object.keys(DEAD_LETTER_SOURCES).join(", ")}`,
      source,
    );
  let routes: DeadLetterRoutes;
  try {
    routes = JSON.parse(routesJson) as DeadLetterRoutes;
  } catch (error) {
    throw new DeadLetterRouteError("the dead-letter routes are not valid JSON", source, { cause: error });
  }
  const route = routes[source];
  const kind = DEAD_LETTER_SOURCES[source];
  if (!route?.dlqUrl) throw new DeadLetterRouteError(`no dead-letter queue is known for "${source}"`, source);
  if ((kind === RETURN_KIND.queue || kind === RETURN_KIND.rule) && !route.queueUrl)
    throw new DeadLetterRouteError(`the route of "${source}" names no queue to return to`, source);
  return { ...route, kind };
}

/**
 * A queue's ARN from its URL (`https://sqs.<region>.amazonaws.com/<account>/<name>`; a local
 * stand-in's URL, which names no region, is taken as us-east-1).
 */
export function queueArnOf(queueUrl: string): string {
  const match = /^https?:\/\/[^/]+\/(\d{12})\/([^/?]+)$/.exec(queueUrl);
  if (!match) throw new DeadLetterRouteError(`not an SQS queue URL: ${queueUrl}`, queueUrl);
  const region = /\/\/sqs\.([a-z0-9-]+)\./.exec(queueUrl)?.[1] ?? "us-east-1";
  const partition = queueUrl.includes(".amazonaws.com.cn/") ? "aws-cn" : "aws";
  return `arn:${partition}:sqs:${region}:${match[1]}:${match[2]}`;
}
