/**
 * The dashboard's page script (bundled for the browser by `routes/dashboard.ts`): pick a
 * metric, a field, a tag filter, a time zone and a range; it draws the buckets with
 * uPlot (mean line and the 5th-95th percentile band) and lists them in a table, and can
 * follow live updates. Every choice is kept in the page's address, so a chart can be
 * shared as a link. Data comes only from `/graphql`, with the token typed into the page
 * (kept in this browser's local storage) as `Authorization: Bearer`.
 */
// First: a browser language Intl refuses is replaced before uPlot reads it (see locale.ts).
import { LOCALE } from './locale.ts';
import uPlot from 'uplot';
import {
  DashboardBucketsDocument,
  DashboardLiveDocument,
  type DashboardLiveSubscription,
  DashboardMetricsDocument,
  type DashboardBucketsQuery,
  type DashboardBucketsQueryVariables,
  type DashboardMetricsQuery,
  type Granularity,
} from '../client/generated/graphql.ts';
import { request, requestBody, requestHeaders, type TypedDocument } from '../client/request.ts';

/** A metric as `DashboardMetrics` (src/dashboard/operations.graphql) lists it. */
type MetricInfo = DashboardMetricsQuery['metrics'][number];

/** A bucket as `DashboardBuckets` returns it. */
type ChartBucket = DashboardBucketsQuery['buckets'][number]['buckets'][number];

const TOKEN_KEY = 'tsgraph.dashboard.token';
const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

const controls = {
  token: byId<HTMLInputElement>('token'),
  metric: byId<HTMLSelectElement>('metric'),
  field: byId<HTMLSelectElement>('field'),
  tagKey: byId<HTMLSelectElement>('tag-key'),
  tagValues: byId<HTMLInputElement>('tag-values'),
  timeZone: byId<HTMLInputElement>('time-zone'),
  from: byId<HTMLInputElement>('from'),
  to: byId<HTMLInputElement>('to'),
  points: byId<HTMLInputElement>('points'),
  follow: byId<HTMLInputElement>('follow'),
  form: byId<HTMLFormElement>('controls'),
};
const status = byId<HTMLElement>('status');
const chartBox = byId<HTMLElement>('chart');
const table = byId<HTMLTableSectionElement>('values-body');

let metrics: readonly MetricInfo[] = [];
let plot: uPlot | null = null;
let following: AbortController | null = null;
/** The buckets on the chart, for merging live pushes by start. */
let shown: ChartBucket[] = [];

/** Sends one typed operation to this server's `/graphql` with the page's token. @throws GraphQLRequestError (its message starts with the error code). */
function graphql<TResult, TVariables>(document: TypedDocument<TResult, TVariables>, variables: TVariables): Promise<TResult> {
  return request(document, variables, { url: '/graphql', token: controls.token.value.trim() || undefined });
}

function say(text: string, isError = false): void {
  status.textContent = text;
  status.className = isError ? 'error' : '';
}

function option(value: string, label = value): HTMLOptionElement {
  const element = document.createElement('option');
  element.value = value;
  element.textContent = label;
  return element;
}

/**
 * Each bucket granularity (GraphQL enum `Granularity`) in words: `width` qualifies
 * "buckets" in the chart's title ("12-hour buckets"), `span` says how long one bucket is
 * in the status line ("62 buckets of 12 hours").
 */
const GRANULARITY_WORDS: Record<Granularity, { width: string; span: string }> = {
  MINUTE: { width: '1-minute', span: 'one minute' },
  TWO_MINUTES: { width: '2-minute', span: '2 minutes' },
  FIVE_MINUTES: { width: '5-minute', span: '5 minutes' },
  TEN_MINUTES: { width: '10-minute', span: '10 minutes' },
  FIFTEEN_MINUTES: { width: '15-minute', span: '15 minutes' },
  THIRTY_MINUTES: { width: '30-minute', span: '30 minutes' },
  HOUR: { width: 'hourly', span: 'one hour' },
  TWO_HOURS: { width: '2-hour', span: '2 hours' },
  THREE_HOURS: { width: '3-hour', span: '3 hours' },
  SIX_HOURS: { width: '6-hour', span: '6 hours' },
  TWELVE_HOURS: { width: '12-hour', span: '12 hours' },
  DAY: { width: 'daily', span: 'one day' },
  WEEK: { width: 'weekly', span: 'one week' },
  MONTH: { width: 'monthly', span: 'one month' },
  QUARTER: { width: 'quarterly', span: 'one quarter' },
  YEAR: { width: 'yearly', span: 'one year' },
};

