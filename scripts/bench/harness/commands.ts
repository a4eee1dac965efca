/**
 * The commands a driver client sends, caught with its command monitoring (the client
 * must be created with `monitorCommands: true`): name, collection, server time, and for
 * an `aggregate` its pipeline, for a `find` its filter, for an `update` its statements
 * and the paths they set.
 */
import type { CommandStartedEvent, CommandSucceededEvent, Document, MongoClient } from 'mongodb';

/** One command the driver sent, with its time (ms, from the monitoring events). */
export interface SentCommand {
  name: string;
  collection: string;
  ms: number;
  /** The pipeline of an `aggregate`. */
  pipeline?: Document[];
  /** The filter of a `find`. */
  filter?: Document;
  /** An `update`: its statements (one per document) and the field paths they set, summed and the most in one. */
  statements?: number;
  paths?: number;
  maxPaths?: number;
}

/** The field paths an update statement sets: the keys under each of its operators. */
export const pathsOf = (update: Document) =>
  Object.values(update).reduce((sum: number, paths) => sum + Object.keys(paths as Document).length, 0);

/** Catches the commands a client sends while {@link CommandLog.listen} runs (one listening at a time). */
export class CommandLog {
  private listening: SentCommand[] | null = null;
  private readonly pending = new Map<number, SentCommand>();

  /** Attaches to the monitoring events of `client`. */
  constructor(client: MongoClient) {
    client.on('commandStarted', (event: CommandStartedEvent) => {
      if (this.listening === null) return;
      // A getMore names its cursor first and its collection in `collection`.
      const collection = String((event.commandName === 'getMore' ? event.command.collection : event.command[event.commandName]) ?? '');
      const sent: SentCommand = { name: event.commandName, collection, ms: 0 };
      if (event.commandName === 'aggregate') sent.pipeline = structuredClone(event.command.pipeline as Document[]);
      if (event.commandName === 'find') sent.filter = structuredClone((event.command.filter ?? {}) as Document);
      if (event.commandName === 'update') {
        const paths = (event.command.updates as { u: Document }[]).map((statement) => pathsOf(statement.u));
        sent.statements = paths.length;
        sent.paths = paths.reduce((a, b) => a + b, 0);
        sent.maxPaths = Math.max(0, ...paths);
      }
      this.pending.set(event.requestId, sent);
    });
    client.on('commandSucceeded', (event: CommandSucceededEvent) => {
      const sent = this.pending.get(event.requestId);
      if (sent === undefined) return;
      this.pending.delete(event.requestId);
      sent.ms = event.duration;
      this.listening?.push(sent);
    });
    client.on('commandFailed', (event) => this.pending.delete(event.requestId));
  }

  /** Runs `work` and returns what it returned and the commands that succeeded meanwhile, in the order they finished. */
  async listen<T>(work: () => Promise<T>): Promise<{ value: T; commands: SentCommand[] }> {
    const commands: SentCommand[] = [];
    this.listening = commands;
    try {
      return { value: await work(), commands };
    } finally {
      this.listening = null;
    }
  }
}
