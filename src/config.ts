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
  /** Largest number of buckets one query may return (all groups together). */
  MAX_BUCKETS: integer(1, 10_000_000).default(100_000),
  /**
   * Bucket layout for metrics seen for the first time: `sparse` creates minute
   * slots on first write; `preallocated` inserts a zeroed day skeleton first
   * (the seeds' three-step initialization). Stored per metric; see README "Design".
   */
  DEFAULT_LAYOUT: z.enum(['sparse', 'preallocated']).default('sparse'),
  /**
   * Write concern of every write (MongoDB manual, "Write Concern"): `majority` (default;
   * on a standalone server the same as 1) or a number of replica-set members. An
   * answer to a record mutation is sent only once the database confirmed this.
   */
  WRITE_CONCERN: z
    .string()
    .regex(/^(majority|[0-9]+)$/, 'must be "majority" or a number of members')
    .default('majority')
    .transform((value) => (value === 'majority' ? value : Number(value))),
  /** Whether writes also wait for the on-disk journal (`j: true`). */
  WRITE_JOURNAL: z
    .enum(['true', 'false'])
    .default('true')
    .transform((value) => value === 'true'),
  /**
   * How long a `batchId` is remembered, in hours: within it, a retry of a completed
   * batch answers at once and a reuse of the id for other readings is refused.
   */
  BATCH_RETENTION_HOURS: integer(1, 24 * 365).default(24),
  /**
   * How long the record path remembers that a series is registered, in milliseconds
   * (0: not at all, every batch re-registers its series). A registry entry removed
   * from outside the process is written again by the series' next batch after at most this long.
   */
  REGISTRY_CACHE_TTL_MS: integer(0, 3_600_000).default(10_000),
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
