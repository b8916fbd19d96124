/**
 * Source rules for agent adapters: an adapter reports evidence and raw readings,
 * and the shared core decides outcomes, builds errors, does token arithmetic and
 * sets spend flags. Each rule below is a way an adapter could quietly take one of
 * those decisions back; the check reads every file of every kind folder under
 * `src/agent/` (all but `core/` and `usage/`; the registry files sit outside any
 * kind folder) with the TypeScript compiler, so comments, strings and type
 * declarations never count, only code.
 */
import ts from 'typescript';
import type { SourceFile } from '../layering/check.js';
import { readSourceTree } from '../layering/read-tree.js';

export type SourceRule = 'outcome-event' | 'agent-error' | 'token-arithmetic' | 'spend-flag';

export interface SourceViolation {
  rule: SourceRule;
  /** Repository-relative path. */
  file: string;
  /** 1-based line. */
  line: number;
  message: string;
}

/** Folders under `src/agent/` that are shared code, not a kind. */
export const SHARED_AGENT_FOLDERS: readonly string[] = ['core', 'usage'];

/** The outcome events only the shared disposition rule emits. */
export const OUTCOME_EVENT_TYPES: readonly string[] = [
  'turn_completed',
  'turn_failed',
  'turn_cancelled',
  'turn_input_required',
];

/** Kinds an adapter may construct an AgentError with: start-up configuration failures. */
export const ADAPTER_ERROR_KINDS: readonly string[] = ['agent_not_found', 'invalid_workspace_cwd'];

/** Token fields, in the domain's and in runtimes' spelling; the usage ledger does all arithmetic on them. */
export const TOKEN_FIELDS: readonly string[] = [
  'inputTokens',
  'outputTokens',
  'cacheReadTokens',
  'cacheWriteTokens',
  'totalTokens',
  'input_tokens',
  'output_tokens',
];

/** Spend flags the core derives from the turn's evidence (`deriveSpendFlags`). */
export const SPEND_FLAGS: readonly string[] = [
  'spendUnaccounted',
  'spendCoverable',
  'coversSession',
  'usageProvenance',
];

/** True for a file inside a kind folder: `src/agent/<kind>/…`, kind not a shared folder. */
export function isAdapterSource(filePath: string): boolean {
  const parts = filePath.split('/');
  return (
    parts.length >= 4 &&
    parts[0] === 'src' &&
    parts[1] === 'agent' &&
    !SHARED_AGENT_FOLDERS.includes(parts[2] as string)
  );
}

/** Every TypeScript file of every kind folder under `root/src/agent`. */
export function readAdapterSources(root: string): SourceFile[] {
  return readSourceTree(root, 'src/agent').filter((f) => isAdapterSource(f.path));
}

/** Strips what does not change a value: parentheses, `!`, `as`, `satisfies`, `<T>x`. */
function unwrap(node: ts.Expression): ts.Expression {
  let e = node;
  for (;;) {
    if (
      ts.isParenthesizedExpression(e) ||
      ts.isNonNullExpression(e) ||
      ts.isAsExpression(e) ||
      ts.isSatisfiesExpression(e) ||
      ts.isTypeAssertionExpression(e)
    ) {
      e = e.expression;
    } else {
      return e;
    }
  }
}

function nameText(name: ts.PropertyName | ts.MemberName): string | null {
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteralLike(name)) return name.text;
  if (ts.isComputedPropertyName(name) && ts.isStringLiteralLike(name.expression)) return name.expression.text;
  return null;
}

/** The member name of `x.name` or `x['name']`, else null. */
function memberName(node: ts.Expression): string | null {
  const e = unwrap(node);
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  if (ts.isElementAccessExpression(e) && ts.isStringLiteralLike(e.argumentExpression)) {
    return e.argumentExpression.text;
  }
  return null;
}

/** The token field an arithmetic operand reads, looking through `?? 0`, `|| 0`, `cond ? a : b` and `Number(…)`. */
function tokenFieldOf(node: ts.Expression): string | null {
  const e = unwrap(node);
  const member = memberName(e);
  if (member !== null) return TOKEN_FIELDS.includes(member) ? member : null;
  if (
    ts.isBinaryExpression(e) &&
    (e.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken ||
      e.operatorToken.kind === ts.SyntaxKind.BarBarToken)
  ) {
    return tokenFieldOf(e.left) ?? tokenFieldOf(e.right);
  }
  if (ts.isConditionalExpression(e)) return tokenFieldOf(e.whenTrue) ?? tokenFieldOf(e.whenFalse);
  if (ts.isCallExpression(e) && ts.isIdentifier(e.expression) && e.expression.text === 'Number') {
    const [arg] = e.arguments;
    return arg === undefined ? null : tokenFieldOf(arg);
  }
  return null;
}

