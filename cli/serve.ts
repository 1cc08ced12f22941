/**
 * `decide serve`: runs the decision endpoint (System One, OpenAI chat, SageMaker contract).
 */
import { parseArgs } from "node:util";
import { ConfigError, resolveServerConfig, SETTINGS, settingsHelp } from "../endpoint/server/config.ts";
import { startServer } from "../endpoint/server/server.ts";
import { UsageError } from "./args.ts";

export const serveUsage = `decide serve --model <file.gguf | folder> [--port 8080] [--host 127.0.0.1] [--gpu auto|cuda|off] [...]

Serves POST /v1/systemone, POST /v1/chat/completions, GET /v1/models, GET /healthz,
GET /ping, POST /invocations and POST /endpoints/{name}/invocations.
Each setting is a flag or an environment variable (the flag wins):
${settingsHelp()}`;

/** Runs the server until SIGTERM or SIGINT; returns the exit code. */
export async function serveCommand(argv: string[]): Promise<number> {
  const options = Object.fromEntries(
    Object.values(SETTINGS).map((s) => [
      s.flag,
      "switch" in s && s.switch
        ? { type: "boolean" as const }
        : { type: "string" as const, multiple: s.flag === "model-alias" },
    ]),
  );
  const { values } = parseArgs({ args: argv, options, strict: true });
  let config: ReturnType<typeof resolveServerConfig>;
  try {
    config = resolveServerConfig(values, process.env);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
  const server = await startServer(config);
  await server.service.ready;
  if (server.service.state === "failed" && !config.keepRunningOnFailure) {
    // A person at a terminal (and SageMaker, which reports the container's exit) learns at once.
    await server.close(0);
    process.stderr.write(`decide serve: the model could not be loaded: ${server.service.failureReason}\n`);
    return 1;
  }
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
      void server.close().then(resolve);
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
  return server.service.state === "failed" ? 1 : 0;
}
