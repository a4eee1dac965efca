/**
 * The GraphQL operations the dashboard sends (its only way to the data): the metric list
 * for the pickers, the buckets of the chart, and the live subscription. Kept as plain
 * strings with the `/* GraphQL *\/` marker so editors and tools can find them.
 */

/** Every metric the token may read, with its fields, tag keys and reading span. */
export const DASHBOARD_METRICS = /* GraphQL */ `
  query DashboardMetrics {
    metrics {
      name
      fields
      tagKeys
      firstReadingAt
      lastReadingAt
    }
  }
`;

/**
 * The chart: one bucket list of `field` over `[from, to)` read in `timeZone`, filtered by
 * `where`, at the finest granularity with at most `maxDataPoints` buckets; per bucket the
 * mean, the reading count and the 5th and 95th percentiles (the band).
 */
export const DASHBOARD_BUCKETS = /* GraphQL */ `
  query DashboardBuckets(
    $metric: String!
    $field: String!
    $from: Time!
    $to: Time!
    $timeZone: String!
    $where: [TagFilter!]
    $maxDataPoints: Int!
  ) {
    buckets(
      metric: $metric
      field: $field
      from: $from
      to: $to
      timeZone: $timeZone
      where: $where
      maxDataPoints: $maxDataPoints
      fill: NULL
    ) {
      granularity
      buckets {
        start
        localStart
        count
        avg
        p5: percentile(p: 5)
        p95: percentile(p: 95)
      }
    }
  }
`;
