import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { z } from 'zod';
import {
  DEFAULT_STATISTICS,
  MAX_LATEST_READINGS,
  SLOT_LEVELS,
  type SlotLevel,
  type StatisticsSettings,
} from './model/statistics-settings.ts';
import { DEFAULT_RESOURCE_ATTRIBUTES } from './receivers/otlp.ts';
import { FAULT_POINTS, type FaultPoint } from './storage/fault-points.ts';
import { DEFAULT_PACKED_MINUTES, DEFAULT_RAW_READINGS } from './documents/series-day.ts';
import { DEFAULT_MAX_SERIES_PER_METRIC } from './model/limits.ts';
import { DEFAULT_MERGE_HERE_DOCUMENTS } from './storage/store.ts';
import type { RollupPolicy } from './model/rollup-policy.ts';

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** The items of a comma-separated setting, trimmed, empty ones left out (`"a, b,"` gives `["a", "b"]`). */
const commaList = (text: string): string[] =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

/**
 * The server's settings, read from environment variables once at start-up.
 * Every variable is optional; the defaults run the embedded database on this machine.
 * Each setting's meaning is its `.describe()` text, which `npm run docs:reference`
 * turns into the configuration reference page.
 */
export const ConfigSchema = z
  .object({
    HOST: z.string().min(1).default('127.0.0.1').describe('Interface the HTTP server listens on.'),
    PORT: integer(0, 65535).default(4000).describe('TCP port of the HTTP server (0 picks a free one).'),
    MONGODB_URI: z
      .string()
      .regex(/^mongodb(\+srv)?:\/\/\S+$/, 'must start with mongodb:// or mongodb+srv://')
      .optional()
      .describe(
        'Connection string of an existing MongoDB deployment (MongoDB 7/8, Atlas, any wire-compatible server), starting with `mongodb://` or `mongodb+srv://`. When unset, the embedded SecantusDB server is started.',
      ),
    MONGODB_DB: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,63}$/, 'letters, digits, "_" and "-" only, at most 63 characters')
      .default('tsgraph')
      .describe('Database that holds the collections: letters, digits, `_` and `-`, at most 63 characters.'),
    EMBEDDED_DATA_DIR: z
      .string()
      .min(1)
      .default('.embedded-db/data')
      .describe('Data directory of the embedded database (ignored when `MONGODB_URI` is set).'),
    EMBEDDED_SERVER: z
      .enum(['python', 'rust'])
      .default('python')
      .describe(
        "Which SecantusDB server the embedded database (and the tests' throw-away database) runs: `python` (PyPI `SecantusDB`, installed on first use) or `rust` (the crate `secantus-mdb`'s `secantusd-rs`, built beforehand with `npm run db:install -- --server rust`; see docs/compatibility.md). Ignored when `MONGODB_URI` is set. Both keep `EMBEDDED_DATA_DIR` in the same format (checked on 0.7.0b3 and 0.5.3-beta.196: documents written by either were read by the other).",
      ),
    EMBEDDED_VENV_DIR: z
      .string()
      .min(1)
      .default('.embedded-db/venv')
      .describe("Directory of the embedded database's Python virtual environment."),
    PYTHON: z.string().min(1).default('python3').describe('Python interpreter used to create that virtual environment (3.10 or newer).'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('Log level (pino).'),
    LOG_FORMAT: z
      .enum(['json', 'pretty'])
      .default('json')
      .describe("`json`: one JSON object per line (for log collectors); `pretty`: human-readable (the demo's default)."),
    MAX_BATCH_SIZE: integer(1, 100_000)
      .default(10_000)
      .describe(
        'Largest number of readings one `recordReadings` call, line-protocol, NDJSON, OTLP or remote-write request accepts (`BATCH_TOO_LARGE` beyond it; an OTLP data point and a remote-write sample are one reading each).',
      ),
    MAX_BUCKETS: integer(1, 10_000_000)
      .default(100_000)
      .describe(
        'Largest number of buckets one request may return: every bucket list of every group, series, field and alias together; an aggregate counts one per group or series, and with percentiles each counts 10 (`TOO_MANY_BUCKETS` beyond it).',
      ),
    MAX_SERIES: integer(100, 1_000_000)
      .default(1_000)
      .describe(
        'Largest number of series the series lists (`series`, `Metric.series`, `seriesById`) of one request may list together; also the largest `limit` of a list (at least 100, the default `limit`).',
      ),
    MAX_FILTER_VALUES: integer(1, 1_000_000)
      .default(1_000)
      .describe('Largest number of values in all tag filters (`where: [{in: [...]}]`) of one request together.'),
    QUERY_TIMEOUT_MS: integer(1, 3_600_000)
      .default(30_000)
      .describe(
        'Time limit of each database read a query runs, in milliseconds: sent as `maxTimeMS` (the server stops and answers code 50), and the client stops waiting 1 s later (`QUERY_TIMEOUT`).',
      ),
    MAX_BODY_BYTES: integer(1_024, 1_073_741_824)
      .default(1_048_576)
      .describe(
        'Largest request body, in bytes (HTTP 413 beyond it), checked before and while reading, and again once a gzip body is decompressed; also bounds a `recordReadings` batch (see docs/access-and-limits.md#limits).',
      ),
    MAX_DEPTH: integer(1, 1_000).default(12).describe('Deepest field nesting a GraphQL document may have (introspection exempt).'),
    MAX_ALIASES: integer(0, 10_000).default(30).describe('Most aliases a GraphQL document may use.'),
    MAX_TOKENS: integer(10, 1_000_000)
      .default(5_000)
      .describe('Most tokens (names, punctuation, values) a GraphQL document may have; variables do not count.'),
    MAX_DIRECTIVES: integer(0, 10_000).default(20).describe('Most directives a GraphQL document may use.'),
    SKETCH_LEVELS: z
      .string()
      .default('day,hour,quarter')
      .transform((text, context) => {
        const levels = text.trim() === 'none' ? [] : text.split(',').map((level) => level.trim());
        const unknown = levels.filter((level) => !(SLOT_LEVELS as readonly string[]).includes(level));
        if (unknown.length > 0) {
          context.addIssue({
            code: 'custom',
            message: `SKETCH_LEVELS: unknown level ${unknown.join(', ')}; use day, hour, quarter, minute or none`,
          });
          return z.NEVER;
        }
        return [...new Set(levels)] as SlotLevel[];
      })
      .describe(
        'Levels at which new metrics keep quantile sketches of every field (for percentiles): a comma-separated subset of `day,hour,quarter,minute`, or `none` (`quarter`: quarter hours, which answer percentiles of buckets whose edges fall inside an hour). Stored per metric when it is created; change it later with the `setMetricStatistics` mutation (see docs/statistics.md).',
      ),
    LATEST_READINGS: integer(0, MAX_LATEST_READINGS)
      .default(DEFAULT_STATISTICS.latestReadings)
      .describe('Latest readings new metrics keep per series and day (0 to 50), for `Series.latest`.'),
    WRITE_CONCERN: z
      .string()
      .regex(/^(majority|[0-9]+)$/, 'must be "majority" or a number of members')
      .default('majority')
      .transform((value) => (value === 'majority' ? value : Number(value)))
      .describe(
        'Write concern of every write (MongoDB manual, "Write Concern"): `majority` (on a standalone server the same as 1) or a number of replica-set members. An answer to a record mutation is sent only once the database confirmed this (see docs/guarantees.md).',
      ),
    WRITE_JOURNAL: z
      .enum(['true', 'false'])
      .default('true')
      .transform((value) => value === 'true')
      .describe(
        'Whether writes also wait for the on-disk journal (`j: true`). Without it the embedded database acknowledges a write before its journal record reaches the file, and a crash of the database process moments later loses it (measured on SecantusDB 0.7.0b3: writes acknowledged 10 ms before a SIGKILL were lost, those 100 ms before were kept; with `j: true` none was lost). `false` writes faster and gives up that.',
      ),
    BATCH_RETENTION_HOURS: integer(1, 24 * 365)
      .default(24)
      .describe(
        'How long a `batchId` is remembered, in hours: within it, a retry of a completed batch answers at once and a reuse of the id for other readings is refused.',
      ),
    REGISTRY_CACHE_TTL_MS: integer(0, 3_600_000)
      .default(10_000)
      .describe(
        "How long the record path remembers that a series is registered, in milliseconds (0: not at all, every batch re-registers its series). A registry entry removed from outside the process is written again by the series' next batch after at most this long.",
      ),
    ROLLUP_REBUILD_SECONDS: integer(0, 86_400)
      .default(30)
      .describe(
        'How often the server looks for rollups to build and dirty rollup days to rebuild from the series-day documents, in seconds (0: never; then `npm run rollups -- rebuild` does it).',
      ),
    ROLLUP_REBUILD_GRACE_MS: integer(0, 3_600_000)
      .default(60_000)
      .describe(
        'How long a dirty rollup day rests before it is rebuilt, and how long after a rollup is defined its backfill starts, in milliseconds: longer than any fold can take (a fold that read the rollup definitions before the rollup existed must have finished; see docs/rollups.md).',
      ),
    AUTO_ROLLUPS: z
      .enum(['on', 'off'])
      .default('on')
      .transform((value) => value === 'on')
      .describe(
        'Whether the server defines rollups by itself, in its rollup pass (`ROLLUP_REBUILD_SECONDS`): one over each tag key that merges series (at least two values, at most `AUTO_ROLLUP_MAX_VALUES`, two series or more per value on average) and, for a dense metric, one over all its tag keys; at most `AUTO_ROLLUPS_PER_METRIC` per metric. An automatic rollup an operator drops is not defined again. `off` defines none (those defined stay until dropped). See docs/rollups.md#automatic-rollups.',
      ),
    AUTO_ROLLUP_MAX_VALUES: integer(2, 100_000)
      .default(1_000)
      .describe('Most values a tag key may have and still get an automatic rollup of its own (each value is one rollup document a day).'),
    AUTO_ROLLUP_DENSE_READINGS: integer(1, 1_000_000)
      .default(240)
      .describe(
        "Fewest readings a metric's series hold a day, on average (from its latest day summaries), for it to get an automatic rollup over all its tag keys: hour and day charts of many series then read documents without minutes.",
      ),
    AUTO_ROLLUPS_PER_METRIC: integer(0, 8)
      .default(4)
      .describe('Most automatic rollups one metric gets (they count towards its 8 rollups in all).'),
    FOLD_INTERVAL_MS: integer(0, 3_600_000)
      .default(250)
      .describe(
        'How often the folder looks for acknowledged readings to fold into series-day documents, in milliseconds (0: never, and writes are refused with INGEST_BACKLOG once the log passes its bounds). Every instance runs a folder; a lease lets one fold at a time (see docs/ingest-design.md). A look that finds nothing to fold costs the database a few small commands (measuring the log, renewing the fold lease): 0.6% of a core on the embedded server.',
      ),
    FOLD_MAX_READINGS: integer(1, 1_000_000)
      .default(20_000)
      .describe(
        'Readings one fold takes at most (at least one log entry, however large); each fold writes one part per series-day it touches.',
      ),
    FOLD_QUIET_MS: integer(0, 3_600_000)
      .default(1_000)
      .describe(
        'While batches keep arriving, the folder waits until none was acknowledged for this long, in milliseconds, so that folds do not compete with the acknowledgements of a burst (0: fold whatever is there at every FOLD_INTERVAL_MS). It folds anyway once the oldest unfolded batch waited FOLD_MAX_DELAY_MS, or once FOLD_TAIL_READINGS readings wait (see docs/ingest-design.md, "When to fold").',
      ),
    FOLD_MAX_DELAY_MS: integer(0, 3_600_000)
      .default(5_000)
      .describe(
        'How long the oldest acknowledged batch waits at most before the folder folds it, however busy the writes, in milliseconds (see FOLD_QUIET_MS). Queries read what waits from the log, at a cost that grows with it.',
      ),
    FOLD_TAIL_READINGS: integer(1, 1_000_000)
      .default(2_000)
      .describe(
        'How many acknowledged readings wait at most before the folder folds them, however busy the writes (checked every FOLD_INTERVAL_MS; see FOLD_QUIET_MS). Every query plans the waiting readings of its metric in memory and sends them with its pipeline, so its cost grows with them: under a steady stream of thousands of readings a second, folding at 2,000 kept the read p99 of the load test at about half of what 20,000 gave (see docs/ingest-design.md, "When to fold").',
      ),
    FOLD_LEASE_MS: integer(1_000, 3_600_000)
      .default(30_000)
      .describe(
        "How long the fold lease lasts unless its holder renews it, in milliseconds: when the instance that folds stops without giving the lease up (killed, stalled), another instance takes over the folds after at most this long. A fold's writes must end a sixth of it (at most 5 s) before the lease does.",
      ),
    COMPACT_FAN_IN: integer(2, 64)
      .default(2)
      .describe(
        'Runs of one size a compaction merges at once (docs/ingest-design.md, "Compaction"): with 2, a day keeps at most log2(its compactions) + 1 runs and each fold\'s parts are rewritten about as often; with 4, up to three runs of each size, each rewritten about half as often. Higher writes less and makes reads of the day read more documents.',
      ),
    COMPACT_SEAL_READINGS: integer(0, 1_000_000_000)
      .default(2_000)
      .describe(
        'Readings per series-day document, on average, at which a run of a day\'s compacted documents is sealed: later compactions merge only the runs after it (docs/ingest-design.md, "Sealed runs"). The average is over the day\'s series-days, so it fits days of dense series; there a series-day then ends as a few documents of this size to about COMPACT_FAN_IN times it, and a compaction rewrites at most about COMPACT_FAN_IN times this many readings of it plus the folds since the last one, instead of the whole day at every power of two of its compactions. Sparse days, whose documents never hold that many, merge as before, and a day a deletion voided is merged whole once more. 0: no run is sealed.',
      ),
    MAX_SERIES_PER_METRIC: integer(1, 100_000_000)
      .default(DEFAULT_MAX_SERIES_PER_METRIC)
      .describe(
        'Most series one metric may have: a write that would register more is refused with `TOO_MANY_SERIES` (HTTP 400 on the plain HTTP routes) and writes nothing (docs/access-and-limits.md, "Cardinality"). Counted when series are registered; writers registering at the same moment may pass it together by their batches\' new series.',
      ),
    RAW_READINGS: integer(0, 1_000)
      .default(DEFAULT_RAW_READINGS)
      .describe(
        'Most readings of a series-day document that folds and compactions write in the raw form: the readings as they came, with the day totals, instead of hour and minute slots and sketches (docs/design.md, "The raw form"). Every query reads both forms; the raw form keeps a sparse series (a flight route with a few flights a day) in a fraction of the bytes, and a compaction turns a document that grows past this into slots. Counters are always written as slots. 0: never.',
      ),
    MERGE_HERE_DOCUMENTS: integer(0, 100_000)
      .default(DEFAULT_MERGE_HERE_DOCUMENTS)
      .describe(
        'Most series-day documents a read of minute slots (at most a day of slots over its range) fetches and merges in this server instead of walking them in a pipeline on the database (docs/read-design.md, "Documents merged in the server"): a MINUTE chart of one tag value over a few hours. Fewer for longer reads: at most 200,000 over the slots read. Past it, the fetch stops and the pipeline runs. `extensions.reads` says `fetched` where it happened. 0: every read runs its pipeline.',
      ),
    PACKED_MINUTES: integer(0, 60)
      .default(DEFAULT_PACKED_MINUTES)
      .describe(
        'Fewest minutes with readings of an hour whose minute slots folds and compactions write packed: as arrays per field, the minute\'s count and the times of its first and last reading kept once, where the fields of each minute share its count and times (every reading carries every field: a dense series such as a host\'s CPU fields every 10 s; docs/design.md, "Packed minutes"). From two minutes an hour, fewer bytes than minute objects (about half for dense series); every query reads both forms. Counters are always written unpacked. 0: never.',
      ),
    COMPACT_AFTER_FOLDS: integer(2, 1_000_000)
      .default(8)
      .describe(
        "Folds that wrote parts to a day before the folder merges that day's parts into one document per series (a compaction); fewer parts make reads faster, each compaction rewrites the day. Parts it replaces are deleted QUERY_TIMEOUT_MS + 30 s later.",
      ),
    COMPACT_QUIET_MS: integer(0, 86_400_000)
      .default(60_000)
      .describe(
        "Time in milliseconds without a fold writing to a day after which a day that two folds or more wrote to is compacted too, before COMPACT_AFTER_FOLDS folds reach it: a day imported in time order, or yesterday once today's readings began, ends as one document per series instead of a part per fold (a month of flights imported in time order kept about four parts per route-day, and its reads read four times the documents). Measured on the folding instance's clock. 0: any day of two folds or more is due at once.",
      ),
    INGEST_MAX_TAIL_READINGS: integer(0, 100_000_000)
      .default(200_000)
      .describe(
        'Readings acknowledged but not yet folded past which writes are refused with INGEST_BACKLOG (HTTP 503, `Retry-After`); 0: no bound. Queries read these readings from the log, so the bound also bounds what one query plans in memory.',
      ),
    INGEST_MAX_TAIL_SECONDS: integer(0, 86_400)
      .default(60)
      .describe(
        'Age in seconds of the oldest reading not yet folded past which writes are refused with INGEST_BACKLOG (the folder is not keeping up or not running); 0: no bound.',
      ),
    RETENTION_SECONDS: integer(0, 86_400)
      .default(3_600)
      .describe(
        "How often the server applies the metrics' retention policies (`setRetention`), in seconds (0: never; then `npm run retention -- apply` does it): it removes minute slots, hour slots and whole day documents older than each policy keeps them. One pass also runs at start-up (see docs/retention.md).",
      ),
    SLOW_QUERY_MS: integer(0, 3_600_000)
      .default(1_000)
      .describe(
        'GraphQL requests that take at least this long, in milliseconds, are logged: a query as a warning with its operation name and its document without literal values, a write batch (a mutation that only records readings) at debug level with its readings and the time per reading; at most one line per operation name every 10 s, the next saying how many were not logged (see docs/operations.md#metrics); 0 treats every request as slow.',
      ),
    LIVE_MIN_INTERVAL_MS: integer(0, 3_600_000)
      .default(1_000)
      .describe(
        'Shortest time between two pushes of one live subscription (`subscription { buckets }`), in milliseconds: readings arriving faster are coalesced into the next push (see docs/live-updates.md); 0 pushes after every acknowledged write.',
      ),
    LIVE_CHANGE_STREAMS: z
      .enum(['auto', 'off'])
      .default('auto')
      .describe(
        "Where live subscriptions learn of new readings: `auto` watches the series-day collection with a change stream when the database supports one (a replica set), so writes through any instance are pushed, and otherwise falls back to this process's own writes; `off` always uses this process's own writes.",
      ),
    OTLP_RESOURCE_ATTRIBUTES: z
      .string()
      .default(DEFAULT_RESOURCE_ATTRIBUTES.join(','))
      .transform((text, context): readonly string[] | 'all' => {
        const trimmed = text.trim();
        if (trimmed === 'all') return 'all';
        if (trimmed === 'none') return [];
        const keys = trimmed.split(',').map((key) => key.trim());
        if (keys.some((key) => key === '')) {
          context.addIssue({
            code: 'custom',
            message: 'OTLP_RESOURCE_ATTRIBUTES: an empty attribute key; use keys separated by commas, all or none',
          });
          return z.NEVER;
        }
        return [...new Set(keys)];
      })
      .describe(
        'Resource attributes of OpenTelemetry metrics (`POST /v1/metrics`) kept as tags of every reading of the resource: OpenTelemetry keys separated by commas (sanitized as tag keys: `service.name` becomes the tag `service_name`), `all` or `none`; data-point attributes are always kept (see docs/opentelemetry.md#mapping).',
      ),
    SHUTDOWN_TIMEOUT_MS: integer(0, 600_000)
      .default(10_000)
      .describe('How long a graceful shutdown waits for in-flight requests, in milliseconds.'),
    MONGODB_SERVER_SELECTION_TIMEOUT_MS: integer(100, 600_000)
      .default(5_000)
      .describe(
        "How long an operation waits for a reachable database server before failing with `UNAVAILABLE`, in milliseconds (the driver's `serverSelectionTimeoutMS`). Also bounds the wait for the database at start-up. While the database is known to be down, requests fail at once instead (see docs/operations.md#operations).",
      ),
    READY_TIMEOUT_MS: integer(100, 60_000)
      .default(1_000)
      .describe("Longest wait of `/ready` for the database's answer to a ping, in milliseconds."),
    EMBEDDED_RESTART_DELAY_MS: integer(0, 600_000)
      .default(500)
      .describe('Delay before the first restart of a crashed embedded database, in milliseconds; doubles per failed attempt.'),
    EMBEDDED_RESTART_MAX_DELAY_MS: integer(0, 600_000)
      .default(10_000)
      .describe('Largest delay between restart attempts of the embedded database, in milliseconds.'),
    TEST_FAULT_POINTS: z
      .string()
      .default('')
      .transform((text, context) => {
        const points = commaList(text);
        const unknown = points.filter((point) => !(FAULT_POINTS as readonly string[]).includes(point));
        if (unknown.length > 0) {
          context.addIssue({
            code: 'custom',
            message: `TEST_FAULT_POINTS: unknown fault point ${unknown.join(', ')}; use ${FAULT_POINTS.join(', ')}`,
          });
          return z.NEVER;
        }
        return points as FaultPoint[];
      })
      .describe(
        `For fault tests only; leave unset. Comma-separated steps of the write path (${FAULT_POINTS.map((point) => `\`${point}\``).join(', ')}) where the server stops and waits so a test can kill it or its database there: each SIGUSR2 arms the next listed step or releases the one held (see \`src/storage/fault-points.ts\`).`,
      ),
    AUTH: z
      .enum(['tokens', 'off'])
      .default('tokens')
      .describe(
        "`tokens`: every GraphQL request needs `Authorization: Bearer <token>` (see docs/access-and-limits.md#access); `off`: no authentication, every client has every scope (the demo's default; refused on a non-loopback `HOST` unless `ALLOW_OPEN_ACCESS=true`).",
      ),
    ALLOW_OPEN_ACCESS: z
      .enum(['true', 'false'])
      .default('false')
      .transform((value) => value === 'true')
      .describe('`true` allows `AUTH=off` on a `HOST` other than a loopback address; only `true` or `false`.'),
    CORS_ORIGINS: z
      .string()
      .default('')
      .transform((text, ctx) => {
        const origins = commaList(text);
        for (const origin of origins) {
          if (!isOrigin(origin)) {
            ctx.addIssue({
              code: 'custom',
              message: `"${origin}" is not an origin such as https://dash.example.com (scheme, host, optional port; no path)`,
            });
          }
        }
        return origins;
      })
      .describe(
        'Comma-separated origins whose web pages may call the API from a browser (CORS), e.g. `https://dash.example.com,http://localhost:5173`; none by default.',
      ),
  })
  .superRefine((config, ctx) => {
    if (config.AUTH === 'off' && !isLoopbackHost(config.HOST) && !config.ALLOW_OPEN_ACCESS) {
      ctx.addIssue({
        code: 'custom',
        path: ['AUTH'],
        message: `AUTH=off on HOST=${config.HOST} (not a loopback address) would let anyone on the network read, write and delete; use AUTH=tokens, HOST=127.0.0.1, or set ALLOW_OPEN_ACCESS=true`,
      });
    }
  });

