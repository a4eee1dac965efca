/**
 * Compaction of rollup documents (`compactOnce` in src/storage/fold.ts): a fold writes
 * one rollup part per group and day, so a rollup of a metric written all day would
 * otherwise be read from one part per fold. Against a real database, expected answers
 * from a plain loop over the readings sent.
 *
 * What it proves:
 * 1. A compaction merges a day's rollup parts into one document per rollup group and
 *    day, with the compaction's number; queries answered from the rollup (as
 *    `extensions.reads` reports) are exact before, during the grace period (replaced
 *    parts still stored) and after the replaced parts are deleted.
 * 2. A rollup rebuild of a dirty day that meets a compaction of that day under way
 *    leaves the day dirty (the compaction merges the documents the rebuild replaces);
 *    once the compaction is visible, the next rebuild makes the day clean and the
 *    rollup answers exactly.
 * 3. A compaction in tiers of a day's recent parts, whose range holds the rollup
 *    documents of a metric that wrote no part there (built by its backfill after the
 *    day's last compaction), merges those too: that metric's rollup answers exactly
 *    during the grace period and after the replaced documents are deleted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillRollup, findRollups, markDirty, rebuildRollupDay } from '../../src/storage/rollups.ts';
import { recordSent, type Sent, spread as spreadFrom, totalsOf } from '../helpers/plain-loop.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { FOLDS_ID, foldState } from '../../src/storage/fold-state.ts';
import { compactOnce } from '../../src/storage/compaction.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const START = Date.UTC(2024, 5, 1);
const FROM = new Date(START).toISOString();
const TO = new Date(START + 2 * DAY).toISOString();
const METRIC = 'rc';
/** A grace period no test outlives: replaced parts stay. */
const LONG_GRACE = 3_600_000;

const DEFINE = `mutation { defineRollup(metric: "${METRIC}", name: "all", tagKeys: []) { state } }`;
const TOTALS = `query($from: Time!, $to: Time!) {
  aggregate(metric: "${METRIC}", field: "v", from: $from, to: $to) { count sum min max }
}`;
const DAILY = `query($from: Time!, $to: Time!, $granularity: Granularity!, $timeZone: String) {
  buckets(metric: "${METRIC}", field: "v", granularity: $granularity, from: $from, to: $to, timeZone: $timeZone, fill: NONE) {
    buckets { start count sum min max }
  }
}`;

interface Totals {
  count: number;
  sum: number;
  min: number;
  max: number;
}
type Bucket = Totals & { start: string };
interface Reads {
  extensions?: { reads?: { rollup: string | null }[] };
}

