/** Isolation between the pipeline's functions: what is kept for the review functions alone. */

/**
 * Concurrency reserved for the functions reviewers cannot work without, so nothing else in the
 * account can throttle them (their sum comes off the account's unreserved pool, which Lambda
 * keeps at 100 or more: an account with a concurrency quota under 100 + this sum cannot deploy
 * them; deploy with `-c reserveConcurrency=false` there, or raise the quota).
 */
export const RESERVED_CONCURRENCY = {
  reviewSignIn: 5,
  reviewAuthorizer: 10,
  review: 5,
  reviewPage: 10,
} as const;
