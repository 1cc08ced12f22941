/**
 * How the decisions table's adapters turn DynamoDB errors into pipeline errors: a failed
 * condition goes back to the caller as it is (it is an answer, not a failure), a
 * ValidationException is permanent ({@link StoreRejectedError}: the same write fails again), and
 * anything else may pass on a retry ({@link StoreUnavailableError}).
 */
import { StoreRejectedError, StoreUnavailableError } from "../../domain/errors.ts";

/** Runs one table call, classifying what it throws; `isCondition` recognizes the caller's condition failures. */
export async function tableCall<T>(
  what: string,
  run: () => Promise<T>,
  isCondition: (error: unknown) => boolean,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isCondition(error)) throw error;
    if ((error as { name?: string })?.name === "ValidationException") {
      throw new StoreRejectedError(
        `decisions table ${what} refused the record: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    throw new StoreUnavailableError(`decisions table ${what} failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
