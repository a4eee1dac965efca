/**
 * A log entry's columns (src/record/log-entry.ts): the readings of a batch come back
 * from its packed columns exactly as validated, in the order sent, whatever they hold:
 * several metrics and series, readings lacking some fields, times the server set, tag
 * values with escaped characters, the first millisecond of 1970 and the last day of 9998, and values
 * at the limits of what validation accepts.
 */
import { describe, expect, it } from 'vitest';
import { Limits } from '../../src/model/limits.ts';
import { fromColumns, packColumns, toColumns, unpackColumns } from '../../src/record/log-entry.ts';
import { validateReadings, type ReadingInput } from '../../src/record/validate.ts';

const RECEIVED_AT = Date.UTC(2024, 4, 1, 12);

/** Validates `inputs` as a batch received at {@link RECEIVED_AT}. */
const validated = (inputs: ReadingInput[]) => validateReadings(inputs, { maxBatchSize: 10_000, receivedAt: RECEIVED_AT });

describe('packed log columns', () => {
  it('give back every reading of a mixed batch exactly, in the order sent', () => {
    const inputs: ReadingInput[] = [
      {
        metric: 'cpu',
        tags: [{ key: 'host', value: 'a,b=c d\\e' }],
        time: new Date(Date.UTC(2024, 0, 1)),
        fields: [{ name: 'user', value: 0.1 + 0.2 }],
      },
      { metric: 'cpu', tags: [{ key: 'host', value: 'a,b=c d\\e' }], fields: [{ name: 'system', value: -3 }] },
      {
        metric: 'flights',
        tags: [
          { key: 'origin', value: 'LAS' },
          { key: 'destination', value: 'PHL' },
        ],
        time: new Date(0),
        fields: [
          { name: 'delay', value: Limits.maxAbsValue },
          { name: 'distance', value: -Limits.maxAbsValue },
        ],
      },
      { metric: 'flights', time: new Date(Date.UTC(9998, 11, 31, 23, 59, 59, 999)), fields: [{ name: 'delay', value: 5e-324 }] },
      {
        metric: 'cpu',
        tags: [{ key: 'host', value: 'z' }],
        time: new Date(1),
        fields: [
          { name: 'user', value: 2 ** 53 },
          { name: 'system', value: 7 },
        ],
      },
    ];
    const readings = validated(inputs);
    expect(readings).toHaveLength(inputs.length);
    expect(readings[1]!.timeFromServer).toBe(true);
    const back = fromColumns(unpackColumns(packColumns(toColumns(readings))));
    // Field order within a reading may follow the batch's first appearance of each name.
    const sortedFields = (list: typeof readings) =>
      list.map((r) => ({ ...r, fields: [...r.fields].sort((x, y) => x.name.localeCompare(y.name)) }));
    expect(sortedFields(back)).toEqual(sortedFields(readings));
    expect(back.map((r) => r.time)).toEqual([Date.UTC(2024, 0, 1), RECEIVED_AT, 0, Date.UTC(9998, 11, 31, 23, 59, 59, 999), 1]);
  });

  it('give back a batch of 1,000 readings of 340 series, and take less room than the columns', () => {
    const inputs: ReadingInput[] = Array.from({ length: 1000 }, (_, i) => ({
      metric: 'flights',
      tags: [
        { key: 'origin', value: `O${i % 20}` },
        { key: 'destination', value: `D${i % 17}` },
      ],
      time: new Date(Date.UTC(2001, 0, 1) + i * 61_000),
      fields:
        i % 7 === 0
          ? [{ name: 'delay', value: i - 500 }]
          : [
              { name: 'delay', value: (i * 13) % 97 },
              { name: 'distance', value: 100 + i / 8 },
            ],
    }));
    const readings = validated(inputs);
    const columns = toColumns(readings);
    expect(columns.series).toHaveLength(340);
    const block = packColumns(columns);
    expect(fromColumns(unpackColumns(block))).toEqual(fromColumns(columns));
    expect(fromColumns(unpackColumns(block)).map((r) => [r.seriesKey, r.time, r.fields])).toEqual(
      inputs.map((input) => [
        `flights,destination=${input.tags![1]!.value},origin=${input.tags![0]!.value}`,
        input.time!.getTime(),
        input.fields,
      ]),
    );
    expect(block.byteLength).toBeLessThan(JSON.stringify(columns).length / 2);
  });

  it('refuse a block that is not packed columns', () => {
    expect(() => unpackColumns(new Uint8Array([1, 2, 3, 4]))).toThrow();
  });
});
