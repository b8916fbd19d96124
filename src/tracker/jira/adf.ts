/**
 * Atlassian Document Format (the JSON tree Jira Cloud stores descriptions and comments in)
 * to plain text and back. Pure: no I/O. An agent reads the flattened text in its prompt, so
 * structure that carries meaning survives as light markdown (list bullets, code fences,
 * headings, quotes) and inline nodes that are not text (mentions, emoji, links, dates) become
 * what a reader would see. Unknown nodes contribute their children's text rather than
 * vanishing, so a new node type Atlassian adds never silently drops words. A plain string
 * (what Server/Data Center's v2 API holds) passes through unchanged.
 */

/** One ADF node as Jira sends it; only the members read here are typed. */
export interface AdfNode {
  type: string;
  text?: string;
  attrs?: Record<string, unknown>;
  content?: AdfNode[];
  marks?: unknown[];
  version?: number;
}

/** The document Jira stores: one paragraph per line of `text` (an empty line is an empty paragraph). */
export function textToAdf(text: string): AdfNode {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  return {
    type: 'doc',
    version: 1,
    content: lines.map((line) =>
      line === '' ? { type: 'paragraph' } : { type: 'paragraph', content: [{ type: 'text', text: line }] },
    ),
  };
}

/** Plain text of a description or comment body; null and unreadable values are "". */
export function adfToText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (!isNode(value)) return '';
  return blocks(value.type === 'doc' ? (value.content ?? []) : [value], '')
    .join('\n')
    .replace(/\n+$/, '');
}

const BLOCK_TYPES = new Set([
  'paragraph',
  'heading',
  'bulletList',
  'orderedList',
  'taskList',
  'decisionList',
  'codeBlock',
  'blockquote',
  'rule',
  'panel',
  'table',
  'expand',
  'nestedExpand',
  'mediaSingle',
  'mediaGroup',
  'blockCard',
  'embedCard',
  'layoutSection',
  'layoutColumn',
]);

/** Lines of a sequence of block nodes, each line prefixed by `indent`. */
function blocks(nodes: readonly unknown[], indent: string): string[] {
  const out: string[] = [];
  let inline: AdfNode[] = [];
  const flushInline = () => {
    if (inline.length > 0) out.push(...prefixed(inlineText(inline), indent));
    inline = [];
  };
  for (const node of nodes) {
    if (!isNode(node)) continue;
    if (!BLOCK_TYPES.has(node.type) && !node.type.endsWith('List') && node.type !== 'listItem') {
      // Stray inline content at block level (or an unknown node): read as a paragraph.
      inline.push(node);
      continue;
    }
    flushInline();
    out.push(...block(node, indent));
  }
  flushInline();
  return out;
}

function block(node: AdfNode, indent: string): string[] {
  const children = node.content ?? [];
  switch (node.type) {
    case 'paragraph':
      return prefixed(inlineText(children), indent);
    case 'heading': {
      const level = Math.min(6, Math.max(1, Number(node.attrs?.level) || 1));
      return prefixed(`${'#'.repeat(level)} ${inlineText(children)}`, indent);
    }
    case 'bulletList':
    case 'taskList':
    case 'decisionList':
      return children.flatMap((item) => listItem(item, indent, marker(node.type, item)));
    case 'orderedList': {
      const start = Number(node.attrs?.order) || 1;
      return children.flatMap((item, i) => listItem(item, indent, `${start + i}. `));
    }
    case 'codeBlock': {
      const language = typeof node.attrs?.language === 'string' ? node.attrs.language : '';
      const code = children.map((c) => (isNode(c) && typeof c.text === 'string' ? c.text : '')).join('');
      return [`${indent}\`\`\`${language}`, ...prefixed(code, indent), `${indent}\`\`\``];
    }
    case 'blockquote':
      return blocks(children, `${indent}> `);
    case 'rule':
      return [`${indent}---`];
    case 'table':
      return children.flatMap((row) =>
        isNode(row)
          ? prefixed(
              (row.content ?? [])
                .map((cell) => (isNode(cell) ? blocks(cell.content ?? [], '').join(' ') : ''))
                .join(' | '),
              indent,
            )
          : [],
      );
    case 'blockCard':
    case 'embedCard':
      return typeof node.attrs?.url === 'string' ? [`${indent}${node.attrs.url}`] : [];
    case 'mediaSingle':
    case 'mediaGroup':
      return [];
    default:
      // panel, expand, layouts and whatever comes next: their content, unadorned.
      return blocks(children, indent);
  }
}

function listItem(item: unknown, indent: string, bullet: string): string[] {
  if (!isNode(item)) return [];
  const [first = '', ...rest] = blocks(item.content ?? [], '');
  // The first line takes the bullet; later lines (and nested lists) are indented under it.
  return [`${indent}${bullet}${first}`.trimEnd(), ...rest.map((line) => `${indent}  ${line}`)];
}

function marker(listType: string, item: unknown): string {
  if (listType === 'taskList' && isNode(item)) return item.attrs?.state === 'DONE' ? '[x] ' : '[ ] ';
  return '- ';
}

/** The text of inline nodes, hard breaks as newlines. */
function inlineText(nodes: readonly unknown[]): string {
  let out = '';
  for (const node of nodes) {
    if (!isNode(node)) continue;
    const attrs = node.attrs ?? {};
    switch (node.type) {
      case 'text':
        out += node.text ?? '';
        break;
      case 'hardBreak':
        out += '\n';
        break;
      case 'mention': {
        const text = typeof attrs.text === 'string' && attrs.text !== '' ? attrs.text : `${attrs.id ?? ''}`;
        out += text.startsWith('@') ? text : `@${text}`;
        break;
      }
      case 'emoji':
        out +=
          typeof attrs.text === 'string'
            ? attrs.text
            : typeof attrs.shortName === 'string'
              ? attrs.shortName
              : '';
        break;
      case 'inlineCard':
        out += typeof attrs.url === 'string' ? attrs.url : '';
        break;
      case 'status':
        out += typeof attrs.text === 'string' ? `[${attrs.text}]` : '';
        break;
      case 'date': {
        const at = Number(attrs.timestamp);
        out += Number.isFinite(at) ? new Date(at).toISOString().slice(0, 10) : '';
        break;
      }
      default:
        out += node.content === undefined ? (node.text ?? '') : inlineText(node.content);
    }
  }
  return out;
}

function prefixed(text: string, indent: string): string[] {
  return text.split('\n').map((line) => `${indent}${line}`);
}

function isNode(value: unknown): value is AdfNode {
  return (
    typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string'
  );
}
