/**
 * A small seeded pseudo-random generator (mulberry32): the same seed gives the same model bytes on
 * every machine, which keeps generated test models and benchmark models reproducible.
 */
export class SeededRandom {
  private state: number;

  /** @param seed any 32-bit integer; the same seed always yields the same sequence. */
  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** The next unsigned 32-bit integer. */
  nextUint32(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = Math.imul(this.state ^ (this.state >>> 15), 1 | this.state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** A float in [0, 1). */
  nextFloat(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Fills `target` with random bytes, four at a time. */
  fillBytes(target: Uint8Array): Uint8Array {
    // A Uint32Array view needs a 4-byte aligned offset; fall back to byte writes otherwise.
    const words = target.byteOffset % 4 === 0 ? Math.floor(target.length / 4) : 0;
    const view = new Uint32Array(target.buffer, target.byteOffset, words);
    for (let i = 0; i < words; i++) view[i] = this.nextUint32();
    for (let i = words * 4; i < target.length; i++) target[i] = this.nextUint32() & 0xff;
    return target;
  }

  /** `count` floats drawn uniformly with mean 0 and standard deviation `std`. */
  uniformFloats(count: number, std: number): Float32Array {
    const halfWidth = std * Math.sqrt(3);
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = (this.nextFloat() * 2 - 1) * halfWidth;
    return out;
  }
}
