/**
 * `GET /export`: the answer of a GraphQL query as a table, CSV or NDJSON, for
 * spreadsheets and scripts. The query runs through the GraphQL server itself, so it is
 * held to the same token, scopes and limits as over `/graphql`; only the shape of its
 * answer is new. The table follows the selection of the query (see {@link planExport}),
 * so its header is known before a row is written, and rows are streamed out.
 */
import { stringify } from 'csv-stringify/sync';
import {
  getNamedType,
  type GraphQLError,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  parse,
  validate,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLNamedOutputType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { CodedError, ErrorCode } from '../errors.ts';
import { schema } from '../graphql/schema.ts';
import { formatLocal, normalizeTimeZone } from '../query/zone.ts';
import { errorAnswer, type RouteContext } from './http-answers.ts';

/** The formats of an export, by their `format` name, with their media type. */
const FORMATS = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
} as const;

type Format = keyof typeof FORMATS;

/** Rows written per chunk of the streamed answer. */
const ROWS_PER_CHUNK = 500;

const invalid = (message: string) => new CodedError(ErrorCode.INVALID_ARGUMENT, message);

/** A place in a row's object that becomes cells: one value, or one cell per tag key of a `[Tag]` list. */
type Slot = { kind: 'value'; path: string[]; dateTime: boolean } | { kind: 'tags'; path: string[] };

/** One level of rows: the objects of a list, their slots, and the list inside them whose items are the next level. */
export interface Level {
  /** The response key of the list (the root field's, at the top). */
  key: string;
  slots: Slot[];
  /** The nested list whose items become the rows (each carrying this level's cells), if any. */
  child?: { path: string[]; level: Level };
}

/** Fields of a selection set in order, fragments expanded, each response key once. */
function collectFields(
  selectionSet: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  seen = new Set<string>(),
): FieldNode[] {
  const fields: FieldNode[] = [];
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      const key = selection.alias?.value ?? selection.name.value;
      if (seen.has(key)) continue;
      seen.add(key);
      fields.push(selection);
    } else {
      const set = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragments.get(selection.name.value)?.selectionSet;
      if (set) fields.push(...collectFields(set, fragments, seen));
    }
  }
  return fields;
}

/** `type` without non-null wrappers: whether it is a list, and the named type inside. */
function shapeOf(type: GraphQLOutputType): { list: boolean; named: GraphQLNamedOutputType } {
  const inner = isNonNullType(type) ? type.ofType : type;
  return { list: isListType(inner), named: getNamedType(type) as GraphQLNamedOutputType };
}

/** The slots (and nested list) of an object selection; `prefix` is the path of a nested single object. */
function planObject(
  type: GraphQLNamedOutputType,
  selectionSet: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  level: Level,
  prefix: string[],
): void {
  if (!isObjectType(type)) throw invalid(`${type.name} cannot be exported: only object types have a fixed set of columns`);
  for (const field of collectFields(selectionSet, fragments)) {
    const key = field.alias?.value ?? field.name.value;
    const path = [...prefix, key];
    if (field.name.value === '__typename') {
      level.slots.push({ kind: 'value', path, dateTime: false });
      continue;
    }
    const definition = type.getFields()[field.name.value];
    if (!definition) throw invalid(`${type.name} has no field ${field.name.value}`);
    const { list, named } = shapeOf(definition.type);
    if (isLeafType(named)) {
      if (list)
        throw invalid(
          `${path.join('.')} is a list of values, which has no place in a table: select the list of objects instead (e.g. buckets { start avg })`,
        );
      level.slots.push({ kind: 'value', path, dateTime: named.name === 'DateTime' });
    } else if (!list) {
      planObject(named, field.selectionSet!, fragments, level, path);
    } else if (named.name === 'Tag') {
      const selected = new Set(collectFields(field.selectionSet!, fragments).map((tag) => tag.alias?.value ?? tag.name.value));
      if (!selected.has('key') || !selected.has('value'))
        throw invalid(`Select ${path.join('.')} { key value }: each tag becomes a column named by its key`);
      level.slots.push({ kind: 'tags', path });
    } else {
      if (level.child)
        throw invalid(`${level.child.path.join('.')} and ${path.join('.')} are both lists: a table can follow one list per level`);
      const child: Level = { key, slots: [] };
      planObject(named, field.selectionSet!, fragments, child, []);
      level.child = { path, level: child };
    }
  }
}

