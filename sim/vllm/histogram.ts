/** A Prometheus-style histogram: fixed upper bounds, per-bucket counts, a sum and a count. */
export class Histogram {
  readonly upperBounds: readonly number[];
  /** Non-cumulative counts: index i counts values in (bound[i-1], bound[i]]; the last slot is (last bound, +Inf). */
  readonly #counts: number[];
  #sum = 0;
  #count = 0;

  constructor(upperBounds: readonly number[]) {
    this.upperBounds = [...upperBounds];
    this.#counts = new Array<number>(upperBounds.length + 1).fill(0);
  }

  /** Records one value (prometheus_client semantics: a value equal to a bound falls into that bound's bucket). */
  observe(value: number): void {
    let index = this.upperBounds.findIndex((bound) => value <= bound);
    if (index === -1) index = this.upperBounds.length;
    this.#counts[index] = (this.#counts[index] ?? 0) + 1;
    this.#sum += value;
    this.#count += 1;
  }

  get sum(): number {
    return this.#sum;
  }

  get count(): number {
    return this.#count;
  }

  /** Cumulative counts per upper bound, ending with `+Inf` (= count), as exposed in `_bucket{le=...}`. */
  cumulative(): Array<{ le: number; count: number }> {
    let running = 0;
    return this.#counts.map((bucketCount, index) => {
      running += bucketCount;
      return { le: this.upperBounds[index] ?? Number.POSITIVE_INFINITY, count: running };
    });
  }
}
