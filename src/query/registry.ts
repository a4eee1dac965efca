import type { Document } from 'mongodb';
import { scopeFilter } from '../documents/selection.ts';
import { documentScope } from './buckets-pipeline.ts';
import type { TagFilter } from './spec.ts';

/**
 * The series-registry filter for the series of `metric` whose tags pass every filter of
 * `where` (all of them when it is empty): the same `metric` and `tagPairs` conditions as
 * on series-day documents, served by the registry's `{metric, tagPairs}` index. Pure.
 */
export function registryFilter(metric: string, where: readonly TagFilter[]): Document {
  const { indexed, residual } = scopeFilter(documentScope({ metric, where }));
  return { ...indexed, ...residual };
}
