/**
 * The registry look-ups of one request that decide which bucket pipelines it will run
 * and what they cost: counting a grouped query's groups, finding the series of a series
 * list (whose `buckets` fields then reserve their share). The bucket loader waits until
 * none is pending before it runs any pipeline, so every field of the request has
 * reserved its share of the budget first, and a request over budget runs no pipeline
 * at all (see `bucket-loader.ts`).
 */
export class Planning {
  private pending = 0;
  private waiting: (() => void)[] = [];

  /** Counts `work` as pending until it settles; returns it unchanged. Call it before the first `await` of a resolver. */
  track<T>(work: Promise<T>): Promise<T> {
    this.pending += 1;
    const settled = () => {
      this.pending -= 1;
      if (this.pending === 0) for (const wake of this.waiting.splice(0)) wake();
    };
    work.then(settled, settled);
    return work;
  }

  /**
   * Resolves once no look-up is pending and the resolvers their results started have
   * run: it waits for a turn of the event loop (`setImmediate`, after every queued
   * promise continuation) with nothing pending.
   */
  async idle(): Promise<void> {
    for (;;) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.pending === 0) return;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }
}
