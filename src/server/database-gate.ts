/**
 * Operations are refused at once while the database is known to be down
 * (`observability/database-health.ts`), instead of each waiting for the driver's server
 * selection.
 */
import { Kind, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { DatabaseHealth } from '../observability/database-health.ts';
import { unavailable } from '../storage/failures.ts';
import { toGraphQLError } from './graphql-errors.ts';

/** True when every top-level field of `operation` is an introspection field (`__schema`, `__type`, `__typename`). */
function onlyIntrospection(operation: OperationDefinitionNode): boolean {
  return operation.selectionSet.selections.every((selection) => selection.kind === Kind.FIELD && selection.name.value.startsWith('__'));
}

/**
 * A yoga plugin that answers every operation with UNAVAILABLE, without running it,
 * while `health.isDown()` (introspection alone is still answered, from the schema).
 * Requests therefore fail in milliseconds instead of waiting for server selection.
 */
export function useDatabaseGate(health: Pick<DatabaseHealth, 'isDown'>): Plugin {
  return {
    onExecute: ({ args, setResultAndStopExecution }) => {
      if (!health.isDown()) return;
      const operation = (args.document as DocumentNode).definitions.find(
        (definition): definition is OperationDefinitionNode =>
          definition.kind === Kind.OPERATION_DEFINITION && (args.operationName == null || definition.name?.value === args.operationName),
      );
      if (operation && onlyIntrospection(operation)) return;
      setResultAndStopExecution({ errors: [toGraphQLError(unavailable('The request was not run'))] });
    },
  };
}
