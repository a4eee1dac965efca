/**
 * Fault points, for fault tests only (`TEST_FAULT_POINTS`, test/fault/fold-steps.test.ts):
 * named steps of the write path where the server process can be made to stop and wait,
 * so a test can SIGKILL the server, or its database, exactly there. Unset (the default),
 * nothing is armed and every {@link faultPoint} call returns `undefined` at once.
 *
 * Control, by signal: the listed points are armed one at a time, in their order. Each
 * SIGUSR2 releases the point the process holds, or, when it holds none, arms the next
 * listed point. An armed point holds the first call that reaches it: the process logs
 * `Fault point <name> reached` and that call waits (the rest of the process, requests
 * included, runs on) until the next SIGUSR2 or until the process is killed.
 */

/**
 * The fault points, in the order of the write path (docs/ingest-design.md, "Why a fold
 * is applied exactly once"):
 * - `record:after-log`: a batch's log entry is written, its answer not yet sent (and no
 *   fold has taken it);
 * - `fold:mid-parts`: half of a fold's series-day parts are written, the others and its
 *   rollup parts are not (reached by a fold of two parts or more);
 * - `fold:after-parts`: every part of a fold is written, the fold is not visible;
 * - `fold:after-flip`: the fold is visible, its log entries are not yet stamped (`fold`,
 *   `foldedAt`: readers leave them out through the fold state's `stamping`) and its
 *   rollup days not marked dirty a second time;
 * - `compact:mid-merge`: half of a compaction's merged series-day documents are
 *   written, the others and its merged rollup documents are not (reached by a
 *   compaction of two series-days or more); none is visible, and the documents they
 *   replace are neither hidden nor deleted.
 */
export const FAULT_POINTS = ['record:after-log', 'fold:mid-parts', 'fold:after-parts', 'fold:after-flip', 'compact:mid-merge'] as const;

/** One of {@link FAULT_POINTS}. */
export type FaultPoint = (typeof FAULT_POINTS)[number];

/** The points still to arm, in order; empty unless {@link setUpFaultPoints} was called. */
let pending: FaultPoint[] = [];
/** The point armed now, or null. */
let armed: FaultPoint | null = null;
/** Lets the held call go on; null while no call is held. */
let release: (() => void) | null = null;
let say: (message: string) => void = () => undefined;

/**
 * Lists the points a test will arm (see the module comment) and installs the SIGUSR2
 * handler; nothing happens when `points` is empty. Called once, at start-up, before the
 * server listens.
 * @param report where the process says what it armed, reached and released (the server's log).
 */
export function setUpFaultPoints(points: readonly FaultPoint[], report: (message: string) => void): void {
  if (points.length === 0) return;
  pending = [...points];
  say = report;
  process.on('SIGUSR2', advance);
  say(`Fault points for tests (TEST_FAULT_POINTS): ${points.join(', ')}; SIGUSR2 arms the next one or releases the one held`);
}

/** One SIGUSR2: releases the held call, or arms the next listed point. */
function advance(): void {
  if (release !== null) {
    const go = release;
    release = null;
    say(`Fault point ${armed} released`);
    armed = null;
    go();
    return;
  }
  armed = pending.shift() ?? null;
  say(armed === null ? 'No fault point left to arm' : `Fault point ${armed} armed`);
}

/** True when `point` is armed and nothing is held yet: the next {@link faultPoint} call of it will hold. */
export const faultArmed = (point: FaultPoint): boolean => armed === point && release === null;

/**
 * Marks step `point` of the write path.
 * @returns `undefined` (go on at once) unless `point` is armed and not yet reached;
 * then a promise that settles on the next SIGUSR2.
 */
export function faultPoint(point: FaultPoint): Promise<void> | undefined {
  if (!faultArmed(point)) return undefined;
  return new Promise<void>((resolve) => {
    release = resolve;
    say(`Fault point ${point} reached; holding until SIGUSR2 or killed`);
  });
}
