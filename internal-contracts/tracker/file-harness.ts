/**
 * Conformance harness for the file tracker: seeds an issues file in a temp
 * directory and builds the tracker through the registry, exactly as the
 * orchestrator would from a workflow config.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseDocument, stringify } from 'yaml';
import type { TrackerSettings } from '../../src/domain/tracker.js';
import { trackerKind } from '../../src/tracker/registry.js';
import '../../src/tracker/kinds.js';
import type { ConformanceSeed, SeedIssue, SeedSnapshot, TrackerHarness } from './conformance.js';

/** How the seeded file is written: JSON as a bare list, or YAML wrapped in `issues:`. */
export type FileHarnessFormat = 'json' | 'yaml';

function toRaw(issue: SeedIssue): Record<string, unknown> {
  return {
    id: issue.id,
    identifier: issue.identifier,
    title: issue.title,
    state: issue.state,
    priority: issue.priority,
    labels: issue.labels,
    blocked_by: issue.blockedBy,
    ...(issue.comments.length > 0
      ? {
          comments: issue.comments.map((c) => ({
            id: c.id,
            author: c.author,
            body: c.body,
            created_at: c.createdAt,
          })),
        }
      : {}),
  };
}

function asList(value: unknown): Record<string, unknown>[] {
  const list = Array.isArray(value) ? value : (value as { issues?: unknown }).issues;
  if (!Array.isArray(list)) throw new Error('issues file holds no list');
  return list as Record<string, unknown>[];
}

/** A harness over a file tracker whose file is written in `format`. */
export function fileTrackerHarness(format: FileHarnessFormat): TrackerHarness {
  return {
    async setup(seed: ConformanceSeed) {
      const dir = await mkdtemp(join(tmpdir(), 'file-tracker-conformance-'));
      const name = format === 'json' ? 'issues.json' : 'issues.yaml';
      const path = join(dir, name);
      const raw = seed.issues.map(toRaw);
      await writeFile(
        path,
        format === 'json' ? `${JSON.stringify(raw, null, 2)}\n` : stringify({ issues: raw }),
      );
      const settings: TrackerSettings = {
        kind: 'file',
        endpoint: '',
        apiKey: '',
        project: '',
        queryFilter: '',
        assignee: null,
        requiredLabels: [],
        activeStates: seed.activeStates,
        terminalStates: seed.terminalStates,
        handoffState: seed.handoffState,
        inProgressState: seed.inProgressState,
        blockedState: seed.blockedState,
        options: { path: name },
        baseDir: dir,
      };
      const kind = trackerKind('file');
      if (kind?.create === undefined) throw new Error('file tracker kind is not registered with create');
      const tracker = await kind.create(settings);
      return {
        tracker,
        async readBack(): Promise<SeedSnapshot> {
          const issues = asList(parse(await readFile(path, 'utf8')));
          return {
            issues: issues.map((issue) => ({
              id: String(issue.id),
              state: String(issue.state),
              labels: ((issue.labels as unknown[] | undefined) ?? []).map(String),
              comments: ((issue.comments as Record<string, unknown>[] | null | undefined) ?? []).map((c) => ({
                author: String(c.author),
                body: String(c.body),
              })),
            })),
          };
        },
        async setStateDirectly(id: string, state: string) {
          // In place (same inode), as an editor saving over the file would, with no pause before it.
          const text = await readFile(path, 'utf8');
          const doc = parseDocument(text);
          const list = asList(doc.toJS());
          const index = list.findIndex((issue) => issue.id === id);
          if (index === -1) throw new Error(`issue ${id} is not in the file`);
          doc.setIn(format === 'json' ? [index, 'state'] : ['issues', index, 'state'], state);
          await writeFile(
            path,
            format === 'json' ? `${JSON.stringify(doc.toJS(), null, 2)}\n` : doc.toString(),
          );
        },
        async corrupt() {
          await writeFile(path, format === 'json' ? '[{"id": "id-1",\n' : 'issues:\n  - id: [unclosed\n');
        },
        async cleanup() {
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  };
}
