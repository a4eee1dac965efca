import { createHash } from 'node:crypto';

/**
 * How many batch marks a series-day document keeps: the marks of the last
 * {@link BATCH_MARKS_KEPT} batches that wrote to it (`$push` with `$slice`). A retried
 * batch is recognised by a document as long as fewer than this many other batches
 * have written to that same document since. At 16 hex characters a mark, the list
 * costs at most about 1.6 KB per document.
 */
export const BATCH_MARKS_KEPT = 64;

/**
 * The mark a batch leaves in every series-day document it writes: the first 64 bits of the
 * SHA-256 of its `batchId`, as 16 hex characters. Fixed length keeps documents small
 * whatever ids clients choose; two different ids share a mark with probability about
 * 2^-64 per pair, and only marks within one document's last {@link BATCH_MARKS_KEPT}
 * are ever compared.
 */
export function batchMark(batchId: string): string {
  return createHash('sha256').update(batchId).digest('hex').slice(0, 16);
}

/** The parts of a reading that make up a batch's content (see {@link batchFingerprint}). */
export interface FingerprintReading {
  metric: string;
  /** Sorted by key. */
  tags: readonly { key: string; value: string }[];
  /** ms since the epoch, or null when the client left the time to the server. */
  time: number | null;
  fields: readonly { name: string; value: number }[];
}

/**
 * A digest of a batch's content, to tell a retry (same `batchId`, same readings) from
 * a reuse of the id for other readings: SHA-256 (hex) over each reading's metric,
 * sorted tags, time (null when left to the server, so a retry received later matches)
 * and fields in the order sent. Readings are taken in the order sent too: a client
 * retries by sending the same request again.
 */
export function batchFingerprint(readings: readonly FingerprintReading[]): string {
  const hash = createHash('sha256');
  for (const reading of readings) {
    hash.update(
      JSON.stringify([
        reading.metric,
        reading.tags.map((tag) => [tag.key, tag.value]),
        reading.time,
        reading.fields.map((field) => [field.name, field.value]),
      ]),
    );
    hash.update('\n');
  }
  return hash.digest('hex');
}
