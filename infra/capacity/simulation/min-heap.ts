/**
 * A binary min-heap of integer ids ordered by a key function (the simulation's visible messages,
 * oldest-sent first).
 */
export class MinHeap {
  private ids = new Int32Array(64);
  private count = 0;

  /** @param key the ordering key of an id; smaller comes out first. */
  constructor(private readonly key: (id: number) => number) {}

  /** Ids held. */
  get size(): number {
    return this.count;
  }

  /** Adds `id`. */
  push(id: number): void {
    if (this.count === this.ids.length) {
      const grown = new Int32Array(this.ids.length * 2);
      grown.set(this.ids);
      this.ids = grown;
    }
    const k = this.key(id);
    let i = this.count++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.key(this.ids[parent]!) <= k) break;
      this.ids[i] = this.ids[parent]!;
      i = parent;
    }
    this.ids[i] = id;
  }

  /** Removes and returns the id with the smallest key (the heap must not be empty). */
  pop(): number {
    const top = this.ids[0]!;
    const last = this.ids[--this.count]!;
    const k = this.key(last);
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.count) break;
      const right = left + 1;
      const child =
        right < this.count && this.key(this.ids[right]!) < this.key(this.ids[left]!) ? right : left;
      if (this.key(this.ids[child]!) >= k) break;
      this.ids[i] = this.ids[child]!;
      i = child;
    }
    this.ids[i] = last;
    return top;
  }
}
