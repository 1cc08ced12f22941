/**
 * The local stand-in for an event source mapping's concurrency: a group of pollers on one queue
 * that the capacity follower resizes as it would set `MaximumConcurrency` (more pollers start at
 * once; fewer let the ones removed finish their invocation first).
 */
import type { MappingConcurrency } from "../../shared/domain/fleet-reading.ts";
import type { SqsPoller } from "./sqs/sqs-poller.ts";

/** Pollers made by `start`, as many as set. */
export class PollerGroup implements MappingConcurrency {
  /** The pollers running now (a live list: it changes as the group is resized). */
  readonly pollers: SqsPoller[] = [];
  private readonly stopping: Promise<void>[] = [];

  constructor(
    private readonly start: () => SqsPoller,
    size: number,
  ) {
    for (let i = 0; i < size; i++) this.pollers.push(start());
  }

  async current(): Promise<number> {
    return this.pollers.length;
  }

  async set(maximum: number): Promise<void> {
    while (this.pollers.length < maximum) this.pollers.push(this.start());
    while (this.pollers.length > maximum) this.stopping.push(this.pollers.pop()!.stop());
  }

  /** Stops every poller, those removed earlier included, waiting for invocations in progress. */
  async stop(): Promise<void> {
    await Promise.all([...this.pollers.map((p) => p.stop()), ...this.stopping]);
  }
}
