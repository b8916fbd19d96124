/**
 * Splits WORKFLOW.md into YAML front matter and the prompt body while remembering
 * where each part starts in the ORIGINAL file, so every later diagnostic can
 * point at the line an operator sees in their editor (BOM and CRLF included).
 */

/** Where a piece of text starts in the original file (1-based). */
export interface Origin {
  line: number;
  column: number;
}

export interface SplitWorkflow {
  /** YAML text between the delimiters; null when the file has no front matter. */
  yaml: string | null;
  /** Line of the original file on which the YAML text starts. */
  yamlOrigin: Origin;
  /** True when an opening `---` had no closing one. */
  unclosed: boolean;
  /** Prompt template, trimmed. */
  body: string;
  /** Where the trimmed body starts in the original file. */
  bodyOrigin: Origin;
}

const DELIMITER = /^---[ \t]*$/;

/** Removes a leading BOM and turns CRLF into LF; line numbers are unchanged by both. */
export function normaliseText(text: string): string {
  const noBom = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return noBom.replace(/\r\n/g, '\n');
}

/** Splits normalised text into front matter and body. Never throws. */
export function splitFrontMatter(text: string): SplitWorkflow {
  const lines = text.split('\n');
  const first = lines[0] ?? '';
  if (lines.length < 2 || !DELIMITER.test(first)) {
    return { yaml: null, yamlOrigin: { line: 1, column: 1 }, unclosed: false, ...trimBody(text, 1) };
  }
  let close = -1;
  for (let i = 1; i < lines.length; i++) {
    if (DELIMITER.test((lines[i] ?? '').trimEnd())) {
      close = i;
      break;
    }
  }
  if (close === -1) {
    return {
      yaml: lines.slice(1).join('\n'),
      yamlOrigin: { line: 2, column: 1 },
      unclosed: true,
      body: '',
      bodyOrigin: { line: lines.length, column: 1 },
    };
  }
  const bodyText = lines.slice(close + 1).join('\n');
  return {
    yaml: lines.slice(1, close).join('\n'),
    yamlOrigin: { line: 2, column: 1 },
    unclosed: false,
    ...trimBody(bodyText, close + 2),
  };
}

function trimBody(text: string, startLine: number): { body: string; bodyOrigin: Origin } {
  const leading = text.length - text.trimStart().length;
  const skipped = text.slice(0, leading);
  const newlines = skipped.split('\n').length - 1;
  const lastBreak = skipped.lastIndexOf('\n');
  const column = leading - (lastBreak + 1) + 1;
  return { body: text.trim(), bodyOrigin: { line: startLine + newlines, column } };
}
