/**
 * Advice for the errors a newcomer meets: one or two lines to act on instead of a stack trace.
 */

/** The local stand-ins' default ports, to name the service behind a port in use. */
const LOCAL_PORTS: Record<number, string> = {
  8080: "the decision endpoint (--port)",
  8000: "DynamoDB Local",
  9324: "local SQS",
  9195: "the local event bus",
  8090: "the review page",
};

/**
 * One or two lines a person can act on for the errors a newcomer meets: a missing file or
 * folder, nothing listening, a port taken, no region or credentials. Undefined for anything else (printed with its stack).
 */
export function adviceFor(error: unknown): string | undefined {
  const chain: { name?: string; message?: string; code?: string; port?: number; address?: string }[] = [];
  for (let e = error as { cause?: unknown } | undefined; e && chain.length < 6; e = e.cause as typeof e) {
    chain.push(e as (typeof chain)[number]);
  }
  const missing = chain.find(
    (e) => e.code === "ENOENT" && typeof (e as { path?: unknown }).path === "string",
  );
  if (missing) return missingPathAdvice(missing as { path: string; syscall?: string });
  const text = chain.map((e) => `${e.name ?? ""} ${e.code ?? ""} ${e.message ?? ""}`).join(" ");
  // The local mode's own one-line refusal (a port another process holds).
  const portError = chain.find((e) => e.name === "PortInUseError");
  if (portError) return portError.message;
  const noBus = chain.find((e) => e.name === "EventBusNotFoundError");
  if (noBus)
    return `${noBus.message}: check --event-bus (the local mode's bus is the EVENT_BUS_NAME \`npm start\` exports)`;
  const inUse = chain.find((e) => e.code === "EADDRINUSE");
  if (inUse) {
    const service = inUse.port !== undefined ? LOCAL_PORTS[inUse.port] : undefined;
    return `port ${inUse.port ?? "?"}${service ? ` (${service})` : ""} is already in use: is another \`npm start\` running? Stop it first.`;
  }
  if (/ECONNREFUSED|ENOTFOUND|socket hang up|connect ETIMEDOUT/.test(text)) {
    const refused = chain.find((e) => e.address !== undefined && e.port !== undefined);
    const where = refused ? ` at ${refused.address}:${refused.port}` : "";
    return (
      `could not reach the service${where} (nothing answered).\n` +
      "Is `npm start` running? In this terminal, source the env file it wrote (source .cache/local/env), or point the flags at AWS."
    );
  }
  if (/Region is missing/i.test(text)) {
    return "no AWS region: set AWS_REGION (or --region), or source the env file `npm start` wrote.";
  }
  if (/CredentialsProviderError|Could not load credentials/i.test(text)) {
    return "no AWS credentials: configure a profile (--profile) or source the env file `npm start` wrote.";
  }
  return undefined;
}

/** A file or folder that is not there (a flag such as `--policies-dir` naming a missing folder), in one line. */
function missingPathAdvice(error: { path: string; syscall?: string }): string {
  const what = error.syscall === "scandir" || error.syscall === "opendir" ? "folder" : "file or folder";
  return `no such ${what}: ${error.path} (check the flag or path that names it)`;
}
