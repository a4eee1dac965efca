/**
 * Read pins (collection `read_pins`): per server process, a lower bound of the fold
 * numbers its reads may still be reading at, so the folder deletes the parts a
 * compaction replaced as soon as no read can still need them, instead of a fixed grace
 * period after the compaction became visible (docs/ingest-design.md, "Compaction").
 *
 * A read pins its view ({@link withView}) from before it reads the fold state until its
 * last read of series-day or rollup documents is done. Each process keeps one document,
 * `{_id: <Store.holder>, min, at}`: `min` is at most the fold number V of every view its
 * reads hold or will read (the fold state's `visible` only grows, so a view read later
 * is at least one read earlier), and `at` is when the database last wrote it. A
 * compaction numbered c replaced parts that only views below c read: once every pin
 * written recently enough has `min >= c`, no read holds such a view, and every read
 * that starts later reads a view of at least c (a process writes its pin before its
 * first read of the fold state, so a read the folder did not see pinned reads a view
 * made visible after the compaction). Pins older than the grace period plus
 * {@link PIN_REFRESH_MS} are those of stopped processes and are ignored: a read starts
 * only once a write of its process's pin that began at most {@link PIN_REFRESH_MS} earlier
 * is confirmed (the process rewrites the pin, without making reads wait, when its last
 * write began half that long ago), and no read lasts the grace period (the folder's
 * argument for deleting after it).
 */
import { type Collection, type Db, MongoNetworkError } from 'mongodb';
import { readView, type ReadView } from './fold-state.ts';

/** Collection name of the read pins (one small document per server process that reads). */
export const READ_PINS_COLLECTION = 'read_pins';

/** One process's read pin. */
export interface ReadPinDocument {
  /** The process's `Store.holder`. */
  _id: string;
  /** No read of the process holds or will read a view below this fold number. */
  min: number;
  /** When the database last wrote the pin (its clock, `$currentDate`). */
  at: Date;
}

/** A process rewrites its pin before a read when the last write is older than this, in ms. */
export const PIN_REFRESH_MS = 10_000;

/** How long after the last read ends a process raises (or removes) its pin, in ms. */
const REPORT_DELAY_MS = 200;

/** The read pins collection of `db`. */
export const readPins = (db: Db): Collection<ReadPinDocument> => db.collection<ReadPinDocument>(READ_PINS_COLLECTION);

/**
 * What one process pins: the views its reads hold, the highest view it has read, and
 * what its pin document says. Lives in `Store.pins`; one per `Store`.
 */
export class ReadPins {
  /** Fold numbers of the views held, by read (a read not past its fold-state read yet holds the `min` last sent). */
  private readonly held = new Map<number, number>();
  private nextRead = 0;
  /** The highest fold number a read of this process has seen: every later view is at least this. */
  private seen = 0;
  /** The `min` last sent to the database (0 before the first write). */
  private sent = 0;
  /** When the last write of the pin started (ms, this process's clock), or null when no pin document is known to exist. */
  private writtenAt: number | null = null;
  /** When the last write the database confirmed started (ms, this process's clock), or null: the pin is at least this recent. */
  private confirmedAt: number | null = null;
  /** Counts the pin's deletions: a write confirmed after a deletion was queued confirms nothing. */
  private deletions = 0;
  private timer: NodeJS.Timeout | null = null;
  /** The pin's writes and deletions, one after another, so a deletion never lands after a later write. */
  private queue: Promise<unknown> = Promise.resolve();
  /** The last write a read started: every read waits for it before reading its view. */
  private ready: Promise<unknown> = Promise.resolve();

  constructor(private readonly holder: string) {}

  /** The lowest fold number a read of this process holds or will read: what its pin may say. */
  private lowest(): number {
    let lowest = this.seen;
    for (const view of this.held.values()) lowest = Math.min(lowest, view);
    return lowest;
  }

  /** Runs `operation` on the pin after the ones queued before it. */
  private enqueue<T>(operation: () => Promise<T>): Promise<T> {
    const done = this.queue.then(operation);
    this.queue = done.catch(() => undefined);
    return done;
  }

