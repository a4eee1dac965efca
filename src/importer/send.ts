/**
 * Client side of ingestion: sends readings to a running server as `recordReadings`
 * mutations over HTTP, as an external service would, each batch with a batch id so a
 * batch that failed on the way (time-out, UNAVAILABLE, lost connection) is retried
 * safely: the server applies it exactly once. The mutation is `ImportBatch` of
 * `operations.graphql`, sent through the typed client of `src/client/`.
 */
import { ImportBatchDocument, type ReadingInput } from '../client/generated/graphql.ts';
import { GraphQLRequestError, request } from '../client/request.ts';

/**
 * A reading as sent: a GraphQL `ReadingInput`, whose `time` may also be a `Date`
 * (`JSON.stringify` turns it into the RFC 3339 string the API takes).
 */
export type SentReading = Omit<ReadingInput, 'time'> & { readonly time?: ReadingInput['time'] | Date };

/** Thrown when the server refuses a batch (an input error), or keeps failing after every retry. */
export class SendError extends Error {
  override name = 'SendError';
}

/** A failure worth retrying with the same batch id: the batch may or may not be stored. */
class RetryableError extends Error {}

/**
 * INGEST_BACKLOG: the server refused the batch (nothing stored) until its folder has
 * caught up; retried after the seconds it asks for, without counting as a failed attempt.
 */
class BackloggedError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number,
  ) {
    super(message);
  }
}

/** The server's answer to one batch. */
export interface SendResult {
  /** Readings of the batch, all stored. */
  recorded: number;
  /** Readings this request applied. */
  applied: number;
  /** Readings an earlier request with the same batch id had applied. */
  alreadyApplied: number;
}

/** Options of {@link sendBatch}. */
export interface SendOptions {
  /** The batch id (see the `batchId` argument of `recordReadings`). */
  batchId: string;
  /** API token sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Attempts after the first one when the batch fails in a retryable way (default 8). */
  retries?: number;
  /** Wait before the first retry in ms, doubled on each retry up to 5 s (default 250). */
  backoffMs?: number;
}

/** Statuses a proxy or a server that is starting or stopping answers with: worth retrying. */
const RETRYABLE_STATUS = new Set([502, 503, 504]);

async function attempt(url: string, readings: readonly SentReading[], options: SendOptions): Promise<SendResult> {
  try {
    // A Date `time` travels as its JSON form, the string `ReadingInput` declares.
    const variables = { readings: readings as readonly ReadingInput[], batchId: options.batchId };
    return (await request(ImportBatchDocument, variables, { url, token: options.token })).recordReadings;
  } catch (error) {
    if (!(error instanceof GraphQLRequestError)) throw error;
    const { status, code } = error;
    if (status === undefined) throw new RetryableError(error.message);
    if (code === 'INGEST_BACKLOG') {
      const seconds = Number(error.errors[0]?.extensions?.retryAfterSeconds ?? 1);
      throw new BackloggedError(error.errors[0]?.message ?? 'INGEST_BACKLOG', Math.max(1, seconds) * 1000);
    }
    if (code === 'UNAVAILABLE' || RETRYABLE_STATUS.has(status)) {
      throw new RetryableError(`${code ?? `HTTP ${status}`}: ${error.errors[0]?.message ?? 'service unavailable'}`);
    }
    throw new SendError(code || error.errors.length > 0 ? `${code ?? 'ERROR'}: ${error.errors[0]!.message}` : error.message);
  }
}

/**
 * Posts one batch of readings (GraphQL `ReadingInput`s, checked by the server) to `url` (e.g.
 * `http://127.0.0.1:4000/graphql`) with its batch id, retrying with the same id when
 * the server cannot be reached, answers UNAVAILABLE or a 502/503/504, and after the
 * seconds the server asks for when it answers INGEST_BACKLOG (as often as it does).
 * @returns the server's counts for the batch.
 * @throws SendError with the server's first error message and code (an input error is
 * not retried), or the last failure once the retries are spent.
 */
export async function sendBatch(url: string, readings: readonly SentReading[], options: SendOptions): Promise<SendResult> {
  const retries = options.retries ?? 8;
  let wait = options.backoffMs ?? 250;
  for (let tries = 0; ; tries++) {
    try {
      return await attempt(url, readings, options);
    } catch (error) {
      if (error instanceof BackloggedError) {
        tries -= 1;
        await new Promise((done) => setTimeout(done, error.retryAfterMs));
        continue;
      }
      if (!(error instanceof RetryableError)) throw error;
      if (tries >= retries) throw new SendError(`batch ${options.batchId} failed after ${tries + 1} attempts: ${error.message}`);
      await new Promise((done) => setTimeout(done, wait));
      wait = Math.min(wait * 2, 5000);
    }
  }
}

/**
 * Sends `readings` in batches of `batchSize`, keeping up to `concurrency` requests in
 * flight, and reports progress after each batch. Batch ids are
 * `<idPrefix>:<index of the batch's first reading>+<batch size>` (index counted from
 * `firstIndex`): deterministic, so sending the same readings again with the same batch
 * size (an interrupted import run again) stores nothing twice.
 * @returns the readings recorded, how many of them earlier runs had already applied, and
 * the number of batches (requests that succeeded; retries not counted).
 */
export async function sendAll(
  url: string,
  readings: readonly SentReading[],
  options: {
    batchSize: number;
    concurrency: number;
    idPrefix: string;
    firstIndex?: number;
    token?: string;
    onProgress?: (recorded: number) => void;
  },
): Promise<{ recorded: number; alreadyApplied: number; batches: number }> {
  let next = 0;
  let recorded = 0;
  let alreadyApplied = 0;
  let batches = 0;
  const worker = async () => {
    while (next < readings.length) {
      const start = next;
      next += options.batchSize;
      const batch = readings.slice(start, start + options.batchSize);
      const result = await sendBatch(url, batch, {
        batchId: `${options.idPrefix}:${(options.firstIndex ?? 0) + start}+${batch.length}`,
        token: options.token,
      });
      recorded += result.recorded;
      alreadyApplied += result.alreadyApplied;
      batches += 1;
      options.onProgress?.(recorded);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  return { recorded, alreadyApplied, batches };
}
