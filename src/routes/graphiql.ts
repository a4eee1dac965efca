/**
 * The GraphiQL page of `/graphql`, served whole by this server: the page, its scripts,
 * styles, fonts and editor workers are inlined by `@graphql-yoga/render-graphiql`, so a
 * browser without internet access gets a working GraphiQL (graphql-yoga's built-in page
 * loads them from a CDN and stays blank offline). It opens with one tab to explore what
 * is stored and one tab per saved example operation of `schema/examples/`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import type { GraphiQLOptions } from 'graphql-yoga';

/** Title of the page, also shown next to the logo. */
export const GRAPHIQL_TITLE = 'tsgraph: time series on MongoDB';

/** Where the saved example operations live (`*.graphql`, one operation each, a comment on top). */
const EXAMPLES_DIR = new URL('../../schema/examples/', import.meta.url);

/**
 * The first tab: what is stored, without knowing any name in advance. `metrics` lists
 * every metric the token may touch with its fields and tag keys, a few series show
 * tag values, and `TagValues` lists every value of one tag key.
 */
export const EXPLORE_QUERY = `# Explore the data: what is stored, by name. Run "ExploreTheData" first (the run button
# lists both operations), then "TagValues" with a metric and one of its tag keys in the
# Variables pane below. Names found here go into the other tabs' queries; the Docs pane
# (book icon, top left) describes every query and argument.
query ExploreTheData {
  metrics {
    name
    fields
    tagKeys
    seriesCount
    firstReadingAt
    lastReadingAt
    # A few series, to see tag values (a series is a metric and one set of tag values).
    series(limit: 5) {
      id
      tags { key value }
      fields
    }
  }
}

# Every value of one tag key among the series of a metric, sorted.
query TagValues($metric: String!, $key: String!) {
  tagValues(metric: $metric, key: $key)
}
`;

/** Variables of the explore tab's `TagValues` (the flights of `npm run demo`). */
const EXPLORE_VARIABLES = JSON.stringify({ metric: 'flights', key: 'origin' }, null, 2);

/** A saved example operation: its file name and text. */
export interface ExampleOperation {
  file: string;
  query: string;
}

/**
 * The saved operations of `schema/examples/`: queries sorted by file name, then
 * mutations (which write when run).
 * @throws Error when the directory cannot be read (the repository is incomplete).
 */
export function readExamples(): ExampleOperation[] {
  const files = readdirSync(EXAMPLES_DIR)
    .filter((file) => file.endsWith('.graphql'))
    .sort();
  const examples = files.map((file) => ({ file, query: readFileSync(new URL(file, EXAMPLES_DIR), 'utf8') }));
  const isMutation = (example: ExampleOperation) => /^\s*mutation\b/m.test(example.query);
  return [...examples.filter((example) => !isMutation(example)), ...examples.filter(isMutation)];
}

/**
 * GraphiQL's options: the title, the explore tab and one tab per example, and, when
 * `headers` is given (a token is needed), that header editor content in every tab,
 * including new ones.
 * @param headers JSON for the header editor, e.g. `{"Authorization": "Bearer <paste a token>"}`.
 */
export function graphiqlOptions(headers: string | undefined, examples: readonly ExampleOperation[] = readExamples()): GraphiQLOptions {
  const tab = (query: string, variables?: string) => ({
    query,
    ...(variables === undefined ? {} : { variables }),
    ...(headers === undefined ? {} : { headers }),
  });
  return {
    title: GRAPHIQL_TITLE,
    defaultQuery: EXPLORE_QUERY,
    defaultTabs: [tab(EXPLORE_QUERY, EXPLORE_VARIABLES), ...examples.map((example) => tab(example.query))],
    ...(headers === undefined ? {} : { headers, defaultHeaders: headers }),
  };
}

/**
 * yoga's `renderGraphiQL` option: the self-contained page of `@graphql-yoga/render-graphiql`
 * (about 9 MB of HTML, every asset inline as text or a `data:` URL). The page is
 * rendered once per set of options and then reused.
 */
export function createGraphiQLRenderer(): (options: GraphiQLOptions) => string {
  let key: string | undefined;
  let page = '';
  return (options) => {
    const optionsKey = JSON.stringify(options);
    if (optionsKey !== key) {
      page = renderGraphiQL(options);
      key = optionsKey;
    }
    return page;
  };
}
