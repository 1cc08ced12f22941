/** The in-memory decision and batch stores against the shared contracts. */
import { InMemoryBatchStore } from "../../shared/adapters/in-memory/in-memory-batch-store.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { batchStoreContract } from "../helpers/batch-store.contract.ts";
import { decisionStoreContract } from "../helpers/decision-store.contract.ts";
import { decisionStoreReviewContract } from "../helpers/decision-store-review.contract.ts";

decisionStoreContract("in memory", () => new InMemoryDecisionStore());
decisionStoreReviewContract("in memory", () => new InMemoryDecisionStore());
batchStoreContract("in memory", () => ({
  batches: new InMemoryBatchStore(),
  records: new InMemoryDecisionStore(),
}));
