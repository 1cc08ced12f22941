/** The in-memory decision store against the shared contract. */
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory-decision-store.ts";
import { decisionStoreContract } from "../helpers/decision-store.contract.ts";

decisionStoreContract("in memory", () => new InMemoryDecisionStore());
