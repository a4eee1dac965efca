import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

/**
 * Creates the process logger: JSON lines on stdout, or human-readable lines through
 * pino-pretty when `LOG_FORMAT=pretty`.
 */
export function createLogger(config: Pick<Config, 'LOG_LEVEL' | 'LOG_FORMAT'>): Logger {
  return pino({
    level: config.LOG_LEVEL,
    ...(config.LOG_FORMAT === 'pretty'
      ? { transport: { target: 'pino-pretty', options: { ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss' } } }
      : {}),
  });
}
