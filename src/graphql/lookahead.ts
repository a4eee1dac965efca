import type { GraphQLResolveInfo } from 'graphql';
import { parseResolveInfo, type ResolveTree } from 'graphql-parse-resolve-info';
import { NO_WANTS, type Wants } from '../engine/query.ts';

/** Fields of `Statistics`, `Bucket`, `Aggregate` and `BucketColumns` that need the first and last readings. */
const FIRST_LAST_FIELDS = new Set(['first', 'last']);
/** Fields that need the merged sketch. */
const SKETCH_FIELDS = new Set(['percentile', 'p50', 'p90', 'p95', 'p99']);
/** Fields of a counter, which need the counter pipeline (and a counter metric). */
const COUNTER_FIELDS = new Set(['increase', 'rate']);

/**
 * Which optional statistics the client selected under the field being resolved (at any
 * depth, through fragments and aliases), so the engine reads first/last readings and
 * sketches only when they are asked for. Read from the resolver's `info` with
 * graphql-parse-resolve-info; a selection it cannot parse reads nothing optional.
 */
export function selectedWants(info: GraphQLResolveInfo): Wants {
  // The same field on every item of a list (`Series.buckets` of 100 series) shares one
  // `fieldNodes` array: parse its selection once.
  const known = parsed.get(info.fieldNodes);
  if (known !== undefined) return known;
  const wants = parseWants(info);
  parsed.set(info.fieldNodes, wants);
  return wants;
}

/** What {@link selectedWants} found per field, keyed by the field's nodes in the document. */
const parsed = new WeakMap<GraphQLResolveInfo['fieldNodes'], Wants>();

function parseWants(info: GraphQLResolveInfo): Wants {
  const tree = parseResolveInfo(info, { deep: true }) as ResolveTree | null;
  if (tree === null) return NO_WANTS;
  const wants: Wants = { firstLast: false, sketch: false, counter: false };
  const visit = (node: ResolveTree) => {
    for (const fields of Object.values(node.fieldsByTypeName)) {
      for (const child of Object.values(fields)) {
        if (FIRST_LAST_FIELDS.has(child.name)) wants.firstLast = true;
        if (SKETCH_FIELDS.has(child.name)) wants.sketch = true;
        if (COUNTER_FIELDS.has(child.name)) wants.counter = true;
        visit(child);
      }
    }
  };
  visit(tree);
  return wants;
}
