/**
 * Answers to the app-server's requests. Nobody watches an unattended run, so a
 * request must never wait for a person: every one gets an answer at once. An
 * approval request exists only because the configured `approval_policy` asks for
 * one (with `never` none arrive); the answer that keeps that policy meaningful
 * is "declined": the command or edit the policy did not trust does not run, and
 * the model carries on without it. Requests for input a person would type
 * (questions, elicitations) are declined the same way; requests this client has
 * no part in are refused as unknown methods.
 */

import { RPC_METHOD_NOT_FOUND } from '../core/jsonrpc/messages.js';
import type { RpcAnswer } from '../core/persistent-session.js';

/** Why a request was refused, for the operator. */
const DECLINED = 'declined by the orchestrator: no one is present to approve during an unattended run';

/** The answer to one request of the app-server, and a line for the operator when it declined something. */
export function answerServerRequest(
  method: string,
  params: unknown,
): { answer: RpcAnswer; notice: string | null } {
  const p = params !== null && typeof params === 'object' ? (params as Record<string, unknown>) : {};
  const what = typeof p.command === 'string' ? `: ${p.command}` : '';
  switch (method) {
    case 'item/commandExecution/requestApproval':
      return { answer: { result: { decision: 'decline' } }, notice: `command approval ${DECLINED}${what}` };
    case 'item/fileChange/requestApproval':
      return { answer: { result: { decision: 'decline' } }, notice: `file change approval ${DECLINED}` };
    case 'item/permissions/requestApproval':
      return {
        answer: { result: { permissions: {}, scope: 'turn' } },
        notice: `permission request ${DECLINED}`,
      };
    case 'execCommandApproval':
    case 'applyPatchApproval':
      return {
        answer: { result: { decision: { denied: { rejection: DECLINED } } } },
        notice: `approval ${DECLINED}${what}`,
      };
    case 'item/tool/requestUserInput':
      return {
        answer: { result: { answers: {} } },
        notice: 'the agent asked for user input; none was given',
      };
    case 'mcpServer/elicitation/request':
      return {
        answer: { result: { action: 'decline', content: null, _meta: null } },
        notice: `a tool server asked for input; ${DECLINED}`,
      };
    case 'item/tool/call':
      return {
        answer: {
          result: {
            contentItems: [{ type: 'inputText', text: 'this tool is not available in this session' }],
            success: false,
          },
        },
        notice: `the agent called a dynamic tool this client does not serve${typeof p.tool === 'string' ? `: ${p.tool}` : ''}`,
      };
    default:
      return {
        answer: {
          error: { code: RPC_METHOD_NOT_FOUND, message: `${method} is not supported by this client` },
        },
        notice: null,
      };
  }
}
