/**
 * The fold lease (in the fold state document): one process folds and compacts at a
 * time, and a stopped holder is replaced once its lease runs out
 * (docs/ingest-design.md, "Who folds").
 */
import { FOLDS_ID, type FoldStateDocument, foldState } from './fold-state.ts';
import type { Store } from './store.ts';

/**
 * Takes or renews the lease for `holder` for `store.foldLeaseMs`: one
 * `findOneAndUpdate` that matches only when the lease is free, expired or already the
 * holder's.
 * @returns the fold state after the update, or null when another holder has the lease.
 */
export async function takeLease(store: Pick<Store, 'db' | 'foldLeaseMs'>, holder: string): Promise<FoldStateDocument | null> {
  const now = new Date();
  return foldState(store.db).findOneAndUpdate(
    { _id: FOLDS_ID, $or: [{ lease: null }, { 'lease.until': { $lt: now } }, { 'lease.holder': holder }] },
    { $set: { lease: { holder, until: new Date(now.getTime() + store.foldLeaseMs) } } },
    { returnDocument: 'after' },
  );
}

/** Gives the lease up (at shutdown), so another instance folds at once instead of after it expires. */
export async function releaseLease(store: Pick<Store, 'db'>, holder: string): Promise<void> {
  await foldState(store.db).updateOne({ _id: FOLDS_ID, 'lease.holder': holder }, { $set: { lease: null } });
}

/** Margin kept between the end of a fold's writes and the end of its lease, in ms: a sixth of the lease, at most 5 s. */
export const leaseMargin = (leaseMs: number) => Math.min(5_000, leaseMs / 6);

/**
 * Thrown when a folder finds, before writing, that its lease is gone or nearly gone: it
 * stops, and whoever holds the lease completes the fold.
 */
export class LeaseLost extends Error {
  constructor(holder: string) {
    super(`Folder ${holder} no longer holds the fold lease; the fold is left to the holder`);
    this.name = 'LeaseLost';
  }
}

/**
 * Renews `holder`'s lease and returns the ms its writes may take: until
 * {@link leaseMargin} before the renewed lease ends. A part inserted by a stalled
 * folder after another took over could land after a rollup rebuild at a later fold and
 * be counted twice; renewing before every insert and bounding the insert by the lease
 * (`maxTimeMS`) keeps a folder's writes inside the time it holds the lease.
 * @throws LeaseLost when another holder has the lease.
 */
export async function leaseLeft(store: Store, holder: string): Promise<number> {
  const state = await takeLease(store, holder);
  if (state === null || state.lease === null) throw new LeaseLost(holder);
  return Math.max(1, Math.floor(state.lease.until.getTime() - Date.now() - leaseMargin(store.foldLeaseMs)));
}

/**
 * Whether a folder with nothing to do should still take or renew the lease, in fold
 * state `state` at `now` (ms since epoch): when nobody holds it or it has expired (so
 * the instance that looks first keeps folding, as when it renewed at every look), and
 * when `holder` holds it with less than half of `leaseMs` left. Pure.
 */
export function leaseDue(state: Pick<FoldStateDocument, 'lease'> | null, holder: string, leaseMs: number, now: number): boolean {
  const lease = state?.lease ?? null;
  if (lease === null || lease.until.getTime() < now) return true;
  return lease.holder === holder && lease.until.getTime() - now < leaseMs / 2;
}
