/**
 * Reading a synthesized CloudFormation template: resources by type, the logical id an intrinsic
 * (`Ref`, `Fn::GetAtt`) points at, and typed property reads that fail naming the property.
 */
import { TemplateShapeError } from "../errors.ts";

/** One resource: its logical id, type and properties. */
export interface TemplateResource {
  readonly id: string;
  readonly type: string;
  readonly properties: Record<string, unknown>;
  /** `aws:cdk:path`, when CDK wrote it: names the construct. */
  readonly path: string | undefined;
}

/** A parsed template: its resources, in template order. */
export class CfnTemplate {
  readonly resources: readonly TemplateResource[];

  constructor(json: unknown) {
    const resources = (json as { Resources?: unknown } | null)?.Resources;
    if (typeof resources !== "object" || resources === null)
      throw new TemplateShapeError("template", "Resources", "not a CloudFormation template (no Resources)");
    this.resources = Object.entries(resources as Record<string, Record<string, unknown>>).map(([id, r]) => ({
      id,
      type: String(r.Type),
      properties: (r.Properties ?? {}) as Record<string, unknown>,
      path: ((r.Metadata as Record<string, unknown> | undefined)?.["aws:cdk:path"] as string) ?? undefined,
    }));
  }

  /** Every resource of `type`. */
  ofType(type: string): TemplateResource[] {
    return this.resources.filter((r) => r.type === type);
  }

  /**
   * The resource of `type` that `from`'s `property` (holding `value`) references, or an error
   * naming that property.
   */
  follow(from: TemplateResource, property: string, value: unknown, type: string): TemplateResource {
    const id = referencedId(value);
    if (!id)
      throw new TemplateShapeError(
        `${from.type} ${from.id}`,
        property,
        `does not reference a ${type} of this template`,
      );
    return this.get(id, type, from.id);
  }

  /** The resource with logical id `id` and type `type`, or an error naming who pointed at it. */
  get(id: string, type: string, from: string): TemplateResource {
    const found = this.resources.find((r) => r.id === id);
    if (!found || found.type !== type)
      throw new TemplateShapeError(from, type, `points at ${id}, which is not a ${type} in this template`);
    return found;
  }
}

/** The logical id a `Ref` or `Fn::GetAtt` (array or dotted string) points at, else undefined. */
export function referencedId(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.Ref === "string") return v.Ref;
  const att = v["Fn::GetAtt"];
  if (Array.isArray(att) && typeof att[0] === "string") return att[0];
  if (typeof att === "string") return att.split(".")[0];
  return undefined;
}

/** Every logical id referenced anywhere inside `value` (Joins, Subs and nested objects included). */
export function referencedIds(value: unknown): Set<string> {
  const ids = new Set<string>();
  const walk = (v: unknown) => {
    const id = referencedId(v);
    if (id) ids.add(id);
    if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === "object" && v !== null) Object.values(v).forEach(walk);
  };
  walk(value);
  return ids;
}

/** The value at a dotted path (`ScalingConfig.MaximumConcurrency`, `ProductionVariants.0`). */
export function at(properties: Record<string, unknown>, path: string): unknown {
  let value: unknown = properties;
  for (const key of path.split(".")) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * A number at `path` of `resource` (CloudFormation also writes numbers as strings); `fallback`
 * when absent (the service's documented default), or an error naming the property when there is
 * none or the value is not a literal number (a parameter or a condition the model cannot resolve).
 */
export function numberAt(resource: TemplateResource, path: string, fallback?: number): number {
  const value = at(resource.properties, path);
  if (value === undefined || value === null) {
    if (fallback !== undefined) return fallback;
    throw new TemplateShapeError(`${resource.type} ${resource.id}`, path, "is missing");
  }
  const parsed = typeof value === "number" ? value : typeof value === "string" ? Number(value) : Number.NaN;
  if (!Number.isFinite(parsed))
    throw new TemplateShapeError(
      `${resource.type} ${resource.id}`,
      path,
      `must be a literal number, got ${JSON.stringify(value).slice(0, 80)}`,
    );
  return parsed;
}

/** An optional number at `path`: undefined when absent, an error naming it when not a number. */
export function optionalNumberAt(resource: TemplateResource, path: string): number | undefined {
  return at(resource.properties, path) === undefined ? undefined : numberAt(resource, path);
}

/**
 * An environment variable of a Lambda function or a SageMaker container, as a number (times
 * `scale`); `fallback` (already scaled) when unset, or an error naming it when there is none.
 */
export function envNumber(
  owner: TemplateResource,
  environment: Record<string, unknown> | undefined,
  name: string,
  fallback: number | undefined,
  scale = 1,
): number {
  const raw = environment?.[name];
  if (raw === undefined) {
    if (fallback !== undefined) return fallback;
    throw new TemplateShapeError(`${owner.type} ${owner.id}`, `Environment.${name}`, "is missing");
  }
  const value = Number(raw);
  if (typeof raw !== "string" || !Number.isFinite(value))
    throw new TemplateShapeError(
      `${owner.type} ${owner.id}`,
      `Environment.${name}`,
      `must be a literal number, got ${JSON.stringify(raw).slice(0, 80)}`,
    );
  return value * scale;
}
