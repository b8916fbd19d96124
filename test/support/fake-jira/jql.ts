/**
 * The JQL subset the fake Jira understands: clauses on project, status, id, key, assignee,
 * labels, priority, issuetype and summary with `=`, `!=`, `~`, `in`, `not in`, `is [not]
 * EMPTY`, joined by AND/OR/NOT with parentheses, quoted strings with backslash escapes, the
 * `currentUser()` function, and `ORDER BY` on priority, created, updated, key and id. Anything
 * else is refused the way Jira refuses it: a 400 whose `errorMessages` say why. Values are
 * checked as Jira checks them (an unknown status, project or key is an error, not an empty
 * result), so a tracker that sends a state the site does not have fails here as it would there.
 */

/** What a clause can read of an issue; the server supplies it. */
export interface JqlSubject {
  id: string;
  key: string;
  project: string;
  status: string;
  assignee: string | null;
  labels: string[];
  /** The priority's name and id, or null. */
  priority: { id: string; name: string } | null;
  /** Position of the priority in the scheme (0 = most urgent), or null. */
  prioritySequence: number | null;
  issuetype: string;
  summary: string;
  created: number;
  updated: number;
}

/** What the query's values are checked against. */
export interface JqlWorld {
  projects: readonly string[];
  statuses: readonly string[];
  ids: ReadonlySet<string>;
  keys: ReadonlySet<string>;
  currentUser: string;
}

/** A parse or validation failure: the messages a 400 carries. */
export class JqlError extends Error {
  constructor(readonly messages: string[]) {
    super(messages.join('; '));
  }
}

type Value = { kind: 'string'; text: string } | { kind: 'function'; name: string } | { kind: 'empty' };
type Node =
  | { type: 'and'; left: Node; right: Node }
  | { type: 'or'; left: Node; right: Node }
  | { type: 'not'; inner: Node }
  | { type: 'clause'; field: string; op: string; values: Value[] };
interface Sort {
  field: string;
  desc: boolean;
}

/** A parsed query: a predicate and a comparator. */
export interface CompiledJql {
  matches(subject: JqlSubject): boolean;
  compare(a: JqlSubject, b: JqlSubject): number;
}

const FIELDS = new Set([
  'project',
  'status',
  'id',
  'key',
  'issuekey',
  'assignee',
  'labels',
  'priority',
  'issuetype',
  'type',
  'summary',
]);
const SORTABLE = new Set(['priority', 'created', 'updated', 'key', 'id']);

