/**
 * The folder as a background job (docs/ingest-design.md, "Who folds"): every server
 * instance runs it; the lease in `fold_state` lets one of them fold at a time, and
 * another takes over within the lease's time when that one stops.
 */
import type { Config } from '../config.ts';
import { foldOnce, type FoldOutcome } from '../storage/fold.ts';
import { recentBacklog, type Backlog } from '../storage/ingest-log.ts';
import type { Store } from '../storage/store.ts';
import type { Job } from './scheduler.ts';
import { compactOnce, type CompactOutcome } from '../storage/compaction.ts';
import { releaseLease } from '../storage/lease.ts';

/** Totals of the folds this process ran, for `/metrics`. */
export interface FoldTotals {
  folds: number;
  readings: number;
  /** Seconds spent folding (the folds that folded something). */
  seconds: number;
}

/**
 * When the folder waits before folding (docs/ingest-design.md, "When to fold"): while
 * batches keep arriving, each fold would compete with their acknowledgements for the
 * database, so the folder lets the tail grow until one of these holds, as InfluxDB
 * snapshots its write cache when it reaches a size (`cache-snapshot-memory-size`) or
 * when its shard has gone cold (`cache-snapshot-write-cold-duration`).
 */
export interface FoldDelay {
  /** Fold once no batch was acknowledged for this long, in ms (`FOLD_QUIET_MS`; 0: fold whenever there is a tail). */
  quietMs: number;
  /** Fold once the oldest unfolded batch is this old, in ms (`FOLD_MAX_DELAY_MS`), however busy the writes. */
  maxDelayMs: number;
  /**
   * Fold once the tail holds this many readings (`FOLD_TAIL_READINGS`), however busy the
   * writes: every read plans the tail's readings of its metric, so its cost grows with
   * them (docs/ingest-design.md, "When to fold").
   */
  tailReadings: number;
  /** Fold once the tail holds this many readings (a full fold, `FOLD_MAX_READINGS`). */
  fullReadings: number;
}

/**
 * Whether the folder should fold now, given the unfolded log (`recentBacklog`) at
 * `now` and when the folder last saw it grow (`grewAt`; both ms since epoch): never with
 * no tail; always with `quietMs` 0; otherwise once the tail stopped growing `quietMs`
 * ago, the oldest batch waited `maxDelayMs`, or it holds `tailReadings` readings or a
 * full fold. Pure.
 *
 * The tail's growth is observed by the folder rather than read from `receivedAt`: a
 * batch's entry carries the time its request arrived, and appears in the log only once
 * its series are registered (about 1 s for the first batches of the demo), so the newest
 * `receivedAt` can be old while batches keep arriving.
 */
export function foldDue(backlog: Backlog, now: number, grewAt: number, delay: FoldDelay): boolean {
  if (backlog.entries === 0 || backlog.oldest === null) return false;
  if (delay.quietMs <= 0) return true;
  return (
    now - grewAt >= delay.quietMs ||
    now - backlog.oldest >= delay.maxDelayMs ||
    backlog.readings >= Math.min(delay.tailReadings, delay.fullReadings)
  );
}

/** What the folder saw of the tail the last time it grew: its newest entry and readings, and when (ms since epoch). */
export interface TailSeen {
  newest: number | null;
  readings: number;
  at: number;
}

/**
 * The folder's view of the tail after measuring `backlog` at `now`: unchanged while no
 * entry arrived since `seen` (the same newest entry, no more readings), else `now`.
 */
export function tailSeen(seen: TailSeen | undefined, backlog: Backlog, now: number): TailSeen {
  if (seen !== undefined && seen.newest === backlog.newest && backlog.readings <= seen.readings) {
    return { ...seen, readings: backlog.readings };
  }
  return { newest: backlog.newest, readings: backlog.readings, at: now };
}

/** How the fold job runs (see {@link foldJob}); a server's come from its configuration ({@link foldJobSettings}). */
export interface FoldJobOptions {
  /** How often the job runs, in ms (`FOLD_INTERVAL_MS`; 0: never). */
  intervalMs: number;
  /** Readings per fold at most (`FOLD_MAX_READINGS`). */
  maxReadings: number;
  /** Folds that wrote to a day before its parts are compacted (`COMPACT_AFTER_FOLDS`). */
  compactAfterFolds: number;
  /** Time in ms without a fold writing to a day of two folds or more after which it is compacted too (`COMPACT_QUIET_MS`); without it, only `compactAfterFolds`. */
  compactQuietMs?: number;
  /** Runs of one size a compaction merges at once (`COMPACT_FAN_IN`, see `tieredFrom`); default 2. */
  compactFanIn?: number;
  /** Readings per document on average that seal a run (`COMPACT_SEAL_READINGS`, see `tieredFrom`); default 0: none. */
  compactSealReadings?: number;
  /** How long parts replaced by a compaction are kept, in ms: longer than any query runs. */
  compactGraceMs: number;
  /** When to wait rather than fold (`FOLD_QUIET_MS`, `FOLD_MAX_DELAY_MS`, `FOLD_TAIL_READINGS`; a full fold is `maxReadings`); without it, fold at every run. */
  delay?: Omit<FoldDelay, 'fullReadings'>;
  /** Told every fold that folded something, with its duration in seconds. */
  onFold?: (outcome: FoldOutcome, seconds: number) => void;
  /** Told every compaction made visible, with its duration in seconds. */
  onCompact?: (outcome: CompactOutcome, seconds: number) => void;
}

