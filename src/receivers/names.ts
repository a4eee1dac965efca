/**
 * Names and values of other metric systems made to fit ours (see `model/limits.ts`,
 * `NAME_PATTERN`: a letter or `_`, then letters, digits, `_` or `-`, at most 64
 * characters, not starting with `__`). Shared by the OpenTelemetry and Prometheus
 * receivers; pure functions.
 */
import { createHash } from 'node:crypto';
import { isValidName, Limits } from '../model/limits.ts';

/** Characters a shortened name keeps of the sanitized name, before `_` and the hash. */
const KEPT = Limits.nameLength - 1 - 8;

/**
 * A metric name, attribute key or label name as one of ours:
 * 1. every character other than a letter, digit, `_` or `-` becomes `_`
 *    (`http.server.request.duration` -> `http_server_request_duration`, `a:b` -> `a_b`);
 * 2. a name starting with a digit or `-` gets a leading `_` (`2xx` -> `_2xx`);
 * 3. a run of underscores at the start becomes one (`__internal` -> `_internal`), since
 *    names starting with `__` are reserved;
 * 4. a name still longer than `Limits.nameLength` (64) keeps its first 55 characters,
 *    then `_` and the first 8 hex digits of the SHA-256 of the name as sent (UTF-8), so
 *    two long names sharing their first 55 characters stay apart
 *    (`prometheus_remote_storage_string_interner_zero_reference_releases_total` ->
 *    `prometheus_remote_storage_string_interner_zero_referenc_` + 8 hex digits).
 * Steps 1 to 3 replace characters one for one (an astral character counts as one).
 * @returns the name, or undefined for an empty name.
 */
export function sanitizeName(name: string): string | undefined {
  if (isValidName(name)) return name;
  if (name === '') return undefined;
  let text = name.replace(/[^A-Za-z0-9_-]/gu, '_');
  if (/^[0-9-]/.test(text)) text = `_${text}`;
  text = text.replace(/^_{2,}/, '_');
  if (text.length > Limits.nameLength) {
    text = `${text.slice(0, KEPT)}_${createHash('sha256').update(name).digest('hex').slice(0, 8)}`;
  }
  return isValidName(text) ? text : undefined;
}

/**
 * Caches {@link sanitizeName}: a receiver sees the same few names in every request.
 * Bounded: past `size` distinct names it starts over.
 */
export class NameCache {
  readonly #names = new Map<string, string | undefined>();

  constructor(readonly size = 10_000) {}

  /** {@link sanitizeName} of `name`. */
  get(name: string): string | undefined {
    const known = this.#names.get(name);
    if (known !== undefined || this.#names.has(name)) return known;
    if (this.#names.size >= this.size) this.#names.clear();
    const sanitized = sanitizeName(name);
    this.#names.set(name, sanitized);
    return sanitized;
  }
}
