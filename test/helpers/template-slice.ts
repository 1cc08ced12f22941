/**
 * Slices of a synthesized CloudFormation template for the moto deploy-day tests. moto's
 * CloudFormation models only some resource types and no stack outputs of the others, so those
 * tests deploy the resources that matter with everything they reference (a closure), and derive
 * an earlier shape of the stack by taking resources out again.
 */
import { MOTO_ACCOUNT, MOTO_REGION } from "./moto-server.ts";

/** One resource of a template, as CloudFormation reads it. */
export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DependsOn?: string | string[];
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  Metadata?: Record<string, unknown>;
}

/** A template: its parameters and resources (outputs and rules left out). */
export interface CfnTemplate {
  Parameters?: Record<string, { Type: string; Default?: string }>;
  Resources: Record<string, CfnResource>;
}

/** The logical ids a value refers to: `Ref`, `Fn::GetAtt` and `${Name}` in `Fn::Sub`. */
export function referencesIn(value: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) referencesIn(item, found);
  else if (value && typeof value === "object")
    for (const [key, inner] of Object.entries(value)) {
      if (key === "Ref" && typeof inner === "string") found.add(inner);
      else if (key === "Fn::GetAtt")
        found.add(Array.isArray(inner) ? String(inner[0]) : String(inner).split(".")[0]!);
      else if (key === "Fn::Sub") {
        const text = Array.isArray(inner) ? inner[0] : inner;
        for (const m of String(text).matchAll(/\$\{([^}.!]+)[^}]*\}/g)) found.add(m[1]!);
        referencesIn(inner, found);
      } else referencesIn(inner, found);
    }
  return found;
}

const dependsOn = (r: CfnResource): string[] => [r.DependsOn ?? []].flat();

/**
 * The resources `roots` need: each root and, transitively, every resource it refers to or
 * depends on. The parameters kept are those the slice refers to, less the CDK bootstrap version
 * (an SSM parameter moto would have to hold).
 */
export function sliceOf(template: CfnTemplate, roots: readonly string[]): CfnTemplate {
  const kept = new Set<string>();
  const parameters = new Set<string>();
  const visit = (id: string) => {
    if (kept.has(id)) return;
    const resource = template.Resources[id];
    if (!resource) {
      if (template.Parameters?.[id]) parameters.add(id);
      return;
    }
    kept.add(id);
    for (const next of [...referencesIn(resource.Properties), ...dependsOn(resource)]) visit(next);
  };
  for (const root of roots) visit(root);
  parameters.delete("BootstrapVersion");
  return {
    Parameters: Object.fromEntries([...parameters].map((p) => [p, template.Parameters![p]!])),
    Resources: Object.fromEntries([...kept].map((id) => [id, template.Resources[id]!])),
  };
}

/** Replaces every `{ Ref: id }` for which `literal(id)` answers a value with that value. */
function replaceRefs(value: unknown, literal: (id: string) => unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => replaceRefs(v, literal));
  if (!value || typeof value !== "object") return value;
  const ref = (value as { Ref?: unknown }).Ref;
  if (typeof ref === "string" && literal(ref) !== undefined) return literal(ref);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceRefs(v, literal)]));
}

/**
 * The template with `removed` taken out: dependencies on them dropped, and a `Ref` to a removed
 * log group replaced by its name (what an earlier shape wrote where it named the group itself).
 * Throws if anything left still refers to a removed resource otherwise.
 */
export function withoutResources(template: CfnTemplate, removed: ReadonlySet<string>): CfnTemplate {
  const literal = (id: string) =>
    removed.has(id) && template.Resources[id]?.Type === "AWS::Logs::LogGroup"
      ? template.Resources[id]!.Properties!.LogGroupName
      : undefined;
  const resources: Record<string, CfnResource> = {};
  for (const [id, resource] of Object.entries(template.Resources)) {
    if (removed.has(id)) continue;
    const { DependsOn: _dropped, ...rest } = resource;
    const after = dependsOn(resource).filter((d) => !removed.has(d));
    const properties = replaceRefs(resource.Properties, literal) as Record<string, unknown> | undefined;
    const dangling = [...referencesIn(properties)].filter((r) => removed.has(r));
    if (dangling.length > 0) throw new Error(`${id} still refers to ${dangling.join(", ")}`);
    resources[id] = { ...rest, ...(properties ? { Properties: properties } : {}) };
    if (after.length > 0) resources[id]!.DependsOn = after;
  }
  return { ...template, Resources: resources };
}

/** The S3 bucket and key of each Lambda function's code in the template, as moto resolves them. */
export function functionCodeObjects(template: CfnTemplate): { bucket: string; key: string }[] {
  const resolve = (value: unknown): string => {
    if (typeof value === "string") return value;
    const sub = (value as { "Fn::Sub"?: unknown })["Fn::Sub"];
    if (typeof sub === "string")
      return sub.replace(/\$\{AWS::(AccountId|Region|Partition)\}/g, (_, name: string) =>
        name === "AccountId" ? MOTO_ACCOUNT : name === "Region" ? MOTO_REGION : "aws",
      );
    throw new Error(`cannot resolve ${JSON.stringify(value)} outside CloudFormation`);
  };
  return Object.values(template.Resources)
    .filter((r) => r.Type === "AWS::Lambda::Function")
    .map((r) => r.Properties?.Code as { S3Bucket?: unknown; S3Key?: unknown } | undefined)
    .filter((code) => code?.S3Bucket !== undefined)
    .map((code) => ({ bucket: resolve(code!.S3Bucket), key: resolve(code!.S3Key) }));
}
