/**
 * Keeps the embedded database running for as long as the server runs, and no longer:
 * it stops a database left running by an earlier server on the same data directory,
 * records the running one in the state file (`state.ts`), restarts it on the same port
 * and data directory when it dies (so the driver reconnects by itself), and stops it
 * when the server stops. The database also receives SIGTERM when the server process
 * dies, however it dies (`secantus.ts`, Linux only).
 */
import type { Logger } from '../logger.ts';
import { describeExit, startSecantus, type EmbeddedServer, type ProcessExit } from './secantus.ts';
import { removeEmbeddedState, stopLeftoverEmbedded, writeEmbeddedState } from './state.ts';

/** `up`: answering; `down`: died, a restart is scheduled or running; `stopped`: after {@link EmbeddedSupervisor.stop}. */
export type EmbeddedStatus = 'up' | 'down' | 'stopped';

/** A supervised embedded database. */
export interface EmbeddedSupervisor {
  /** Connection string for the driver; the same across restarts. */
  readonly uri: string;
  /** TCP port on 127.0.0.1; the same across restarts. */
  readonly port: number;
  /** Current status; see {@link EmbeddedStatus}. */
  status(): EmbeddedStatus;
  /** Process id of the running database, undefined while it is down. */
  pid(): number | undefined;
  /** Calls `listener` on every change of status (after the change). */
  onStatus(listener: (status: EmbeddedStatus) => void): void;
  /**
   * Stops restarting, stops the database (SIGTERM, then SIGKILL after 10 s), removes the
   * state file and waits for all of that. Safe to call twice.
   */
  stop(): Promise<void>;
}

/** Options of {@link superviseSecantus}. */
export interface SuperviseOptions {
  /** Path of `secantusd-py` or `secantusd-rs`, from `ensureSecantusInstalled`. */
  binary: string;
  /** Data directory, or `':memory:'` (no state file; a restart starts empty). */
  dataDir: string;
  /** TCP port; a free one is picked when omitted. */
  port?: number;
  logger: Logger;
  /** Delay before the first restart after a crash, in milliseconds (doubles per failed attempt). */
  restartDelayMs: number;
  /** Largest delay between restart attempts, in milliseconds. */
  restartMaxDelayMs: number;
  /**
   * After the database has stayed up this long (milliseconds, default 30,000), the next
   * crash starts again from `restartDelayMs`.
   */
  stableAfterMs?: number;
}

/**
 * Starts the embedded database under supervision (see the module comment) and waits
 * until it answers.
 * @throws Error when a database left running on the data directory does not stop, or
 * the new one does not start (the message carries its last output).
 */
export async function superviseSecantus(options: SuperviseOptions): Promise<EmbeddedSupervisor> {
  const { logger, dataDir } = options;
  const persistent = dataDir !== ':memory:';
  const say = (message: string) => logger.info(message);
  if (persistent) {
    await stopLeftoverEmbedded(dataDir, {
      onFound: (pid) => logger.warn({ dbPid: pid }, `An embedded database left running by an earlier server holds ${dataDir}; stopping it`),
    });
  }
  let server: EmbeddedServer = await startSecantus({ binary: options.binary, dataDir, port: options.port, say });
  const { uri, port } = server;

  let status: EmbeddedStatus = 'up';
  let upSince = Date.now();
  let downSince = 0;
  let delay = options.restartDelayMs;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;
  let starting: Promise<unknown> | undefined;
  const listeners: ((status: EmbeddedStatus) => void)[] = [];
  const setStatus = (next: EmbeddedStatus) => {
    status = next;
    for (const listener of listeners) listener(next);
  };

  const record = async (running: EmbeddedServer) => {
    if (!persistent) return;
    await writeEmbeddedState(dataDir, { pid: running.pid, port, startedAt: new Date().toISOString() }).catch((error: unknown) =>
      logger.error({ err: error }, 'Could not write the embedded database state file'),
    );
  };

  const watch = (running: EmbeddedServer) => {
    void running.exited.then((exit) => {
      if (status === 'stopped' || running !== server) return;
      crashed(running, exit);
    });
  };

  const crashed = (running: EmbeddedServer, exit: ProcessExit) => {
    if (Date.now() - upSince >= (options.stableAfterMs ?? 30_000)) delay = options.restartDelayMs;
    downSince = Date.now();
    attempt = 0;
    logger.error(
      {
        dbPid: running.pid,
        exitCode: exit.code,
        signal: exit.signal,
        output: running.output().trim().split('\n').filter(Boolean).slice(-10),
      },
      `The embedded database exited unexpectedly (${describeExit(exit)}); requests fail with UNAVAILABLE until it is back`,
    );
    setStatus('down');
    scheduleRestart();
  };

  const scheduleRestart = () => {
    const wait = delay;
    delay = Math.min(delay * 2, options.restartMaxDelayMs);
    timer = setTimeout(() => {
      timer = undefined;
      starting = restart().finally(() => (starting = undefined));
    }, wait);
  };

  const restart = async () => {
    attempt += 1;
    logger.warn({ attempt, port }, `Restarting the embedded database (attempt ${attempt})`);
    let next: EmbeddedServer;
    try {
      next = await startSecantus({ binary: options.binary, dataDir, port, say });
    } catch (error) {
      if (status === 'stopped') return;
      logger.error({ err: error, attempt }, `The embedded database did not restart (attempt ${attempt}); retrying in ${delay} ms`);
      scheduleRestart();
      return;
    }
    if (status === 'stopped') {
      await next.stop();
      return;
    }
    server = next;
    upSince = Date.now();
    await record(next);
    logger.info(
      { dbPid: next.pid, attempts: attempt, downMs: upSince - downSince },
      `The embedded database is back after ${upSince - downSince} ms (${attempt} attempt${attempt === 1 ? '' : 's'})${persistent ? '' : '; it is in memory, so it starts empty'}`,
    );
    watch(next);
    setStatus('up');
  };

  await record(server);
  watch(server);

  let stopped: Promise<void> | undefined;
  return {
    uri,
    port,
    status: () => status,
    pid: () => (status === 'up' ? server.pid : undefined),
    onStatus: (listener) => void listeners.push(listener),
    stop: () =>
      (stopped ??= (async () => {
        setStatus('stopped');
        clearTimeout(timer);
        await starting;
        await server.stop();
        if (persistent) await removeEmbeddedState(dataDir, server.pid);
      })()),
  };
}
