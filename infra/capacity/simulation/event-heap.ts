/**
 * The simulation's clock: a binary min-heap of timed callbacks, earliest first, ties in the order
 * they were scheduled (so a run is the same every time for the same seed). Kept in parallel
 * arrays, and a callback takes an argument, so that millions of events allocate little.
 */

/** A timed callback: it gets the time and the argument it was scheduled with. */
export type EventFn<T> = (now: number, arg: T) => void;

/** Timed callbacks, run in time order. */
export class EventHeap {
  private times = new Float64Array(1024);
  private seqs = new Float64Array(1024);
  private fns: EventFn<never>[] = [];
  private args: unknown[] = [];
  private size = 0;
  private seq = 0;
  /** The time of the callback running now (or last run). */
  now = 0;

  /** Runs `fn(time, arg)` at `time` (never before now; never at all when `time` is Infinity). */
  at<T>(time: number, fn: EventFn<T>, arg?: T): void {
    if (time === Number.POSITIVE_INFINITY) return;
    if (this.size === this.times.length) this.grow();
    const t = Math.max(time, this.now);
    const s = this.seq++;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pt = this.times[parent]!;
      if (pt < t || (pt === t && this.seqs[parent]! < s)) break;
      this.move(parent, i);
      i = parent;
    }
    this.times[i] = t;
    this.seqs[i] = s;
    this.fns[i] = fn as EventFn<never>;
    this.args[i] = arg;
  }

  /** Runs callbacks in order until none is left at or before `until`; the clock then reads `until`. */
  runUntil(until: number): void {
    while (this.size > 0 && this.times[0]! <= until) {
      const time = this.times[0]!;
      const fn = this.fns[0]! as EventFn<unknown>;
      const arg = this.args[0];
      this.removeTop();
      this.now = time;
      fn(time, arg);
    }
    this.now = until;
  }

  private removeTop(): void {
    const last = --this.size;
    const t = this.times[last]!;
    const s = this.seqs[last]!;
    const fn = this.fns[last]!;
    const arg = this.args[last];
    this.args[last] = undefined;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= last) break;
      const right = left + 1;
      const child = right < last && this.less(right, left) ? right : left;
      const ct = this.times[child]!;
      if (ct > t || (ct === t && this.seqs[child]! > s)) break;
      this.move(child, i);
      i = child;
    }
    if (last > 0) {
      this.times[i] = t;
      this.seqs[i] = s;
      this.fns[i] = fn;
      this.args[i] = arg;
    }
  }

  private less(a: number, b: number): boolean {
    const ta = this.times[a]!;
    const tb = this.times[b]!;
    return ta < tb || (ta === tb && this.seqs[a]! < this.seqs[b]!);
  }

  private move(from: number, to: number): void {
    this.times[to] = this.times[from]!;
    this.seqs[to] = this.seqs[from]!;
    this.fns[to] = this.fns[from]!;
    this.args[to] = this.args[from];
  }

  private grow(): void {
    const times = new Float64Array(this.times.length * 2);
    times.set(this.times);
    this.times = times;
    const seqs = new Float64Array(this.seqs.length * 2);
    seqs.set(this.seqs);
    this.seqs = seqs;
  }
}
