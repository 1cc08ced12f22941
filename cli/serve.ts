/**
 * `decide serve`: runs the decision endpoint (System One, OpenAI chat, SageMaker contract).
 */
import { parseArgs } from "node:util";
import { ConfigError, resolveServerConfig, SETTINGS, settingsHelp } from "../endpoint/server/config.ts";
import { startServer } from "../endpoint/server/server.ts";
import { UsageError } from "./args.ts";
import type { CommandEnv, CommandIo, LongRunningCommand } from "./command.ts";

export const serveUsage = `decide serve --model <file.gguf | folder> [--port 8080] [--host 127.0.0.1] [--gpu auto|cuda|off] [...]

Serves POST /v1/systemone, POST /v1/chat/completions, GET /v1/models, GET /healthz,
GET /ping, POST /invocations and POST /endpoints/{name}/invocations.
Each setting is a flag or an environment variable (the flag wins):
${settingsHelp()}`;

type ServeOptions = ReturnType<typeof resolveServerConfig>;

/** The settings from the flags, then from `env` (the flag wins). */
function parse(argv: string[], env: CommandEnv): ServeOptions {
  const options = Object.fromEntries(
    Object.values(SETTINGS).map((s) => [
      s.flag,
      "switch" in s && s.switch
        ? { type: "boolean" as const }
        : { type: "string" as const, multiple: "repeatable" in s && s.repeatable === true },
    ]),
  );
  const { values } = parseArgs({ args: argv, options, strict: true });
  try {
    return resolveServerConfig(values, env);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
}

/** Runs the server until SIGTERM or SIGINT; returns the exit code. */
async function run(config: ServeOptions, io: CommandIo): Promise<number> {
  const server = await startServer(config);
  await server.service.ready;
  if (server.service.state === "failed" && !config.keepRunningOnFailure) {
    // A person at a terminal (and SageMaker, which reports the container's exit) learns at once.
    await server.close(0);
    io.note(`decide serve: the model could not be loaded: ${server.service.failureReason}`);
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

/**
 * `decide serve`: parse, then run until a signal. No print step: the server has no result to
 * format, and its exit code says whether the model loaded.
 */
export const serveCommand: LongRunningCommand<ServeOptions> = { parse, run };
