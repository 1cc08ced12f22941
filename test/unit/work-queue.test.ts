import { describe, expect, it } from "vitest";
import { QueueFullError, TaskAbortedError, WorkQueue } from "../../endpoint/runtime/work-queue.ts";

const later = <T>(value: T, ms = 20) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe("WorkQueue", () => {
  it("runs tasks one at a time, in order", async () => {
    const queue = new WorkQueue();
    const log: string[] = [];
    const task = (name: string) => async () => {
      log.push(`start ${name}`);
      await later(null, 5);
      log.push(`end ${name}`);
      return name;
    };
    const results = await Promise.all([queue.run(task("a")), queue.run(task("b")), queue.run(task("c"))]);
    expect(results).toEqual(["a", "b", "c"]);
    expect(log).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
  });

  it("starts a waiting live task before waiting batch tasks, each kind in order", async () => {
    const queue = new WorkQueue();
    const started: string[] = [];
    const task = (name: string) => async () => {
      started.push(name);
      await later(null, 2);
    };
    await Promise.all([
      queue.run(task("b1"), undefined, "batch"),
      queue.run(task("b2"), undefined, "batch"),
      queue.run(task("b3"), undefined, "batch"),
      queue.run(task("l1")),
      queue.run(task("l2"), undefined, "live"),
    ]);
    // b1 was running when the live tasks arrived; they go next, then the rest of the batch.
    expect(started).toEqual(["b1", "l1", "l2", "b2", "b3"]);
  });

  it("admits when idle, then at most maxWaiting behind the running task", async () => {
    const queue = new WorkQueue(1);
    const first = queue.run(() => later("first"));
    const second = queue.run(() => later("second"));
    await expect(queue.run(() => later("third"))).rejects.toBeInstanceOf(QueueFullError);
    expect(await Promise.all([first, second])).toEqual(["first", "second"]);
    expect(await queue.run(() => later("again"))).toBe("again");
    const none = new WorkQueue(0);
    const only = none.run(() => later("only"));
    await expect(none.run(() => later("x"))).rejects.toThrow(/busy/);
    expect(await only).toBe("only");
  });

  it("never starts a task whose signal aborted while it waited, and keeps going after failures", async () => {
    const queue = new WorkQueue();
    const controller = new AbortController();
    let started = false;
    const failing = queue.run(async () => {
      await later(null);
      throw new Error("boom");
    });
    const waiting = queue.run(async () => {
      started = true;
    }, controller.signal);
    // Handlers on both before anything settles: the aborted waiter rejects at once.
    const outcomes = Promise.all([
      expect(failing).rejects.toThrow("boom"),
      expect(waiting).rejects.toBeInstanceOf(TaskAbortedError),
    ]);
    controller.abort(new Error("deadline"));
    await outcomes;
    expect(started).toBe(false);
    expect(await queue.run(async () => "next")).toBe("next");
  });

  it("drops a waiter the moment its signal aborts: it no longer counts against the bound", async () => {
    const queue = new WorkQueue(2);
    let release!: () => void;
    const running = queue.run(
      () =>
        new Promise<string>((resolve) => {
          release = () => resolve("running");
        }),
    );
    const controllers = [new AbortController(), new AbortController()];
    const abandoned = controllers.map((c) => queue.run(async () => "never", c.signal));
    const refused = Promise.all(abandoned.map((a) => expect(a).rejects.toBeInstanceOf(TaskAbortedError)));
    await expect(queue.run(async () => "x")).rejects.toBeInstanceOf(QueueFullError);
    for (const c of controllers) c.abort(new Error("client disconnected"));
    await refused;
    expect(queue.waiting).toBe(0);
    // The next real request is admitted at once and runs right after the running one.
    const next = queue.run(async () => "next");
    expect(queue.waiting).toBe(1);
    release();
    expect(await running).toBe("running");
    expect(await next).toBe("next");
    await queue.drain();
    expect(queue.busy).toBe(false);
  });
});
