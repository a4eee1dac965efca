import { z } from 'zod';

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/**
 * The server's settings, read from environment variables once at start-up.
 * Every variable is optional; the defaults run the embedded database on this machine.
 */
const ConfigSchema = z.object({
  /** Interface the HTTP server listens on. */
  HOST: z.string().min(1).default('127.0.0.1'),
  /** TCP port of the HTTP server (0 picks a free one). */
  PORT: integer(0, 65535).default(4000),
  /**
   * Connection string of an existing MongoDB deployment (MongoDB 7/8, Atlas, any
   * wire-compatible server). When unset, the embedded SecantusDB server is started.
   */
  MONGODB_URI: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\/\S+$/, 'must start with mongodb:// or mongodb+srv://')
    .optional(),
  /** Database that holds the collections. */
  MONGODB_DB: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,63}$/, 'letters, digits, "_" and "-" only, at most 63 characters')
    .default('tsgraph'),
  /** Data directory of the embedded database (ignored when MONGODB_URI is set). */
  EMBEDDED_DATA_DIR: z.string().min(1).default('.embedded-db/data'),
  /** Directory of the embedded database's Python virtual environment. */
  EMBEDDED_VENV_DIR: z.string().min(1).default('.embedded-db/venv'),
  /** Python interpreter used to create that virtual environment (3.10 or newer). */
  PYTHON: z.string().min(1).default('python3'),
  /** Log level (pino). */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `json`: one JSON object per line (for log collectors); `pretty`: human-readable. */
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
  /** Largest number of readings one `recordReadings` call accepts. */
  MAX_BATCH_SIZE: integer(1, 100_000).default(10_000),
  /**
   * Largest number of buckets one request may return: every bucket list of every
   * group, series, field and alias together; an aggregate counts one per group or series.
   */
  MAX_BUCKETS: integer(1, 10_000_000).default(100_000),
  /**
   * Largest number of series the series lists (`series`, `Metric.series`, `seriesById`)
   * of one request may list together; also the largest `limit` of a list (at least 100,
   * the default `limit`).
   */
  MAX_SERIES: integer(100, 1_000_000).default(1_000),
  /** Largest number of values in all tag filters (`where: [{in: [...]}]`) of one request together. */
  MAX_FILTER_VALUES: integer(1, 1_000_000).default(1_000),
  /**
   * Time limit of each database read a query runs, in milliseconds: sent as `maxTimeMS`
   * (the server stops and answers code 50), and the client stops waiting 1 s later.
   */
  QUERY_TIMEOUT_MS: integer(1, 3_600_000).default(30_000),
  /** Largest request body, in bytes (HTTP 413 beyond it), checked before and while reading. */
  MAX_BODY_BYTES: integer(1_024, 1_073_741_824).default(1_048_576),
  /** Deepest field nesting a GraphQL document may have. */
  MAX_DEPTH: integer(1, 1_000).default(12),
  /** Most aliases a GraphQL document may use. */
  MAX_ALIASES: integer(0, 10_000).default(30),
  /** Most tokens (names, punctuation, values) a GraphQL document may have; variables do not count. */
  MAX_TOKENS: integer(10, 1_000_000).default(5_000),
  /** Most directives a GraphQL document may use. */
  MAX_DIRECTIVES: integer(0, 10_000).default(20),
  /**
   * Bucket layout for metrics seen for the first time: `sparse` creates minute
   * slots on first write; `preallocated` inserts a zeroed day skeleton first
   * (the seeds' three-step initialization). Stored per metric; see README "Design".
   */
  DEFAULT_LAYOUT: z.enum(['sparse', 'preallocated']).default('sparse'),
  /** How long a graceful shutdown waits for in-flight requests, in milliseconds. */
  SHUTDOWN_TIMEOUT_MS: integer(0, 600_000).default(10_000),
});

/** Validated configuration; see {@link ConfigSchema} for each setting. */
export type Config = z.infer<typeof ConfigSchema>;

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