  /** Queues a write of the pin: `min` raised to {@link lowest} (never lowered: `$max`), `at` the database's now. */
  private write(db: Db): Promise<unknown> {
    const min = Math.max(this.sent, this.lowest());
    this.sent = min;
    const started = Date.now();
    const deletions = this.deletions;
    this.writtenAt = started;
    const update = () => readPins(db).updateOne({ _id: this.holder }, { $max: { min }, $currentDate: { at: true } }, { upsert: true });
    // Written again once after a network error: the update is idempotent, and a
    // standalone server gets no retryable writes from the driver, so a pooled connection
    // that died with a restarted database would otherwise fail the read it pins.
    return this.enqueue(() =>
      update().catch((error: unknown) => (error instanceof MongoNetworkError ? update() : Promise.reject(error))),
    ).then(
      () => {
        // Not when a deletion was queued meanwhile: it runs after this write.
        if (this.deletions === deletions) this.confirmedAt = Math.max(this.confirmedAt ?? 0, started);
      },
      (error: unknown) => {
        // Not known to be written: the next read writes it again before reading its view.
        this.writtenAt = null;
        this.confirmedAt = null;
        throw error;
      },
    );
  }

  /**
   * Runs `read` with the current view (`readView`), pinned until it settles. The pin is
   * written again when there is none or its last write started more than half of
   * {@link PIN_REFRESH_MS} ago; the read waits for that write only when no write of the
   * pin was confirmed within {@link PIN_REFRESH_MS}. A pin confirmed that recently is
   * honoured by the folder for longer than any read lasts (the grace period plus
   * {@link PIN_REFRESH_MS}, see this module's comment), and its `min` is at most every
   * view read later, so under steady reads none waits for the pin's write.
   * @param viewOf reads the view once the pin is stored (default: `readView`); a caller
   *   may read it beside other reads, or twice, as long as every fold-state read it makes
   *   starts after this call (so after the pin's write).
   * @throws what `read`, `viewOf` or the pin's write throws (a driver error: the database is unreachable).
   */
  async with<T>(
    db: Db,
    read: (view: ReadView) => Promise<T>,
    viewOf: (db: Db) => Promise<ReadView> = (pinned) => readView({ db: pinned }),
  ): Promise<T> {
    const id = this.nextRead++;
    this.held.set(id, this.sent);
    try {
      const now = Date.now();
      if (this.writtenAt === null || now - this.writtenAt > PIN_REFRESH_MS / 2) {
        this.ready = this.write(db);
        // A write no read awaits fails quietly: the next read writes the pin again.
        this.ready.catch(() => undefined);
      }
      const confirmed = this.confirmedAt !== null && now - this.confirmedAt <= PIN_REFRESH_MS;
      // Also when another read started the write: the pin is stored before any view is read.
      if (!confirmed) await this.ready;
      const view = await viewOf(db);
      this.held.set(id, view.visible);
      this.seen = Math.max(this.seen, view.visible);
      return await read(view);
    } finally {
      this.held.delete(id);
      this.schedule(db);
    }
  }

  /**
   * A moment after a read ends: removes the pin when no read is under way (the next read
   * writes it again before reading the view), otherwise raises its `min` to what the
   * reads under way hold. Failures are ignored: a pin left lower only delays deletions.
   */
  private schedule(db: Db): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.held.size === 0) {
        if (this.writtenAt === null) return;
        this.writtenAt = null;
        this.confirmedAt = null;
        this.deletions += 1;
        this.enqueue(() => readPins(db).deleteOne({ _id: this.holder })).catch(() => undefined);
      } else if (this.lowest() > this.sent) {
        this.write(db).catch(() => undefined);
      }
    }, REPORT_DELAY_MS);
    this.timer.unref();
  }
}

/**
 * Runs `read` with the current {@link ReadView}, pinned in `store.pins` until it settles,
 * so the parts it may read are not deleted under it (see this module's comment). Every
 * read of series-day or rollup documents through `visibleIn` goes through this.
 * @param viewOf how the view is read once the pin is stored (see {@link ReadPins.with}; default `readView`).
 * @throws what `read` throws; a driver error when the pin cannot be written.
 */
export function withView<T>(
  store: { db: Db; pins: ReadPins },
  read: (view: ReadView) => Promise<T>,
  viewOf?: (db: Db) => Promise<ReadView>,
): Promise<T> {
  return store.pins.with(store.db, read, viewOf);
}

/**
 * The lowest `min` of the pins the database wrote in the last `maxAgeMs` (its clock,
 * `$$NOW`), or Infinity when there is none: no read of a live process holds a view below it.
 */
export async function lowestPin(db: Db, maxAgeMs: number): Promise<number> {
  const [row] = await readPins(db)
    .aggregate<{ min: number }>([
      // In ms since the epoch: the embedded server compares two dates in an expression wrongly.
      { $match: { $expr: { $gte: [{ $toLong: '$at' }, { $subtract: [{ $toLong: '$$NOW' }, maxAgeMs] }] } } },
      { $group: { _id: null, min: { $min: '$min' } } },
    ])
    .toArray();
  return row?.min ?? Number.POSITIVE_INFINITY;
}