/**
 * The fold job's options of a server with configuration `config`: every `FOLD_*` and
 * `COMPACT_*` setting, and a grace period for replaced parts of `QUERY_TIMEOUT_MS` plus
 * 30 s (longer than any query runs). The server (`npm start`) and the load test
 * (`npm run load`) fold with these, so the load test measures what a server does.
 */
export function foldJobSettings(
  config: Pick<
    Config,
    | 'FOLD_INTERVAL_MS'
    | 'FOLD_MAX_READINGS'
    | 'FOLD_QUIET_MS'
    | 'FOLD_MAX_DELAY_MS'
    | 'FOLD_TAIL_READINGS'
    | 'COMPACT_AFTER_FOLDS'
    | 'COMPACT_QUIET_MS'
    | 'COMPACT_FAN_IN'
    | 'COMPACT_SEAL_READINGS'
    | 'QUERY_TIMEOUT_MS'
  >,
): FoldJobOptions & Required<Pick<FoldJobOptions, 'delay'>> {
  return {
    intervalMs: config.FOLD_INTERVAL_MS,
    maxReadings: config.FOLD_MAX_READINGS,
    compactAfterFolds: config.COMPACT_AFTER_FOLDS,
    compactQuietMs: config.COMPACT_QUIET_MS,
    compactFanIn: config.COMPACT_FAN_IN,
    compactSealReadings: config.COMPACT_SEAL_READINGS,
    compactGraceMs: config.QUERY_TIMEOUT_MS + 30_000,
    delay: { quietMs: config.FOLD_QUIET_MS, maxDelayMs: config.FOLD_MAX_DELAY_MS, tailReadings: config.FOLD_TAIL_READINGS },
  };
}

/**
 * A job that folds the ingest log every `intervalMs` (0: never; then writes pile up
 * until INGEST_BACKLOG): each run folds what is in the log, again at once while the
 * folds come out at least half full (a backlog), until another instance holds the lease
 * or the scheduler stops, then compacts the days due (`compactOnce`: days
 * that `compactAfterFolds` folds wrote to, in tiers: `tieredFrom`) and deletes the parts earlier compactions
 * replaced once no read pins a view from before them (`storage/read-pins.ts`), or
 * `compactGraceMs` has passed. Its log line carries the folds, readings,
 * parts and compactions of the run, at debug level (it runs several times a second). With
 * `delay`, a run folds only when {@link foldDue} says so (the compactions run anyway).
 * Each fold at least half full sets `store.ingest.foldRate`, the rate a refused writer's
 * `Retry-After` is computed with (`backlogWait`).
 * @param options see {@link FoldJobOptions}; `delay` decides when to fold rather than wait
 *   (see {@link FoldDelay}), and without it the job folds at every run.
 */
export function foldJob(store: Store, options: FoldJobOptions): Job {
  let seen: TailSeen | undefined;
  return {
    name: 'fold',
    intervalMs: options.intervalMs,
    runAtStart: true,
    quiet: true,
    async run(signal) {
      const run = { folds: 0, readings: 0, parts: 0, compactions: 0, merged: 0, deleted: 0 };
      let due = true;
      if (options.delay !== undefined) {
        const now = Date.now();
        const backlog = await recentBacklog(store, now);
        seen = tailSeen(seen, backlog, now);
        due = foldDue(backlog, now, seen.at, { ...options.delay, fullReadings: options.maxReadings });
      }
      while (due && !signal.aborted) {
        const started = performance.now();
        const outcome = await foldOnce(store, store.holder, { maxReadings: options.maxReadings });
        if (outcome.fold === null) break;
        const seconds = (performance.now() - started) / 1000;
        options.onFold?.(outcome, seconds);
        // A fold at least half full tells the rate `Retry-After` is computed with; a
        // smaller one is mostly its fixed round trips.
        if (outcome.readings >= options.maxReadings / 2 && seconds > 0) store.ingest.foldRate = outcome.readings / seconds;
        run.folds += 1;
        run.readings += outcome.readings;
        run.parts += outcome.parts + outcome.rollupParts;
        // A fold costs about the same few round trips however few readings it takes:
        // fold again at once only while folds come out (nearly) full, else let the next
        // run, an interval later, take what arrived meanwhile in one fold.
        if (outcome.readings < options.maxReadings / 2) break;
      }
      while (!signal.aborted) {
        const started = performance.now();
        const compacted = await compactOnce(store, store.holder, {
          afterFolds: options.compactAfterFolds,
          ...(options.compactQuietMs === undefined ? {} : { quietMs: options.compactQuietMs }),
          graceMs: options.compactGraceMs,
          tiered: true,
          fanIn: options.compactFanIn,
          sealReadings: options.compactSealReadings,
          pinned: true,
        });
        run.deleted += compacted.deleted;
        if (compacted.compaction === null) break;
        options.onCompact?.(compacted, (performance.now() - started) / 1000);
        run.compactions += 1;
        run.merged += compacted.merged;
      }
      if (signal.aborted) await releaseLease(store, store.holder).catch(() => undefined);
      return {
        changed: run.folds + run.compactions + run.deleted > 0,
        message: run.folds > 0 ? 'Folded acknowledged readings' : 'Fold: nothing to fold',
        details: run,
      };
    },
  };
}
