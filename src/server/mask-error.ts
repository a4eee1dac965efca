import { GraphQLError } from 'graphql';
import { maskError as yogaMaskError, type MaskError } from 'graphql-yoga';
import { isUnavailable, unavailable } from '../storage/failures.ts';

/** The error behind `error`: the one a resolver threw, when graphql-js wrapped it. */
function underlying(error: unknown): unknown {
  return error instanceof GraphQLError && error.originalError ? underlying(error.originalError) : error;
}

/**
 * Builds yoga's `maskedErrors.maskError`. A driver error meaning the database could not
 * be reached or did not confirm the operation (`isUnavailable` in `storage/failures.ts`)
 * becomes a client-facing UNAVAILABLE error at the same path, with a plain message, and
 * `onUnavailable` is told (so the health tracker can refuse the next requests at once).
 * Every other error is masked as yoga does by default: errors meant for the client
 * (GraphQL errors of our own, `CodedError`) pass, anything else becomes
 * "Unexpected error." with code INTERNAL_SERVER_ERROR. yoga logs every error it replaces.
 */
export function createMaskError(options: { onUnavailable?: (error: unknown) => void } = {}): MaskError {
  return (error, message, isDev) => {
    const cause = underlying(error);
    if (!isUnavailable(cause)) return yogaMaskError(error, message, isDev);
    options.onUnavailable?.(cause);
    const replacement = unavailable('The operation could not be completed');
    if (!(error instanceof GraphQLError)) return replacement;
    return new GraphQLError(replacement.message, {
      nodes: error.nodes,
      source: error.source,
      positions: error.positions,
      path: error.path,
      extensions: replacement.extensions,
    });
  };
}
