/**
 * The project's GraphQL app as the benchmarks run it: in process, silent, without
 * tokens, and requests sent to it through `yoga.fetch`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { type AppOptions, createApp } from '../../../src/server/yoga.ts';
import type { Store } from '../../../src/storage/store.ts';

/** The app over a store, as {@link benchApp} creates it. */
export type BenchApp = ReturnType<typeof createApp>;

/**
 * The app over `store` with a silent logger and no authentication (an in-process
 * benchmark client has no token); batch and bucket limits of 100,000 readings and
 * 10,000,000 buckets unless `options` say otherwise, as do any other app options.
 */
export function benchApp(store: Store, options: Partial<Omit<AppOptions, 'store'>> = {}): BenchApp {
  return createApp({
    store,
    logger: pino({ level: 'silent' }),
    limits: { maxBatchSize: 100_000, maxBuckets: 10_000_000 },
    auth: { mode: 'off', corsOrigins: [] },
    ...options,
  });
}

/** A GraphQL response body: `data`, the errors and the extensions (`extensions.reads` among them). */
export interface GraphqlBody<T> {
  data?: T;
  errors?: { message: string; extensions?: { code?: string } }[];
  extensions?: { reads?: ReadRecord[] } & Record<string, unknown>;
}

/** One entry of `extensions.reads`: where one pipeline of the request read (`ReadRecord` of `src/engine/loader.ts`). */
export interface ReadRecord {
  metric: string | null;
  rollup: string | null;
  tagKeys?: string[];
  summaryDays?: number;
  tail?: { entries: number; readings: number };
  edges?: { from: string; to: string }[];
  fetched?: number;
}

/**
 * `extensions.reads` in a few words: each distinct source once with how many pipelines
 * read it, e.g. `series-day documents + 31 summary days`, `rollup by_origin x2` or
 * `series-day documents, 108 documents merged here` (fetched and merged by the server, not a pipeline);
 * `none` when the request ran no pipeline (`latestValues`, say).
 */
export function readsSummary(reads: readonly ReadRecord[] | undefined): string {
  const counts = new Map<string, number>();
  for (const read of reads ?? []) {
    let source = read.rollup === null ? 'series-day documents' : `rollup ${read.rollup}`;
    if (read.summaryDays) source += ` + ${read.summaryDays} summary days`;
    if (read.edges) source += ' + edges from series-day documents';
    if (read.fetched !== undefined) source += `, ${read.fetched} ${read.fetched === 1 ? 'document' : 'documents'} merged here`;
    if (read.tail && read.tail.readings > 0) source += ` + tail of ${read.tail.readings} readings`;
    counts.set(source, (counts.get(source) ?? 0) + 1);
  }
  if (counts.size === 0) return 'none';
  return [...counts].map(([source, n]) => (n > 1 ? `${source} x${n}` : source)).join('; ');
}

/** POSTs a GraphQL request to the app (in process, `http://bench/graphql`) and returns the response. */
export function postGraphql(app: BenchApp, query: string, variables?: Record<string, unknown>): Promise<Response> {
  return Promise.resolve(
    app.fetch('http://bench/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    }),
  );
}

/**
 * Sends a GraphQL request through the app (see {@link postGraphql}) and returns its parsed body.
 * @throws Error `GraphQL error: <message>` with the first error when the answer has
 * errors; its `code` is the error's `extensions.code` (e.g. `QUERY_TIMEOUT`).
 */
export async function graphqlBody<T>(app: BenchApp, query: string, variables?: Record<string, unknown>): Promise<GraphqlBody<T>> {
  const body = (await (await postGraphql(app, query, variables)).json()) as GraphqlBody<T>;
  if (body.errors?.length) {
    const first = body.errors[0]!;
    throw Object.assign(new Error(`GraphQL error: ${first.message}`), { code: first.extensions?.code });
  }
  return body;
}

/** An app served over HTTP on a local port: its GraphQL URL and how to close it. */
export interface ServedApp {
  /** `http://127.0.0.1:<port>/graphql`. */
  url: string;
  /** Drops every open connection and closes the server. */
  close: () => Promise<void>;
}

/** Serves `app` over HTTP on a free port of 127.0.0.1 (see {@link ServedApp}). */
export async function serveApp(app: BenchApp): Promise<ServedApp> {
  const server = createServer(app);
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
    close: () =>
      new Promise<void>((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}