const ARITHMETIC = new Set([
  ts.SyntaxKind.PlusToken,
  ts.SyntaxKind.PlusEqualsToken,
  ts.SyntaxKind.MinusToken,
  ts.SyntaxKind.MinusEqualsToken,
]);
const ASSIGNMENT = new Set([
  ts.SyntaxKind.EqualsToken,
  ts.SyntaxKind.BarBarEqualsToken,
  ts.SyntaxKind.AmpersandAmpersandEqualsToken,
  ts.SyntaxKind.QuestionQuestionEqualsToken,
]);

/** Checks one file; the path decides nothing here, so any text can be checked. */
export function checkAdapterSource(file: SourceFile): SourceViolation[] {
  const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const violations: SourceViolation[] = [];
  const add = (rule: SourceRule, node: ts.Node, message: string) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    violations.push({ rule, file: file.path, line, message });
  };

  const isDestructuringTarget = (node: ts.ObjectLiteralExpression): boolean => {
    const parent = node.parent;
    return (
      ts.isBinaryExpression(parent) &&
      parent.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      parent.left === node
    );
  };

  const visit = (node: ts.Node): void => {
    if (ts.isObjectLiteralExpression(node) && !isDestructuringTarget(node)) {
      for (const prop of node.properties) {
        const name = prop.name === undefined ? null : nameText(prop.name);
        if (name === null) continue;
        if (name === 'type' && ts.isPropertyAssignment(prop)) {
          const value = unwrap(prop.initializer);
          if (ts.isStringLiteralLike(value) && OUTCOME_EVENT_TYPES.includes(value.text)) {
            add(
              'outcome-event',
              prop,
              `builds a '${value.text}' event itself; report evidence and let the shared rule (finalizeTurn) emit the outcome`,
            );
          }
        }
        if (SPEND_FLAGS.includes(name)) {
          add(
            'spend-flag',
            prop,
            `sets the spend flag ${name}; the core derives it from the turn's TurnSpend`,
          );
        }
      }
    } else if (ts.isNewExpression(node)) {
      const callee = unwrap(node.expression);
      const isAgentError =
        (ts.isIdentifier(callee) && callee.text === 'AgentError') ||
        (ts.isPropertyAccessExpression(callee) && callee.name.text === 'AgentError');
      if (isAgentError) {
        const [first] = node.arguments ?? [];
        const kind = first === undefined ? null : unwrap(first);
        if (kind === null || !ts.isStringLiteralLike(kind)) {
          add(
            'agent-error',
            node,
            `constructs an AgentError with a kind that is not a literal; only ${ADAPTER_ERROR_KINDS.join(' or ')} for start-up configuration failures`,
          );
        } else if (!ADAPTER_ERROR_KINDS.includes(kind.text)) {
          add(
            'agent-error',
            node,
            `constructs an AgentError of kind '${kind.text}'; a turn's error comes from the shared rule, and an adapter builds only ${ADAPTER_ERROR_KINDS.join(' or ')} for start-up configuration failures`,
          );
        }
      }
    } else if (ts.isBinaryExpression(node)) {
      const op = node.operatorToken.kind;
      if (ARITHMETIC.has(op)) {
        const field = tokenFieldOf(node.left) ?? tokenFieldOf(node.right);
        if (field !== null) {
          add(
            'token-arithmetic',
            node,
            `adds or subtracts the token field ${field} by hand (${node.operatorToken.getText(source)}); hand readings to the usage ledger and combine counts with the usage module`,
          );
        }
      } else if (ASSIGNMENT.has(op)) {
        const member = memberName(node.left);
        if (member !== null && SPEND_FLAGS.includes(member)) {
          add(
            'spend-flag',
            node,
            `assigns the spend flag ${member}; the core derives it from the turn's TurnSpend`,
          );
        }
      }
    } else if (
      (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) &&
      (node.operator === ts.SyntaxKind.PlusPlusToken || node.operator === ts.SyntaxKind.MinusMinusToken)
    ) {
      const field = tokenFieldOf(node.operand);
      if (field !== null) add('token-arithmetic', node, `counts the token field ${field} by hand`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return violations;
}

/** Checks every adapter file in `files` (others are ignored). */
export function checkAdapterSources(files: readonly SourceFile[]): SourceViolation[] {
  return files.filter((f) => isAdapterSource(f.path)).flatMap(checkAdapterSource);
}

/** A violation as a compiler-style line, for test output. */
export function formatSourceViolation(v: SourceViolation): string {
  return `${v.file}:${v.line} [${v.rule}] ${v.message}`;
}
