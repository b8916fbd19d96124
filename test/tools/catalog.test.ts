import { describe, expect, it } from 'vitest';
import { isToolName, TOOL_CATALOG, TOOL_INPUTS } from '../../src/tools/catalog.js';

describe('the tool catalog', () => {
  it('declares exactly the seven tools, sorted by name, with which ones write', () => {
    expect(TOOL_CATALOG.map((t) => [t.name, t.writes])).toEqual([
      ['ask_human', true],
      ['run_status', false],
      ['tracker_comment', true],
      ['tracker_issue', false],
      ['tracker_search', false],
      ['tracker_transition', true],
      ['workspace_history', false],
    ]);
  });

  it('gives every tool a one-paragraph description an agent can act on', () => {
    for (const tool of TOOL_CATALOG) {
      expect(tool.description.length).toBeGreaterThan(80);
      expect(tool.description).not.toMatch(/\n/);
      expect(tool.input).toBe(TOOL_INPUTS[tool.name]);
    }
  });

  it('knows its own names and nothing inherited', () => {
    expect(isToolName('tracker_issue')).toBe(true);
    expect(isToolName('constructor')).toBe(false);
    expect(isToolName('TRACKER_ISSUE')).toBe(false);
  });
});
