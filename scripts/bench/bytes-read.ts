/**
 * Documents and bytes each benchmark query reads, per model, and what the read
 * projection of our pipelines saves (docs/performance.md, "Bytes read per query"). `npm run bench`
 * (`main.ts`) runs it on every data set after timing the queries, on the loaded models:
 *
 * - ours: the very pipelines the engine sends for the query's GraphQL request (caught
 *   by the driver's command monitoring; registry look-ups left out). Each is also run
 *   without its read projection (the `$project` of the paths it reads, right after its
 *   `$match` stages; see `bucketsPipeline`), which is the pipeline as it was built
 *   before the projection existed, so both are measured in the same run; the rows of
 *   both must be equal. A pipeline whose `$match` stages a `$group` follows is sent
 *   without the projection (`trimmed` in src/storage/aggregate.ts) and counts as both;
 * - naive and timeseries: the benchmark's own pipeline of the query (`BenchQuery.pipeline`).
 *
 * For each: documents examined (`explain` `executionStats.totalDocsExamined` where the
 * server reports it, else the documents the first `$match`, an index range, selects);
 * bytes examined (the summed `$bsonSize` of those documents, counted by a pipeline with
 * the same `$match`: no server reports bytes read per query); bytes walked (the same
 * after every leading `$match`: what the later stages get, whole); for ours the bytes
 * after the read projection (what `$objectToArray`, `$filter`, `$map` and `$group` walk)
 * and the time of the pipeline without and with the projection, medians of `reps`
 * alternating runs after a warm-up. A time-series collection is counted as the server
 * presents it (one document per measurement, unpacked from its buckets).
 */
import { INGEST_LOG_COLLECTION } from '../../src/storage/ingest-log.ts';
import type { Db, Document } from 'mongodb';
import { CollectionName } from '../../src/storage/store.ts';
import { alternating, type BaselineModel, type BenchQuery, collectionBytes, format, type Model, type OursModel } from './harness/index.ts';
import { FOLD_STATE_COLLECTION } from '../../src/storage/fold-state.ts';

/** What one query read on one model. */
export interface ReadFigures {
  /** Documents the server examined (fetched), summed over the query's pipelines. */
  docsExamined: number;
  /** Where {@link docsExamined} comes from: the server's `explain`, or counted with the first `$match`. */
  examinedFrom: 'explain' | 'counted';
  /** Summed BSON size of the documents the first `$match` selects, bytes. */
  bytesExamined: number;
  /** Summed BSON size of the documents passing every leading `$match`, whole, bytes. */
  bytesWalked: number;
  /** Ours: the same after the read projection, bytes. */
  bytesProjected?: number;
  /** Ours: median time of the pipelines without and with the read projection, ms. */
  msWhole?: number;
  msProjected?: number;
  /** Ours: whether the pipelines without and with the projection returned the same rows. */
  agree?: boolean;
}

/** One query's figures on every model measured. */
export interface QueryReads {
  name: string;
  description: string;
  models: Record<string, ReadFigures>;
}

/** Rows as comparable text: each row's JSON, sorted. */
const rowsText = (rows: Document[]) =>
  rows
    .map((row) => JSON.stringify(row))
    .sort()
    .join('\n');

/** The first number under `key` anywhere in an explain document (depth first), or null. */
function findNumber(node: unknown, key: string): number | null {
  if (node === null || typeof node !== 'object') return null;
  const value = (node as Record<string, unknown>)[key];
  if (typeof value === 'number') return value;
  for (const child of Object.values(node)) {
    const found = findNumber(child, key);
    if (found !== null) return found;
  }
  return null;
}

/** Documents examined by `pipeline` as the server's `explain` reports them, or null when it does not. */
async function explainedDocs(db: Db, collection: string, pipeline: Document[]): Promise<number | null> {
  try {
    return findNumber(await db.collection(collection).aggregate(pipeline).explain('executionStats'), 'totalDocsExamined');
  } catch {
    return null;
  }
}

/** Index of the first stage that is not a `$match`. */
const afterMatches = (pipeline: Document[]) => pipeline.findIndex((stage) => !('$match' in stage));

