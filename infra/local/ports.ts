/**
 * The local mode's ports: one per service, each a flag, all movable together with a base port
 * (`--port-base N` puts the services at N, N+1, ... N+4, so two local modes can run side by side),
 * and a check, before a service starts, that its port is free: the local mode only ever uses
 * services it started itself.
 */
import { createServer } from "node:net";

/** The services in port order, with their default ports and the flag and variable that move each. */
export const LOCAL_SERVICES = {
  endpoint: { name: "the decision endpoint", port: 8080, flag: "--port", env: "DECIDE_LOCAL_ENDPOINT_PORT" },
  dynamodb: {
    name: "DynamoDB Local",
    port: 8000,
    flag: "--dynamodb-port",
    env: "DECIDE_LOCAL_DYNAMODB_PORT",
  },
  sqs: { name: "local SQS", port: 9324, flag: "--sqs-port", env: "DECIDE_LOCAL_SQS_PORT" },
  bus: { name: "the local event bus", port: 9195, flag: "--bus-port", env: "DECIDE_LOCAL_BUS_PORT" },
  review: { name: "the review page", port: 8090, flag: "--review-port", env: "DECIDE_LOCAL_REVIEW_PORT" },
} as const;

/** A local service. */
export type LocalService = keyof typeof LOCAL_SERVICES;

/** The port of each local service. */
export type LocalPorts = Record<LocalService, number>;

/** A port a local service needs is taken: one line naming the service, the port and the fix. */
export class PortInUseError extends Error {
  override name = "PortInUseError";
  constructor(
    readonly service: LocalService,
    readonly port: number,
  ) {
    const { name, flag, env } = LOCAL_SERVICES[service];
    super(
      `${name} cannot listen on 127.0.0.1:${port}: the port is in use (another npm start?). ` +
        `Stop that one, or move this one with ${flag} (${env}) or --port-base`,
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

/** Throws {@link PortInUseError} unless `port` can be listened on at 127.0.0.1 (0: any free port). */
export async function ensurePortFree(service: LocalService, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) =>
      reject(error.code === "EADDRINUSE" ? new PortInUseError(service, port) : error),
    );
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve()));
  });
}
