/**
 * Downloads the log of one GitHub Actions job. The API answers with a redirect to a short-lived
 * storage address; that address is signed, so it is fetched without the token (the token must
 * never travel to another host), and the body is read only up to a byte cap so a runaway log
 * cannot fill memory or hold a tick.
 */
import type { Octokit } from '@octokit/rest';
import { callGithub } from './client.js';
import { payloadError } from './errors.js';

/** The most of a job log read. */
export const MAX_LOG_BYTES = 1024 * 1024;

/** A log as read: its text, and whether the cap cut it short. */
export interface JobLog {
  text: string;
  truncated: boolean;
}

/** The log of job `jobId`, read up to `maxBytes`. */
export async function readJobLog(
  octokit: Octokit,
  download: typeof fetch,
  repo: { owner: string; repo: string },
  jobId: number,
  maxBytes = MAX_LOG_BYTES,
): Promise<JobLog> {
  const what = `read the log of job ${jobId}`;
  const response = await callGithub(what, () =>
    octokit.request('GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs', {
      ...repo,
      job_id: jobId,
      request: { redirect: 'manual', parseSuccessResponseBody: false },
    }),
  );
  const status = response.status as number;
  const body = response.data as unknown;
  if (status >= 300 && status < 400) {
    await cancel(body);
    const location = (response.headers as Record<string, unknown>).location;
    if (typeof location !== 'string' || location === '')
      throw payloadError(what, 'a redirect without a location');
    const target = await callGithub(what, async () => {
      const answer = await download(location, { redirect: 'follow' });
      if (!answer.ok) {
        await answer.body?.cancel();
        throw Object.assign(new Error(`log download answered ${answer.status}`), {
          status: answer.status,
          response: { headers: {}, data: { message: `log download answered ${answer.status}` } },
        });
      }
      return answer;
    });
    return readCapped(target.body, maxBytes);
  }
  // A transport that followed the redirect itself hands over the log directly.
  return readCapped(body as ReadableStream<Uint8Array> | null, maxBytes);
}

/** The text of a stream up to `maxBytes`; a cut-off last line is dropped. */
export async function readCapped(
  stream: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<JobLog> {
  if (stream === null || typeof (stream as { getReader?: unknown }).getReader !== 'function') {
    return { text: typeof stream === 'string' ? stream : '', truncated: false };
  }
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const room = maxBytes - bytes;
    const chunk = value.byteLength > room ? value.subarray(0, room) : value;
    bytes += chunk.byteLength;
    text += decoder.decode(chunk, { stream: true });
    if (bytes >= maxBytes) {
      truncated = value.byteLength > room || !(await reader.read()).done;
      break;
    }
  }
  await reader.cancel().catch(() => {});
  text += decoder.decode();
  if (truncated) text = text.slice(0, Math.max(0, text.lastIndexOf('\n')));
  return { text, truncated };
}

async function cancel(body: unknown): Promise<void> {
  const stream = body as { cancel?: () => Promise<void> } | null;
  if (typeof stream?.cancel === 'function') await stream.cancel().catch(() => {});
}
