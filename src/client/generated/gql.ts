/* eslint-disable */
import * as types from './graphql.ts';



/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "query DelayPerOrigin {\n  aggregate(\n    metric: \"flights\"\n    field: \"delay\"\n    from: \"2001-01-01T00:00:00Z\"\n    to: \"2001-04-01T00:00:00Z\"\n    where: [{key: \"origin\", in: [\"LAX\", \"SFO\", \"SEA\", \"PHX\"]}]\n    groupBy: [\"origin\"]\n  ) {\n    tags {\n      value\n    }\n    count\n    avg\n    min\n    max\n    stddev\n  }\n}": typeof types.DelayPerOriginDocument,
    "query CurrentValue {\n  series(\n    metric: \"flights\"\n    where: [{key: \"origin\", in: \"LAS\"}, {key: \"destination\", in: \"LAX\"}]\n  ) {\n    id\n    latestValue(field: \"delay\") {\n      time\n      value\n    }\n    buckets(field: \"delay\", granularity: DAY, from: \"2001-03-25\", to: \"2001-04-01\") {\n      start\n      count\n      last {\n        time\n        value\n      }\n    }\n  }\n}": typeof types.CurrentValueDocument,
    "query LasVegasEvening {\n  buckets(\n    metric: \"flights\"\n    field: \"delay\"\n    granularity: HOUR\n    from: \"2001-01-12T18:00:00Z\"\n    to: \"2001-01-13T00:00:00Z\"\n    where: [{key: \"origin\", in: \"LAS\"}]\n  ) {\n    buckets {\n      start\n      count\n      sum\n      min\n      max\n      avg\n    }\n  }\n}": typeof types.LasVegasEveningDocument,
    "query LatestFlights {\n  series(\n    metric: \"flights\"\n    where: [{key: \"origin\", in: \"LAS\"}, {key: \"destination\", in: \"LAX\"}]\n  ) {\n    id\n    latest(n: 10) {\n      time\n      values {\n        name\n        value\n      }\n    }\n  }\n}": typeof types.LatestFlightsDocument,
    "query Metrics {\n  metrics {\n    name\n    fields\n    tagKeys\n    seriesCount\n    firstReadingAt\n    lastReadingAt\n  }\n}": typeof types.MetricsDocument,
    "query MonthlyDelayByOrigin {\n  buckets(\n    metric: \"flights\"\n    field: \"delay\"\n    granularity: MONTH\n    from: \"2001-01-01T00:00:00Z\"\n    to: \"2001-04-01T00:00:00Z\"\n    where: [{key: \"origin\", in: [\"ATL\", \"ORD\", \"DFW\"]}]\n    groupBy: [\"origin\"]\n  ) {\n    tags {\n      key\n      value\n    }\n    buckets {\n      start\n      count\n      avg\n      max\n      stddev\n    }\n  }\n}": typeof types.MonthlyDelayByOriginDocument,
    "query NewYorkDaily {\n  buckets(\n    metric: \"flights\"\n    field: \"delay\"\n    from: \"2001-03-28\"\n    to: \"2001-04-01T12:00\"\n    timeZone: \"America/New_York\"\n    maxDataPoints: 8\n    where: [{key: \"origin\", in: [\"JFK\", \"LGA\", \"EWR\"]}]\n  ) {\n    granularity\n    buckets {\n      localStart\n      end\n      partial\n      count\n      avg\n    }\n  }\n}": typeof types.NewYorkDailyDocument,
    "query OrdP95Delay {\n  buckets(\n    metric: \"flights\"\n    field: \"delay\"\n    granularity: DAY\n    from: \"2001-03-19\"\n    to: \"2001-03-26\"\n    where: [{key: \"origin\", in: [\"ORD\"]}]\n    statistic: P95\n  ) {\n    buckets {\n      start\n      count\n      p50\n      p95\n      p99\n      value\n    }\n  }\n}": typeof types.OrdP95DelayDocument,
    "mutation RecordReadings {\n  recordReadings(\n    readings: [{metric: \"cpu\", tags: [{key: \"host\", value: \"web-1\"}], time: \"2024-05-01T08:00:12Z\", fields: [{name: \"usage\", value: 41.5}]}, {metric: \"cpu\", tags: [{key: \"host\", value: \"web-1\"}], time: \"2024-05-01T08:00:48Z\", fields: [{name: \"usage\", value: 43.5}]}]\n  ) {\n    recorded\n    series\n    documents\n  }\n}": typeof types.RecordReadingsDocument,
    "query RoutesFromSanJose {\n  series(metric: \"flights\", where: [{key: \"origin\", in: \"SJC\"}]) {\n    id\n    february: buckets(\n      field: \"delay\"\n      granularity: WEEK\n      from: \"2001-01-29T00:00:00Z\"\n      to: \"2001-03-05T00:00:00Z\"\n    ) {\n      start\n      count\n    }\n    quarter: aggregate(\n      field: \"distance\"\n      from: \"2001-01-01T00:00:00Z\"\n      to: \"2001-04-01T00:00:00Z\"\n    ) {\n      count\n      avg\n    }\n  }\n}": typeof types.RoutesFromSanJoseDocument,
    "query WeekOverWeek {\n  buckets(\n    metric: \"flights\"\n    field: \"delay\"\n    granularity: DAY\n    from: \"2001-03-19\"\n    to: \"2001-03-26\"\n    timeZone: \"America/Chicago\"\n    where: [{key: \"origin\", in: \"ORD\"}]\n    statistic: COUNT\n    compareWith: {amount: 1, unit: WEEK}\n  ) {\n    buckets {\n      start\n      value\n      previous\n      change\n      relativeChange\n    }\n  }\n}": typeof types.WeekOverWeekDocument,
    "query WorstOrigins {\n  aggregate(\n    metric: \"flights\"\n    field: \"delay\"\n    from: \"2001-01-01\"\n    to: \"2001-04-01\"\n    groupBy: [\"origin\"]\n    orderBy: {statistic: AVG, direction: DESC}\n    limit: 10\n  ) {\n    tags {\n      value\n    }\n    count\n    avg\n  }\n}": typeof types.WorstOriginsDocument,
    "mutation LoadWrite($readings: [ReadingInput!]!, $batchId: String) {\n  recordReadings(readings: $readings, batchId: $batchId) {\n    recorded\n  }\n}\n\nquery LoadHourBuckets($metric: String!, $from: Time!, $to: Time!, $hosts: [String!]!) {\n  buckets(\n    metric: $metric\n    field: \"v\"\n    granularity: HOUR\n    from: $from\n    to: $to\n    where: [{key: \"host\", in: $hosts}]\n  ) {\n    buckets {\n      start\n      count\n      avg\n    }\n  }\n}\n\nquery LoadPerHost($metric: String!, $from: Time!, $to: Time!) {\n  aggregate(metric: $metric, field: \"v\", from: $from, to: $to, groupBy: [\"host\"]) {\n    tags {\n      value\n    }\n    count\n    avg\n    max\n  }\n}\n\nquery LoadTotals($metric: String!, $from: Time!, $to: Time!) {\n  aggregate(metric: $metric, field: \"v\", from: $from, to: $to) {\n    count\n    sum\n  }\n}": typeof types.LoadWriteDocument,
    "query DashboardMetrics {\n  metrics {\n    name\n    fields\n    tagKeys\n    firstReadingAt\n    lastReadingAt\n  }\n}\n\nquery DashboardBuckets($metric: String!, $field: String!, $from: Time!, $to: Time!, $timeZone: String!, $where: [TagFilter!], $maxDataPoints: Int!) {\n  buckets(\n    metric: $metric\n    field: $field\n    from: $from\n    to: $to\n    timeZone: $timeZone\n    where: $where\n    maxDataPoints: $maxDataPoints\n    fill: NULL\n  ) {\n    granularity\n    buckets {\n      start\n      localStart\n      count\n      avg\n      p5: percentile(p: 5)\n      p95: percentile(p: 95)\n    }\n  }\n}": typeof types.DashboardMetricsDocument,
    "mutation ImportBatch($readings: [ReadingInput!]!, $batchId: String) {\n  recordReadings(readings: $readings, batchId: $batchId) {\n    recorded\n    applied\n    alreadyApplied\n  }\n}\n\nquery CountFlights {\n  aggregate(\n    metric: \"flights\"\n    field: \"delay\"\n    from: \"1970-01-01T00:00:00Z\"\n    to: \"9999-01-01T00:00:00Z\"\n  ) {\n    count\n  }\n}": typeof types.ImportBatchDocument,
};
const documents: Documents = {
    "query DelayPerOrigin {\n  aggregate(\n    metric: \"flights\"\n    field: \"delay\"\n    from: \"2001-01-01T00:00:00Z\"\n    to: \"2001-04-01T00:00:00Z\"\n    where: [{key: \"origin\", in: [\"LAX\", \"SFO\", \"SEA\", \"PHX\"]}]\n    groupBy: [\"origin\"]\n  ) {\n    tags {\n      value\n    }\n    count\n    avg\n    min\n    max\n    stddev\n  }\n}": types.DelayPerOriginDocument,
    "query CurrentValue {\n  series(\n    metric: \"flights\"\n    where: [{key: \"origin\", in: \"LAS\"}, {key: \"destination\", in: \"LAX\"}]\n  ) {\n    id\n    latestValue(field: \"delay\") {\n      time\n      value\n    }\n    buckets(field: \"delay\", granularity: DAY, from: \"2001-03-25\", to: \"2001-04-01\") {\n      start\n      count\n      last {\n        time\n        value\n      }\n    }\n  }\n}": types.CurrentValueDocument,
    "query LasVegasEvening {\n  buckets(\n    metric: \"flights\"\n    field: \"delay\"\n    granularity: HOUR\n    from: \"2001-01-12T18:00:00Z\"\n    to: \"2001-01-13T00:00:00Z\"\n    where: [{key: \"origin\", in: \"LAS\"}]\n  ) {\n    buckets {\n      start\n      count\n      sum\n      min\n      max\n      avg\n    }\n  }\n}": types.LasVegasEveningDocument,
    "query LatestFlights {\n  series(\n    metric: \"flights\"\n    where: [{key: \"origin\", in: \"LAS\"}, {key: \"destination\", in: \"LAX\"}]\n  ) {\n    id\n    latest(n: 10) {\n      time\n      values {\n        name\n        value\n      }\n    }\n  }\n}": types.LatestFlightsDocument,
    "query Metrics {\n  metrics {\n    name\n    fields\n    tagKeys\n    seriesCount\n    firstReadingAt\n    lastReadingAt\n  }\n}": types.MetricsDocument,
    "query MonthlyDelayByOrigin {\n  buckets(\n    metric: \"flights\"\n    field: \"delay\"\n    granularity: MONTH\n    from: \"2001-01-01T00:00:00Z\"\n    to: \"2001-04-01T00:00:00Z\"\n    where: [{key: \"origin\", in: [\"ATL\", \"ORD\", \"DFW\"]}]\n    groupBy: [\"origin\"]\n  ) {\n    tags {\n      key\n      value\n    }\n    buckets {\n      start\n      count\n      avg\n      max\n      stddev\n    }\n  }\n}": types.MonthlyDelayByOriginDocument,
    "query NewYorkDaily {\n  buckets(\n    metric: \"flights\"\n    field: \"delay\"\n    from: \"2001-03-28\"\n    to: \"2001-04-01T12:00\"\n    timeZone: \"America/New_York\"\n    maxDataPoints: 8\n    where: [{key: \"origin\", in: [\"JFK\", \"LGA\", \"EWR\"]}]\n  ) {\n    granularity\n    buckets {\n      localStart\n      end\n      partial\n      count\n      avg\n    }\n  }\n}": types.NewYorkDailyDocument,
    "query OrdP95Delay {\n  buckets(\n    metric: \"flights\"\n    field: \"delay\"\n    granularity: DAY\n    from: \"2001-03-19\"\n    to: \"2001-03-26\"\n    where: [{key: \"origin\", in: [\"ORD\"]}]\n    statistic: P95\n  ) {\n    buckets {\n      start\n      count\n      p50\n      p95\n      p99\n      value\n    }\n  }\n}": types.OrdP95DelayDocument,
    "mutation RecordReadings {\n  recordReadings(\n    readings: [{metric: \"cpu\", tags: [{key: \"host\", value: \"web-1\"}], time: \"2024-05-01T08:00:12Z\", fields: [{name: \"usage\", value: 41.5}]}, {metric: \"cpu\", tags: [{key: \"host\", value: \"web-1\"}], time: \"2024-05-01T08:00:48Z\", fields: [{name: \"usage\", value: 43.5}]}]\n  ) {\n    recorded\n    series\n    documents\n  }\n}": types.RecordReadingsDocument,
    "query RoutesFromSanJose {\n  series(metric: \"flights\", where: [{key: \"origin\", in: \"SJC\"}]) {\n    id\n    february: buckets(\n      field: \"delay\"\n      granularity: WEEK\n      from: \"2001-01-29T00:00:00Z\"\n      to: \"2001-03-05T00:00:00Z\"\n    ) {\n      start\n      count\n    }\n    quarter: aggregate(\n      field: \"distance\"\n      from: \"2001-01-01T00:00:00Z\"\n      to: \"2001-04-01T00:00:00Z\"\n    ) {\n      count\n      avg\n    }\n  }\n}": types.RoutesFromSanJoseDocument,
    "query WeekOverWeek {\n  buckets(\n    metric: \"flights\"\n    field: \"delay\"\n    granularity: DAY\n    from: \"2001-03-19\"\n    to: \"2001-03-26\"\n    timeZone: \"America/Chicago\"\n    where: [{key: \"origin\", in: \"ORD\"}]\n    statistic: COUNT\n    compareWith: {amount: 1, unit: WEEK}\n  ) {\n    buckets {\n      start\n      value\n      previous\n      change\n      relativeChange\n    }\n  }\n}": types.WeekOverWeekDocument,
    "query WorstOrigins {\n  aggregate(\n    metric: \"flights\"\n    field: \"delay\"\n    from: \"2001-01-01\"\n    to: \"2001-04-01\"\n    groupBy: [\"origin\"]\n    orderBy: {statistic: AVG, direction: DESC}\n    limit: 10\n  ) {\n    tags {\n      value\n    }\n    count\n    avg\n  }\n}": types.WorstOriginsDocument,
    "mutation LoadWrite($readings: [ReadingInput!]!, $batchId: String) {\n  recordReadings(readings: $readings, batchId: $batchId) {\n    recorded\n  }\n}\n\nquery LoadHourBuckets($metric: String!, $from: Time!, $to: Time!, $hosts: [String!]!) {\n  buckets(\n    metric: $metric\n    field: \"v\"\n    granularity: HOUR\n    from: $from\n    to: $to\n    where: [{key: \"host\", in: $hosts}]\n  ) {\n    buckets {\n      start\n      count\n      avg\n    }\n  }\n}\n\nquery LoadPerHost($metric: String!, $from: Time!, $to: Time!) {\n  aggregate(metric: $metric, field: \"v\", from: $from, to: $to, groupBy: [\"host\"]) {\n    tags {\n      value\n    }\n    count\n    avg\n    max\n  }\n}\n\nquery LoadTotals($metric: String!, $from: Time!, $to: Time!) {\n  aggregate(metric: $metric, field: \"v\", from: $from, to: $to) {\n    count\n    sum\n  }\n}": types.LoadWriteDocument,
    "query DashboardMetrics {\n  metrics {\n    name\n    fields\n    tagKeys\n    firstReadingAt\n    lastReadingAt\n  }\n}\n\nquery DashboardBuckets($metric: String!, $field: String!, $from: Time!, $to: Time!, $timeZone: String!, $where: [TagFilter!], $maxDataPoints: Int!) {\n  buckets(\n    metric: $metric\n    field: $field\n    from: $from\n    to: $to\n    timeZone: $timeZone\n    where: $where\n    maxDataPoints: $maxDataPoints\n    fill: NULL\n  ) {\n    granularity\n    buckets {\n      start\n      localStart\n      count\n      avg\n      p5: percentile(p: 5)\n      p95: percentile(p: 95)\n    }\n  }\n}": types.DashboardMetricsDocument,
    "mutation ImportBatch($readings: [ReadingInput!]!, $batchId: String) {\n  recordReadings(readings: $readings, batchId: $batchId) {\n    recorded\n    applied\n    alreadyApplied\n  }\n}\n\nquery CountFlights {\n  aggregate(\n    metric: \"flights\"\n    field: \"delay\"\n    from: \"1970-01-01T00:00:00Z\"\n    to: \"9999-01-01T00:00:00Z\"\n  ) {\n    count\n  }\n}": types.ImportBatchDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query DelayPerOrigin {\n  aggregate(\n    metric: \"flights\"\n    field: \"delay\"\n    from: \"2001-01-01T00:00:00Z\"\n    to: \"2001-04-01T00:00:00Z\"\n    where: [{key: \"origin\", in: [\"LAX\", \"SFO\", \"SEA\", \"PHX\"]}]\n    groupBy: [\"origin\"]\n  ) {\n    tags {\n      value\n    }\n    count\n    avg\n    min\n    max\n    stddev\n  }\n}"): typeof import('./graphql.ts').DelayPerOriginDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query CurrentValue {\n  series(\n    metric: \"flights\"\n    where: [{key: \"origin\", in: \"LAS\"}, {key: \"destination\", in: \"LAX\"}]\n  ) {\n    id\n    latestValue(field: \"delay\") {\n      time\n      value\n    }\n    buckets(field: \"delay\", granularity: DAY, from: \"2001-03-25\", to: \"2001-04-01\") {\n      start\n      count\n      last {\n        time\n        value\n      }\n    }\n  }\n}"): typeof import('./graphql.ts').CurrentValueDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query LasVegasEvening {\n  buckets(\n    metric: \"flights\"\n    field: \"delay\"\n    granularity: HOUR\n    from: \"2001-01-12T18:00:00Z\"\n    to: \"2001-01-13T00:00:00Z\"\n    where: [{key: \"origin\", in: \"LAS\"}]\n  ) {\n    buckets {\n      start\n      count\n      sum\n      min\n      max\n      avg\n    }\n  }\n}"): typeof import('./graphql.ts').LasVegasEveningDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query LatestFlights {\n  series(\n    metric: \"flights\"\n    where: [{key: \"origin\", in: \"LAS\"}, {key: \"destination\", in: \"LAX\"}]\n  ) {\n    id\n    latest(n: 10) {\n      time\n      values {\n        name\n        value\n      }\n    }\n  }\n}"): typeof import('./graphql.ts').LatestFlightsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Metrics {\n  metrics {\n    name\n    fields\n    tagKeys\n    seriesCount\n    firstReadingAt\n    lastReadingAt\n  }\n}"): typeof import('./graphql.ts').MetricsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query MonthlyDelayByOrigin {\n  buckets(\n    metric: \"flights\"\n    field: \"delay\"\n    granularity: MONTH\n    from: \"2001-01-01T00:00:00Z\"\n    to: \"2001-04-01T00:00:00Z\"\n    where: [{key: \"origin\", in: [\"ATL\", \"ORD\", \"DFW\"]}]\n    groupBy: [\"origin\"]\n  ) {\n    tags {\n      key\n      value\n    }\n    buckets {\n      start\n      count\n      avg\n      max\n      stddev\n    }\n  }\n}"): typeof import('./graphql.ts').MonthlyDelayByOriginDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query NewYorkDaily {\n  buckets(\n    metric: \"flights\"\n    field: \"delay\"\n    from: \"2001-03-28\"\n    to: \"2001-04-01T12:00\"\n    timeZone: \"America/New_York\"\n    maxDataPoints: 8\n    where: [{key: \"origin\", in: [\"JFK\", \"LGA\", \"EWR\"]}]\n  ) {\n    granularity\n    buckets {\n      localStart\n      end\n      partial\n      count\n      avg\n    }\n  }\n}"): typeof import('./graphql.ts').NewYorkDailyDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query OrdP95Delay {\n  buckets(\n    metric: \"flights\"\n    field: \"delay\"\n    granularity: DAY\n    from: \"2001-03-19\"\n    to: \"2001-03-26\"\n    where: [{key: \"origin\", in: [\"ORD\"]}]\n    statistic: P95\n  ) {\n    buckets {\n      start\n      count\n      p50\n      p95\n      p99\n      value\n    }\n  }\n}"): typeof import('./graphql.ts').OrdP95DelayDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation RecordReadings {\n  recordReadings(\n    readings: [{metric: \"cpu\", tags: [{key: \"host\", value: \"web-1\"}], time: \"2024-05-01T08:00:12Z\", fields: [{name: \"usage\", value: 41.5}]}, {metric: \"cpu\", tags: [{key: \"host\", value: \"web-1\"}], time: \"2024-05-01T08:00:48Z\", fields: [{name: \"usage\", value: 43.5}]}]\n  ) {\n    recorded\n    series\n    documents\n  }\n}"): typeof import('./graphql.ts').RecordReadingsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query RoutesFromSanJose {\n  series(metric: \"flights\", where: [{key: \"origin\", in: \"SJC\"}]) {\n    id\n    february: buckets(\n      field: \"delay\"\n      granularity: WEEK\n      from: \"2001-01-29T00:00:00Z\"\n      to: \"2001-03-05T00:00:00Z\"\n    ) {\n      start\n      count\n    }\n    quarter: aggregate(\n      field: \"distance\"\n      from: \"2001-01-01T00:00:00Z\"\n      to: \"2001-04-01T00:00:00Z\"\n    ) {\n      count\n      avg\n    }\n  }\n}"): typeof import('./graphql.ts').RoutesFromSanJoseDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query WeekOverWeek {\n  buckets(\n    metric: \"flights\"\n    field: \"delay\"\n    granularity: DAY\n    from: \"2001-03-19\"\n    to: \"2001-03-26\"\n    timeZone: \"America/Chicago\"\n    where: [{key: \"origin\", in: \"ORD\"}]\n    statistic: COUNT\n    compareWith: {amount: 1, unit: WEEK}\n  ) {\n    buckets {\n      start\n      value\n      previous\n      change\n      relativeChange\n    }\n  }\n}"): typeof import('./graphql.ts').WeekOverWeekDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query WorstOrigins {\n  aggregate(\n    metric: \"flights\"\n    field: \"delay\"\n    from: \"2001-01-01\"\n    to: \"2001-04-01\"\n    groupBy: [\"origin\"]\n    orderBy: {statistic: AVG, direction: DESC}\n    limit: 10\n  ) {\n    tags {\n      value\n    }\n    count\n    avg\n  }\n}"): typeof import('./graphql.ts').WorstOriginsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation LoadWrite($readings: [ReadingInput!]!, $batchId: String) {\n  recordReadings(readings: $readings, batchId: $batchId) {\n    recorded\n  }\n}\n\nquery LoadHourBuckets($metric: String!, $from: Time!, $to: Time!, $hosts: [String!]!) {\n  buckets(\n    metric: $metric\n    field: \"v\"\n    granularity: HOUR\n    from: $from\n    to: $to\n    where: [{key: \"host\", in: $hosts}]\n  ) {\n    buckets {\n      start\n      count\n      avg\n    }\n  }\n}\n\nquery LoadPerHost($metric: String!, $from: Time!, $to: Time!) {\n  aggregate(metric: $metric, field: \"v\", from: $from, to: $to, groupBy: [\"host\"]) {\n    tags {\n      value\n    }\n    count\n    avg\n    max\n  }\n}\n\nquery LoadTotals($metric: String!, $from: Time!, $to: Time!) {\n  aggregate(metric: $metric, field: \"v\", from: $from, to: $to) {\n    count\n    sum\n  }\n}"): typeof import('./graphql.ts').LoadWriteDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query DashboardMetrics {\n  metrics {\n    name\n    fields\n    tagKeys\n    firstReadingAt\n    lastReadingAt\n  }\n}\n\nquery DashboardBuckets($metric: String!, $field: String!, $from: Time!, $to: Time!, $timeZone: String!, $where: [TagFilter!], $maxDataPoints: Int!) {\n  buckets(\n    metric: $metric\n    field: $field\n    from: $from\n    to: $to\n    timeZone: $timeZone\n    where: $where\n    maxDataPoints: $maxDataPoints\n    fill: NULL\n  ) {\n    granularity\n    buckets {\n      start\n      localStart\n      count\n      avg\n      p5: percentile(p: 5)\n      p95: percentile(p: 95)\n    }\n  }\n}"): typeof import('./graphql.ts').DashboardMetricsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation ImportBatch($readings: [ReadingInput!]!, $batchId: String) {\n  recordReadings(readings: $readings, batchId: $batchId) {\n    recorded\n    applied\n    alreadyApplied\n  }\n}\n\nquery CountFlights {\n  aggregate(\n    metric: \"flights\"\n    field: \"delay\"\n    from: \"1970-01-01T00:00:00Z\"\n    to: \"9999-01-01T00:00:00Z\"\n  ) {\n    count\n  }\n}"): typeof import('./graphql.ts').ImportBatchDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