/** The words of a granularity name as the API returns it; an unknown name (a newer server) in lower case. */
function granularityWords(granularity: string): { width: string; span: string } {
  const words = GRANULARITY_WORDS[granularity as Granularity];
  if (words) return words;
  const lower = granularity.toLowerCase().replaceAll('_', ' ');
  return { width: lower, span: lower };
}

/**
 * How the time-zone picker shows an IANA zone: its name, its UTC offset now (with a
 * minus sign, as people write it) and its long name in the browser's language when
 * Intl knows one, e.g. `America/Chicago (UTC−06:00, Central Standard Time)`; a name
 * that is no zone (while it is being typed) as it is.
 */
function zoneLabel(zone: string, now: Date): string {
  const part = (timeZoneName: 'longOffset' | 'long') =>
    new Intl.DateTimeFormat(LOCALE, { timeZone: zone, timeZoneName }).formatToParts(now).find((p) => p.type === 'timeZoneName')?.value ??
    '';
  let offset: string;
  let name: string;
  try {
    // `GMT-06:00`, or `GMT` for a zero offset.
    offset = part('longOffset').replace(/^GMT/, '').replace('-', '\u2212') || '+00:00';
    name = part('long');
  } catch {
    return zone; // RangeError: not a zone (yet: it is being typed)
  }
  // Without a name of its own, Intl gives the offset again (`GMT-03:00`).
  return name === '' || name.startsWith('GMT') ? `${zone} (UTC${offset})` : `${zone} (UTC${offset}, ${name})`;
}

/** A time-zone choice: the IANA name as its value, {@link zoneLabel} as its label. */
function zoneOption(zone: string, now: Date): HTMLOptionElement {
  const element = option(zone);
  element.label = zoneLabel(zone, now);
  return element;
}

/** Fills the time-zone picker's list: every zone the browser knows, its value the IANA name (what the API takes), its label for people. */
function fillZones(): void {
  const now = new Date();
  byId<HTMLDataListElement>('time-zones').replaceChildren(...Intl.supportedValuesOf('timeZone').map((zone) => zoneOption(zone, now)));
}

