/**
 * The JQL this tracker sends, built in one place. Values are always quoted string literals
 * with `\` and `"` escaped, so a state or project name can never end the literal and change
 * the query; `tracker.query_filter` is the operator's own JQL and is wrapped in parentheses
 * so an `OR` inside it cannot widen the project and state restriction around it.
 */

/** A JQL string literal. */
export function quote(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/** What decides which issues of the project are candidates. */
export interface CandidateQuery {
  project: string;
  activeStates: readonly string[];
  terminalStates: readonly string[];
  /** `me` = currentUser(); another value = an account id; null = anyone. */
  assignee: string | null;
  /** Operator JQL ANDed in; "" = none. */
  queryFilter: string;
}

/** Candidates: active states (or, without any, every non-terminal one), most urgent first, then oldest. */
export function candidatesJql(query: CandidateQuery): string {
  const parts = [`project = ${quote(query.project)}`];
  if (query.activeStates.length > 0) parts.push(`status in (${list(query.activeStates)})`);
  else if (query.terminalStates.length > 0) parts.push(`status not in (${list(query.terminalStates)})`);
  if (query.assignee !== null) {
    parts.push(
      query.assignee.toLowerCase() === 'me'
        ? 'assignee = currentUser()'
        : `assignee = ${quote(query.assignee)}`,
    );
  }
  if (query.queryFilter !== '') parts.push(`(${query.queryFilter})`);
  // Jira sorts priority by the scheme's order: DESC puts the most urgent first.
  return `${parts.join(' AND ')} ORDER BY priority DESC, created ASC`;
}

/** Issues of the project in any of `states`, oldest first. */
export function byStatesJql(project: string, states: readonly string[]): string {
  return `project = ${quote(project)} AND status in (${list(states)}) ORDER BY created ASC`;
}

/** Issues by numeric id (callers pass only digits). */
export function byIdsJql(ids: readonly string[]): string {
  return `id in (${ids.join(', ')})`;
}

/** Issues by key. */
export function byKeysJql(keys: readonly string[]): string {
  return `key in (${list(keys)})`;
}

function list(values: readonly string[]): string {
  return values.map(quote).join(', ');
}
