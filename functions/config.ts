/**
 * Environment of the Lambda functions, read once at start; a missing variable fails fast with
 * its name.
 */

/** Reads a required variable or throws naming it. */
export function requireEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (value === undefined || value === "") throw new Error(`environment variable ${name} is required`);
  return value;
}

/** Settings of the decide function. */
export interface DecideSettings {
  readonly endpointName: string;
  readonly endpointTimeoutMs: number;
  readonly endpointAttempts: number;
  readonly publishLeaseMs: number;
}

/** Reads the decide function's settings from `env`. */
export function decideSettings(env: NodeJS.ProcessEnv = process.env): DecideSettings {
  return {
    endpointName: requireEnv("DECISION_ENDPOINT_NAME", env),
    endpointTimeoutMs: Number(env.ENDPOINT_TIMEOUT_MS ?? 30_000),
    endpointAttempts: Number(env.ENDPOINT_ATTEMPTS ?? 4),
    publishLeaseMs: Number(env.PUBLISH_LEASE_MS ?? 20_000),
  };
}
