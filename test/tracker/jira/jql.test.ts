import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { byIdsJql, byKeysJql, byStatesJql, candidatesJql, quote } from '../../../src/tracker/jira/jql.js';
import { compileJql, JqlError, type JqlSubject, type JqlWorld } from '../../support/fake-jira/jql.js';

const world: JqlWorld = {
  projects: ['PROJ'],
  statuses: ['Todo', 'In Progress', 'Done', 'Say "hi" \\ there'],
  ids: new Set(['10001']),
  keys: new Set(['PROJ-1']),
  currentUser: 'acc-me',
};
const subject = (over: Partial<JqlSubject> = {}): JqlSubject => ({
  id: '10001',
  key: 'PROJ-1',
  project: 'PROJ',
  status: 'Todo',
  assignee: null,
  labels: [],
  priority: null,
  prioritySequence: null,
  issuetype: 'Task',
  summary: 'x',
  created: 0,
  updated: 0,
  ...over,
});
const messages = (jql: string) => {
  try {
    compileJql(jql, world);
    return [];
  } catch (error) {
    if (error instanceof JqlError) return error.messages;
    throw error;
  }
};

describe('the JQL the tracker sends', () => {
  it('a quoted value reads back as itself, whatever quotes and backslashes it holds', () => {
    fc.assert(
      fc.property(fc.string(), (value) => {
        const jql = `summary ~ ${quote(value)}`;
        const matched = compileJql(jql, world).matches(subject({ summary: value }));
        expect(matched || value === '').toBe(true);
      }),
    );
  });

  it('a status holding quotes cannot end its literal and change the query', () => {
    const jql = byStatesJql('PROJ', ['Say "hi" \\ there']);
    expect(jql).toBe('project = "PROJ" AND status in ("Say \\"hi\\" \\\\ there") ORDER BY created ASC');
    expect(compileJql(jql, world).matches(subject({ status: 'Say "hi" \\ there' }))).toBe(true);
  });

  it('every query the tracker builds is accepted by the fake', () => {
    const queries = [
      candidatesJql({
        project: 'PROJ',
        activeStates: ['Todo'],
        terminalStates: ['Done'],
        assignee: 'me',
        queryFilter: 'labels = x',
      }),
      candidatesJql({
        project: 'PROJ',
        activeStates: [],
        terminalStates: ['Done'],
        assignee: 'acc-1',
        queryFilter: '',
      }),
      byStatesJql('PROJ', ['Todo', 'Done']),
      byIdsJql(['10001']),
      byKeysJql(['PROJ-1']),
    ];
    for (const jql of queries) expect(messages(jql), jql).toEqual([]);
  });

  it('without active states, candidates are the non-terminal ones', () => {
    expect(
      candidatesJql({
        project: 'P',
        activeStates: [],
        terminalStates: ['Done'],
        assignee: null,
        queryFilter: '',
      }),
    ).toBe('project = "P" AND status not in ("Done") ORDER BY priority DESC, created ASC');
  });
});

describe('the fake refuses JQL as Jira does', () => {
  it.each([
    ['', 'Unbounded JQL queries are not allowed here'],
    ['ORDER BY created', 'Unbounded JQL queries are not allowed here'],
    ['sprint = 1', "Field 'sprint' does not exist"],
    ['status = "Nope"', "The value 'Nope' does not exist for the field 'status'."],
    ['project = "ELSE"', "The value 'ELSE' does not exist for the field 'project'."],
    ['key in ("PROJ-9")', "An issue with key 'PROJ-9' does not exist for field 'key'."],
    ['id in (99)', "An issue with id '99' does not exist for field 'id'."],
    ['status = "Todo', 'has not been completed'],
    ['status = Todo ORDER BY rank', "Not able to sort using field 'rank'."],
    ['assignee = whoAmI()', "Unable to find JQL function 'whoAmI()'."],
    ['status in ("Todo"', "Expecting ')'"],
  ])('%s', (jql, message) => {
    expect(messages(jql).join(' ')).toContain(message);
  });

  it('AND binds tighter than OR, NOT and parentheses work, EMPTY matches an unset field', () => {
    const run = (jql: string, over: Partial<JqlSubject>) => compileJql(jql, world).matches(subject(over));
    expect(run('status = Done OR status = Todo AND labels = x', { status: 'Todo', labels: [] })).toBe(false);
    expect(run('(status = Done OR status = Todo) AND NOT labels = x', { status: 'Todo' })).toBe(true);
    expect(run('project = PROJ AND assignee is EMPTY', {})).toBe(true);
    expect(run('project = PROJ AND assignee = currentUser()', { assignee: 'acc-me' })).toBe(true);
  });
});