/** What {@link planExport} returns: the operation to run and the table it makes. */
export interface ExportPlan {
  document: DocumentNode;
  /** The root list (or object) and what its rows hold. */
  root: Level;
}

/**
 * Plans the table of a query: rows are the items of the root field's list (one row for
 * an object), or, where an item holds a list of objects (`buckets` of a `BucketGroup`),
 * the items of that list, each row carrying its parents' cells first. Columns, in
 * selection order: each selected scalar by its response key (alias or name), a field of
 * a nested object as `object.field` (`first.time`), and each tag of a `tags { key value }`
 * list as a column named by its key; a name already taken gets its list's key in front
 * (`buckets.count`).
 * @throws CodedError GRAPHQL_PARSE_FAILED or GRAPHQL_VALIDATION_FAILED for a document
 * that does not parse or validate; INVALID_ARGUMENT for a document that is not one
 * query with one root field, or that selects what has no place in a table (two lists
 * side by side, a list of scalars such as `columns`).
 */
export function planExport(schema: GraphQLSchema, query: string, operationName: string | null, maxTokens: number): ExportPlan {
  let document: DocumentNode;
  try {
    document = parse(query, { maxTokens });
  } catch (error) {
    throw new CodedError(ErrorCode.GRAPHQL_PARSE_FAILED, (error as GraphQLError).message);
  }
  const operations = document.definitions.filter(
    (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operationName === null ? operations[0] : operations.find((candidate) => candidate.name?.value === operationName);
  if (!operation || (operationName === null && operations.length > 1)) {
    throw invalid(operationName === null ? 'Give one operation, or name one with operationName' : `No operation named ${operationName}`);
  }
  if (operation.operation !== 'query') throw invalid(`An export runs a query, not a ${operation.operation}`);
  const errors = validate(schema, document);
  if (errors.length > 0) throw new CodedError(ErrorCode.GRAPHQL_VALIDATION_FAILED, errors[0]!.message);
  const fragments = new Map(
    document.definitions.flatMap((definition) =>
      definition.kind === Kind.FRAGMENT_DEFINITION ? [[definition.name.value, definition] as const] : [],
    ),
  );
  const roots = collectFields(operation.selectionSet, fragments).filter((field) => field.name.value !== '__typename');
  if (roots.length !== 1) throw invalid(`An export runs one root field (e.g. buckets or aggregate), not ${roots.length}`);
  const field = roots[0]!;
  const definition = schema.getQueryType()!.getFields()[field.name.value]!;
  const { named } = shapeOf(definition.type);
  if (isLeafType(named)) throw invalid(`${field.name.value} answers a value, not objects: nothing to make rows of`);
  const root: Level = { key: field.alias?.value ?? field.name.value, slots: [] };
  planObject(named, field.selectionSet!, fragments, root, []);
  return { document, root };
}

/** The value at `path` of an object, or undefined. */
function valueAt(object: unknown, path: readonly string[]): unknown {
  let value = object;
  for (const key of path) value = value === null || typeof value !== 'object' ? undefined : (value as Record<string, unknown>)[key];
  return value;
}

const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === null || value === undefined ? [] : [value]);

/** The tag keys of every `tags` slot of a level, in the order first seen over all its items. */
function tagKeysOf(level: Level, items: readonly unknown[]): Map<Slot, string[]> {
  const keys = new Map<Slot, string[]>();
  for (const slot of level.slots) {
    if (slot.kind !== 'tags') continue;
    const found = new Set<string>();
    for (const item of items) for (const tag of asList(valueAt(item, slot.path))) found.add(String((tag as { key: unknown }).key));
    keys.set(slot, [...found]);
  }
  return keys;
}

/** A table ready to be written: column names and a row iterator. */
export interface Table {
  columns: string[];
  rows: Iterable<unknown[]>;
}

/**
 * The table of a query's answer (`data`), following `plan` (see {@link planExport}).
 * DateTime cells are written as RFC 3339 local times of `timeZone` with their offset
 * (`2001-04-01T00:00:00-05:00`); nulls as null.
 */
export function tableOf(plan: ExportPlan, data: Record<string, unknown>, timeZone: string): Table {
  // Levels from the root down, with every item of each level (to know the tag keys first).
  const levels: { level: Level; keys: Map<Slot, string[]> }[] = [];
  let items = asList(data[plan.root.key]);
  for (let level: Level | undefined = plan.root; level; level = level.child?.level) {
    levels.push({ level, keys: tagKeysOf(level, items) });
    const path = level.child?.path;
    if (path) items = items.flatMap((item) => asList(valueAt(item, path)));
  }
  const columns: string[] = [];
  const taken = new Set<string>();
  for (const { level, keys } of levels) {
    const names = level.slots.flatMap((slot) => (slot.kind === 'value' ? [slot.path.join('.')] : keys.get(slot)!));
    for (const name of names) {
      let unique = taken.has(name) ? `${level.key}.${name}` : name;
      for (let n = 2; taken.has(unique); n++) unique = `${level.key}.${name}_${n}`;
      taken.add(unique);
      columns.push(unique);
    }
  }
  const cellsOf = (depth: number, item: unknown): unknown[] => {
    const { level, keys } = levels[depth]!;
    return level.slots.flatMap((slot) => {
      const value = valueAt(item, slot.path);
      if (slot.kind === 'tags') {
        const tags = new Map(asList(value).map((tag) => [String((tag as { key: unknown }).key), (tag as { value: unknown }).value]));
        return keys.get(slot)!.map((key) => tags.get(key) ?? null);
      }
      if (slot.dateTime && typeof value === 'string') return [formatLocal(Date.parse(value), timeZone)];
      return [value ?? null];
    });
  };
  function* rowsBelow(depth: number, item: unknown, before: unknown[]): Generator<unknown[]> {
    const cells = [...before, ...cellsOf(depth, item)];
    const child = levels[depth]!.level.child;
    if (!child) {
      yield cells;
      return;
    }
    for (const inner of asList(valueAt(item, child.path))) yield* rowsBelow(depth + 1, inner, cells);
  }
  return {
    columns,
    rows: {
      *[Symbol.iterator]() {
        for (const item of asList(data[plan.root.key])) yield* rowsBelow(0, item, []);
      },
    },
  };
}

/** CSV text of some rows (RFC 4180 quoting by csv-stringify; booleans as true/false, nulls empty). */
const csvOf = (rows: unknown[][]) => stringify(rows, { cast: { boolean: (value) => String(value) }, record_delimiter: 'unix' });

/** NDJSON text of some rows: one object per row, keyed by column. */
const ndjsonOf = (columns: readonly string[], rows: unknown[][]) =>
  rows.map((row) => `${JSON.stringify(Object.fromEntries(columns.map((column, i) => [column, row[i] ?? null])))}\n`).join('');

/** A streamed body: the header (CSV), then the rows in chunks of {@link ROWS_PER_CHUNK}. */
function streamTable(table: Table, format: Format): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const rows = table.rows[Symbol.iterator]();
  let headerSent = format !== 'csv';
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (!headerSent) {
        headerSent = true;
        controller.enqueue(encoder.encode(csvOf([table.columns])));
        return;
      }
      const chunk: unknown[][] = [];
      for (let next = rows.next(); !next.done; next = rows.next()) {
        chunk.push(next.value);
        if (chunk.length === ROWS_PER_CHUNK) break;
      }
      if (chunk.length === 0) {
        controller.close();
        return;
      }
      controller.enqueue(encoder.encode(format === 'csv' ? csvOf(chunk) : ndjsonOf(table.columns, chunk)));
    },
  });
}

