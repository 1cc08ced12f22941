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
 */
import { Lazy } from "aws-cdk-lib";
import * as events from "aws-cdk-lib/aws-events";
import * as iam from "aws-cdk-lib/aws-iam";
import type { Construct } from "constructs";
import { EVENT_SOURCE, PIPELINE_DETAIL_TYPES } from "../../shared/domain/events.ts";

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

  /** Grants PutEvents and lets the grantee's role put the pipeline's own events. */
  override grantPutEventsTo(grantee: iam.IGrantable, sid?: string): iam.Grant {
    const grant = super.grantPutEventsTo(grantee, sid);
    const principal = grantee.grantPrincipal;
    if (!(principal instanceof iam.Role))
      throw new TypeError("only a function's role may publish the pipeline's events");
    if (!this.publishers.includes(principal)) this.publishers.push(principal);
    return grant;
  }
}
