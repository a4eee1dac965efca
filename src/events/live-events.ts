/**
 * What live subscriptions (`subscription { buckets }`, `graphql/live.ts`) learn of new
 * readings, keyed by metric:
 * - in-process: the record callers (the record mutations and the plain HTTP writes)
 *   report each acknowledged write here, after `recordBatch` returned; one instance
 *   sees only its own writes;
 * - change stream: when the database supports change streams (a replica set; probed at
 *   start-up), one stream on the ingest log (each insert an acknowledged batch), filtered by `$match` to the
 *   metrics someone subscribed to, reports the writes of every instance (this one's
 *   included, so in-process reports are then ignored).
 * A subscription turns these reports into pushes at most once every `LIVE_MIN_INTERVAL_MS`
 * ({@link coalescedWrites}).
 */
import { EventEmitter } from 'node:events';
import { Repeater } from 'graphql-yoga';
import type { ChangeStream, ResumeToken } from 'mongodb';
import type { Logger } from '../logger.ts';
import { probeChangeStreams, watchIngestLog, type LogEntryChange } from '../storage/changes.ts';
import type { LogEntryDocument } from '../storage/ingest-log.ts';
import type { Store } from '../storage/store.ts';

const MINUTE_MS = 60_000;

/**
 * New readings of one metric: they all lie in `[from, to)`, ms since the epoch (UTC),
 * whole minutes (the stored resolution). A range may be wider than the readings it
 * reports (a change stream tells the span of a whole batch, over all its metrics).
 */
export interface MetricWrite {
  metric: string;
  from: number;
  to: number;
}

/** Where a server's live subscriptions learn of new readings. */
export type LiveSource = 'in-process' | 'change-stream';

/** One subscriber of {@link LiveEvents.listen}. */
export interface LiveListener {
  /** New readings of the metric listened to. */
  write(write: MetricWrite): void;
  /** The server is shutting down: the subscription should end. */
  close(): void;
}

/**
 * The metric-keyed feed of new readings of one server (see the module comment). Not a
 * queue: a listener that is not there when a write is reported does not hear of it.
 */
export class LiveEvents {
  private readonly emitter = new EventEmitter();
  private readonly closers = new Set<() => void>();
  private feed: ChangeStreamFeed | undefined;
  private closed = false;

  constructor(private readonly logger: Logger) {
    // One listener per open subscription: no leak warning at 10.
    this.emitter.setMaxListeners(0);
  }

  /** `change-stream` once {@link watchChangeStreams} found them supported, else `in-process`. */
  get source(): LiveSource {
    return this.feed === undefined ? 'in-process' : 'change-stream';
  }

  /**
   * Reports an acknowledged write of `readings` (called after `recordBatch` returned):
   * one {@link MetricWrite} per metric, from the minute of its earliest reading to the
   * end of the minute of its latest. Ignored while a change stream reports the writes.
   */
  recorded(readings: readonly { metric: string; time: number }[]): void {
    if (this.feed !== undefined || readings.length === 0) return;
    const spans = new Map<string, { from: number; to: number }>();
    for (const { metric, time } of readings) {
      const minute = Math.floor(time / MINUTE_MS) * MINUTE_MS;
      const span = spans.get(metric);
      if (span === undefined) spans.set(metric, { from: minute, to: minute + MINUTE_MS });
      else {
        span.from = Math.min(span.from, minute);
        span.to = Math.max(span.to, minute + MINUTE_MS);
      }
    }
    for (const [metric, span] of spans) this.publish({ metric, ...span });
  }

  /** Tells the listeners of `write.metric`. */
  publish(write: MetricWrite): void {
    this.emitter.emit(write.metric, write);
  }

  /**
   * Listens to the new readings of `metric` until the returned function is called.
   * With a change stream, the stream's `$match` follows the metrics listened to.
   */
  listen(metric: string, listener: LiveListener): () => void {
    const onWrite = (write: MetricWrite) => listener.write(write);
    const onClose = () => listener.close();
    if (this.closed) {
      queueMicrotask(onClose);
      return () => {};
    }
    this.emitter.on(metric, onWrite);
    this.closers.add(onClose);
    this.feed?.refresh();
    return () => {
      this.emitter.off(metric, onWrite);
      this.closers.delete(onClose);
      this.feed?.refresh();
    };
  }

  /** Metrics with at least one listener, sorted. */
  metrics(): string[] {
    return (this.emitter.eventNames().filter((name) => typeof name === 'string') as string[]).sort();
  }

  /**
   * Probes whether the database offers change streams (`storage/changes.ts`) and, if so,
   * takes the writes from one on the ingest log from now on (see the module
   * comment). The embedded SecantusDB runs standalone and has none.
   * @returns whether change streams are used, and the server's reason when they are not.
   */
  async watchChangeStreams(store: Store): Promise<{ used: boolean; reason?: string }> {
    const probe = await probeChangeStreams(store);
    if (!probe.supported) return { used: false, reason: probe.reason };
    this.feed = new ChangeStreamFeed(
      store,
      () => this.metrics(),
      (write) => this.publish(write),
      this.logger,
    );
    this.feed.refresh();
    return { used: true };
  }