/** Whether `stage` is a read projection: a `$project` keeping paths (all values 0 or 1). */
const isReadProjection = (stage: Document | undefined) =>
  stage?.$project !== undefined && Object.values(stage.$project as Document).every((value) => value === 0 || value === 1);

/** What the `$match` stages of `pipeline` select on `collection`: documents examined, bytes examined and walked. */
async function matched(db: Db, collection: string, pipeline: Document[]): Promise<ReadFigures> {
  const matches = pipeline.slice(0, afterMatches(pipeline));
  const explained = await explainedDocs(db, collection, pipeline);
  const examined = await collectionBytes(db, collection, matches.slice(0, 1));
  const walked = await collectionBytes(db, collection, matches);
  return {
    docsExamined: explained ?? examined.documents,
    examinedFrom: explained === null ? 'counted' : 'explain',
    bytesExamined: examined.bytes,
    bytesWalked: walked.bytes,
  };
}

/**
 * The bucket pipelines the engine sends for `query` (series-day documents or a rollup;
 * not the registry's), with their collections, caught while it answers the GraphQL
 * request; a read of day summaries (a `find`, added up in Node) as a pipeline of its
 * one `$match`.
 */
async function sentPipelines(model: OursModel, query: BenchQuery): Promise<{ collection: string; pipeline: Document[] }[]> {
  const { commands } = await model.commands.listen(() => model.graphql(query.graphql));
  const sent = [
    ...commands
      // Pipelines on data: not the registry's, nor the read of the log's tail entries.
      .filter(
        (c) =>
          c.name === 'aggregate' &&
          c.collection !== CollectionName.series &&
          c.collection !== CollectionName.metrics &&
          c.collection !== INGEST_LOG_COLLECTION,
      )
      .map((c) => ({ collection: c.collection, pipeline: c.pipeline ?? [] })),
    ...commands
      .filter((c) => c.name === 'find' && c.collection === CollectionName.summaries)
      .map((c) => ({ collection: c.collection, pipeline: [{ $match: c.filter ?? {} }] })),
  ];
  if (sent.length === 0) throw new Error(`${query.name}: the engine sent no bucket pipeline`);
  // A read with unfolded log entries adds them with a `$unionWith` of the fold state: measure folded data only.
  if (sent.some(({ pipeline }) => pipeline.some((stage) => stage.$unionWith?.coll === FOLD_STATE_COLLECTION))) {
    throw new Error(`${query.name}: answered partly from the unfolded log; fold first (OursModel.settle)`);
  }
  return sent;
}

/**
 * Measures one query on ours: the pipelines the engine sends, with and without their read
 * projection (a pipeline sent without one, where a `$group` follows its `$match` stages,
 * or a read of day summaries, counts as both).
 * @throws Error when a pipeline has neither a read projection nor a `$group` after its `$match` stages.
 */
async function measureOurs(model: OursModel, query: BenchQuery, reps: number): Promise<ReadFigures> {
  const total: Required<ReadFigures> = {
    docsExamined: 0,
    examinedFrom: 'explain',
    bytesExamined: 0,
    bytesWalked: 0,
    bytesProjected: 0,
    msWhole: 0,
    msProjected: 0,
    agree: true,
  };
  const runs: { collection: string; projected: Document[]; whole: Document[] }[] = [];
  for (const { collection, pipeline } of await sentPipelines(model, query)) {
    const lead = afterMatches(pipeline);
    // Before a `$group` the read sends no projection (`trimmed`, src/storage/aggregate.ts),
    // nor does a read of day summaries (only `$match`): the pipeline is its own "whole"
    // and "projected" run, and trims nothing.
    const grouped = pipeline[lead] === undefined || '$group' in pipeline[lead]!;
    if (!grouped && !isReadProjection(pipeline[lead])) {
      throw new Error(`${query.name}: no read projection after $match in ${JSON.stringify(pipeline)}`);
    }
    const whole = grouped ? pipeline : [...pipeline.slice(0, lead), ...pipeline.slice(lead + 1)];
    const figures = await matched(model.db, collection, pipeline);
    const projected = grouped ? { bytes: figures.bytesWalked } : await collectionBytes(model.db, collection, pipeline.slice(0, lead + 1));
    const rows = async (stages: Document[]) => rowsText(await model.db.collection(collection).aggregate(stages).toArray());
    total.docsExamined += figures.docsExamined;
    if (figures.examinedFrom === 'counted') total.examinedFrom = 'counted';
    total.bytesExamined += figures.bytesExamined;
    total.bytesWalked += figures.bytesWalked;
    total.bytesProjected += projected.bytes;
    total.agree &&= (await rows(whole)) === (await rows(pipeline));
    runs.push({ collection, projected: pipeline, whole });
  }
  const all = (pick: 'whole' | 'projected') => async () => {
    for (const run of runs) await model.db.collection(run.collection).aggregate(run[pick]).toArray();
  };
  [total.msWhole, total.msProjected] = await alternating(all('whole'), all('projected'), reps);
  return total;
}

