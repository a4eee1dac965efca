import { GraphQLError } from 'graphql';
import type { CodedError } from '../errors.ts';

/**
 * The GraphQL error a client sees for `error`: its message and its extensions (`code`,
 * `inputPath`, `http`), at the place of `at` (the error graphql-js raised for it, with
 * the field path and the document position) when there is one. It carries no original
 * error, so graphql-yoga sends it as is rather than masking it.
 */
export function toGraphQLError(error: CodedError, at?: GraphQLError): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: at?.nodes,
    source: at?.source,
    positions: at?.positions,
    path: at?.path,
    extensions: { ...error.extensions },
  });
}
