import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { CodedError, ErrorCode } from '../errors.ts';

const codeOf = (error: unknown): unknown =>
  error instanceof GraphQLError
    ? (error.extensions?.code ?? codeOf(error.originalError))
    : error instanceof CodedError
      ? error.code
      : undefined;

function withCode(error: GraphQLError, fallback: ErrorCode): GraphQLError {
  if (error.extensions?.code !== undefined) return error;
  const code = codeOf(error.originalError) ?? fallback;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions: { ...error.extensions, code },
  });
}

/**
 * Gives back its own code to the error a subscription's variable coercion wrapped:
 * graphql-js shares the original error's `extensions` object with the GraphQL error
 * wrapping it, and the executor's `subscribe` writes BAD_USER_INPUT into it, so the
 * {@link CodedError} (a `Time` that does not parse: INVALID_TIME) would lose its code.
 */
function restoreOwnCode(error: GraphQLError): GraphQLError {
  let cause: unknown = error.originalError;
  while (cause instanceof GraphQLError) cause = cause.originalError;
  if (cause instanceof CodedError && cause.extensions.code !== cause.code) cause.extensions.code = cause.code;
  return error;
}

/**
 * Gives every error a client can cause a stable `extensions.code`: a document that does
 * not parse gets GRAPHQL_PARSE_FAILED, one that does not validate
 * GRAPHQL_VALIDATION_FAILED, and a variable of the wrong type BAD_USER_INPUT, unless the
 * error already carries a code (a `DateTime` that does not parse carries INVALID_TIME,
 * also inside a variable). Errors from resolvers are left alone: they carry their own
 * code or are masked by graphql-yoga.
 */
export function useErrorCodes(): Plugin {
  return {
    onParse:
      () =>
      ({ result, replaceParseResult }) => {
        if (result instanceof GraphQLError) replaceParseResult(withCode(result, ErrorCode.GRAPHQL_PARSE_FAILED));
      },
    onValidate:
      () =>
      ({ result, setResult }) => {
        if (result.length > 0) setResult(result.map((error) => withCode(error, ErrorCode.GRAPHQL_VALIDATION_FAILED)));
      },
    onExecute: () => ({
      onExecuteDone: ({ result, setResult }) => {
        if (!('errors' in result) || !result.errors?.length || 'data' in result) return;
        // No data at all: the request failed before any resolver ran (variable coercion).
        setResult({ ...result, errors: result.errors.map((error) => withCode(error, ErrorCode.BAD_USER_INPUT)) });
      },
    }),
    // A subscription's variables are coerced before its source stream starts: the same
    // codes as a query's (see restoreOwnCode).
    onSubscribe: () => ({
      onSubscribeResult: ({ result, setResult }) => {
        if (!('errors' in result) || !result.errors?.length || 'data' in result) return;
        setResult({ ...result, errors: result.errors.map(restoreOwnCode) });
      },
    }),
  };
}
