/**
 * The local mode's ports: one per service, each a flag, all movable together with a base port
 * (`--port-base N` puts the services at N, N+1, ... N+4, so two local modes can run side by side),
 * and a check, before any service starts, that every port is free: the local mode only ever
 * uses services it started itself.
 */
import { createServer } from "node:net";
import { CLI_ENV } from "../../shared/domain/function-env.ts";

/** The services in port order, with their default ports and the flag and variable that move each. */
export const LOCAL_SERVICES = {
  endpoint: {
    name: "the decision endpoint",
    port: 8080,
    flag: "--port",
    env: CLI_ENV.DECIDE_LOCAL_ENDPOINT_PORT,
  },
  dynamodb: {
    name: "DynamoDB Local",
    port: 8000,
    flag: "--dynamodb-port",
    env: CLI_ENV.DECIDE_LOCAL_DYNAMODB_PORT,
  },
  sqs: { name: "local SQS", port: 9324, flag: "--sqs-port", env: CLI_ENV.DECIDE_LOCAL_SQS_PORT },
  bus: { name: "the local event bus", port: 9195, flag: "--bus-port", env: CLI_ENV.DECIDE_LOCAL_BUS_PORT },
  review: {
    name: "the review page",
    port: 8090,
    flag: "--review-port",
    env: CLI_ENV.DECIDE_LOCAL_REVIEW_PORT,
  },
} as const;

/** A local service. */
export type LocalService = keyof typeof LOCAL_SERVICES;

/** The port of each local service. */
export type LocalPorts = Record<LocalService, number>;

/** A port a local service needs, taken by another process. */
export interface TakenPort {
  readonly service: LocalService;
  readonly port: number;
}

/** Ports local services need are taken: one line naming each (service, port, flag) and the fix. */
export class PortInUseError extends Error {
  override name = "PortInUseError";
  constructor(readonly taken: readonly TakenPort[]) {
    const [only] = taken;
    const what = ({ service, port }: TakenPort) =>
      `${LOCAL_SERVICES[service].name} cannot listen on 127.0.0.1:${port} (${LOCAL_SERVICES[service].flag}, ${LOCAL_SERVICES[service].env})`;
    super(
      taken.length === 1 && only
        ? `${what(only)}: the port is in use (another npm start?). Stop that one, or move this one with ${LOCAL_SERVICES[only.service].flag} or --port-base`
        : `${taken.length} ports are in use (another npm start?): ${taken.map(what).join("; ")}. ` +
            "Stop that one, or move this one with those flags or --port-base",
    );
  }
}

/** The ports from a base (services at base, base+1, ...) or the defaults, then single overrides. */
export function resolveLocalPorts(base: number | undefined, overrides: Partial<LocalPorts> = {}): LocalPorts {
  const services = Object.keys(LOCAL_SERVICES) as LocalService[];
  const ports = Object.fromEntries(
    services.map((service, i) => [service, base === undefined ? LOCAL_SERVICES[service].port : base + i]),
  ) as LocalPorts;
  for (const service of services) if (overrides[service] !== undefined) ports[service] = overrides[service]!;
  return ports;
}

/**
 * Throws {@link PortInUseError} naming every port of `ports` that cannot be listened on at
 * 127.0.0.1 (0: any free port, not checked). All are checked before any service starts, so a
 * taken port is reported at once, not after the services before it have started.
 */
export async function ensurePortsFree(ports: Partial<LocalPorts>): Promise<void> {
  const checks = (Object.entries(ports) as [LocalService, number][]).map(async ([service, port]) =>
    (await isTaken(port)) ? [{ service, port }] : [],
  );
  const taken = (await Promise.all(checks)).flat();
  if (taken.length > 0) throw new PortInUseError(taken);
}

/** Throws {@link PortInUseError} unless `port` can be listened on at 127.0.0.1 (0: any free port). */
export async function ensurePortFree(service: LocalService, port: number): Promise<void> {
  await ensurePortsFree({ [service]: port });
}

async function isTaken(port: number): Promise<boolean> {
  if (port === 0) return false;
  return new Promise<boolean>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) =>
      error.code === "EADDRINUSE" ? resolve(true) : reject(error),
    );
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(false)));
  });
}