/** The format of an export request: the `format` parameter, else `Accept` (`text/csv`, `application/x-ndjson`), else CSV. */
function formatOf(request: Request, url: URL): Format {
  const given = url.searchParams.get('format');
  if (given !== null) {
    if (!Object.hasOwn(FORMATS, given)) throw invalid(`format must be csv or ndjson, not ${JSON.stringify(given)}`);
    return given as Format;
  }
  const accept = request.headers.get('accept') ?? '';
  return /application\/(x-)?ndjson/i.test(accept) && !/text\/csv/i.test(accept) ? 'ndjson' : 'csv';
}

/**
 * The GraphQL error of an answer as a CodedError: one of our codes keeps its status on
 * these routes (see `statusOf`); anything else (a masked INTERNAL_SERVER_ERROR) gets the
 * GraphQL server's status when it is an error status, else 500.
 */
function refusalOf(error: { message: string; extensions?: { code?: string } }, status: number): CodedError {
  const code = error.extensions?.code ?? 'INTERNAL_SERVER_ERROR';
  if ((Object.values(ErrorCode) as string[]).includes(code)) return new CodedError(code as ErrorCode, error.message);
  return new CodedError(code as ErrorCode, error.message, { httpStatus: status >= 400 ? status : 500 });
}

/**
 * `GET /export?query=...&variables=...&operationName=...&format=csv|ndjson&timeZone=...`:
 * runs the GraphQL query (one root field, e.g. `buckets` or `aggregate`; variables as a
 * JSON object) through the GraphQL server with the request's `Authorization` header,
 * and answers its table (see {@link planExport}, {@link tableOf}): CSV with a header row
 * (`text/csv`), or NDJSON, one object per row. The format comes from `format`, else
 * from `Accept` (`text/csv` or `application/x-ndjson`), else CSV. DateTime cells are
 * written in `timeZone` (default UTC).
 * @returns 200 with the streamed table; a refused query answers its first error with
 * its code (UNAUTHENTICATED 401, FORBIDDEN 403, TOO_MANY_BUCKETS and other input errors
 * 400, QUERY_TIMEOUT 504, UNAVAILABLE 503), and no table.
 */
