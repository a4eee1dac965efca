import type { Tag } from '../model/series.ts';
import { builder } from './builder.ts';

/** `Tag` output type: one key/value pair of a series' tag set. */
export const TagRef = builder.objectRef<Tag>('Tag').implement({
  description: 'A tag of a series: a key and its string value, e.g. `{key: "origin", value: "LAS"}`.',
  fields: (t) => ({
    key: t.exposeString('key', { description: 'Tag key, e.g. `origin`.' }),
    value: t.exposeString('value', { description: 'Tag value, e.g. `LAS`.' }),
  }),
});

/** `TagInput`: a tag sent with a reading. */
export const TagInputRef = builder.inputType('TagInput', {
  description:
    'A tag of a reading. Keys follow the naming rule (a letter or `_`, then letters, digits, `_` or `-`; at most 64 characters; no `$` or `.`); values are non-empty strings of at most 256 characters.',
  fields: (t) => ({
    key: t.string({ required: true, description: 'Tag key, e.g. `origin`.' }),
    value: t.string({ required: true, description: 'Tag value, e.g. `LAS`.' }),
  }),
});

/** `TagFilter`: restricts a query to series whose tag equals one of some values. */
export const TagFilterRef = builder.inputType('TagFilter', {
  description:
    'Keeps the series whose tag `key` equals one of the values in `in`. Several filters must all hold. A single value may be written without brackets: `{key: "origin", in: "LAS"}`. Unknown keys or values match nothing (an empty result, not an error).',
  fields: (t) => ({
    key: t.string({ required: true, description: 'Tag key, e.g. `origin`.' }),
    in: t.stringList({ required: true, description: 'Accepted values, e.g. `["LAS", "PHX"]`.' }),
  }),
});
