/**
 * What InfluxQL statements are answered with and answer: the request's context, one
 * statement's result in InfluxDB 1.x's shape, and the error of a statement that parses
 * but cannot be answered.
 */
import type { Access } from '../auth/access.ts';
import type { QueryEngine } from '../engine/engine.ts';

/** A statement that parses but cannot be answered: its result's `error`. */
export class StatementError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StatementError';
  }
}

/** One series of a statement's result. */
export interface ResultSeries {
  name: string;
  tags?: Record<string, string>;
  columns: string[];
  values: unknown[][];
}

/** One statement's result. */
export interface StatementResult {
  statement_id: number;
  series?: ResultSeries[];
  error?: string;
}

/** What statements are answered with: the request's engine and access, the time of the request, how times are written. */
export interface ExecutionContext {
  engine: QueryEngine;
  access: Access;
  /** `now()`, ms since the epoch. */
  now: number;
  /** `epoch` of the request (`ns`, `u`, `ms`, `s`, `m`, `h`), or null for RFC 3339 text. */
  epoch: string | null;
  /** The `db` of the request (any name is accepted: one database holds every metric). */
  database: string;
  /** The scopes a statement needs, checked by the route: true when the token may write (CREATE DATABASE). */
  mayWrite: boolean;
}

/** The only retention policy: everything is kept as each metric's retention (`setRetention`) says. */
export const RETENTION_POLICY = 'autogen';
