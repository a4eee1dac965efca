/**
 * Read pins (src/storage/read-pins.ts): a compaction's replaced parts are deleted as soon
 * as no read can still need them (`compactOnce` with `pinned`, as the server's fold job
 * runs it), not only after the grace period. Against a real database; expected answers
 * from a plain loop over the readings sent.
 *
 * What it proves:
 * 1. A read that holds a view from before a compaction (its own process's or another's)
 *    keeps the parts the compaction replaced, however long it runs, and answers exactly
 *    from them; once it has ended, the next clean-up deletes them, long before the grace
 *    period ends, and every answer stays exact.
 * 2. A process's pin is removed a moment after its last read ends, and written again
 *    before its next read of the fold state.
 * 3. A pin older than the grace period (a stopped process's) holds nothing; a recent one
 *    holds the parts.
 * 4. Without `pinned`, only the grace period deletes.
 * 5. Under steady reads a process rewrites its pin ahead of time, and no read waits for
 *    that write; a read waits for it when no write of the pin was confirmed within
 *    `PIN_REFRESH_MS`.
 */
import type { CommandStartedEvent, CommandSucceededEvent, Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PIN_REFRESH_MS, ReadPins, readPins, withView } from '../../src/storage/read-pins.ts';
import { storeOf } from '../../src/storage/store.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { recordSent, type Sent, spread, totalsOf } from '../helpers/plain-loop.ts';
import { waitUntil } from '../helpers/server-process.ts';
import { aggregateBuckets } from '../../src/storage/aggregate.ts';
import { visibleAt, visibleIn } from '../../src/storage/fold-state.ts';
import { overWholeDocuments } from '../helpers/pipelines.ts';
import { compactOnce } from '../../src/storage/compaction.ts';

const DAY = 86_400_000;
const START = Date.UTC(2024, 6, 1);
const METRIC = 'pinned';
/** A grace period no test outlives. */
const LONG_GRACE = 3_600_000;

const TOTALS = `query($from: Time!, $to: Time!) {
  aggregate(metric: "${METRIC}", field: "v", from: $from, to: $to) { count sum }
}`;

/** The `$group` stage of count and sum of field `v`'s day totals. */
const COUNT_SUM = { $group: { _id: null, count: { $sum: '$fields.v.n' }, sum: { $sum: '$fields.v.sum' } } };

/** Count and sum of `readings`, by a plain loop (`totalsOf`). */
function countAndSum(readings: readonly Sent[]): { count: number; sum: number } {
  const { count, sum } = totalsOf(readings);
  return { count, sum };
}

