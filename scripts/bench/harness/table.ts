/** How the benchmarks print their figures: numbers formatted for Markdown tables, and the tables themselves. */

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
