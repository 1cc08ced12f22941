/**
 * The pipeline's event bus, which keeps its sources apart. Upstream producers hold PutEvents on
 * this bus (they put "Decision Requested" under their own sources), so without a policy any of
 * them could put a "Decision Made" under the pipeline's source, and the auto rule would deliver
 * it. The bus's resource policy denies PutEvents with the source `decision-pipeline`, or with any
 * of the pipeline's own detail types, to every principal but the roles of the pipeline's functions
 * that were granted PutEvents on it (each `grantPutEventsTo` call registers its role). An
 * explicit deny in a resource policy applies to principals of the same account too, whatever
 * their identity policies allow. EventBridge evaluates the `events:source` and
 * `events:detail-type` condition keys per entry, so a refused entry fails on its own.
 *
 * Exempt from those denies, each publishing role is still held to its own words: its grant allows
 * PutEvents only for the detail types its function sends (`PUBLISHED_DETAIL_TYPES`) and only
 * under the pipeline's source, so the review page's role cannot put a "Decision Made" or an "Item
 * Actioned", nor the decide function's a "Decision Reviewed". A function must be listed there to
 * be granted at all.
 */
import { Lazy } from "aws-cdk-lib";
import * as events from "aws-cdk-lib/aws-events";
import * as iam from "aws-cdk-lib/aws-iam";
import { Construct } from "constructs";
import { EVENT_SOURCE, PIPELINE_DETAIL_TYPES } from "../../shared/domain/events.ts";
import { publishedDetailTypes } from "../../shared/domain/topology/publishers.ts";

/** The Sids of the bus policy's two deny statements (template tests read them). */
export const BUS_POLICY_SIDS = {
  source: "OnlyThePipelinePutsItsSource",
  detailTypes: "OnlyThePipelinePutsItsDetailTypes",
} as const;

/** An EventBridge bus on which only the pipeline's functions may put the pipeline's events. */
export class PipelineBus extends events.EventBus {
  private readonly publishers: iam.IRole[] = [];

  constructor(scope: Construct, id: string, props: events.EventBusProps) {
    super(scope, id, props);
    // Resolved at synthesis, once every function has been granted.
    const pipelineRoles = Lazy.list({ produce: () => this.publishers.map((role) => role.roleArn) });
    const deny = (sid: string, key: string, values: readonly string[]) =>
      this.addToResourcePolicy(
        new iam.PolicyStatement({
          sid,
          effect: iam.Effect.DENY,
          principals: [new iam.AnyPrincipal()],
          actions: ["events:PutEvents"],
          resources: [this.eventBusArn],
          conditions: {
            StringEquals: { [key]: [...values] },
            ArnNotEquals: { "aws:PrincipalArn": pipelineRoles },
          },
        }),
      );
    deny(BUS_POLICY_SIDS.source, "events:source", [EVENT_SOURCE]);
    deny(BUS_POLICY_SIDS.detailTypes, "events:detail-type", PIPELINE_DETAIL_TYPES);
  }

  /**
   * Grants the function `grantee` PutEvents for the detail types it sends (`PUBLISHED_DETAIL_TYPES`,
   * by its name in the app), under the pipeline's source only, and exempts its role from the
   * bus policy's denies.
   */
  override grantPutEventsTo(grantee: iam.IGrantable): iam.Grant {
    const principal = grantee.grantPrincipal;
    if (!(principal instanceof iam.Role) || !Construct.isConstruct(grantee))
      throw new TypeError("only a function's role may publish the pipeline's events");
    const name = functionName(grantee);
    const detailTypes = publishedDetailTypes(name);
    if (!detailTypes)
      throw new Error(`${name} is not a publisher: name the detail types it sends in PUBLISHED_DETAIL_TYPES`);
    const grant = iam.Grant.addToPrincipal({
      grantee,
      actions: ["events:PutEvents"],
      resourceArns: [this.eventBusArn],
      conditions: {
        StringEquals: { "events:source": [EVENT_SOURCE], "events:detail-type": [...detailTypes] },
      },
    });
    if (!this.publishers.includes(principal)) this.publishers.push(principal);
    return grant;
  }
}

/**
 * A function's name in the app: its id, or for a function wrapped in a construct of its own (whose
 * id it keeps; the function is that construct's `Default` child) the wrapper's id.
 */
function functionName(fn: Construct): string {
  return fn.node.id === "Default" && fn.node.scope ? fn.node.scope.node.id : fn.node.id;
}
