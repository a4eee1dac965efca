import { parseBucketsQuery, type RangeQuery } from '../engine/query.ts';
import type { ChartGroup } from '../engine/engine.ts';
import { shiftedRange } from '../query/offset.ts';
import { coalescedWrites, type LiveTick } from '../events/live-events.ts';
import { BucketGroupRef, bucketArgs, rangeArgs, selectionArgs } from './bucket.ts';
import { builder } from './builder.ts';
import { rankingArgs } from './chart.ts';
import type { Context } from './context.ts';
import { selectedWants } from './lookahead.ts';

/**
 * The readings whose arrival can change a query's answer: its metric over its range,
 * and over the earlier period too when it compares with one (`compareWith`).
 */
function watchedRange(query: RangeQuery): { metric: string; from: number; to: number } {
  const from = query.compareWith === null ? query.from : Math.min(query.from, shiftedRange(query, query.compareWith, query.timeZone).from);
  return { metric: query.metric!, from, to: query.to };
}

/**
 * The part of a full answer a push sends: each group's buckets that end after `since`
 * (the bucket holding the earliest new reading and every later one, whose fill,
 * transform or comparison may have changed with it). The whole answer for the first
 * push, with `fill: LINEAR` (an earlier filled bucket interpolates towards the new
 * reading) and with ranking (`orderBy`/`limit`: the chosen groups may change).
 */
function changedPart(groups: ChartGroup[], query: RangeQuery, since: number | null): ChartGroup[] {
  if (since === null || since <= query.from || query.fill === 'LINEAR' || query.ranking !== null) return groups;
  return groups.map((group) => ({ ...group, buckets: group.buckets.filter((bucket) => bucket.end.getTime() > since) }));
}

/** Runs a push's query: the first on the request's engine, later ones each on a fresh one (a budget of its own). */
async function answer(tick: LiveTick, query: RangeQuery, ctx: Context): Promise<ChartGroup[]> {
  const engine = tick.since === null ? ctx.engine : ctx.live.newEngine();
  return changedPart(await engine.buckets(query), query, tick.since);
}

builder.subscriptionField('buckets', (t) =>
  t.field({
    type: [BucketGroupRef],
    description:
      "Live `buckets`: the same arguments, answers, limits and errors as `Query.buckets`, pushed over Server-Sent Events (`Accept: text/event-stream`). The first push is the whole answer, at once. Then, whenever readings of `metric` inside the range (or inside the earlier period of `compareWith`) are acknowledged, a push with each group's buckets from the one holding the earliest new reading to the end of the range (they may have changed: fill, transforms and comparisons carry forward); with `fill: LINEAR`, `orderBy` or `limit` every push is the whole answer. Merge pushes into the first by bucket `start`. Writes are coalesced: at most one push every LIVE_MIN_INTERVAL_MS (default 1,000 ms) per subscription. Every push runs the query again, held to MAX_BUCKETS and QUERY_TIMEOUT_MS; a push that fails carries its error (e.g. UNAVAILABLE, QUERY_TIMEOUT) and the subscription goes on. Readings are matched by metric only, so a push may repeat unchanged buckets when the new readings were of series outside `where`. Needs scope `read` and a token that may touch `metric` (else FORBIDDEN).",
    args: { ...selectionArgs(t.arg), ...rangeArgs(t.arg), ...bucketArgs(t.arg), ...rankingArgs(t.arg) },
    authScopes: (_root, args) => ({ read: true, metric: args.metric }),
    // Bad arguments fail here, before anything is pushed, with the query's error codes.
    subscribe: (_root, args, ctx, info) =>
      coalescedWrites(ctx.live.events, watchedRange(parseBucketsQuery(args, selectedWants(info))), ctx.live.minIntervalMs),
    // The arguments are parsed again (pure and cheap) rather than carried in every tick.
    resolve: (tick, args, ctx, info) => answer(tick, parseBucketsQuery(args, selectedWants(info)), ctx),
  }),
);
