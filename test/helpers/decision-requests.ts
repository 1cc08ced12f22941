/**
 * Validated decision requests for the scorer's tests and benchmarks: questions written with
 * declared options (as policies hold them), turned into System One questions by the contract's
 * builder and validated by the contract, exactly as the endpoint validates a request.
 */
import {
  type DecisionRequest,
  type DeclaredQuestion,
  type PromptLayout,
  parseSystemOneRequest,
  type ScoringMode,
  systemOneQuestion,
} from "../../shared/domain/contracts/system-one/index.ts";

/** A question with its key and the scorer's extensions. */
export interface KeyedQuestion extends DeclaredQuestion {
  readonly key: string;
  readonly temperature?: number;
  readonly scoring?: ScoringMode;
}

/** The ticket-routing question of the scorer's tests and benchmarks: four options, the last one "none of these". */
export const TEAM_QUESTION: KeyedQuestion = {
  key: "team",
  type: "choice",
  instructions: "Which team should handle this ticket?",
  options: [
    { id: "billing", description: "Billing: charges, invoices, refunds" },
    { id: "technical", description: "Technical: errors, crashes, bugs" },
    { id: "account", description: "Account: login, password, profile" },
    { id: "out_of_scope", description: "None of these" },
  ],
};

/** A request as the scorer's tests write it. */
export interface DecisionInput {
  readonly state: unknown;
  readonly questions: readonly KeyedQuestion[];
  readonly layout?: PromptLayout;
  /** @default true */
  readonly tokenMass?: boolean;
}

/** The System One body of `input` (questions keyed in their order). */
export function systemOneBody(input: DecisionInput): Record<string, unknown> {
  const questions = input.questions.map(({ key, temperature, scoring, ...declared }) => [
    key,
    {
      ...systemOneQuestion(declared),
      ...(temperature === undefined ? {} : { temperature }),
      ...(scoring === undefined ? {} : { scoring }),
    },
  ]);
  return {
    state: input.state,
    questions: Object.fromEntries(questions),
    ...(input.layout ? { layout: input.layout } : {}),
    ...(input.tokenMass === undefined ? {} : { token_mass: input.tokenMass }),
  };
}

/** `input` validated by the contract (throws its violation error, as the endpoint would answer 422). */
export function decisionRequest(input: DecisionInput): DecisionRequest {
  return parseSystemOneRequest(systemOneBody(input), { tokenMass: true });
}
