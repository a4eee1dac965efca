/**
 * The dashboard (`GET /dashboard`): a page that draws the buckets of a metric with uPlot,
 * served whole by this server like GraphiQL, with no request to another host:
 * - `/dashboard`: the page (controls, chart, table of values);
 * - `/dashboard/app.js`: its script, `src/dashboard/main.ts` bundled with uPlot by
 *   esbuild on the first request and kept in memory;
 * - `/dashboard/uplot.css`: uPlot's style sheet.
 * The page and its assets hold no data: the script reads `/graphql` with the token the
 * user types in, so every read goes through the same tokens, scopes and limits as any
 * GraphQL request.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** Where the page script lives (TypeScript, built for the browser). */
const ENTRY = fileURLToPath(new URL('../dashboard/main.ts', import.meta.url));

/** The page's paths and content types. */
export const DASHBOARD_PATHS = {
  page: '/dashboard',
  script: '/dashboard/app.js',
  style: '/dashboard/uplot.css',
} as const;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tsgraph dashboard</title>
<link rel="stylesheet" href="${DASHBOARD_PATHS.style}">
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1rem 2rem; color: #1f2328; }
  h1 { font-size: 1.3rem; margin: 0 0 .8rem; }
  form { display: flex; flex-wrap: wrap; gap: .6rem 1rem; align-items: end; margin-bottom: 1rem; }
  label { display: flex; flex-direction: column; font-size: .8rem; color: #59636e; }
  input, select, button { font: inherit; padding: .2rem .4rem; }
  #status { min-height: 1.4em; margin: .4rem 0; }
  #status.error { color: #d1242f; }
  #chart { width: 100%; min-height: 380px; }
  table { border-collapse: collapse; margin-top: 1rem; font-variant-numeric: tabular-nums; }
  th, td { padding: .15rem .6rem; text-align: right; border-bottom: 1px solid #eee; }
  th:first-child, td:first-child { text-align: left; }
  details { margin-top: 1rem; }
</style>
</head>
<body>
<h1>tsgraph dashboard</h1>
<form id="controls">
  <label>Token <input id="token" type="password" autocomplete="off" placeholder="not needed when auth is off"></label>
  <label>Metric <select id="metric"></select></label>
  <label>Field <select id="field"></select></label>
  <label>Filter tag <select id="tag-key"></select></label>
  <label>Values (comma-separated) <input id="tag-values" placeholder="e.g. ORD, JFK"></label>
  <label>Time zone <input id="time-zone" list="time-zones" size="20"></label>
  <datalist id="time-zones"></datalist>
  <label>From <input id="from" type="datetime-local"></label>
  <label>To <input id="to" type="datetime-local"></label>
  <label>Most buckets <input id="points" type="number" min="1" max="10000" size="6"></label>
  <label>Live <input id="follow" type="checkbox"></label>
  <button type="submit">Draw</button>
</form>
<div id="status" role="status"></div>
<div id="chart"></div>
<details open>
  <summary>Values</summary>
  <table id="values">
    <thead><tr><th>start</th><th>count</th><th>mean</th><th>p5</th><th>p95</th></tr></thead>
    <tbody id="values-body"></tbody>
  </table>
</details>
<script type="module" src="${DASHBOARD_PATHS.script}"></script>
</body>
</html>
`;

let script: Promise<string> | undefined;

/** The page script bundled for the browser (built once per process; a failed build is tried again next time). */
function bundledScript(): Promise<string> {
  script ??= build({
    entryPoints: [ENTRY],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
    logLevel: 'silent',
  }).then(
    (result) => result.outputFiles[0]!.text,
    (error: unknown) => {
      script = undefined;
      throw error;
    },
  );
  return script;
}

let style: Promise<string> | undefined;

/** uPlot's style sheet, from its package (read once per process; a failed read is tried again next time). */
function uplotStyle(): Promise<string> {
  style ??= readFile(createRequire(import.meta.url).resolve('uplot/dist/uPlot.min.css'), 'utf8').catch((error: unknown) => {
    style = undefined;
    throw error;
  });
  return style;
}

const text = (body: string, type: string) =>
  new Response(body, { status: 200, headers: { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'no-cache' } });

/**
 * Answers a dashboard path (see {@link DASHBOARD_PATHS}); null for any other path.
 * @throws Error when the page script cannot be bundled (a broken install; answered as a masked 500).
 */
export async function serveDashboard(pathname: string): Promise<Response | null> {
  if (pathname === DASHBOARD_PATHS.page || pathname === `${DASHBOARD_PATHS.page}/`) return text(PAGE, 'text/html');
  if (pathname === DASHBOARD_PATHS.script) return text(await bundledScript(), 'text/javascript');
  if (pathname === DASHBOARD_PATHS.style) return text(await uplotStyle(), 'text/css');
  return null;
}
