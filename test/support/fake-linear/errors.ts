/**
 * The error shapes Linear answers with: a message plus `extensions` whose `type` and `code`
 * say what went wrong (the official SDK reads `type`; `code` is what most clients match).
 * The fake uses exactly these, so a tracker's classification is tested against them.
 */
import { GraphQLError } from 'graphql';

/** An unknown entity, as Linear reports it (in a 200). */
export function notFound(entity: string): GraphQLError {
  return new GraphQLError(`Entity not found: ${entity}`, {
    extensions: {
      type: 'invalid input',
      code: 'INPUT_ERROR',
      userError: true,
      userPresentableMessage: `Could not find referenced ${entity}.`,
    },
  });
}

/** Input Linear refuses. */
export function inputError(message: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: {
      type: 'invalid input',
      code: 'INPUT_ERROR',
      userError: true,
      userPresentableMessage: message,
    },
  });
}

/** A missing or wrong API key. */
export function authError(message?: string): Record<string, unknown> {
  return {
    message: message ?? 'Authentication required, not authenticated',
    extensions: {
      type: 'authentication error',
      code: 'AUTHENTICATION_ERROR',
      userError: true,
      userPresentableMessage: 'You need to authenticate to access this operation.',
    },
  };
}

/** A spent rate-limit budget. */
export function rateLimitedError(message?: string): Record<string, unknown> {
  return {
    message: message ?? 'Rate limit exceeded',
    extensions: {
      type: 'ratelimited',
      code: 'RATELIMITED',
      userError: true,
      userPresentableMessage: 'Rate limit exceeded. Please try again later.',
    },
  };
}

/** A document or its variables failed validation (a 400). */
export function validationError(error: GraphQLError): GraphQLError {
  return new GraphQLError(error.message, {
    ...(error.nodes === undefined ? {} : { nodes: error.nodes }),
    extensions: { type: 'graphql error', code: 'GRAPHQL_VALIDATION_FAILED', userError: true },
  });
}

/** Linear's errors always say what kind they are; an unexpected resolver error is an internal one. */
export function withLinearExtensions(error: GraphQLError): GraphQLError {
  if (error.extensions?.code !== undefined) return error;
  return new GraphQLError(error.message, {
    ...(error.nodes === undefined ? {} : { nodes: error.nodes }),
    ...(error.path === undefined ? {} : { path: error.path }),
    extensions: { type: 'internal error', code: 'INTERNAL_ERROR', userError: false },
  });
}
