import { CodedError, ErrorCode, InputError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { batchFingerprint, batchMark } from '../model/batch.ts';
import { horizonsOf } from '../model/retention.ts';
import { dayOperations, planMetrics, planWrites } from '../record/plan.ts';
import { planRollups, type RollupPlan } from '../record/rollup-plan.ts';
import { withServerTime, type Reading } from '../record/validate.ts';
import { claimBatch, markBatchApplied, releaseBatch, type BatchClaim } from '../storage/batches.ts';
import { isUnavailable, unavailable } from '../storage/failures.ts';
import { applyWritePlan, checkMetricLimits, type ApplyOutcome } from '../storage/record.ts';
import { trimLateDetail } from '../storage/retention.ts';
import { applyRollupWrites, findRollups, markDirty, rollupWriteWindow } from '../storage/rollups.ts';
import type { MetricDocument, Store } from '../storage/store.ts';

/** What one call of {@link recordBatch} did. */
export interface RecordOutcome {
  /** The client's batch id, or null when it sent none. */
  batchId: string | null;
  /** Readings of the batch, all of them stored when the call returns. */
  recorded: number;
  /** Readings this call applied. */
  applied: number;
  /** Readings an earlier call with the same batch id had applied (so this call did not apply them again). */
  alreadyApplied: number;
  /** Distinct series of the batch. */
  series: number;
  /** Series-day documents of the batch (one atomic update each). */
  buckets: number;
}

/**
 * Records a validated batch (see `record/validate.ts`) so that an answer means stored,
 * and, with a `batchId`, exactly once however often the same batch is sent:
 * 1. checks the per-metric limits against the registry (reading only) and plans the
 *    batch (readings grouped and merged per series-day document) with each metric's
 *    statistics settings;
 * 2. with a batch id, claims the id (`storage/batches.ts`): a reuse for other readings
 *    is refused, a retry of a completed batch answers at once without writing, a retry
 *    of an incomplete one goes on, its readings without a time taking the first
 *    attempt's arrival time;
 * 3. applies the plan: registries, then one atomic update per series-day document, each
 *    refused by a document that already applied the batch (`storage/record.ts`);
 * 4. keeps the metrics' rollups (`model/rollup.ts`): a first attempt merges the batch
 *    per rollup group and day and applies one update per rollup document after the
 *    series-day documents; a retry, a batch while a rollup is being built, and a batch
 *    into a day already dirty mark the days dirty instead, before and after writing the
 *    series-day documents, and a rebuild from those documents makes them exact again
 *    (`storage/rollups.ts`). When a rollup write fails, the batch's days are marked dirty,
 *    and so are they when the batch reaches its rollup writes later than half the
 *    rebuild grace period after it read the rollup definitions (`rollupWriteWindow`);
 * 5. marks the batch applied, and unsets the minute (or hour) slots it wrote into days
 *    whose minutes (or hours) retention had already removed (`trimLateDetail`).
 * Before anything is written, a reading dated before the days its metric's retention
 * deleted (`Metric.retention.dataFrom`) is refused.
 * @param options.receivedAt when the request arrived (ms since epoch, UTC): the time of
 * readings sent without one, as already set by validation.
 * @param options.inputPath where a reading's time is in the input, for errors (default `readings[i].time`).
 * @throws InputError TOO_MANY_NAMES, READING_EXPIRED or BATCH_ID_REUSED, nothing written then.
 * @throws ServiceError UNAVAILABLE when the database could not be reached or did not
 * confirm a write: some documents may have applied the batch; the client retries with
 * the same batch id. It is logged with the batch id.
 */
export async function recordBatch(
  store: Store,
  readings: readonly Reading[],
  options: { batchId?: string; receivedAt: number; logger?: Logger; inputPath?: (index: number) => string },
): Promise<RecordOutcome> {
  const batchId = options.batchId ?? null;
  const outcome: RecordOutcome = { batchId, recorded: readings.length, applied: 0, alreadyApplied: 0, series: 0, buckets: 0 };
  if (readings.length === 0) return outcome;
  let claim: BatchClaim | undefined;
  try {
    const metrics = planMetrics(readings);
    // Rollup writes planned from this read of the definitions must land soon after it.
    const rollupDeadline = Date.now() + rollupWriteWindow(store.rollupGraceMs);
    const [registered, rollups] = await Promise.all([
      checkMetricLimits(store, metrics),
      findRollups(
        store,
        metrics.map((metric) => metric.name),
      ),
    ]);
    refuseExpired(readings, registered, options.inputPath);
    const settingsOf = (metric: string) => registered.get(metric)?.statistics ?? store.defaultStatistics;
    let plan = planWrites(readings, settingsOf);
    outcome.series = plan.series.length;
    outcome.buckets = plan.buckets.length;
    if (batchId !== null) {
      const fingerprint = batchFingerprint(readings.map((reading) => ({ ...reading, time: reading.timeFromServer ? null : reading.time })));
      claim = await claimBatch(store, { id: batchId, fingerprint, readings: plan.readings, receivedAt: options.receivedAt });
      if (claim.status === 'retry' && claim.state === 'applied') return { ...outcome, alreadyApplied: plan.readings };
      if (claim.receivedAt !== options.receivedAt && readings.some((reading) => reading.timeFromServer)) {
        plan = planWrites(withServerTime(readings, claim.receivedAt), settingsOf);
      }
    }
    const rollupPlan = planRollups(plan, rollups, { retry: claim?.status === 'retry' });
    if (rollupPlan.dirty.length > 0) await markDirty(store, rollupPlan.dirty);
    let applied: ApplyOutcome;
    try {
      const mark = batchId === null ? undefined : batchMark(batchId);
      applied = await applyWritePlan(store, plan, registered, dayOperations(plan, mark), mark);
    } catch (error) {
      // Refused before any series-day document was written: leave no claim behind.
      if (error instanceof CodedError && claim?.status === 'new') await releaseBatch(store, batchId!);
      else await markRollupsDirty(store, rollupPlan);
      throw error;
    }
    if (rollupPlan.dirty.length > 0) await markDirty(store, rollupPlan.dirty);
    const late: RollupPlan['dirty'] = [];
    try {
      for (const { rollup, writes } of rollupPlan.writes) {
        if ((await applyRollupWrites(store, rollup, writes, rollupDeadline)) === 'late') {
          late.push({ rollup, days: [...new Set(writes.map((write) => write.date.getTime()))] });
        }
      }
    } catch (error) {
      await markRollupsDirty(store, rollupPlan);
      throw error;
    }
    // Too slow to write the rollups safely: a rebuild from the series-day documents adds the batch.
    if (late.length > 0) await markDirty(store, late);
    if (batchId !== null) await markBatchApplied(store, batchId);
    await trimLateDetail(store, registered, daysByMetric(plan.buckets), rollups);
    return { ...outcome, applied: applied.appliedReadings, alreadyApplied: applied.alreadyAppliedReadings };
  } catch (error) {
    if (error instanceof CodedError) throw error;
    options.logger?.error(
      { err: error, batchId, readings: readings.length, unavailable: isUnavailable(error) },
      'A batch of readings was not acknowledged; the client should retry it with the same batchId',
    );
    if (isUnavailable(error)) throw unavailable('The batch was not stored completely');
    throw error;
  }
}

/**
 * Refuses a batch holding a reading dated before its metric's day horizon (see
 * `model/retention.ts`): retention has deleted that day's documents, and would not
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

/** The UTC days (ms) of a batch's series-day documents, per metric. */
function daysByMetric(buckets: readonly { metric: string; date: Date }[]): Map<string, Set<number>> {
  const days = new Map<string, Set<number>>();
  for (const bucket of buckets) {
    const set = days.get(bucket.metric) ?? new Set<number>();
    set.add(bucket.date.getTime());
    days.set(bucket.metric, set);
  }
  return days;
}

/**
 * Marks every day a batch wrote or was to write to a rollup dirty, after a failure that
 * may have left some of those rollup documents without the batch (best effort: the
 * database may be out of reach; a retry of the batch marks them again).
 */
async function markRollupsDirty(store: Store, plan: RollupPlan): Promise<void> {
  const days = plan.writes.map(({ rollup, writes }) => ({ rollup, days: [...new Set(writes.map((write) => write.date.getTime()))] }));
  await markDirty(store, [...days, ...plan.dirty]).catch(() => undefined);
}
