/**
 * Runs the real server as a child process (`node --import tsx src/server/main.ts`, or
 * the same sources bundled into one module: `bundled`), on
 * loopback and a free port, with the embedded database on a given data directory, and
 * talks to it over HTTP. For tests that kill the server or its database and check what
 * survives.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { readEmbeddedState } from '../../src/embedded/state.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = join(ROOT, 'src', 'server', 'main.ts');

let bundle: Promise<string> | undefined;

/**
 * The server's sources bundled by esbuild into one ES module (packages stay imports from
 * node_modules), built once per test process into `test-results/server/`, named by its
 * content (so test processes running at once share it, and a file is never half
 * written when read). `import.meta.url` is the URL of `src/server/main.ts` throughout,
 * so the paths the sources resolve from it (schema examples, the dashboard's entry,
 * packages) are those of a run from the sources. A server starts from it without tsx's
 * transformation and resolution of every source file at start-up.
 */
function bundledServer(): Promise<string> {
  bundle ??= (async () => {
    const built = await build({
      entryPoints: [MAIN],
      outfile: 'main.mjs',
      write: false,
      bundle: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      logLevel: 'warning',
      define: { 'import.meta.url': JSON.stringify(pathToFileURL(MAIN).href) },
    });
    const code = built.outputFiles[0]!.contents;
    const dir = join(ROOT, 'test-results', 'server');
    const file = join(dir, `main-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
    if (!existsSync(file)) {
      await mkdir(dir, { recursive: true });
      const partial = `${file}.${process.pid}`;
      await writeFile(partial, code);
      await rename(partial, file);
    }
    return file;
  })();
  return bundle;
}

/** One JSON log line of the server (pino): `level` 30 info, 40 warn, 50 error, 60 fatal. */
export interface LogLine {
  level: number;
  time: number;
  msg: string;
  [key: string]: unknown;
}

/** How a process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A GraphQL answer over HTTP, with the time it took in milliseconds. */
export interface HttpGraphQLResponse<T> {
  status: number;
  ms: number;
  body: {
    data?: T | null;
    errors?: { message: string; path?: string[]; extensions?: { code?: string } }[];
  };
}

/** A running server process. */
export interface ServerProcess {
  /** GraphQL endpoint, e.g. `http://127.0.0.1:41234/graphql`. */
  url: string;
  /** `http://127.0.0.1:<port>`, for `/health` and `/ready`. */
  origin: string;
  pid: number;
  dataDir: string;
  /** Parsed JSON log lines so far, oldest first. */
  logs: LogLine[];
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** Waits until a log line matches, up to `timeoutMs` (default 30,000). */
  waitForLog(matches: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Settles when the process has exited. */
  exited: Promise<Exit>;
  /** Sends `signal` to the server process. */
  kill(signal: NodeJS.Signals): void;
  /** SIGTERM, SIGKILL after `timeoutMs` (default 30,000); resolves with how it exited. */
  stop(timeoutMs?: number): Promise<Exit>;
  /** Process id of the embedded database now serving the data directory (state file), if any. */
  dbPid(): Promise<number | undefined>;
  /** POSTs a GraphQL request (JSON) and parses the answer. */
  graphql<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<HttpGraphQLResponse<T>>;
  /** HTTP status of `GET /ready`, with the time it took in milliseconds. */
  ready(): Promise<{ status: number; ms: number }>;
}

const running = new Set<ServerProcess>();

/**
 * Starts the server and waits for its log line "GraphQL endpoint and GraphiQL: <url>".
 * The environment gets PORT=0, HOST=127.0.0.1, EMBEDDED_DATA_DIR=`dataDir`,
 * LOG_FORMAT=json, AUTH=off and an empty MONGODB_URI (so the embedded database runs),
 * then `env` on top. With `bundled`, the server runs from {@link bundledServer}, not
 * through tsx: for tests that start many servers.
 * @throws Error with the process's output when it exits or does not log its URL within
 * `startTimeoutMs` (default 60,000).
 */
export async function startServer(options: {
  dataDir: string;
  env?: Record<string, string>;
  startTimeoutMs?: number;
  bundled?: boolean;
}): Promise<ServerProcess> {
  const args = options.bundled ? [await bundledServer()] : ['--import', 'tsx', 'src/server/main.ts'];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      EMBEDDED_DATA_DIR: options.dataDir,
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'info',
      AUTH: 'off',
      MONGODB_URI: '',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let partial = '';
  const logs: LogLine[] = [];
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of waiters) waiter();
  };
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        // Not a log line.
      }
    }
    wake();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<Exit>((done) =>
    child.once('exit', (code, signal) => {
      done({ code, signal });
      wake();
    }),
  );
  let exit: Exit | undefined;
  void exited.then((value) => (exit = value));

  const waitForLog = (matches: (line: LogLine) => boolean, timeoutMs = 30_000) =>
    new Promise<LogLine>((found, failed) => {
      const check = () => {
        const line = logs.find(matches);
        if (line) {
          finish();
          found(line);
        } else if (exit) {
          finish();
          failed(new Error(`The server exited (${JSON.stringify(exit)}) before the expected log line:\n${output}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        failed(new Error(`The expected log line did not come within ${timeoutMs} ms:\n${output}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  const started = await waitForLog((line) => line.msg.startsWith('GraphQL endpoint and GraphiQL:'), options.startTimeoutMs ?? 60_000).catch(
    (error: unknown) => {
      child.kill('SIGKILL');
      throw error;
    },
  );
  const url = /(http:\/\/\S+\/graphql)/.exec(started.msg)![1]!;
  const origin = new URL(url).origin;

  const server: ServerProcess = {
    url,
    origin,
    pid: child.pid!,
    dataDir: options.dataDir,
    logs,
    output: () => output,
    waitForLog,
    exited,
    kill: (signal) => {
      if (!exit) child.kill(signal);
    },
    async stop(timeoutMs = 30_000) {
      if (!exit) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
    dbPid: async () => (await readEmbeddedState(options.dataDir))?.pid,
    async graphql<T>(query: string, variables?: Record<string, unknown>) {
      const begin = performance.now();
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.timeout(60_000),
      });
      const body = (await response.json()) as HttpGraphQLResponse<T>['body'];
      return { status: response.status, ms: performance.now() - begin, body };
    },
    async ready() {
      const begin = performance.now();
      const response = await fetch(`${origin}/ready`, { signal: AbortSignal.timeout(30_000) });
      await response.arrayBuffer();
      return { status: response.status, ms: performance.now() - begin };
    },
  };
  running.add(server);
  void exited.then(() => running.delete(server));
  return server;
}

/** Stops every server this helper started that is still running (for `afterAll`). */
export async function stopAllServers(): Promise<void> {
  await Promise.all([...running].map((server) => server.stop(10_000)));
}

/**
 * True while `pid` is a running process: it exists and is not a zombie (a process that
 * exited but was not yet reaped by its parent).
 */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name in parentheses: " <state> <ppid> ...".
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Polls `condition` every `intervalMs` (default 50) until it holds; returns the
 * milliseconds waited.
 * @throws Error `message` when it does not hold within `timeoutMs`.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  message: string,
  intervalMs = 50,
): Promise<number> {
  const begin = performance.now();
  for (;;) {
    if (await condition()) return performance.now() - begin;
    if (performance.now() - begin > timeoutMs) throw new Error(`${message} (waited ${timeoutMs} ms)`);
    await new Promise((done) => setTimeout(done, intervalMs));
  }
}

/**
 * Sends a GraphQL request as a client told to "retry later" does: while the answer's
 * errors are all UNAVAILABLE (the database is down, or was just restarted and the
 * server has not seen it answer yet) or the request gets no answer, it is sent again
 * every 250 ms, up to `timeoutMs` (default 30,000). For checks after a crash, which are
 * about what is stored, not about how soon the server serves again.
 * @returns the first other answer, or the last UNAVAILABLE one when time is up.
 * @throws the last request's error when time is up and that request got no answer.
 */
export async function graphqlWhenAvailable<T>(
  server: Pick<ServerProcess, 'graphql'>,
  query: string,
  variables?: Record<string, unknown>,
  timeoutMs = 30_000,
): Promise<HttpGraphQLResponse<T>> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    let outcome: { answer: HttpGraphQLResponse<T> } | { error: unknown };
    try {
      const answer = await server.graphql<T>(query, variables);
      const errors = answer.body.errors ?? [];
      if (errors.length === 0 || !errors.every((error) => error.extensions?.code === 'UNAVAILABLE')) return answer;
      outcome = { answer };
    } catch (error) {
      outcome = { error };
    }
    if (performance.now() > deadline) {
      if ('answer' in outcome) return outcome.answer;
      throw outcome.error;
    }
    await new Promise((done) => setTimeout(done, 250));
  }
}

/** A reading as `recordReadings` takes it. */
export interface ReadingInput {
  metric: string;
  /** ISO 8601, e.g. `2024-05-01T08:00:12Z`. */
  time: string;
  tags?: { key: string; value: string }[];
  fields: { name: string; value: number }[];
}

/** Sends one `recordReadings` batch. */
export function recordReadings(
  server: Pick<ServerProcess, 'graphql'>,
  readings: ReadingInput[],
): Promise<HttpGraphQLResponse<{ recordReadings: { recorded: number } }>> {
  return server.graphql('mutation Record($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded } }', { readings });
}

/**
 * Count and sum of `field` of `metric` over `[from, to)` (ISO 8601 times), all series
 * together: `{ count: 0, sum: null }` when nothing was recorded.
 * @throws Error when the server answers with errors.
 */
export async function totals(
  server: Pick<ServerProcess, 'graphql'>,
  metric: string,
  field: string,
  from: string,
  to: string,
): Promise<{ count: number; sum: number | null }> {
  const response = await server.graphql<{ aggregate: { count: number; sum: number | null }[] }>(
    'query Totals($metric: String!, $field: String!, $from: Time!, $to: Time!) { aggregate(metric: $metric, field: $field, from: $from, to: $to) { count sum } }',
    { metric, field, from, to },
  );
  if (response.body.errors?.length || !response.body.data) throw new Error(`aggregate failed: ${JSON.stringify(response.body)}`);
  return response.body.data.aggregate[0] ?? { count: 0, sum: null };
}