/** Parses and validates `jql`; throws JqlError like Jira's 400. */
export function compileJql(jql: string, world: JqlWorld): CompiledJql {
  const tokens = tokenize(jql);
  let at = 0;
  const peek = () => tokens[at];
  const word = (t: Token | undefined, w: string) => t?.kind === 'word' && t.text.toLowerCase() === w;
  const fail = (message: string): never => {
    throw new JqlError([`Error in the JQL Query: ${message}`]);
  };
  const expect = (text: string) => {
    const t = tokens[at];
    if (t === undefined || t.text.toLowerCase() !== text)
      fail(`Expecting '${text}' but got '${t?.text ?? 'the end'}'.`);
    at++;
  };

  const value = (): Value => {
    const t = tokens[at];
    if (t === undefined) return fail('Expecting a value but reached the end of the query.');
    at++;
    if (t.kind === 'string') return { kind: 'string', text: t.text };
    if (t.kind !== 'word') return fail(`Expecting a value but got '${t.text}'.`);
    if (t.text.toLowerCase() === 'empty' || t.text.toLowerCase() === 'null') return { kind: 'empty' };
    if (tokens[at]?.text === '(') {
      at++;
      expect(')');
      if (t.text.toLowerCase() !== 'currentuser') fail(`Unable to find JQL function '${t.text}()'.`);
      return { kind: 'function', name: 'currentuser' };
    }
    return { kind: 'string', text: t.text };
  };

  const clause = (): Node => {
    const f = tokens[at];
    if (f === undefined || (f.kind !== 'word' && f.kind !== 'string'))
      return fail(`Expecting a field name but got '${f?.text ?? 'the end'}'.`);
    at++;
    const field = f.text.toLowerCase();
    if (!FIELDS.has(field))
      throw new JqlError([`Field '${f.text}' does not exist or you do not have permission to view it.`]);
    const t = tokens[at];
    let op: string;
    if (t?.kind === 'op') {
      op = t.text;
      at++;
    } else if (word(t, 'in')) {
      op = 'in';
      at++;
    } else if (word(t, 'not') && word(tokens[at + 1], 'in')) {
      op = 'not in';
      at += 2;
    } else if (word(t, 'is')) {
      at++;
      if (word(tokens[at], 'not')) {
        at++;
        op = 'is not';
      } else op = 'is';
    } else return fail(`Expecting operator but got '${t?.text ?? 'the end'}'.`);
    let values: Value[];
    if (op === 'in' || op === 'not in') {
      expect('(');
      values = [value()];
      while (tokens[at]?.text === ',') {
        at++;
        values.push(value());
      }
      expect(')');
    } else values = [value()];
    return {
      type: 'clause',
      field: field === 'issuekey' ? 'key' : field === 'type' ? 'issuetype' : field,
      op,
      values,
    };
  };

  const primary = (): Node => {
    if (tokens[at]?.text === '(') {
      at++;
      const inner = or();
      expect(')');
      return inner;
    }
    if (word(peek(), 'not')) {
      at++;
      return { type: 'not', inner: primary() };
    }
    return clause();
  };
  const and = (): Node => {
    let left = primary();
    while (word(peek(), 'and')) {
      at++;
      left = { type: 'and', left, right: primary() };
    }
    return left;
  };
  const or = (): Node => {
    let left = and();
    while (word(peek(), 'or')) {
      at++;
      left = { type: 'or', left, right: and() };
    }
    return left;
  };

  let where: Node | null = null;
  if (at < tokens.length && !word(peek(), 'order')) where = or();
  const sorts: Sort[] = [];
  if (word(peek(), 'order')) {
    at++;
    if (!word(peek(), 'by')) fail("Expecting 'by' after 'order'.");
    at++;
    do {
      if (sorts.length > 0) at++;
      const f = tokens[at];
      if (f?.kind !== 'word') fail('Expecting a field to order by.');
      at++;
      const field = (f as Token).text.toLowerCase();
      if (!SORTABLE.has(field)) throw new JqlError([`Not able to sort using field '${(f as Token).text}'.`]);
      let desc = false;
      if (word(peek(), 'asc')) at++;
      else if (word(peek(), 'desc')) {
        desc = true;
        at++;
      }
      sorts.push({ field, desc });
    } while (tokens[at]?.text === ',');
  }
  if (at < tokens.length) fail(`Unexpected '${tokens[at]?.text}'.`);
  if (where === null)
    throw new JqlError([
      'Unbounded JQL queries are not allowed here. Please add a search restriction to your query.',
    ]);
  validate(where, world);
  const root = where;
  return {
    matches: (subject) => evaluate(root, subject, world),
    compare: (a, b) => {
      for (const sort of sorts) {
        const order = compareBy(sort.field, a, b);
        if (order !== 0) return sort.desc ? -order : order;
      }
      return a.created - b.created || Number(a.id) - Number(b.id);
    },
  };
}

function validate(node: Node, world: JqlWorld): void {
  if (node.type === 'and' || node.type === 'or') {
    validate(node.left, world);
    validate(node.right, world);
    return;
  }
  if (node.type === 'not') {
    validate(node.inner, world);
    return;
  }
  const errors: string[] = [];
  for (const v of node.values) {
    if (v.kind !== 'string') continue;
    const text = v.text;
    const has = (list: Iterable<string>) => [...list].some((x) => x.toLowerCase() === text.toLowerCase());
    if (node.field === 'project' && !has(world.projects))
      errors.push(`The value '${text}' does not exist for the field 'project'.`);
    if (node.field === 'status' && !has(world.statuses))
      errors.push(`The value '${text}' does not exist for the field 'status'.`);
    if (node.field === 'id' && !/^\d+$/.test(text))
      errors.push(`The issue id '${text}' for field 'id' is invalid.`);
    else if (node.field === 'id' && !world.ids.has(text))
      errors.push(`An issue with id '${text}' does not exist for field 'id'.`);
    if (node.field === 'key' && !has(world.keys))
      errors.push(`An issue with key '${text}' does not exist for field 'key'.`);
  }
  if (errors.length > 0) throw new JqlError(errors);
}