/** A promise and the function that settles it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe('read pins', { timeout: 240_000 }, () => {
  let t: TestApp;
  const sent: Sent[] = [];

  beforeAll(async () => {
    t = await openTestApp('read_pins', { journal: false });
  });
  afterAll(async () => t.close());

  const record = (readings: Sent[]) => recordSent(t, METRIC, readings, sent);

  /** Records `folds` batches, each folded on its own: one more part per series-day each. */
  const foldedBatches = async (folds: number) => {
    for (let i = 0; i < folds; i++) {
      await record(spread(START, 30, sent.length));
      expect(await t.settle()).toBe(30);
    }
  };

  /** The aggregate through GraphQL equals the plain loop. */
  const expectExact = async () => {
    const answer = await t.graphql<{ aggregate: { count: number; sum: number }[] }>(TOTALS, {
      from: new Date(START).toISOString(),
      to: new Date(START + 2 * DAY).toISOString(),
    });
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.aggregate).toEqual([countAndSum(sent)]);
  };

  /** Count and sum of the day totals of the metric's series-day documents that `filter` selects, read in the database. */
  const totalsWhere = async (filter: Document) => {
    const [row] = await t.store.seriesDays
      .aggregate<{ count: number; sum: number }>([{ $match: { metric: METRIC, ...filter } }, COUNT_SUM])
      .toArray();
    return { count: row?.count ?? 0, sum: row?.sum ?? 0 };
  };

  /** {@link totalsWhere} of the documents visible in the pinned view of this process. */
  const totalsInView = () => withView(t.store, (view) => totalsWhere(visibleIn(view)));

  /** Waits until the pin of the process `holder` (default this one) is gone (a moment after its last read). */
  const pinRemoved = (holder = t.store.holder) =>
    waitUntil(
      async () => (await readPins(t.store.db).countDocuments({ _id: holder })) === 0,
      10_000,
      `the read pin of ${holder} was not removed`,
    );

  it('keeps replaced parts while a read holds an older view, and deletes them once it ends', async () => {
    await foldedBatches(3);
    await expectExact();
    const parts = await t.store.seriesDays.countDocuments({ metric: METRIC });
    expect(parts).toBeGreaterThan(0);

    // Reads `count` and `sum` of what was visible at the held view, after the compaction.
    const aggregateBucketsIn = async (visible: number) => ({ visible, ...(await totalsWhere(visibleAt(visible))) });
    // A read of this process holds its view while a compaction merges the parts.
    const held = gate();
    const entered = gate();
    const reading = withView(t.store, async (view) => {
      entered.open();
      await held.opened;
      return aggregateBucketsIn(view.visible);
    });
    // The pin is stored before the view is read.
    await entered.opened;
    expect(await readPins(t.store.db).countDocuments({ _id: t.store.holder })).toBe(1);

    const compaction = await compactOnce(t.store, t.store.holder, { afterFolds: 2, graceMs: LONG_GRACE, pinned: true });
    expect(compaction.compaction).not.toBeNull();
    const merged = await t.store.seriesDays.countDocuments({ metric: METRIC, f: compaction.compaction! });
    expect(merged).toBeGreaterThan(0);
    // The held read pins a view before the compaction: nothing is deleted.
    expect((await compactOnce(t.store, t.store.holder, { afterFolds: 2, graceMs: LONG_GRACE, pinned: true })).deleted).toBe(0);
    expect(await t.store.seriesDays.countDocuments({ metric: METRIC })).toBe(parts + merged);

    // The held read still finds every reading in the parts of its view.
    held.open();
    const old = await reading;
    expect(old.visible).toBe(compaction.compaction! - 1);
    expect({ count: old.count, sum: old.sum }).toEqual(countAndSum(sent));

    // Once no read holds an older view, the next clean-up deletes the replaced parts.
    await pinRemoved();
    expect((await compactOnce(t.store, t.store.holder, { afterFolds: 2, graceMs: LONG_GRACE, pinned: true })).deleted).toBe(parts);
    expect(await t.store.seriesDays.countDocuments({ metric: METRIC })).toBe(merged);
    expect(await totalsInView()).toEqual(countAndSum(sent));
    await expectExact();
  });

  it("keeps replaced parts while another process's read holds an older view", async () => {
    await foldedBatches(3);
    const other = storeOf(t.store.client, t.store.db);
    expect(other.holder).not.toBe(t.store.holder);
    const held = gate();
    const entered = gate();
    const reading = withView(other, async (view) => {
      entered.open();
      await held.opened;
      const rows = await aggregateBuckets<{ count: number; sum: number }>(other, overWholeDocuments(METRIC, ['v'], [COUNT_SUM]));
      return { visible: view.visible, ...rows[0]! };
    });
    await entered.opened;
    expect(await readPins(t.store.db).countDocuments({ _id: other.holder })).toBe(1);
    const before = await t.store.seriesDays.countDocuments({ metric: METRIC });

    const compaction = await compactOnce(t.store, t.store.holder, { afterFolds: 2, graceMs: LONG_GRACE, pinned: true });
    expect(compaction.compaction).not.toBeNull();
    await pinRemoved();
    expect((await compactOnce(t.store, t.store.holder, { afterFolds: 2, graceMs: LONG_GRACE, pinned: true })).deleted).toBe(0);

    held.open();
    const old = await reading;
    expect(old.visible).toBe(compaction.compaction! - 1);
    // Its own read (the view of the moment: after the compaction) is exact too.
    expect({ count: old.count, sum: old.sum }).toEqual(countAndSum(sent));
    await pinRemoved(other.holder);
    const cleanup = await compactOnce(t.store, t.store.holder, { afterFolds: 2, graceMs: LONG_GRACE, pinned: true });
    expect(cleanup.deleted).toBeGreaterThan(0);
    const merged = await t.store.seriesDays.countDocuments({ metric: METRIC, f: compaction.compaction! });
    expect(await t.store.seriesDays.countDocuments({ metric: METRIC })).toBe(merged);
    expect(before).toBeGreaterThan(merged);
    await expectExact();
  });

  it('ignores a pin older than the grace period, keeps parts for a recent one, and deletes only after the grace period without pins', async () => {
    await foldedBatches(3);
    await pinRemoved();
    // A recent pin of a process that holds the oldest view.
    await readPins(t.store.db).insertOne({ _id: 'recent', min: 0, at: new Date() });
    const compaction = await compactOnce(t.store, t.store.holder, { afterFolds: 2, graceMs: LONG_GRACE, pinned: true });
    expect(compaction.compaction).not.toBeNull();
    const replaced =
      (await t.store.seriesDays.countDocuments({ metric: METRIC })) -
      (await t.store.seriesDays.countDocuments({ f: compaction.compaction! }));
    expect(replaced).toBeGreaterThan(0);
    expect((await compactOnce(t.store, t.store.holder, { afterFolds: 2, graceMs: LONG_GRACE, pinned: true })).deleted).toBe(0);
    // Without pins, only the grace period counts.
    await readPins(t.store.db).deleteOne({ _id: 'recent' });
    expect((await compactOnce(t.store, t.store.holder, { afterFolds: 2, graceMs: LONG_GRACE })).deleted).toBe(0);
    // A pin last written two hours ago (a stopped process) is ignored.
    await readPins(t.store.db).insertOne({ _id: 'stopped', min: 0, at: new Date(Date.now() - 2 * 3_600_000) });
    expect((await compactOnce(t.store, t.store.holder, { afterFolds: 2, graceMs: LONG_GRACE, pinned: true })).deleted).toBe(replaced);
    await readPins(t.store.db).deleteOne({ _id: 'stopped' });
    await expectExact();
  });

  it('rewrites a recent pin without making reads wait, and makes a read wait when no write was confirmed within PIN_REFRESH_MS', async () => {
    const holder = 'pin-refresh';
    const pins = new ReadPins(holder);
    // In the order the driver saw them: a pin write sent and answered, a read of the fold state sent.
    let order: string[] = [];
    const sent = (event: CommandStartedEvent) => {
      if (event.commandName === 'find' && event.command.find === 'fold_state') order.push('view read');
    };
    const pinRequests = new Set<number>();
    const pinSent = (event: CommandStartedEvent) => {
      if (event.commandName === 'update' && event.command.update === 'read_pins') {
        pinRequests.add(event.requestId);
        order.push('pin sent');
      }
    };
    const answered = (event: CommandSucceededEvent) => {
      if (pinRequests.delete(event.requestId)) order.push('pin written');
    };
    t.store.client.on('commandStarted', sent);
    t.store.client.on('commandStarted', pinSent);
    t.store.client.on('commandSucceeded', answered);
    const start = Date.now();
    let elapsed = 0;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => start + elapsed);
    const held = gate();
    try {
      // The first read waits for its process's pin.
      const first = pins.with(t.store.db, () => held.opened);
      await waitUntil(async () => order.includes('view read'), 10_000, 'the first read did not read its view');
      expect(order).toEqual(['pin sent', 'pin written', 'view read']);
      // Past half of PIN_REFRESH_MS, with the first read still under way: the pin is
      // written again as the read starts, and the read does not wait for its answer.
      order = [];
      elapsed = PIN_REFRESH_MS / 2 + 1_000;
      await pins.with(t.store.db, async () => undefined);
      expect(order).toContain('pin sent');
      await waitUntil(async () => order.includes('pin written'), 10_000, 'the pin was not written again');
      expect(order.indexOf('view read')).toBeLessThan(order.indexOf('pin written'));
      // Longer than PIN_REFRESH_MS after the last confirmed write: the read waits again.
      order = [];
      elapsed += PIN_REFRESH_MS + 1_000;
      await pins.with(t.store.db, async () => undefined);
      expect(order).toEqual(['pin sent', 'pin written', 'view read']);
      held.open();
      await first;
    } finally {
      held.open();
      clock.mockRestore();
      t.store.client.off('commandStarted', sent);
      t.store.client.off('commandStarted', pinSent);
      t.store.client.off('commandSucceeded', answered);
    }
    await pinRemoved(holder);
  });
});
