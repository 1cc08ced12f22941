/** Why a what-if cannot run as asked (`what-if.ts`). */

/** A what-if that cannot run as asked (no such policy, nothing to compare, logits that do not fit). */
export class WhatIfError extends Error {
  override name = "WhatIfError";
}

/** A candidate that changes the prompt asked to be answered from stored logits: a calling mistake. */
export class WhatIfNeedsScoringError extends WhatIfError {
  override name = "WhatIfNeedsScoringError";
}