export async function exportTable(
  request: Request,
  url: URL,
  context: RouteContext,
  options: {
    /** Runs a GraphQL-over-HTTP request through the GraphQL server (its plugins: authentication, limits, error codes). */
    runGraphQL: (request: Request) => Promise<Response>;
    /** Most tokens of a document (`MAX_TOKENS`), also while planning. */
    maxTokens: number;
  },
): Promise<Response> {
  await context.authenticate(request);
  const query = url.searchParams.get('query');
  if (query === null || query.trim() === '') throw invalid('Give the GraphQL query to export in the query parameter');
  const format = formatOf(request, url);
  const timeZone = normalizeTimeZone(url.searchParams.get('timeZone'));
  let variables: unknown = null;
  const variablesText = url.searchParams.get('variables');
  if (variablesText !== null && variablesText !== '') {
    try {
      variables = JSON.parse(variablesText);
    } catch {
      throw invalid('variables must be a JSON object');
    }
    if (variables === null || typeof variables !== 'object' || Array.isArray(variables)) throw invalid('variables must be a JSON object');
  }
  const operationName = url.searchParams.get('operationName') || null;
  const plan = planExport(schema, query, operationName, options.maxTokens);

  const authorization = request.headers.get('authorization')?.replace(/^\s*Token +/i, 'Bearer ');
  const answer = await options.runGraphQL(
    new Request(new URL('/graphql', url), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
        ...(authorization ? { authorization } : {}),
      },
      body: JSON.stringify({ query, variables, operationName }),
      signal: request.signal,
    }),
  );
  const result = (await answer.json()) as {
    data?: Record<string, unknown> | null;
    errors?: { message: string; extensions?: { code?: string } }[];
  };
  if (result.errors?.length) return errorAnswer(refusalOf(result.errors[0]!, answer.status));
  const table = tableOf(plan, result.data ?? {}, timeZone);
  return new Response(streamTable(table, format), {
    status: 200,
    headers: {
      'content-type': FORMATS[format],
      'content-disposition': `attachment; filename="${plan.root.key}.${format}"`,
    },
  });
}
