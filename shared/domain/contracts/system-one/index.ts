/**
 * The System One contract between the decision endpoint and the pipeline, both directions in one
 * folder: the vocabulary, the request the pipeline builds, the scorer's result and the response
 * (schemas and reader).
 */
export * from "./request-builder.ts";
export * from "./response.ts";
export type * from "./result.ts";
export * from "./vocabulary.ts";
