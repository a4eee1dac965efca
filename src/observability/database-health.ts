/**
 * Whether the database is worth sending requests to, known without waiting for the
 * driver's server selection (MONGODB_SERVER_SELECTION_TIMEOUT_MS): `/ready`, the
 * request gate (`server/database-gate.ts`), the routes and `tsgraph_database_up` answer
 * from it at once.
 */
import { MongoClientClosedError, MongoTopologyClosedError, type MongoClient, type TopologyDescriptionChangedEvent } from 'mongodb';
import type { EmbeddedStatus, EmbeddedSupervisor } from '../embedded/supervisor.ts';
import type { Logger } from '../logger.ts';

/** Options of {@link DatabaseHealth}. */
export interface DatabaseHealthOptions {
  client: MongoClient;
  /** The embedded database's supervisor, when the server runs one. */
  embedded?: Pick<EmbeddedSupervisor, 'status' | 'onStatus'>;
  /** Longest wait of `/ready` for a ping, in milliseconds (default 1,000). */
  pingTimeoutMs?: number;
  /** Pause between probes while the database is down, in milliseconds (default 500). */
  probeIntervalMs?: number;
  logger?: Logger;
}

/** Server types that accept writes; a topology without one cannot serve the API. */
const WRITABLE = new Set(['Standalone', 'RSPrimary', 'Mongos', 'LoadBalancer']);

/**
 * Tracks whether the database is down. It is down:
 * - while the embedded database is not running (its supervisor says so the moment the
 *   process exits), or
 * - from a sign that the deployment is unreachable — the driver no longer knows a
 *   writable server, an operation failed with a driver error for which `isUnavailable`
 *   holds ({@link reportFailure}), or a ping did not answer in time — until a ping
 *   succeeds again. While down, it pings over and over (each ping waits for server
 *   selection, then `probeIntervalMs` pass); a waiting ping makes the driver re-check
 *   the server every 500 ms, so recovery is noticed within about half a second.
 */
export class DatabaseHealth {
  private readonly client: MongoClient;
  private readonly embedded: DatabaseHealthOptions['embedded'];
  private readonly pingTimeoutMs: number;
  private readonly probeIntervalMs: number;
  private readonly logger: Logger | undefined;
  private unreachable = false;
  private probing = false;
  private closed = false;
  private pending: Promise<boolean> | undefined;
  private readonly onTopology = (event: TopologyDescriptionChangedEvent) => {
    const servers = [...event.newDescription.servers.values()];
    if (!servers.some((server) => WRITABLE.has(server.type))) this.reportFailure('no writable server is known');
  };

  constructor(options: DatabaseHealthOptions) {
    this.client = options.client;
    this.embedded = options.embedded;
    this.pingTimeoutMs = options.pingTimeoutMs ?? 1000;
    this.probeIntervalMs = options.probeIntervalMs ?? 500;
    this.logger = options.logger;
    this.client.on('topologyDescriptionChanged', this.onTopology);
    this.embedded?.onStatus((status: EmbeddedStatus) => {
      // Down until this client has reached the restarted process, not only until the
      // supervisor has: the probe's ping tells.
      if (status === 'down') this.reportFailure('the embedded database exited');
    });
  }

  /** True while requests should be refused at once (see the class comment). */
  isDown(): boolean {
    return this.closed || this.unreachable || (this.embedded !== undefined && this.embedded.status() !== 'up');
  }

  /**
   * Marks the database down until a ping succeeds; called with the reason when an
   * operation failed because the database was unreachable. Cheap when already down.
   */
  reportFailure(reason: string): void {
    if (this.closed) return;
    if (!this.unreachable) this.logger?.warn(`Database marked unavailable: ${reason}`);
    this.unreachable = true;
    if (!this.probing) void this.probe();
  }

  /**
   * For `/ready`: false at once while down, otherwise the result of a ping that waits
   * at most `pingTimeoutMs` (concurrent callers share one ping). A failed ping marks
   * the database down.
   */
  async ready(): Promise<boolean> {
    if (this.isDown()) return false;
    const ok = await this.ping();
    if (!ok) this.reportFailure('a readiness ping failed or timed out');
    return ok && !this.isDown();
  }

  /** Stops listening and probing; {@link isDown} is true from now on. */
  close(): void {
    this.closed = true;
    this.client.off('topologyDescriptionChanged', this.onTopology);
  }

  /** One ping, answered within `pingTimeoutMs`: true when the database answered. */
  private ping(): Promise<boolean> {
    this.pending ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((done) => {
        timer = setTimeout(() => done(false), this.pingTimeoutMs);
      });
      const answered = this.client
        .db('admin')
        .command({ ping: 1 })
        .then(
          () => true,
          () => false,
        );
      try {
        return await Promise.race([answered, timeout]);
      } finally {
        clearTimeout(timer);
        this.pending = undefined;
      }
    })();
    return this.pending;
  }

  private async probe(): Promise<void> {
    this.probing = true;
    try {
      while (this.unreachable && !this.closed) {
        // Not raced with a timer: while this ping waits for server selection, the driver
        // re-checks the server every 500 ms, and the ping succeeds as soon as it answers.
        const outcome = await this.client
          .db('admin')
          .command({ ping: 1 })
          .then(
            () => 'ok' as const,
            (error: unknown) =>
              error instanceof MongoClientClosedError || error instanceof MongoTopologyClosedError ? 'closed' : 'failed',
          );
        if (outcome === 'closed') {
          this.close();
          break;
        }
        if (outcome === 'ok') {
          this.unreachable = false;
          this.logger?.info('Database reachable again');
          break;
        }
        await new Promise((done) => setTimeout(done, this.probeIntervalMs).unref());
      }
    } finally {
      this.probing = false;
    }
  }
}
