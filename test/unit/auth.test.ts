/**
 * The pure parts of access control: tokens, the Authorization header, scopes and
 * metric prefixes, the access configuration, and the embedded database's state file.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  firstForbiddenMetric,
  forbiddenMessage,
  hasScope,
  mayTouchMetric,
  metricOfSeriesKey,
  OPEN_ACCESS,
  type Access,
} from '../../src/auth/access.ts';
import {
  generateToken,
  hashToken,
  parseAuthorization,
  parsePrefixes,
  parseScopes,
  parseTokenName,
  TokenSpecError,
} from '../../src/auth/tokens.ts';
import { EMBEDDED_STATE_FILE, parseEmbeddedState, runningEmbedded } from '../../src/cli/database.ts';
import { ConfigError, isLoopbackHost, loadConfig } from '../../src/config.ts';
import type { Scope } from '../../src/model/scopes.ts';

const access = (scopes: Scope[], prefixes: string[] | null = null): Access => ({
  tokenId: 'tsg_test0000',
  tokenName: 'test',
  scopes,
  prefixes,
});

describe('tokens', () => {
  it('are tsg_ and 32 random bytes in base64url, named by their first 12 characters, stored as SHA-256', () => {
    const made = generateToken();
    expect(made.token).toMatch(/^tsg_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(made.token.slice(4), 'base64url')).toHaveLength(32);
    expect(made.id).toBe(made.token.slice(0, 12));
    expect(made.hash).toBe(createHash('sha256').update(made.token).digest('hex'));
  });

  it('never repeat', () => {
    const tokens = new Set(Array.from({ length: 2000 }, () => generateToken().token));
    expect(tokens.size).toBe(2000);
  });

  it('hash to the standard SHA-256 (FIPS 180-2 test vector "abc")', () => {
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('the Authorization header', () => {
  const token = generateToken().token;

  it.each([
    [null, 'missing'],
    ['', 'missing'],
    ['   ', 'missing'],
    ['Bearer', 'malformed'],
    ['Bearer ', 'malformed'],
    [`Basic ${token}`, 'malformed'],
    [`Token ${token}`, 'malformed'],
    [`Bearer ${token.slice(0, -1)}`, 'malformed'],
    [`Bearer ${token}x`, 'malformed'],
    [`Bearer ${token.replace('tsg_', 'ghp_')}`, 'malformed'],
    [`Bearer ${token} extra`, 'malformed'],
    [`Bearer ${token.slice(0, 20)}$${token.slice(21)}`, 'malformed'],
  ])('%j is %s', (header, kind) => {
    expect(parseAuthorization(header).kind).toBe(kind);
  });

  it.each([`Bearer ${token}`, `bearer ${token}`, `BEARER  ${token}`, ` Bearer ${token} `])('%j holds the token', (header) => {
    expect(parseAuthorization(header)).toEqual({ kind: 'token', token });
  });

  it('reads back every token it is given', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
        const value = `tsg_${Buffer.from(bytes).toString('base64url')}`;
        expect(parseAuthorization(`Bearer ${value}`)).toEqual({ kind: 'token', token: value });
      }),
    );
  });
});

describe('token settings', () => {
  it('parse scopes in a fixed order, without duplicates', () => {
    expect(parseScopes(['read,write'])).toEqual(['read', 'write']);
    expect(parseScopes(['admin', 'read, read'])).toEqual(['read', 'admin']);
    expect(parseScopes(['write,read'])).toEqual(['read', 'write']);
    expect(() => parseScopes(['read,delete'])).toThrow(TokenSpecError);
    expect(() => parseScopes([''])).toThrow(/at least one scope/);
    expect(() => parseScopes([])).toThrow(TokenSpecError);
  });

  it('accept metric prefixes that can start a metric name', () => {
    expect(parsePrefixes([])).toBeNull();
    expect(parsePrefixes(['mem', 'cpu', 'cpu'])).toEqual(['cpu', 'mem']);
    for (const bad of ['', 'cpu.usage', '$where', 'a b', '9lives', '__x', 'x'.repeat(65)]) {
      expect(() => parsePrefixes([bad]), bad).toThrow(TokenSpecError);
    }
  });

  it('accept names of letters, digits, _ - and ., not looking like a token id', () => {
    expect(parseTokenName('ingest-eu.1_a')).toBe('ingest-eu.1_a');
    for (const bad of ['', 'a b', 'x'.repeat(65), 'tsg_abcdefgh', 'ünï']) expect(() => parseTokenName(bad), bad).toThrow(TokenSpecError);
  });
});

describe('scopes and prefixes', () => {
  it('admin includes read and write; write does not include read, nor read write', () => {
    const table = (scopes: Scope[]) => (['read', 'write', 'admin'] as const).map((scope) => hasScope(access(scopes), scope));
    expect(table(['read'])).toEqual([true, false, false]);
    expect(table(['write'])).toEqual([false, true, false]);
    expect(table(['read', 'write'])).toEqual([true, true, false]);
    expect(table(['admin'])).toEqual([true, true, true]);
    expect(table([])).toEqual([false, false, false]);
    expect(table([...OPEN_ACCESS.scopes])).toEqual([true, true, true]);
  });

  it('a prefix allows every metric name that starts with it, and only those', () => {
    const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,20}$/);
    fc.assert(
      fc.property(name, fc.stringMatching(/^[A-Za-z0-9_-]{0,10}$/), (prefix, rest) => {
        expect(mayTouchMetric(access(['read'], [prefix]), prefix + rest)).toBe(true);
      }),
    );
    fc.assert(
      fc.property(fc.array(name, { minLength: 1, maxLength: 4 }), name, (prefixes, metric) => {
        fc.pre(prefixes.every((prefix) => metric.slice(0, prefix.length) !== prefix));
        expect(mayTouchMetric(access(['read'], prefixes), metric)).toBe(false);
      }),
    );
  });

  it('examples: cpu allows cpu, cpu_temp and cpu2 but not mem or CPU', () => {
    const cpu = access(['write'], ['cpu']);
    expect(['cpu', 'cpu_temp', 'cpu2', 'mem', 'CPU', 'xcpu'].map((metric) => mayTouchMetric(cpu, metric))).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(mayTouchMetric(access(['read']), 'anything')).toBe(true);
    expect(firstForbiddenMetric(cpu, ['cpu', 'cpu_temp', 'mem', 'disk'])).toBe('mem');
    expect(firstForbiddenMetric(cpu, ['cpu', 'cpu_temp'])).toBeUndefined();
  });

  it('finds the metric of a series key', () => {
    expect(metricOfSeriesKey('flights,destination=PHL,origin=LAS')).toBe('flights');
    expect(metricOfSeriesKey('cpu')).toBe('cpu');
    expect(metricOfSeriesKey('')).toBe('');
  });

  it('says which scope or metric is missing, naming only what the client holds or sent', () => {
    expect(forbiddenMessage(access(['read']), [{ kind: 'scope', scope: 'write' }])).toBe(
      'This operation needs the "write" scope; the API token has: read',
    );
    expect(forbiddenMessage(access(['write'], ['cpu', 'mem']), [{ kind: 'metrics', metrics: ['cpu', 'disk'] }])).toBe(
      'The API token may not touch metric "disk" (it is limited to metric names starting with "cpu", "mem")',
    );
  });
});

describe('access configuration', () => {
  const refusal = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message.split('\n').slice(1);
    }
    return [];
  };

  it('requires tokens by default, with no CORS origin', () => {
    expect(loadConfig({})).toMatchObject({ AUTH: 'tokens', CORS_ORIGINS: [], ALLOW_OPEN_ACCESS: false });
  });

  it('allows AUTH=off on loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.8.9.10', 'localhost', 'LOCALHOST', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) {
      expect(loadConfig({ AUTH: 'off', HOST: host }).AUTH, host).toBe('off');
    }
  });

  it('refuses AUTH=off on any other address, in one line, unless ALLOW_OPEN_ACCESS=true', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.5', '128.0.0.1', '192.168.1.2', 'example.com', '::ffff:10.0.0.1', '::2']) {
      const lines = refusal({ AUTH: 'off', HOST: host });
      expect(lines, host).toHaveLength(1);
      expect(lines[0]!.trim(), host).toMatch(/^AUTH: .*ALLOW_OPEN_ACCESS=true/);
      expect(loadConfig({ AUTH: 'off', HOST: host, ALLOW_OPEN_ACCESS: 'true' }).AUTH).toBe('off');
      expect(loadConfig({ AUTH: 'tokens', HOST: host }).AUTH).toBe('tokens');
    }
    expect(refusal({ AUTH: 'off', HOST: '0.0.0.0', ALLOW_OPEN_ACCESS: 'yes' }).map((line) => line.trim().split(':')[0])).toEqual([
      'ALLOW_OPEN_ACCESS',
    ]);
    expect(refusal({ AUTH: 'none' }).map((line) => line.trim().split(':')[0])).toEqual(['AUTH']);
  });

  it('knows loopback hosts', () => {
    expect(['127.0.0.1', '127.255.255.254', 'localhost', '::1'].every(isLoopbackHost)).toBe(true);
    expect(['0.0.0.0', '::', '126.0.0.1', 'localhost.example.com', '1.127.0.0'].some(isLoopbackHost)).toBe(false);
  });

  it('reads CORS_ORIGINS as a list of exact origins', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://dash.example.com, http://localhost:5173' }).CORS_ORIGINS).toEqual([
      'https://dash.example.com',
      'http://localhost:5173',
    ]);
    for (const bad of ['*', 'https://dash.example.com/', 'dash.example.com', 'ftp://files.example.com', 'https://a.example/path']) {
      expect(
        refusal({ CORS_ORIGINS: bad }).map((line) => line.trim().split(':')[0]),
        bad,
      ).toEqual(['CORS_ORIGINS']);
    }
  });
});

describe('the embedded database state file', () => {
  it('parses {"pid", "port", "startedAt"} and nothing else', () => {
    expect(parseEmbeddedState('{"pid": 42, "port": 27017, "startedAt": "2024-01-01T00:00:00Z"}')).toEqual({
      pid: 42,
      port: 27017,
      startedAt: '2024-01-01T00:00:00Z',
    });
    for (const bad of [
      '',
      'null',
      '[]',
      '{"pid": 42, "port": 27017}',
      '{"pid": "42", "port": 27017, "startedAt": ""}',
      '{"pid": 42, "port": 70000, "startedAt": ""}',
      '{"pid": 0, "port": 1, "startedAt": ""}',
    ]) {
      expect(parseEmbeddedState(bad), bad).toBeNull();
    }
  });

  it('counts a server as running only while its process lives', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tsgraph-state-'));
    try {
      expect(await runningEmbedded(dir)).toBeNull();
      const alive = { pid: process.pid, port: 27017, startedAt: new Date().toISOString() };
      await writeFile(join(dir, EMBEDDED_STATE_FILE), JSON.stringify(alive));
      expect(await runningEmbedded(dir)).toEqual(alive);
      const finished = spawnSync(process.execPath, ['-e', 'process.pid']).pid!;
      await writeFile(join(dir, EMBEDDED_STATE_FILE), JSON.stringify({ ...alive, pid: finished }));
      expect(await runningEmbedded(dir)).toBeNull();
      await writeFile(join(dir, EMBEDDED_STATE_FILE), '{"pid": ');
      expect(await runningEmbedded(dir)).toBeNull();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
