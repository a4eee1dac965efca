/**
 * A seeded, deterministic generator of the TSBS (Time Series Benchmark Suite,
 * timescale/tsbs) `cpu-only` data set: hosts with 10 tags and 10 fields, one reading
 * every 10 seconds, fields random walks with N(0, 1) steps clamped to [0, 100],
 * readings in time order (all hosts at one time, then the next time).
 */
import type { Tag } from '../../../src/model/series.ts';

/** The 10 field names of TSBS `cpu`. */
export const CPU_FIELDS = [
  'usage_user',
  'usage_system',
  'usage_idle',
  'usage_nice',
  'usage_iowait',
  'usage_irq',
  'usage_softirq',
  'usage_steal',
  'usage_guest',
  'usage_guest_nice',
] as const;

const REGIONS = [
  'us-east-1',
  'us-west-1',
  'us-west-2',
  'eu-west-1',
  'eu-central-1',
  'ap-southeast-1',
  'ap-southeast-2',
  'ap-northeast-1',
  'sa-east-1',
];
const OSES = ['Ubuntu16.10', 'Ubuntu16.04LTS', 'Ubuntu15.10'];
const ARCHES = ['x64', 'x86'];
const TEAMS = ['SF', 'NYC', 'LON', 'CHI'];
const ENVIRONMENTS = ['production', 'staging', 'test'];

/** mulberry32: a small seeded PRNG with uniform output in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A reading in plain form: tags sorted by key, time in ms since epoch (UTC), fields by name. */
export interface PlainReading {
  metric: string;
  tags: Tag[];
  time: number;
  fields: Record<string, number>;
}

/** Options of {@link generateCpu}. */
export interface CpuOptions {
  hosts: number;
  /** Length of the data set in ms. */
  durationMs: number;
  /** First reading time, ms since epoch (TSBS default 2016-01-01T00:00:00Z). */
  start?: number;
  /** Interval between readings of one host, ms (TSBS default 10 s). */
  intervalMs?: number;
  seed?: number;
}

/** The tags of host `index`, sorted by key, picked by the seeded generator as TSBS does. */
function hostTags(index: number, random: () => number): Tag[] {
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const region = pick(REGIONS);
  const tags: Record<string, string> = {
    hostname: `host_${index}`,
    region,
    datacenter: `${region}${pick(['a', 'b', 'c'])}`,
    rack: String(Math.floor(random() * 100)),
    os: pick(OSES),
    arch: pick(ARCHES),
    team: pick(TEAMS),
    service: String(Math.floor(random() * 20)),
    service_version: String(Math.floor(random() * 2)),
    service_environment: pick(ENVIRONMENTS),
  };
  return Object.keys(tags)
    .sort()
    .map((key) => ({ key, value: tags[key]! }));
}

/**
 * Generates TSBS cpu-only readings in time order, in chunks of whole timestamps
 * (`hosts` readings each) so a caller can stream millions of readings.
 */
export function* generateCpu(options: CpuOptions): Generator<PlainReading[]> {
  const random = seededRandom(options.seed ?? 123);
  const start = options.start ?? Date.UTC(2016, 0, 1);
  const interval = options.intervalMs ?? 10_000;
  const gaussian = () => {
    // Box-Muller from the seeded uniform generator.
    const u = 1 - random();
    const v = random();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  const hosts = Array.from({ length: options.hosts }, (_, index) => ({
    tags: hostTags(index, random),
    values: CPU_FIELDS.map(() => random() * 100),
  }));
  for (let time = start; time < start + options.durationMs; time += interval) {
    const chunk: PlainReading[] = [];
    for (const host of hosts) {
      const fields: Record<string, number> = {};
      CPU_FIELDS.forEach((field, i) => {
        const next = Math.min(100, Math.max(0, host.values[i]! + gaussian()));
        host.values[i] = next;
        fields[field] = next;
      });
      chunk.push({ metric: 'cpu', tags: host.tags, time, fields });
    }
    yield chunk;
  }
}
