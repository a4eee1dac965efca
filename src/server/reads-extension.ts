import type { Plugin } from 'graphql-yoga';
import type { Context } from '../graphql/context.ts';

/**
 * Adds `extensions.reads` to every response whose operation ran bucket pipelines: one
 * entry per pipeline, `{metric, rollup, tagKeys, summaryDays?, tail}` (see `ReadRecord`
 * in engine/loader.ts), where `rollup` is the name of the rollup that answered it
 * (`model/rollup.ts`) or null when the series-day documents did, and `summaryDays`, when
 * present, the days day summaries answered instead (`documents/summaries.ts`).
 * It tells a dashboard author whether a panel is served by a rollup, without a debug
 * switch. Streamed (incremental) results are left alone.
 */
export function useReadsExtension(): Plugin<Context> {
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: ({ result, setResult }) => {
        const reads = (args.contextValue as Partial<Context>).engine?.reads;
        if (reads === undefined || reads.length === 0 || Symbol.asyncIterator in result) return;
        setResult({ ...result, extensions: { ...result.extensions, reads: reads.map((read) => ({ ...read })) } });
      },
    }),
  };
}
