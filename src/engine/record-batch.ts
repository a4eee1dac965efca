import { CodedError, ErrorCode, InputError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { batchFingerprint } from '../model/batch.ts';
import { horizonsOf } from '../model/retention-policy.ts';
import type { Reading } from '../record/validate.ts';
import { isUnavailable, unavailable } from '../storage/failures.ts';
import { appendEntry, checkBacklog, completeClaim, knownBatch, type StoredBatch } from '../storage/ingest-log.ts';
import { checkMetricLimits, registerBatch, registrationNeeded } from '../storage/registration.ts';
import type { MetricDocument, Store } from '../storage/store.ts';
import { batchMetrics, batchSeries } from '../documents/from-readings.ts';

/** What one call of {@link recordBatch} did. */
export interface RecordOutcome {
  /** The client's batch id, or null when it sent none. */
  batchId: string | null;
  /** Readings of the batch, all of them stored when the call returns. */
  recorded: number;
  /** Readings this call stored. */
  applied: number;
  /** Readings an earlier call with the same batch id had stored (so this call did not store them again). */
  alreadyApplied: number;
  /** Distinct series of the batch. */
  series: number;
  /** Series-day documents the batch's readings fall into (each gets one part per fold that takes them). */
  documents: number;
}

/**
 * Records a validated batch (see `record/validate.ts`) so that an answer means stored,
 * and, with a `batchId`, exactly once however often the same batch is sent
 * (docs/ingest-design.md, "1. Acknowledge with one durable write"):
 * 1. checks the per-metric limits against the registry (reading only), refuses
 *    readings older than their metric's retention horizon, and refuses the batch when
 *    the unfolded log is past its bounds (`checkBacklog`);
 * 2. when the batch names a metric, field, tag key or series not registered yet
 *    (`registrationNeeded`), looks for its batch id's log entry first: the same readings
 *    answer at once as already stored, other readings are refused (BATCH_ID_REUSED);
 *    then registers the new names (`registerBatch`), so the next request finds them;
 * 3. appends the batch to the ingest log as one journaled insert (`appendEntry`), whose
 *    `_id` is the batch id: of concurrent attempts the database keeps one, and a resend
 *    finds the entry by its duplicate key and answers as in step 2;
 * 4. a resend of a batch that the write path before the ingest log had applied to some
 *    series-day documents only (a claim `npm run migrate` carried as `partial`) stores
 *    the readings of the other documents (`completeClaim`) and answers those as applied,
 *    the rest as already applied.
 * A batch of known series thus costs one read of its metrics' registry entries and the
 * log write.
 * Queries answer from the folded documents plus the log entries not folded yet, so the
 * readings are visible to the next request; the folder (`storage/fold.ts`) folds them
 * into series-day documents, rollups and sketches later, exactly once.
 * @param options.receivedAt when the request arrived (ms since epoch, UTC): the time of
 * readings sent without one, as already set by validation.
 * @param options.inputPath where a reading's time is in the input, for errors (default `readings[i].time`).
 * @throws InputError TOO_MANY_NAMES, READING_EXPIRED or BATCH_ID_REUSED, nothing written then.
 * @throws ServiceError INGEST_BACKLOG when the folder is behind (nothing written; retry after `retryAfterSeconds`).
 * @throws ServiceError UNAVAILABLE when the database could not be reached or did not
 * confirm the write: the batch may or may not be stored; the client retries with the
 * same batch id. It is logged with the batch id.
 */
export async function recordBatch(
  store: Store,
  readings: readonly Reading[],
  options: { batchId?: string; receivedAt: number; logger?: Logger; inputPath?: (index: number) => string },
): Promise<RecordOutcome> {
  const batchId = options.batchId ?? null;
  const outcome: RecordOutcome = { batchId, recorded: readings.length, applied: 0, alreadyApplied: 0, series: 0, documents: 0 };
  if (readings.length === 0) return outcome;
  try {
    const metrics = batchMetrics(readings);
    const registered = await checkMetricLimits(store, metrics);
    refuseExpired(readings, registered, options.inputPath);
    // Only what the acknowledgement needs: the statistics are the fold's work.
    const { series, documents } = batchSeries(readings);
    outcome.series = series.length;
    outcome.documents = documents;
    let fingerprint: string | undefined;
    if (batchId !== null) {
      fingerprint = batchFingerprint(readings.map((reading) => ({ ...reading, time: reading.timeFromServer ? null : reading.time })));
    }
    // A batch that names only what is registered is acknowledged by the log write alone
    // (a resend is then recognised by its duplicate key); one that registers names first
    // looks for its batch id, so a reused id registers nothing.
    const registers = registrationNeeded(store, { metrics, series }, registered);
    const known: StoredBatch =
      registers && batchId !== null ? await knownBatch(store, batchId, fingerprint, readings.length) : { status: 'new' };
    if (known.status === 'stored') return { ...outcome, alreadyApplied: readings.length };
    await checkBacklog(store);
    if (registers) await registerBatch(store, { metrics, series }, registered);
    const stored =
      known.status === 'new'
        ? await appendEntry(store, readings, { id: batchId ?? undefined, fingerprint, receivedAt: options.receivedAt })
        : known;
    if (stored.status === 'appended') return { ...outcome, applied: readings.length };
    if (stored.status === 'stored') return { ...outcome, alreadyApplied: readings.length };
    // A batch the write path before the ingest log had applied to some documents only.
    return { ...outcome, ...(await completeClaim(store, batchId!, readings, stored)) };
  } catch (error) {
    if (error instanceof CodedError) throw error;
    options.logger?.error(
      { err: error, batchId, readings: readings.length, unavailable: isUnavailable(error) },
      'A batch of readings was not acknowledged; the client should retry it with the same batchId',
    );
    if (isUnavailable(error)) throw unavailable('The batch was not stored');
    throw error;
  }
}

/**
 * Refuses a batch holding a reading dated before its metric's day horizon (see
 * `model/retention-policy.ts`): retention has deleted that day's documents, and would not
 * delete the day again. The horizon is the one the last retention pass applied, as
 * queries see it (`Metric.retention.dataFrom`); a reading older than the policy but
 * after that horizon is stored, and deleted by the next pass.
 * @throws InputError READING_EXPIRED naming the first such reading.
 */
function refuseExpired(
  readings: readonly Reading[],
  registered: ReadonlyMap<string, MetricDocument>,
  inputPath: (index: number) => string = (index) => `readings[${index}].time`,
): void {
  const dataFrom = new Map<string, number>();
  for (const [metric, doc] of registered) {
    const day = horizonsOf(doc.retention?.horizons).day;
    if (day !== null) dataFrom.set(metric, day);
  }
  if (dataFrom.size === 0) return;
  const index = readings.findIndex((reading) => reading.time < (dataFrom.get(reading.metric) ?? -Infinity));
  if (index < 0) return;
  const reading = readings[index]!;
  throw new InputError(
    ErrorCode.READING_EXPIRED,
    `Reading at ${new Date(reading.time).toISOString()} is older than metric "${reading.metric}" keeps data (its retention policy deleted the days before ${new Date(dataFrom.get(reading.metric)!).toISOString()}); nothing of the batch was written`,
    inputPath(index),
  );
}
