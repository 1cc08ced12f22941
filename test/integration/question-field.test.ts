/**
 * A question field added to the contract (the hypothetical `context`) reaches the prompt with
 * two edits: its line in the contract's question schema and its use in the prompt builder.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDecisionPrompt } from "../../endpoint/scorer/prompt.ts";
import type { RunningServer } from "../../endpoint/server/server.ts";
import { parseSystemOneRequest } from "../../shared/domain/contracts/system-one/index.ts";
import { postJson, startTestEndpoint } from "../helpers/endpoint.ts";

let server: RunningServer;
beforeAll(async () => {
  server = await startTestEndpoint();
});
afterAll(async () => {
  await server.close();
});

const question = { type: "noul", instructions: "Does the customer ask for a refund?" };
const body = (extra: Record<string, unknown>) => ({
  state: "My card was charged twice; please refund.",
  questions: { refund: { ...question, ...extra } },
});

describe("a new question field", () => {
  it("is validated by the contract and carried into the prompt", () => {
    const request = parseSystemOneRequest(body({ context: "Refunds go to billing." }), { tokenMass: true });
    const prompt = buildDecisionPrompt(request.state, request.questions[0]!, "state-first", "letters");
    expect(JSON.parse(prompt.user).context).toBe("Refunds go to billing.");
    expect(() => parseSystemOneRequest(body({ context: "  " }), { tokenMass: true })).toThrow(
      "questions.refund.context: must not be empty",
    );
  });

  it("changes the prompt the endpoint scores, over HTTP", async () => {
    const plain = await postJson(`${server.url}/v1/systemone`, body({}));
    const withContext = await postJson(
      `${server.url}/v1/systemone`,
      body({ context: "Refunds go to billing." }),
    );
    expect([plain.status, withContext.status]).toEqual([200, 200]);
    const hash = (r: typeof plain) =>
      (r.json as { answers: { refund: { x_detail: { prompt_sha256: string } } } }).answers.refund.x_detail
        .prompt_sha256;
    expect(hash(withContext)).not.toBe(hash(plain));
    const bad = await postJson(`${server.url}/v1/systemone`, body({ context: 3 }));
    expect(bad.status).toBe(422);
    expect(bad.json).toMatchObject({ error: { param: "questions.refund.context" } });
  });
});
