/**
 * Rollup writes that land before their fold is visible: a fold inserts its rollup parts
 * (numbered with the fold, `f`) before it makes the fold visible with one
 * compare-and-set, and a stopped fold leaves them inserted with nothing visible. Those
 * parts are invisible until the flip, while the fold's log entries stay in the tail that
 * queries add, so a query between a fold's inserts and its flip (or after a crash
 * between them) counts every reading once; completing the fold inserts nothing twice;
 * and a rebuild of the day in between replaces only the documents visible to it, so the
 * fold's parts add to the rebuilt documents once the fold is visible; a late copy of a
 * visible fold's part after a rebuild is refused by its id. (This replaces the
 * old late-write window of batches: rollup writes can no longer land on a rebuilt day.)
 * Answers are checked against plain loops over the readings sent.
 */
import type { Collection, Db, Document, UpdateFilter } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_HORIZONS } from '../../src/model/retention-policy.ts';
import { foldOnce } from '../../src/storage/fold.ts';
import { entryReadings, ingestLog } from '../../src/storage/ingest-log.ts';
import { backfillRollup, createRollup, findRollups, markDirty, rebuildRollupDay } from '../../src/storage/rollups.ts';
import type { Store } from '../../src/storage/store.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { type Sent, totalsOf } from '../helpers/plain-loop.ts';
import { foldDocuments } from '../../src/documents/encode.ts';
import { planReadings } from '../../src/documents/from-readings.ts';
import { rollupContents } from '../../src/documents/rollup.ts';
import { FOLD_STATE_COLLECTION, FOLDS_ID, foldState, readVisible, type FoldStateDocument } from '../../src/storage/fold-state.ts';

const METRIC = 'late';
const DAY = Date.UTC(2024, 0, 1);
const HOUR = 3_600_000;

/** `count` readings from `seed` on, over three hosts and the 24 hours of DAY. */
const readingsOf = (count: number, seed: number): Sent[] =>
  Array.from({ length: count }, (_, i) => {
    const k = seed + i;
    return { host: `h${k % 3}`, time: DAY + ((k * 577) % 1440) * 60_000 + (k % 60) * 1000, value: ((k * 37) % 101) - 20.5 };
  });

const asInput = (readings: readonly Sent[]) =>
  readings.map((r) => ({
    metric: METRIC,
    tags: [{ key: 'host', value: r.host }],
    time: new Date(r.time).toISOString(),
    fields: [{ name: 'v', value: r.value }],
  }));

/** count and sum per UTC hour, by a plain loop. */
function hoursOf(readings: readonly Sent[]) {
  const hours = new Map<number, { count: number; sum: number }>();
  for (const r of readings) {
    const hour = Math.floor(r.time / HOUR) * HOUR;
    const entry = hours.get(hour) ?? { count: 0, sum: 0 };
    entry.count += 1;
    entry.sum += r.value;
    hours.set(hour, entry);
  }
  return [...hours.entries()].sort(([a], [b]) => a - b).map(([hour, entry]) => ({ start: new Date(hour).toISOString(), ...entry }));
}

const RECORD = `mutation($readings: [ReadingInput!]!, $batchId: String) {
  recordReadings(readings: $readings, batchId: $batchId) { applied alreadyApplied }
}`;
const TOTALS = `query($groupBy: [String!]) {
  aggregate(metric: "late", field: "v", from: "2024-01-01T00:00:00Z", to: "2024-01-02T00:00:00Z", groupBy: $groupBy) {
    tags { key value }
    count sum min max
  }
}`;
const HOURS = `{
  buckets(metric: "late", field: "v", granularity: HOUR, from: "2024-01-01T00:00:00Z", to: "2024-01-02T00:00:00Z", fill: NONE) {
    buckets { start count sum }
  }
}`;

interface Reads {
  extensions?: { reads?: { rollup: string | null; tail?: { entries: number; readings: number } }[] };
}
type Totals = ReturnType<typeof totalsOf> & { tags: { key: string; value: string }[] };

/**
 * A store whose fold state updates that make a fold visible (`$set.visible`) wait for
 * `gate` first: a fold run on it stops between inserting its parts and its flip, as
 * long as the test wants. `reached` resolves when a fold arrives at the gate.
 */
