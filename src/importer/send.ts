/**
 * Client side of ingestion: sends readings to a running server as `recordReadings`
 * mutations over HTTP, as an external service would.
 */

const RECORD_MUTATION = `mutation Record($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded } }`;

/** Thrown when the server answers a batch with an HTTP or GraphQL error. */
export class SendError extends Error {
  override name = 'SendError';
}

/**
 * Posts one batch of readings (GraphQL `ReadingInput` JSON) to `url` (e.g.
 * `http://127.0.0.1:4000/graphql`), with `Authorization: Bearer <token>` when a token
 * (scope `write`) is given.
 * @returns the number of readings the server recorded.
 * @throws SendError with the server's first error message and code.
 */
export async function sendBatch(url: string, readings: readonly unknown[], token?: string): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ query: RECORD_MUTATION, variables: { readings } }),
  });
  const body = (await response.json().catch(() => null)) as {
    data?: { recordReadings?: { recorded: number } };
    errors?: { message: string; extensions?: { code?: string } }[];
  } | null;
  const error = body?.errors?.[0];
  if (error) throw new SendError(`${error.extensions?.code ?? 'ERROR'}: ${error.message}`);
  const recorded = body?.data?.recordReadings?.recorded;
  if (!response.ok || recorded === undefined) throw new SendError(`HTTP ${response.status} from ${url}`);
  return recorded;
}

/**
 * Sends `readings` in batches of `batchSize`, keeping up to `concurrency` requests in
 * flight, and reports progress after each batch.
 * @returns the number of readings recorded.
 */
export async function sendAll(
  url: string,
  readings: readonly unknown[],
  options: { batchSize: number; concurrency: number; token?: string; onProgress?: (recorded: number) => void },
): Promise<number> {
  let next = 0;
  let recorded = 0;
  const worker = async () => {
    while (next < readings.length) {
      const start = next;
      next += options.batchSize;
      const count = await sendBatch(url, readings.slice(start, start + options.batchSize), options.token);
      recorded += count;
      options.onProgress?.(recorded);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  return recorded;
}
