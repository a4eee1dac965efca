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
  /** How long a graceful shutdown waits for in-flight requests, in milliseconds. */
  SHUTDOWN_TIMEOUT_MS: integer(0, 600_000).default(10_000),
  /**
   * How long an operation waits for a reachable database server before failing with
   * UNAVAILABLE, in milliseconds (the driver's `serverSelectionTimeoutMS`). Also bounds
   * the wait for the database at start-up. While the database is known to be down,
   * requests fail at once instead (see README "Operations").
   */
  MONGODB_SERVER_SELECTION_TIMEOUT_MS: integer(100, 600_000).default(5_000),
  /**
   * `true`: writes are acknowledged only once the database has journaled them (write
   * concern `j: true`). The embedded database otherwise acknowledges a write before its
   * journal record reaches the file, and a crash of the database process moments later
   * loses it (measured on SecantusDB 0.7.0b3: writes acknowledged 10 ms before a
   * SIGKILL were lost, those 100 ms before were kept). `false` writes faster.
   */
  MONGODB_JOURNAL: z.enum(['true', 'false']).default('true').transform((value) => value === 'true'),
  /** Longest wait of `/ready` for the database's answer to a ping, in milliseconds. */
  READY_TIMEOUT_MS: integer(100, 60_000).default(1_000),
  /** Delay before the first restart of a crashed embedded database, in milliseconds; doubles per failed attempt. */
  EMBEDDED_RESTART_DELAY_MS: integer(0, 600_000).default(500),
  /** Largest delay between restart attempts of the embedded database, in milliseconds. */
  EMBEDDED_RESTART_MAX_DELAY_MS: integer(0, 600_000).default(10_000),
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
