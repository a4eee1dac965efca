/**
 * How the benchmarks print their figures: numbers formatted for Markdown tables, the
 * tables themselves, the targets checked against the figures, and the JSON written
 * under `bench-results/`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Formats a number of ms, a rate per second, bytes or a ratio for the tables. */
export const format = {
  ms: (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2)),
  rate: (perSecond: number) => Math.round(perSecond).toLocaleString('en-US'),
  bytes: (bytes: number) =>
    bytes >= 1024 * 1024
      ? `${(bytes / 1024 / 1024).toFixed(2)} MiB`
      : bytes >= 1024
        ? `${(bytes / 1024).toFixed(1)} KiB`
        : `${Math.round(bytes)} B`,
  ratio: (ratio: number) => (Number.isFinite(ratio) ? `${ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(2)}x` : 'n/a'),
  /** A count with thousands separators (`12,345`). */
  count: (n: number) => n.toLocaleString('en-US'),
};

/** One Markdown table row: `| a | b |`. */
export const row = (cells: readonly (string | number)[]) => `| ${cells.join(' | ')} |`;

/**
 * The head of a Markdown table: the titles, then the separator row, one letter of
 * `align` per column (`l`: `---`, `r`: right-aligned `---:`).
 */
export function tableHead(titles: readonly string[], align: string): string[] {
  return [row(titles), row([...align].map((a) => (a === 'r' ? '---:' : '---')))];
}

/** A whole Markdown table: {@link tableHead}, then one {@link row} per entry of `rows`. */
export function table(titles: readonly string[], align: string, rows: readonly (readonly (string | number)[])[]): string[] {
  return [...tableHead(titles, align), ...rows.map(row)];
}

/** A target of a benchmark, checked against its figures. */
export interface Target {
  target: string;
  /** The figure measured, formatted. */
  value: string;
  met: boolean;
}

/** The targets as a Markdown table under a bold `**Targets**` title; nothing when there are none. */
export function targetsTable(targets: readonly Target[]): string[] {
  if (targets.length === 0) return [];
  return [
    '**Targets**',
    '',
    ...table(
      ['target', 'measured', 'met'],
      'lll',
      targets.map((t) => [t.target, t.value, t.met ? 'yes' : 'no']),
    ),
  ];
}

/** `bench-results/<prefix>-<ISO time with - for : and .>.json`, the default output of a run. */
export const resultsPath = (prefix: string) => `bench-results/${prefix}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;

/** Writes `figures` as indented JSON to `out`, creating its directory. */
export function writeResults(out: string, figures: unknown): void {
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(figures, null, 2));
}
