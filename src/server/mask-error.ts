import { GraphQLError } from 'graphql';
import { maskError as yogaMaskError, type MaskError } from 'graphql-yoga';
import { CodedError } from '../errors.ts';
import { isUnavailable, unavailable } from '../storage/failures.ts';
import { isClientAbort } from '../storage/query-options.ts';
import { toGraphQLError } from './graphql-errors.ts';

/** The error behind `error`: the one a resolver threw, when graphql-js wrapped it. */
function underlying(error: unknown): unknown {
  return error instanceof GraphQLError && error.originalError ? underlying(error.originalError) : error;
}

/**
 * Builds yoga's `maskedErrors.maskError`. A driver error meaning the database could not
 * be reached or did not confirm the operation (`isUnavailable` in `storage/failures.ts`)
 * becomes a client-facing UNAVAILABLE error at the same path, with a plain message, and
 * `onUnavailable` is told (so the health tracker can refuse the next requests at once).
 * A `CodedError` (meant for the client) becomes its GraphQL error (`graphql-errors.ts`).
 * The abort of a request whose client went away passes unchanged (yoga then does not
 * log it; nobody reads the answer). Every other error is masked as yoga does by default:
 * GraphQL errors of our own pass, anything else becomes "Unexpected error." with code
 * INTERNAL_SERVER_ERROR. yoga logs every error it replaces.
 */
export function createMaskError(options: { onUnavailable?: (error: unknown) => void } = {}): MaskError {
  return (error, message, isDev) => {
    const cause = underlying(error);
    const at = error instanceof GraphQLError ? error : undefined;
    if (cause instanceof CodedError) return toGraphQLError(cause, at);
    // The client went away: nobody reads this answer, and yoga logs every error the mask
    // replaces, so it passes as it is, unlogged.
    if (isClientAbort(cause)) return error as Error;
    if (!isUnavailable(cause)) return yogaMaskError(error, message, isDev);
    options.onUnavailable?.(cause);
    return toGraphQLError(unavailable('The operation could not be completed'), at);
  };
}