/** Non-empty buckets of `size` ms, UTC-aligned, with their totals, by a plain loop. */
function bucketsOf(readings: readonly Sent[], size: number): Bucket[] {
  const groups = new Map<number, Sent[]>();
  for (const r of readings) {
    const start = Math.floor(r.time / size) * size;
    groups.set(start, [...(groups.get(start) ?? []), r]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a - b)
    .map(([start, group]) => ({ start: new Date(start).toISOString(), ...totalsOf(group) }));
}

describe('rollup compaction', { timeout: 240_000 }, () => {
  let t: TestApp;
  const sent: Sent[] = [];
  let rollupId = '';
  let collection = '';

  beforeAll(async () => {
    t = await openTestApp('rollup_compaction');
  });
  afterAll(async () => t.close());

  const record = (readings: Sent[]) => recordSent(t, METRIC, readings, sent);

  /** Every answer, against the plain loop, and that the rollup answered each. */
  const expectExactFromRollup = async () => {
    const totals = (await t.graphql<{ aggregate: Totals[] }>(TOTALS, { from: FROM, to: TO })) as { data?: { aggregate: Totals[] } } & Reads;
    expect(totals.data!.aggregate).toEqual([totalsOf(sent)]);
    expect(totals.extensions?.reads?.[0]?.rollup).toBe('all');
    for (const [granularity, size] of [
      ['DAY', DAY],
      ['HOUR', HOUR],
    ] as const) {
      const answer = (await t.graphql<{ buckets: { buckets: Bucket[] }[] }>(DAILY, { from: FROM, to: TO, granularity })) as {
        data?: { buckets: { buckets: Bucket[] }[] };
      } & Reads;
      expect(answer.data!.buckets[0]!.buckets, granularity).toEqual(bucketsOf(sent, size));
      expect(answer.extensions?.reads?.[0]?.rollup, granularity).toBe('all');
    }
    // Kolkata's local day (+05:30) from the rollup's quarter hours, compacted or not.
    const kolkata = START + DAY - 330 * 60_000;
    const zoned = (await t.graphql<{ buckets: { buckets: Bucket[] }[] }>(DAILY, {
      from: new Date(kolkata).toISOString(),
      to: new Date(kolkata + DAY).toISOString(),
      granularity: 'DAY',
      timeZone: 'Asia/Kolkata',
    })) as { data?: { buckets: { buckets: Bucket[] }[] } } & Reads;
    const local = sent.filter((r) => r.time >= kolkata && r.time < kolkata + DAY);
    expect(zoned.data!.buckets[0]!.buckets).toEqual(
      local.length === 0 ? [] : [{ start: new Date(kolkata).toISOString(), ...totalsOf(local) }],
    );
    expect(zoned.extensions?.reads?.[0]?.rollup).toBe('all');
  };

  /** Rollup documents of a UTC day: all stored, and those with `f` (by fold number). */
  const rollupDocs = async (day: number) =>
    t.store.db
      .collection(collection)
      .find({ date: new Date(day) }, { projection: { f: 1 } })
      .toArray();

  it('merges one part per fold into one document per group and day, exactly, through the grace period', async () => {
    // Readings first, so the metric exists; then the rollup, built from them.
    await record(spreadFrom(START, 60, 0));
    await t.settle();
    expect((await t.graphql<{ defineRollup: { state: string } }>(DEFINE)).data?.defineRollup.state).toBe('BUILDING');
    const [rollup] = await findRollups(t.store, [METRIC]);
    rollupId = rollup!._id;
    collection = rollup!.collection;
    await backfillRollup(t.store, METRIC, 'all', { graceMs: 0 });

    // Ten folds, each with readings on both days: ten rollup parts per day besides the backfill's.
    for (let batch = 1; batch <= 10; batch++) {
      await record(spreadFrom(START, 40, batch * 1000));
      expect(await t.settle()).toBe(40);
    }
    const before = await rollupDocs(START);
    expect(before.length).toBe(11);
    await expectExactFromRollup();

    const outcome = await compactOnce(t.store, t.store.holder, { afterFolds: 8, graceMs: LONG_GRACE });
    expect(outcome.compaction).not.toBeNull();
    const c = outcome.compaction!;
    // The merged documents are stored beside the parts they replace, which stay for the grace period.
    const during = await rollupDocs(START);
    expect(during.length).toBe(12);
    expect(during.filter((doc) => doc.f === c)).toHaveLength(1);
    await expectExactFromRollup();

    // No grace: the replaced parts go, one document per day is left.
    await compactOnce(t.store, t.store.holder, { afterFolds: 8, graceMs: 0 });
    for (const day of [START, START + DAY]) {
      const after = await rollupDocs(day);
      expect(after).toHaveLength(1);
      expect(after[0]!.f).toBe(c);
    }
    await expectExactFromRollup();
  });

  it('leaves a dirty day dirty when its rebuild meets a compaction of the day, and rebuilds it after', async () => {
    // Eight more folds make the first day due again; the day is dirty, as a late batch would leave it.
    for (let batch = 11; batch <= 18; batch++) {
      await record(spreadFrom(START, 30, batch * 1000));
      await t.settle();
    }
    await markDirty(t.store, [{ rollup: { _id: rollupId }, days: [START] }]);
    // A compaction of the day under way, as a holder that stopped mid-compaction leaves it
    // (its lease expired): recorded, nothing merged yet.
    const state = await foldState(t.store.db).findOne({ _id: FOLDS_ID });
    const seq = state!.visible + 1;
    await foldState(t.store.db).updateOne(
      { _id: FOLDS_ID },
      { $set: { running: { seq, entries: [], compact: [START], from: [0] }, lease: { holder: 'stopped', until: new Date(0) } } },
    );
    expect(await rebuildRollupDay(t.store, rollupId, START, 0)).toBe('changed');
    let [rollup] = await findRollups(t.store, [METRIC]);
    expect(rollup!.dirty[new Date(START).toISOString().slice(0, 10)]).toBeDefined();

    // The compaction completed by this holder, then the rebuild goes through.
    const completed = await compactOnce(t.store, t.store.holder, { afterFolds: 8, graceMs: 0 });
    expect(completed.compaction).toBe(seq);
    expect(await rebuildRollupDay(t.store, rollupId, START, 0)).toBe('rebuilt');
    [rollup] = await findRollups(t.store, [METRIC]);
    expect(rollup!.dirty).toEqual({});
    await expectExactFromRollup();
    await compactOnce(t.store, t.store.holder, { afterFolds: 8, graceMs: 0 });
    await expectExactFromRollup();
  });

  it("keeps another metric's rollup documents that a compaction of recent runs takes in, though that metric wrote no part there", async () => {
    const other = 'rc_other';
    const otherSent: Sent[] = [];
    const otherTotals = async () =>
      (await t.graphql<{ aggregate: Totals[] }>(
        `query($from: Time!, $to: Time!) { aggregate(metric: "${other}", field: "v", from: $from, to: $to) { count sum min max } }`,
        { from: FROM, to: TO },
      )) as { data?: { aggregate: Totals[] } } & Reads;
    await recordSent(t, other, spreadFrom(START, 50, 70_000), otherSent);
    await t.settle();
    // Its parts merged into the days' documents by a compaction: no part of it after that.
    await compactOnce(t.store, t.store.holder, { afterFolds: 1, graceMs: 0 });
    // Both days as if compacted many times: one large run each, which a compaction in
    // tiers of a few folds keeps, merging only what came after the days' last compaction.
    await foldState(t.store.db).updateOne(
      { _id: FOLDS_ID },
      { $set: { [`runs.${START}`]: [{ from: 0, folds: 1_000 }], [`runs.${START + DAY}`]: [{ from: 0, folds: 1_000 }] } },
    );
    // A fold of other days, so that the visible fold number is past the days' last compaction.
    await recordSent(t, 'rc_elsewhere', spreadFrom(START + 10 * DAY, 5, 1), []);
    await t.settle();
    // The other metric's rollup, built now: its documents are numbered after the days' last compaction.
    const defined = await t.graphql<{ defineRollup: { state: string } }>(
      `mutation { defineRollup(metric: "${other}", name: "all", tagKeys: []) { state } }`,
    );
    expect(defined.errors).toBeUndefined();
    await backfillRollup(t.store, other, 'all', { graceMs: 0 });
    const built = await otherTotals();
    expect(built.data!.aggregate).toEqual([totalsOf(otherSent)]);
    expect(built.extensions?.reads?.[0]?.rollup).toBe('all');

    // Eight folds of the first metric only, then a compaction in tiers of the recent parts.
    for (let batch = 19; batch <= 26; batch++) {
      await record(spreadFrom(START, 20, batch * 1000));
      await t.settle();
    }
    const outcome = await compactOnce(t.store, t.store.holder, { afterFolds: 8, graceMs: LONG_GRACE, tiered: true });
    expect(outcome.compaction).not.toBeNull();
    const state = await foldState(t.store.db).findOne({ _id: FOLDS_ID });
    const record_ = state!.compactions!.find((entry) => entry.c === outcome.compaction)!;
    expect(record_.from!.every((from) => from > 0)).toBe(true);
    // In the grace period, and once the replaced documents are deleted: both metrics exact from their rollups.
    for (const graceMs of [LONG_GRACE, 0]) {
      if (graceMs === 0) await compactOnce(t.store, t.store.holder, { afterFolds: 8, graceMs: 0, tiered: true });
      const answer = await otherTotals();
      expect(answer.data!.aggregate, `grace ${graceMs}`).toEqual([totalsOf(otherSent)]);
      expect(answer.extensions?.reads?.[0]?.rollup).toBe('all');
      await expectExactFromRollup();
    }
  });
});
