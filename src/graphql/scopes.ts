/**
 * The scopes GraphQL fields require through `authScopes` (Pothos scope-auth plugin),
 * their meaning for a request's {@link Access}, and the FORBIDDEN error of a refusal.
 */
import { AuthScopeFailureType, type AuthFailure } from '@pothos/plugin-scope-auth';
import { firstForbiddenMetric, forbiddenMessage, hasScope, mayTouchMetric, type Refusal } from '../auth/access.ts';
import { SCOPES, type Scope } from '../model/scopes.ts';
import { CodedError, ErrorCode } from '../errors.ts';
import type { Context } from './context.ts';

/**
 * The scopes a field can ask for in `authScopes` (all of them must hold):
 * `read`, `write`, `admin` (the token's scopes; admin includes read and write),
 * `metric: name` (the token may touch that metric), `metrics: names` (every one of them).
 */
export interface AuthScopes {
  read: boolean;
  write: boolean;
  admin: boolean;
  metric: string;
  metrics: readonly string[];
}

/** The scope initializer: what the request's token allows. */
export function authScopes(ctx: Context) {
  return {
    read: hasScope(ctx.access, 'read'),
    write: hasScope(ctx.access, 'write'),
    admin: hasScope(ctx.access, 'admin'),
    metric: (name: string) => mayTouchMetric(ctx.access, name),
    metrics: (names: readonly string[]) => firstForbiddenMetric(ctx.access, names) === undefined,
  };
}

/** The failed scope checks of a Pothos failure tree, as {@link Refusal}s. */
function refusals(failure: AuthFailure): Refusal[] {
  switch (failure.kind) {
    case AuthScopeFailureType.AllAuthScopes:
    case AuthScopeFailureType.AnyAuthScopes:
      return failure.failures.flatMap(refusals);
    case AuthScopeFailureType.AuthScope:
      if ((SCOPES as readonly string[]).includes(failure.scope)) return [{ kind: 'scope', scope: failure.scope as Scope }];
      if (failure.scope === 'metric') return [{ kind: 'metrics', metrics: [String(failure.parameter)] }];
      if (failure.scope === 'metrics') return [{ kind: 'metrics', metrics: failure.parameter as string[] }];
      return [];
    default:
      return [];
  }
}

/** The error of a refused field: FORBIDDEN, naming the missing scope or the metric out of reach. */
export function forbidden(ctx: Context, failure: AuthFailure): CodedError {
  return new CodedError(ErrorCode.FORBIDDEN, forbiddenMessage(ctx.access, refusals(failure)));
}
