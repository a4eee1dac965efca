import { ErrorCode, InputError, isDuplicateKeyError } from '../errors.ts';
import type { BatchDocument, Store } from './store.ts';

/** What {@link claimBatch} found out about a batch id. */
export type BatchClaim =
  /** First time this id is seen (within the retention period): the claim was just made. */
  | { status: 'new'; receivedAt: number }
  /**
   * The id was claimed before for the same readings: an earlier attempt that may have
   * been applied in part (`applying`) or wholly (`applied`), or a concurrent one.
   * `receivedAt` is the first attempt's, for readings sent without a time.
   */
  | { status: 'retry'; state: BatchDocument['state']; receivedAt: number };

/**
 * Claims batch id `id` for a batch with content `fingerprint`, or finds the earlier
 * claim of the same id: one upsert on `_id` (`$setOnInsert`), so of concurrent first
 * attempts exactly one makes the claim.
 * @param receivedAt when this attempt arrived (ms since epoch, UTC).
 * @throws InputError BATCH_ID_REUSED when the id was claimed for other readings.
 * Driver errors propagate.
 */
export async function claimBatch(
  store: Store,
  claim: { id: string; fingerprint: string; readings: number; receivedAt: number },
): Promise<BatchClaim> {
  for (let attempt = 0; ; attempt++) {
    let before: BatchDocument | null;
    try {
      const now = new Date(claim.receivedAt);
      before = await store.batches.findOneAndUpdate(
        { _id: claim.id },
        {
          $setOnInsert: { fingerprint: claim.fingerprint, readings: claim.readings, receivedAt: now, createdAt: now, state: 'applying' },
        },
        { upsert: true, returnDocument: 'before' },
      );
    } catch (error) {
      // Two first attempts raced on the insert: the loser reads the winner's claim.
      if (isDuplicateKeyError(error) && attempt < 3) continue;
      throw error;
    }
    if (before === null) return { status: 'new', receivedAt: claim.receivedAt };
    if (before.fingerprint !== claim.fingerprint) {
      throw new InputError(
        ErrorCode.BATCH_ID_REUSED,
        `batchId "${claim.id}" was used on ${before.receivedAt.toISOString()} for ${before.readings} other readings; a retry must send exactly the same readings, new readings need a new batchId`,
        'batchId',
      );
    }
    return { status: 'retry', state: before.state, receivedAt: before.receivedAt.getTime() };
  }
}

/** Records that every series-day document has applied batch `id`, so a later retry answers without writing. */
export async function markBatchApplied(store: Store, id: string): Promise<void> {
  await store.batches.updateOne({ _id: id }, { $set: { state: 'applied', appliedAt: new Date() } });
}

/**
 * Removes the claim of batch `id` made by this attempt when the batch is refused
 * before anything of it was written, so a refused batch leaves nothing behind and the
 * client may correct it and send it again with the same id.
 */
export async function releaseBatch(store: Store, id: string): Promise<void> {
  await store.batches.deleteOne({ _id: id, state: 'applying' });
}
