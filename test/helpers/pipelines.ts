/**
 * Hand-made pipelines over whole series-day documents, for tests that look at what a
 * reader sees (the visible documents and the tail) beyond what the query builders read.
 */
import type { Document } from 'mongodb';
import type { DocumentPipeline } from '../../src/documents/selection.ts';

/** Every top-level path of a series-day document (see `SeriesDayDocument`). */
const WHOLE = [
  'date',
  'fields',
  'first',
  'hours',
  'kl',
  'last',
  'metric',
  'q',
  'r',
  'readings',
  'recent',
  'series',
  'tagPairs',
  'tags',
  'v',
];

/**
 * `stages` over every document of `metric` on any day that holds readings of one of
 * `fields`, the documents (and the tail's) whole.
 */
export function overWholeDocuments(metric: string, fields: readonly string[], stages: Document[]): DocumentPipeline {
  return { selection: { scope: { metric }, days: { from: 0, to: Date.UTC(9999, 0, 1) }, fields, paths: WHOLE }, stages };
}
