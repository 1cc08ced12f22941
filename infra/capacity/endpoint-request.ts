/**
 * A call to the simulated endpoint and the instance that serves it: the state the endpoint's
 * queueing (`endpoint-sim.ts`) keeps per request and per instance.
 */

/** An item's answer within a request. */
export const ITEM = { pending: 0, ok: 1, queueFull: 2, deadline: 3 } as const;

/** One InvokeEndpoint call of `size` items; `answered` is called once, when the endpoint answers. */
export abstract class EndpointRequest {
  readonly results: Uint8Array;
  next = 0;
  waiting = false;
  done = false;
  deadline = Number.POSITIVE_INFINITY;
  deadlineSet = false;
  /** SageMaker gave up on the call (60 s): the items not started are not evaluated. */
  cut = false;
  instance: SimInstance | undefined;

  constructor(readonly size: number) {
    this.results = new Uint8Array(size);
  }

  /** The endpoint's answer, one result per item in `results`. */
  abstract answered(now: number): void;
}

/** One instance (real-time) or one container (serverless), with its work queue. */
export class SimInstance {
  readonly queue: EndpointRequest[] = [];
  head = 0;
  /** Requests waiting in `queue` (stale entries of aborted ones excluded). */
  live = 0;
  running: EndpointRequest | undefined;
  inflight = 0;
  stoppedAt: number | undefined;
  draining = false;

  constructor(
    readonly launchedAt: number,
    readonly readyAt: number,
  ) {}
}