/** The `YYYY-MM-DDTHH:mm` wall-clock value of an instant in `timeZone`, for a `datetime-local` input. */
function localInput(instant: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`;
}

/** Fills the field and tag-key pickers of the chosen metric, keeping the current choice when the metric has it. */
function fillMetricChoices(keep: { field?: string | null; tagKey?: string | null } = {}): void {
  const metric = metrics.find((candidate) => candidate.name === controls.metric.value);
  controls.field.replaceChildren(...(metric?.fields ?? []).map((field) => option(field)));
  if (keep.field && metric?.fields.includes(keep.field)) controls.field.value = keep.field;
  controls.tagKey.replaceChildren(option('', '(no filter)'), ...(metric?.tagKeys ?? []).map((key) => option(key)));
  if (keep.tagKey && metric?.tagKeys.includes(keep.tagKey)) controls.tagKey.value = keep.tagKey;
}

/** Sets the range to the metric's readings: from its first reading's day to the day after its last, in the chosen zone. */
function rangeOfMetric(): void {
  const metric = metrics.find((candidate) => candidate.name === controls.metric.value);
  if (!metric?.firstReadingAt || !metric.lastReadingAt) return;
  const zone = controls.timeZone.value;
  controls.from.value = `${localInput(new Date(metric.firstReadingAt), zone).slice(0, 10)}T00:00`;
  const last = new Date(new Date(metric.lastReadingAt).getTime() + 86_400_000);
  controls.to.value = `${localInput(last, zone).slice(0, 10)}T00:00`;
}

/** The chart's variables from the controls. */
function chartVariables(): DashboardBucketsQueryVariables {
  const values = controls.tagValues.value
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '');
  return {
    metric: controls.metric.value,
    field: controls.field.value,
    from: controls.from.value,
    to: controls.to.value,
    timeZone: controls.timeZone.value,
    where: controls.tagKey.value !== '' && values.length > 0 ? [{ key: controls.tagKey.value, in: values }] : null,
    maxDataPoints: Number(controls.points.value) || 300,
  };
}

/** Keeps the controls in the page's address, so a reload or a shared link shows the same chart. */
function saveToAddress(): void {
  const params = new URLSearchParams({
    metric: controls.metric.value,
    field: controls.field.value,
    tz: controls.timeZone.value,
    from: controls.from.value,
    to: controls.to.value,
    points: controls.points.value,
  });
  if (controls.tagKey.value !== '') params.set('tag', `${controls.tagKey.value}:${controls.tagValues.value}`);
  if (controls.follow.checked) params.set('follow', '1');
  history.replaceState(null, '', `?${params.toString()}`);
}

const format = (value: number | null) => (value === null ? '' : Number(value.toPrecision(6)).toString());

/** Lists the buckets in the table under the chart; each cell keeps the exact number in `data-value`. */
function fillTable(buckets: readonly ChartBucket[]): void {
  table.replaceChildren(
    ...buckets.map((bucket) => {
      const row = document.createElement('tr');
      row.dataset.start = bucket.start;
      const cells: [string, string, number | null][] = [
        ['start', bucket.localStart, null],
        ['count', String(bucket.count), bucket.count],
        ['avg', format(bucket.avg), bucket.avg],
        ['p5', format(bucket.p5), bucket.p5],
        ['p95', format(bucket.p95), bucket.p95],
      ];
      for (const [name, text, value] of cells) {
        const cell = document.createElement('td');
        cell.className = name;
        cell.textContent = text;
        if (value !== null) cell.dataset.value = String(value);
        row.append(cell);
      }
      return row;
    }),
  );
}

/** Draws the buckets: uPlot with x in seconds, the mean as a line, p5 and p95 as a filled band. */
function draw(buckets: readonly ChartBucket[], granularity: string): void {
  const timeZone = controls.timeZone.value;
  const data: uPlot.AlignedData = [
    buckets.map((bucket) => Date.parse(bucket.start) / 1000),
    buckets.map((bucket) => bucket.avg),
    buckets.map((bucket) => bucket.p95),
    buckets.map((bucket) => bucket.p5),
  ];
  const options: uPlot.Options = {
    title: `${controls.metric.value} · ${controls.field.value} · ${granularityWords(granularity).width} buckets (${timeZone})`,
    width: Math.max(320, chartBox.clientWidth),
    height: 360,
    tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), timeZone),
    series: [
      {},
      { label: 'mean', stroke: '#1f6feb', width: 2, spanGaps: false },
      { label: 'p95', stroke: '#d1242f', width: 1, dash: [4, 4] },
      { label: 'p5', stroke: '#8250df', width: 1, dash: [4, 4] },
    ],
    bands: [{ series: [2, 3], fill: 'rgba(31, 111, 235, 0.12)' }],
  };
  plot?.destroy();
  plot = new uPlot(options, data, chartBox);
  chartBox.dataset.buckets = String(buckets.length);
  chartBox.dataset.granularity = granularity;
}

/** Draws `buckets` and lists them, and says how many readings they hold. */
function show(buckets: readonly ChartBucket[], granularity: string, live = false): void {
  shown = [...buckets];
  draw(buckets, granularity);
  fillTable(buckets);
  const readings = buckets.reduce((sum, bucket) => sum + bucket.count, 0);
  const time = live ? ` · live, updated ${new Date().toLocaleTimeString(LOCALE)}` : '';
  const bucketsText = `${buckets.length} ${buckets.length === 1 ? 'bucket' : 'buckets'} of ${granularityWords(granularity).span}`;
  say(`${bucketsText}, ${readings.toLocaleString('en-US')} readings${time}`);
  document.body.dataset.state = 'drawn';
}

/** Reads and draws the chart of the current controls, then follows it live when asked. */
async function refresh(): Promise<void> {
  saveToAddress();
  following?.abort();
  following = null;
  controls.timeZone.title = zoneLabel(controls.timeZone.value, new Date());
  if (controls.metric.value === '' || controls.field.value === '') return;
  say('Loading…');
  try {
    const answer = await graphql(DashboardBucketsDocument, chartVariables());
    const group = answer.buckets[0];
    show(group?.buckets ?? [], group?.granularity ?? 'none');
  } catch (error) {
    say((error as Error).message, true);
    document.body.dataset.state = 'error';
    return;
  }
  if (controls.follow.checked) void follow();
}

/**
 * Follows the chart live: the `DashboardLive` subscription over Server-Sent Events (a
 * POST with `Accept: text/event-stream`, so the token goes in a header, which
 * `EventSource` cannot send). Each pushed bucket replaces the shown bucket with the same
 * start. Stops when the controls change or the stream ends.
 */
async function follow(): Promise<void> {
  const controller = new AbortController();
  following = controller;
  const token = controls.token.value.trim();
  try {
    const response = await fetch('/graphql', {
      method: 'POST',
      headers: requestHeaders(token, 'text/event-stream'),
      body: requestBody(DashboardLiveDocument, chartVariables()),
      signal: controller.signal,
    });
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
    document.body.dataset.live = 'on';
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let pending = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      pending += value;
      let end = pending.indexOf('\n\n');
      while (end >= 0) {
        receive(pending.slice(0, end));
        pending = pending.slice(end + 2);
        end = pending.indexOf('\n\n');
      }
    }
  } catch (error) {
    if (!controller.signal.aborted) say(`Live updates stopped: ${(error as Error).message}`, true);
  } finally {
    if (following === controller) document.body.dataset.live = 'off';
  }
}

/** Applies one Server-Sent Event of the live stream: `next` events carry a push, in `data:` lines. */
function receive(event: string): void {
  const lines = event.split('\n');
  if (!lines.includes('event: next')) return;
  const data = lines
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trimStart())
    .join('\n');
  const push = JSON.parse(data) as {
    data?: DashboardLiveSubscription | null;
    errors?: { message: string; extensions?: { code?: string } }[];
  };
  if (push.errors?.length) {
    say(`${push.errors[0]!.extensions?.code ?? 'ERROR'}: ${push.errors[0]!.message}`, true);
    return;
  }
  const group = push.data?.buckets[0];
  if (!group) return;
  const byStart = new Map(shown.map((bucket) => [bucket.start, bucket]));
  for (const bucket of group.buckets) byStart.set(bucket.start, bucket);
  const merged = [...byStart.values()].sort((a, b) => Date.parse(a.start) - Date.parse(b.start));
  show(merged, group.granularity, true);
  document.body.dataset.pushes = String(Number(document.body.dataset.pushes ?? 0) + 1);
}

/** Loads the metric list and the controls' first values (from the address, else the first metric and its span). */
async function start(): Promise<void> {
  const params = new URLSearchParams(location.search);
  controls.token.value = localStorage.getItem(TOKEN_KEY) ?? '';
  controls.timeZone.value = params.get('tz') ?? Intl.DateTimeFormat(LOCALE).resolvedOptions().timeZone;
  // Labelling some 400 zones takes a few hundred milliseconds: after the first chart is asked for.
  setTimeout(fillZones, 0);
  controls.points.value = params.get('points') ?? '300';
  controls.follow.checked = params.get('follow') === '1';
  try {
    metrics = (await graphql(DashboardMetricsDocument, {})).metrics;
  } catch (error) {
    say(`${(error as Error).message}. Paste a token with scope "read" above.`, true);
    document.body.dataset.state = 'error';
    return;
  }
  if (metrics.length === 0) {
    say('No metric is stored yet (or the token may read none).');
    return;
  }
  controls.metric.replaceChildren(...metrics.map((metric) => option(metric.name)));
  const wanted = params.get('metric');
  if (wanted && metrics.some((metric) => metric.name === wanted)) controls.metric.value = wanted;
  const [tagKey, tagValues] = (params.get('tag') ?? ':').split(/:(.*)/s);
  fillMetricChoices({ field: params.get('field'), tagKey });
  controls.tagValues.value = tagValues ?? '';
  if (params.get('from') && params.get('to')) {
    controls.from.value = params.get('from')!;
    controls.to.value = params.get('to')!;
  } else {
    rangeOfMetric();
  }
  await refresh();
}

controls.token.addEventListener('change', () => {
  localStorage.setItem(TOKEN_KEY, controls.token.value.trim());
  void start();
});
controls.metric.addEventListener('change', () => {
  fillMetricChoices();
  rangeOfMetric();
  void refresh();
});
controls.form.addEventListener('submit', (event) => {
  event.preventDefault();
  void refresh();
});
for (const input of [controls.field, controls.tagKey, controls.timeZone, controls.from, controls.to, controls.points, controls.follow]) {
  input.addEventListener('change', () => void refresh());
}
window.addEventListener('resize', () => plot?.setSize({ width: Math.max(320, chartBox.clientWidth), height: 360 }));
void start();