function gatedFlip(store: Store): { store: Store; reached: Promise<void>; open: () => void } {
  let arrive!: () => void;
  let open!: () => void;
  const reached = new Promise<void>((resolve) => (arrive = resolve));
  const gate = new Promise<void>((resolve) => (open = resolve));
  const db = new Proxy(store.db, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (property !== 'collection' || typeof value !== 'function') return value;
      return (name: string, ...rest: unknown[]) => {
        const collection = (value as (...a: unknown[]) => Collection<Document>).call(target, name, ...rest);
        if (name !== FOLD_STATE_COLLECTION) return collection;
        return new Proxy(collection, {
          get(inner, key, innerReceiver) {
            const method = Reflect.get(inner, key, innerReceiver) as unknown;
            if (key !== 'updateOne' || typeof method !== 'function') return method;
            return async (filter: unknown, update: UpdateFilter<FoldStateDocument>, ...args: unknown[]) => {
              if (update.$set !== undefined && 'visible' in update.$set) {
                arrive();
                await gate;
              }
              return (method as (...a: unknown[]) => Promise<unknown>).call(inner, filter, update, ...args);
            };
          },
        });
      };
    },
  }) as Db;
  return { store: { ...store, db }, reached, open };
}

describe('rollup parts of a fold that is not visible yet', { timeout: 120_000 }, () => {
  let t: TestApp;
  const sent: Sent[] = [];
  let rollupCollection: string;

  const record = async (readings: Sent[], batchId: string) => {
    const answer = await t.graphql<{ recordReadings: { applied: number } }>(RECORD, { readings: asInput(readings), batchId });
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.recordReadings.applied).toBe(readings.length);
    sent.push(...readings);
  };
  /** The day's totals and hourly buckets, from the rollup, and per host from the series: equal to the plain loop; `tail` readings not folded (visibly) yet. */
  const expectExact = async (tail: number) => {
    const whole = (await t.graphql<{ aggregate: Totals[] }>(TOTALS, {})) as { data?: { aggregate: Totals[] } } & Reads;
    expect(whole.extensions?.reads?.[0]).toMatchObject({ rollup: 'all', tail: { readings: tail } });
    expect(whole.data?.aggregate).toEqual([{ tags: [], ...totalsOf(sent) }]);

    const hourly = (await t.graphql<{ buckets: { buckets: unknown[] }[] }>(HOURS)) as {
      data?: { buckets: { buckets: unknown[] }[] };
    } & Reads;
    expect(hourly.extensions?.reads?.[0]?.rollup).toBe('all');
    expect(hourly.data?.buckets).toEqual([{ buckets: hoursOf(sent) }]);

    const byHost = (await t.graphql<{ aggregate: Totals[] }>(TOTALS, { groupBy: ['host'] })) as {
      data?: { aggregate: Totals[] };
    } & Reads;
    expect(byHost.extensions?.reads?.[0]).toMatchObject({ rollup: null, tail: { readings: tail } });
    expect(byHost.data?.aggregate).toEqual(
      ['h0', 'h1', 'h2'].map((host) => ({ tags: [{ key: 'host', value: host }], ...totalsOf(sent.filter((r) => r.host === host)) })),
    );
  };
  const rollupParts = (fold: number) => t.store.db.collection(rollupCollection).countDocuments({ f: fold });

  beforeAll(async () => {
    t = await openTestApp('late', { journal: false });
    await record(readingsOf(120, 0), 'first');
    await t.settle();
    const rollup = await createRollup(t.store, { metric: METRIC, name: 'all', tagKeys: [] });
    rollupCollection = rollup.collection;
    expect(await backfillRollup(t.store, METRIC, 'all', { graceMs: 0 })).toEqual({ rebuilt: 1, dirty: 0 });
    await expectExact(0);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('are not counted while a fold waits to become visible, and count once after', async () => {
    await record(readingsOf(90, 1000), 'second');
    const visible = await readVisible(t.store);
    const gated = gatedFlip(t.store);
    const fold = foldOnce(gated.store, t.store.holder);
    await gated.reached;
    // Everything of the fold is inserted, the rollup's part among them, and nothing is visible.
    expect(await rollupParts(visible + 1)).toBe(1);
    expect(await t.store.seriesDays.countDocuments({ f: visible + 1 })).toBe(3);
    expect(await readVisible(t.store)).toBe(visible);
    await expectExact(90);

    gated.open();
    expect(await fold).toMatchObject({ fold: visible + 1, readings: 90, parts: 3, rollupParts: 1 });
    expect((await findRollups(t.store))[0]!.dirty).toEqual({});
    await expectExact(0);
  });

  it('stay invisible when a fold stopped after inserting them, and completing the fold inserts nothing twice', async () => {
    await record(readingsOf(75, 2000), 'crashed');
    // The state a folder killed before its flip leaves: the fold recorded as running with
    // its entry stamped, the rollup's part and one series-day part inserted, the lease
    // expired (the folder is gone).
    const state = await foldState(t.store.db).findOne({ _id: FOLDS_ID });
    const seq = state!.visible + 1;
    await foldState(t.store.db).updateOne(
      { _id: FOLDS_ID },
      { $set: { running: { seq, entries: ['crashed'] }, lease: { holder: 'stopped', until: new Date(Date.now() - 1000) } } },
    );
    await ingestLog(t.store).updateOne({ _id: 'crashed' }, { $set: { fold: seq } });
    const entry = await ingestLog(t.store).findOne({ _id: 'crashed' });
    const plan = planReadings(entryReadings(entry!), { settingsOf: () => t.store.defaultStatistics, horizonsOf: () => NO_HORIZONS });
    const [rollup] = await findRollups(t.store, [METRIC]);
    const rollupDocs = foldDocuments(rollupContents(plan.days, rollup!), seq);
    expect(rollupDocs).toHaveLength(1);
    await t.store.db.collection(rollupCollection).insertMany(rollupDocs as Document[]);
    await t.store.seriesDays.insertMany(foldDocuments(plan.days, seq).slice(0, 1) as never[]);

    await expectExact(75);
    // Another process's query, and a retry of the batch, change nothing of it.
    expect((await t.graphql(RECORD, { readings: asInput(readingsOf(75, 2000)), batchId: 'crashed' })).data).toEqual({
      recordReadings: { applied: 0, alreadyApplied: 75 },
    });
    await expectExact(75);

    // The next folder completes the fold: the parts already there are skipped.
    expect(await foldOnce(t.store, t.store.holder)).toMatchObject({ fold: seq, readings: 75, parts: 2, rollupParts: 0 });
    expect(await rollupParts(seq)).toBe(1);
    expect(await t.store.seriesDays.countDocuments({ f: seq })).toBe(3);
    expect(await t.settle()).toBe(0);
    await expectExact(0);
  });

  it('add to the documents a rebuild wrote between the inserts and the flip', async () => {
    await record(readingsOf(60, 3000), 'during-rebuild');
    const visible = await readVisible(t.store);
    const [rollup] = await findRollups(t.store, [METRIC]);
    const gated = gatedFlip(t.store);
    const fold = foldOnce(gated.store, t.store.holder);
    await gated.reached;
    expect(await rollupParts(visible + 1)).toBe(1);

    // Meanwhile the day is marked dirty (as a deletion does) and rebuilt from the
    // series-day documents visible now, which do not hold the fold's readings yet.
    await markDirty(t.store, [{ rollup: rollup!, days: [DAY] }]);
    expect(await rebuildRollupDay(t.store, rollup!._id, DAY, 0)).toBe('rebuilt');
    expect(await rollupParts(visible)).toBe(1);
    expect(await rollupParts(visible + 1)).toBe(1);
    expect(await t.store.db.collection(rollupCollection).countDocuments({})).toBe(2);
    await expectExact(60);

    gated.open();
    expect(await fold).toMatchObject({ fold: visible + 1, readings: 60, rollupParts: 1 });
    expect((await findRollups(t.store))[0]!.dirty).toEqual({});
    await expectExact(0);

    // Rebuilt once more, now that the fold is visible: one document, the same answers.
    await markDirty(t.store, [{ rollup: rollup!, days: [DAY] }]);
    expect(await rebuildRollupDay(t.store, rollup!._id, DAY, 0)).toBe('rebuilt');
    expect(await t.store.db.collection(rollupCollection).countDocuments({})).toBe(1);
    await expectExact(0);
  });

  it("refuse a late copy of a visible fold's rollup part once a rebuild replaced it, by its id", async () => {
    await record(readingsOf(45, 4000), 'stale-part');
    expect(await foldOnce(t.store, t.store.holder)).toMatchObject({ readings: 45, rollupParts: 1 });
    const seq = await readVisible(t.store);
    const [rollup] = await findRollups(t.store, [METRIC]);
    // The rebuild replaces every rollup document visible at V = seq, the fold's part
    // included, by one document of fold V's number and ids.
    await markDirty(t.store, [{ rollup: rollup!, days: [DAY] }]);
    expect(await rebuildRollupDay(t.store, rollup!._id, DAY, 0)).toBe('rebuilt');
    expect(await t.store.db.collection(rollupCollection).countDocuments({})).toBe(1);
    await expectExact(0);

    // A folder that lost its lease inserts fold V's rollup part once more, late: the
    // rebuilt document holds its id, so the insert is refused and nothing counts twice.
    const entry = await ingestLog(t.store).findOne({ _id: 'stale-part' });
    const plan = planReadings(entryReadings(entry!), { settingsOf: () => t.store.defaultStatistics, horizonsOf: () => NO_HORIZONS });
    const late = foldDocuments(rollupContents(plan.days, rollup!), seq);
    expect(late).toHaveLength(1);
    const refused = await t.store.db
      .collection(rollupCollection)
      .insertMany(late as Document[], { ordered: false })
      .then(
        () => null,
        (error: unknown) => (error as { code?: number }).code,
      );
    expect(refused).toBe(11000);
    expect(await t.store.db.collection(rollupCollection).countDocuments({})).toBe(1);
    await expectExact(0);
  });
});