/**
 * Documents and bytes each of `queries` reads on each loaded model (see the module
 * comment); `dateTrunc` chooses the baselines' pipelines as the benchmark runs them.
 * @throws Error when a pipeline of ours has neither a read projection nor a `$group` after its `$match` stages.
 */
export async function measureReads(
  models: readonly Model[],
  queries: readonly BenchQuery[],
  reps: number,
  dateTrunc: boolean,
  log: (message: string) => void = () => {},
): Promise<QueryReads[]> {
  const results: QueryReads[] = [];
  for (const query of queries) {
    const result: QueryReads = { name: query.name, description: query.description, models: {} };
    for (const model of models) {
      log(`${model.name}: documents and bytes read by ${query.name}`);
      if (model.name === 'ours') {
        result.models.ours = await measureOurs(model as OursModel, query, reps);
      } else {
        const baseline = model as BaselineModel;
        result.models[model.name] = await matched(baseline.db, baseline.collection, query.pipeline(dateTrunc));
      }
    }
    results.push(result);
  }
  return results;
}

/** A ratio for the table: two significant digits below 1 (a projection may keep a fraction of a percent). */
const ratio = (x: number) => (Number.isFinite(x) && x < 1 ? `${x.toPrecision(2)}x` : format.ratio(x));

/** A count of documents, with "(counted)" when not from the server's `explain`. */
const documents = (f: ReadFigures) => `${f.docsExamined.toLocaleString('en-US')}${f.examinedFrom === 'counted' ? ' (counted)' : ''}`;

/** The figures as a Markdown table: ours before and after the projection, then each baseline. */
export function readsTable(results: readonly QueryReads[]): string[] {
  const baselines = [...new Set(results.flatMap((r) => Object.keys(r.models)))].filter((name) => name !== 'ours');
  const lines = [
    `| query | ours: documents | bytes read | walked: whole | walked: projected | projected / whole | pipeline ms: whole | projected | speed-up | ${baselines.map((name) => `${name}: documents | bytes read | ours / ${name}`).join(' | ')} |`,
    `| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ${baselines.map(() => '---: | ---: | ---:').join(' | ')} |`,
  ];
  for (const result of results) {
    const o = result.models.ours;
    if (o === undefined) continue;
    const cells = baselines.map((name) => {
      const b = result.models[name];
      return b === undefined ? ' | | ' : `${documents(b)} | ${format.bytes(b.bytesExamined)} | ${ratio(o.bytesExamined / b.bytesExamined)}`;
    });
    lines.push(
      `| ${result.name}${o.agree === false ? ' (ROWS DIFFER)' : ''} | ${documents(o)} | ${format.bytes(o.bytesExamined)} | ${format.bytes(o.bytesWalked)} | ${format.bytes(o.bytesProjected!)} | ${ratio(o.bytesProjected! / o.bytesWalked)} | ${format.ms(o.msWhole!)} | ${format.ms(o.msProjected!)} | ${ratio(o.msWhole! / o.msProjected!)} | ${cells.join(' | ')} |`,
    );
  }
  return lines;
}
