/**
 * Names and values of other metric systems made to fit ours (see `model/limits.ts`,
 * `NAME_PATTERN`: a letter or `_`, then letters, digits, `_` or `-`, at most 64
 * characters, not starting with `__`). Shared by the OpenTelemetry and Prometheus
 * receivers; pure functions.
 */
import { isValidName, isWellFormed, Limits } from '../model/limits.ts';

/**
 * A metric name, attribute key or label name as one of ours:
 * 1. every character other than a letter, digit, `_` or `-` becomes `_`
 *    (`http.server.request.duration` -> `http_server_request_duration`, `a:b` -> `a_b`);
 * 2. a name starting with a digit or `-` gets a leading `_` (`2xx` -> `_2xx`);
 * 3. a run of underscores at the start becomes one (`__internal` -> `_internal`), since
 *    names starting with `__` are reserved.
 * Characters are replaced one for one, so the result has as many characters as the name
 * (astral characters count as one). Nothing is cut: a name that would be longer than
 * `Limits.nameLength` (64), or an empty one, has no sanitized form.
 * @returns the name, or undefined when it cannot be one of ours.
 */
export function sanitizeName(name: string): string | undefined {
  if (isValidName(name)) return name;
  let text = '';
  for (const char of name) text += /^[A-Za-z0-9_-]$/.test(char) ? char : '_';
  if (/^[0-9-]/.test(text)) text = `_${text}`;
  text = text.replace(/^_{2,}/, '_');
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

/**
 * Why a tag value cannot be stored (our rule: a non-empty, well-formed string of at most
 * `Limits.tagValueLength`, 256, characters), or undefined when it can. Empty values are
 * left out by the receivers before this check (an empty label is no label in Prometheus).
 */
export function tagValueProblem(value: string): string | undefined {
  if (value.length > Limits.tagValueLength) return `is ${value.length} characters long (at most ${Limits.tagValueLength})`;
  if (!isWellFormed(value)) return 'is not well-formed Unicode (an unpaired surrogate)';
  return undefined;
}
