import { describe, expect, it } from 'vitest';
import { DEFAULT_ROLLUP_POLICY, proposeRollups, type MetricShape } from '../../src/model/rollup-policy.ts';

/** Flights-like: 3,290 routes, 223 origins and 225 destinations, about 5 readings a route-day. */
const flights: MetricShape = {
  metric: 'flights',
  series: 3_290,
  keys: [
    { key: 'destination', values: 225 },
    { key: 'origin', values: 223 },
  ],
  readingsPerSeriesDay: 5,
};

/** TSBS-like: 100 hosts, a host name each, a few values for the rest, 8,640 readings a host-day. */
const hosts: MetricShape = {
  metric: 'cpu',
  series: 100,
  keys: [
    { key: 'arch', values: 2 },
    { key: 'hostname', values: 100 },
    { key: 'rack', values: 100 },
    { key: 'region', values: 9 },
    { key: 'service', values: 20 },
  ],
  readingsPerSeriesDay: 8_640,
};

describe('proposeRollups', () => {
  it('proposes a rollup over each key that merges series, fewest values first', () => {
    expect(proposeRollups(flights, DEFAULT_ROLLUP_POLICY, [], [], 0)).toEqual([
      { name: 'auto_origin', tagKeys: ['origin'] },
      { name: 'auto_destination', tagKeys: ['destination'] },
    ]);
  });

  it('gives a dense metric one over all its keys first, and none over keys that name a series or merge too few', () => {
    expect(proposeRollups(hosts, DEFAULT_ROLLUP_POLICY, [], [], 0)).toEqual([
      { name: 'auto-all-keys', tagKeys: ['arch', 'hostname', 'rack', 'region', 'service'] },
      { name: 'auto_arch', tagKeys: ['arch'] },
      { name: 'auto_region', tagKeys: ['region'] },
      { name: 'auto_service', tagKeys: ['service'] },
    ]);
    // hostname and rack: one series per value; a sparse metric gets no rollup over all keys.
    expect(proposeRollups({ ...hosts, readingsPerSeriesDay: 239 }, DEFAULT_ROLLUP_POLICY, [], [], 0).map((p) => p.name)).toEqual([
      'auto_arch',
      'auto_region',
      'auto_service',
    ]);
    expect(proposeRollups({ ...hosts, readingsPerSeriesDay: null }, DEFAULT_ROLLUP_POLICY, [], [], 0)).toHaveLength(3);
  });

  it('leaves out keys with too many values, rollups the metric has or declined, and keeps within the budget', () => {
    expect(proposeRollups(flights, { ...DEFAULT_ROLLUP_POLICY, maxValues: 224 }, [], [], 0).map((p) => p.name)).toEqual(['auto_origin']);
    // An operator's rollup over the same key counts as having it; keys are compared sorted.
    expect(proposeRollups(flights, DEFAULT_ROLLUP_POLICY, [['origin']], [], 0).map((p) => p.name)).toEqual(['auto_destination']);
    expect(proposeRollups(flights, DEFAULT_ROLLUP_POLICY, [], [['destination']], 0).map((p) => p.name)).toEqual(['auto_origin']);
    expect(proposeRollups(hosts, DEFAULT_ROLLUP_POLICY, [['service', 'region', 'rack', 'hostname', 'arch']], [], 0)[0]!.name).toBe(
      'auto_arch',
    );
    expect(proposeRollups(hosts, DEFAULT_ROLLUP_POLICY, [], [], 3).map((p) => p.name)).toEqual(['auto-all-keys']);
    expect(proposeRollups(hosts, DEFAULT_ROLLUP_POLICY, [], [], 4)).toEqual([]);
  });

  it('proposes nothing when off, for a single series or for a metric without tags', () => {
    expect(proposeRollups(flights, { ...DEFAULT_ROLLUP_POLICY, enabled: false }, [], [], 0)).toEqual([]);
    expect(proposeRollups({ ...flights, series: 1 }, DEFAULT_ROLLUP_POLICY, [], [], 0)).toEqual([]);
    expect(proposeRollups({ ...hosts, keys: [] }, DEFAULT_ROLLUP_POLICY, [], [], 0)).toEqual([]);
  });
});