function evaluate(node: Node, s: JqlSubject, world: JqlWorld): boolean {
  switch (node.type) {
    case 'and':
      return evaluate(node.left, s, world) && evaluate(node.right, s, world);
    case 'or':
      return evaluate(node.left, s, world) || evaluate(node.right, s, world);
    case 'not':
      return !evaluate(node.inner, s, world);
    case 'clause': {
      const have = fieldValues(node.field, s);
      const wanted = node.values.map((v) =>
        v.kind === 'function'
          ? world.currentUser.toLowerCase()
          : v.kind === 'empty'
            ? null
            : v.text.toLowerCase(),
      );
      const any = wanted.some((w) => (w === null ? have.length === 0 : have.includes(w)));
      switch (node.op) {
        case '=':
        case 'in':
        case 'is':
          return any;
        case '!=':
        case 'not in':
        case 'is not':
          return !any;
        case '~':
          return wanted.some((w) => w !== null && have.some((h) => h.includes(w)));
        default:
          return false;
      }
    }
  }
}

function fieldValues(field: string, s: JqlSubject): string[] {
  switch (field) {
    case 'project':
      return [s.project.toLowerCase()];
    case 'status':
      return [s.status.toLowerCase()];
    case 'id':
      return [s.id];
    case 'key':
      return [s.key.toLowerCase()];
    case 'assignee':
      return s.assignee === null ? [] : [s.assignee.toLowerCase()];
    case 'labels':
      return s.labels.map((l) => l.toLowerCase());
    case 'priority':
      return s.priority === null ? [] : [s.priority.id, s.priority.name.toLowerCase()];
    case 'issuetype':
      return [s.issuetype.toLowerCase()];
    case 'summary':
      return [s.summary.toLowerCase()];
    default:
      return [];
  }
}

function compareBy(field: string, a: JqlSubject, b: JqlSubject): number {
  switch (field) {
    case 'priority': {
      // Jira orders priorities by the scheme: ascending = least urgent first, no priority least of all.
      const rank = (s: JqlSubject) => (s.prioritySequence === null ? -1 : 1000 - s.prioritySequence);
      return rank(a) - rank(b);
    }
    case 'created':
      return a.created - b.created;
    case 'updated':
      return a.updated - b.updated;
    case 'key':
    case 'id':
      return Number(a.id) - Number(b.id);
    default:
      return 0;
  }
}

interface Token {
  kind: 'word' | 'string' | 'op' | 'punct';
  text: string;
}

function tokenize(jql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < jql.length) {
    const ch = jql[i] as string;
    if (/\s/.test(ch)) {
      i++;
    } else if (ch === '"' || ch === "'") {
      let text = '';
      i++;
      while (i < jql.length && jql[i] !== ch) {
        if (jql[i] === '\\' && i + 1 < jql.length) i++;
        text += jql[i];
        i++;
      }
      if (i >= jql.length)
        throw new JqlError([`Error in the JQL Query: The quoted string '${text}' has not been completed.`]);
      i++;
      tokens.push({ kind: 'string', text });
    } else if (ch === '(' || ch === ')' || ch === ',') {
      tokens.push({ kind: 'punct', text: ch });
      i++;
    } else if (ch === '!' && jql[i + 1] === '=') {
      tokens.push({ kind: 'op', text: '!=' });
      i += 2;
    } else if (ch === '=' || ch === '~') {
      tokens.push({ kind: 'op', text: ch });
      i++;
    } else {
      const match = /^[A-Za-z0-9_.\-@]+/.exec(jql.slice(i));
      if (match === null)
        throw new JqlError([`Error in the JQL Query: The character '${ch}' is a reserved JQL character.`]);
      tokens.push({ kind: 'word', text: match[0] });
      i += match[0].length;
    }
  }
  return tokens;
}