  /** Ends every subscription and the change stream (at shutdown, before open connections are closed). */
  async close(): Promise<void> {
    this.closed = true;
    for (const close of [...this.closers]) close();
    await this.feed?.close();
  }
}

/**
 * The readings a new log entry reports: one {@link MetricWrite} per metric of the entry
 * that is listened to, from the minute of its earliest reading to the end of the minute
 * of its latest (the entry's span covers all its metrics, so a range may be wider than
 * one metric's readings). Empty for a change without metrics and times.
 */
export function writesOfChange(change: LogEntryChange): MetricWrite[] {
  if (!('fullDocument' in change) || !change.fullDocument) return [];
  const { metrics, first, last } = change.fullDocument;
  if (!Array.isArray(metrics) || !(first instanceof Date) || !(last instanceof Date)) return [];
  const from = Math.floor(first.getTime() / MINUTE_MS) * MINUTE_MS;
  const to = Math.floor(last.getTime() / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
  return metrics.filter((metric): metric is string => typeof metric === 'string').map((metric) => ({ metric, from, to }));
}

/** How long the feed waits before reopening a change stream that failed. */
const REOPEN_DELAY_MS = 1_000;

/**
 * One change stream on the ingest log for the metrics listened to (`watchIngestLog`). When the metrics listened to change, the stream is reopened
 * from the last event it saw (`startAfter` its resume token), so nothing is missed in
 * between; a stream that fails is reopened after a second, from there too.
 */
class ChangeStreamFeed {
  private stream: ChangeStream<LogEntryDocument, LogEntryChange> | undefined;
  private watching = '';
  private token: ResumeToken | undefined;
  private pending = false;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly metricsOf: () => string[],
    private readonly publish: (write: MetricWrite) => void,
    private readonly logger: Logger,
  ) {}

  /** Follows the metrics listened to, once the current turn of the event loop is done (one reopen for many subscriptions). */
  refresh(): void {
    if (this.pending || this.stopped) return;
    this.pending = true;
    setImmediate(() => {
      this.pending = false;
      void this.reopen(false);
    });
  }

  private async reopen(force: boolean): Promise<void> {
    if (this.stopped) return;
    const metrics = this.metricsOf();
    const key = JSON.stringify(metrics);
    if (!force && key === this.watching) return;
    this.watching = key;
    const old = this.stream;
    this.stream = undefined;
    if (old !== undefined) {
      this.token = old.resumeToken ?? this.token;
      await old.close().catch(() => {});
    }
    // Nobody listens: nothing to resume later.
    if (metrics.length === 0) {
      this.token = undefined;
      return;
    }
    const stream = watchIngestLog(this.store, metrics, this.token);
    this.stream = stream;
    stream.on('change', (change) => {
      this.token = change._id;
      for (const write of writesOfChange(change)) this.publish(write);
    });
    stream.on('error', (error) => {
      if (this.stream !== stream) return;
      this.logger.warn({ err: error }, 'The change stream of live subscriptions failed; reopening it in 1 s');
      this.stream = undefined;
      void stream.close().catch(() => {});
      clearTimeout(this.retry);
      this.retry = setTimeout(() => void this.reopen(true), REOPEN_DELAY_MS);
    });
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    await this.stream?.close().catch(() => {});
    this.stream = undefined;
  }
}

/** One push of a live subscription: `since` null for the first (the whole answer), else the earliest new reading's minute, at or after the range's start. */
export interface LiveTick {
  since: number | null;
}

/**
 * The pushes of one live subscription to the readings of `metric` in `[from, to)`: the
 * first at once (`since: null`), then one whenever new readings fell in the range, at
 * most once every `minIntervalMs`: writes that arrive sooner, or while the previous
 * push is still being answered, are coalesced into the next push, whose `since` is the
 * earliest of them. Ends when the consumer stops (`return()`, e.g. the client went
 * away: the listener is removed) or the server closes `events`.
 */
export function coalescedWrites(
  events: LiveEvents,
  range: { metric: string; from: number; to: number },
  minIntervalMs: number,
): AsyncIterableIterator<LiveTick> {
  return new Repeater<LiveTick>(async (push, stop) => {
    let since: number | null = null;
    let busy = true;
    let last = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const handOver = (tick: LiveTick) => {
      busy = true;
      last = Date.now();
      push(tick).then(
        () => {
          busy = false;
          flush();
        },
        () => {},
      );
    };
    const flush = () => {
      timer = undefined;
      if (since === null || busy) return;
      const wait = last + minIntervalMs - Date.now();
      if (wait > 0) {
        timer = setTimeout(flush, wait);
        return;
      }
      const tick = { since };
      since = null;
      handOver(tick);
    };
    const unlisten = events.listen(range.metric, {
      write: (write) => {
        if (write.to <= range.from || write.from >= range.to) return;
        const earliest = Math.max(write.from, range.from);
        since = since === null ? earliest : Math.min(since, earliest);
        if (timer === undefined) flush();
      },
      close: () => stop(),
    });
    handOver({ since: null });
    await stop;
    clearTimeout(timer);
    unlisten();
  });
}