/** True for an `http:` or `https:` origin written exactly as browsers send it in `Origin` (no path, no trailing slash). */
function isOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text;
  } catch {
    return false;
  }
}

/**
 * True when `host` (a HOST setting) is a loopback address: `localhost`, an IPv4
 * address in 127.0.0.0/8 (also IPv4-mapped, `::ffff:127.x.x.x`), or `::1`.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (name === 'localhost') return true;
  const v4 = name.replace(/^::ffff:/, '');
  if (isIPv4(v4)) return v4.startsWith('127.');
  if (!isIPv6(name)) return false;
  const list = new BlockList();
  list.addAddress('::1', 'ipv6');
  return list.check(name, 'ipv6');
}

/** Validated configuration; see {@link ConfigSchema} for each setting. */
export type Config = z.infer<typeof ConfigSchema>;

/**
 * The optional statistics new metrics get under `config` (`SKETCH_LEVELS`,
 * `LATEST_READINGS`; every field sketched), and metric registry entries without any.
 */
export function configuredStatistics(config: Config): StatisticsSettings {
  return { sketchLevels: config.SKETCH_LEVELS, sketchFields: null, latestReadings: config.LATEST_READINGS };
}

/** The automatic rollups' settings under `config` (`AUTO_ROLLUPS`, `AUTO_ROLLUP_MAX_VALUES`, `AUTO_ROLLUP_DENSE_READINGS`, `AUTO_ROLLUPS_PER_METRIC`). */
export function rollupPolicy(config: Config): RollupPolicy {
  return {
    enabled: config.AUTO_ROLLUPS,
    maxValues: config.AUTO_ROLLUP_MAX_VALUES,
    denseReadings: config.AUTO_ROLLUP_DENSE_READINGS,
    perMetric: config.AUTO_ROLLUPS_PER_METRIC,
  };
}

/** Thrown by {@link loadConfig} with one line per invalid variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Reads and validates the configuration from `env` (default `process.env`).
 * Empty strings count as unset.
 * @throws ConfigError listing every invalid variable, e.g. `PORT: Too big: expected number to be <=65535`.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = ConfigSchema.safeParse(present);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
  throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
}
