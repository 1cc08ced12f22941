/**
 * The `/v1` routes: System One decisions, OpenAI-compatible chat, and the model list in both
 * shapes. Errors go to the app's one `onError`.
 */
import { Hono, type MiddlewareHandler } from "hono";
import type { Answers, AppDependencies } from "./answers.ts";
import { type AppEnv, readJson } from "./request-context.ts";
import { jsonResponse } from "./responses.ts";

/** The `/v1` sub-app (mounted with `app.route("/v1", ...)`). */
export function v1Routes(
  deps: Pick<AppDependencies, "service" | "config">,
  answers: Answers,
  limit: MiddlewareHandler<AppEnv>,
): Hono<AppEnv> {
  const { service, config } = deps;
  const v1 = new Hono<AppEnv>();
  v1.post("/systemone", limit, async (c) => jsonResponse(c, await answers.systemOne(c, await readJson(c))));
  v1.post("/chat/completions", limit, async (c) => answers.chat(c, await readJson(c)));
  // Both list shapes in one body: OpenAI clients read `data`, System One clients read `models`.
  // The first model answers to the aliases (and any name with --any-model); the others to their own.
  v1.get("/models", (c) => {
    const names = service.models.map((served) => served.name);
    return jsonResponse(c, {
      object: "list",
      data: names.map((id) => ({ id, object: "model", created: 0, owned_by: "decision-pipeline" })),
      models: names.map((name, i) =>
        i === 0
          ? { name, aliases: answers.aliases(), any_name_accepted: config.anyModel }
          : { name, aliases: [], any_name_accepted: false },
      ),
    });
  });
  return v1;
}
