/**
 * A bare repository served over smart HTTP on 127.0.0.1 by git's own `git http-backend` (a
 * CGI program), behind a small server that demands Basic auth with one token, so a push
 * through the orchestrator's askpass helper is exercised for real. It records every request's
 * Authorization outcome, and can report the branches after each push (`onPush`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const BACKEND = '/usr/lib/git-core/git-http-backend';

export interface GitHttpServer {
  /** Clone URL of the bare repository (no credentials in it). */
  url: string;
  /** The bare repository's folder. */
  bareDir: string;
  /** Requests answered, with whether they carried the right credentials. */
  requests: { method: string; path: string; authorised: boolean }[];
  /** Every branch of the bare repository (its short name) and the commit it points at, now. */
  heads(): Record<string, string>;
  close(): Promise<void>;
}

export interface GitHttpServerOptions {
  /**
   * Called after each push that succeeded (a receive-pack request whose `git http-backend`
   * exited 0) with every branch of the bare repository and its commit, before the response
   * ends: when the pushing git returns, the hook has run.
   */
  onPush?: (heads: Record<string, string>) => void;
}

/** The branches of the bare repository `bareDir` and their commits. */
function listHeads(bareDir: string): Record<string, string> {
  const format = '--format=%(refname) %(objectname)';
  const ran = spawnSync('git', ['-C', bareDir, 'for-each-ref', format, 'refs/heads'], { encoding: 'utf8' });
  if (ran.status !== 0) throw new Error(`git for-each-ref failed: ${ran.stderr}`);
  const heads: Record<string, string> = {};
  for (const line of ran.stdout.split('\n')) {
    const [ref, sha] = line.trim().split(' ');
    if (ref?.startsWith('refs/heads/') && sha !== undefined) heads[ref.slice('refs/heads/'.length)] = sha;
  }
  return heads;
}

/** Starts the server with an empty bare repository whose default branch is `main`. */
export async function startGitHttpServer(
  token: string,
  username = 'x-access-token',
  options: GitHttpServerOptions = {},
): Promise<GitHttpServer> {
  const root = mkdtempSync(path.join(tmpdir(), 'git-http-'));
  const bareDir = path.join(root, 'repo.git');
  const init = spawnSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', bareDir], {
    encoding: 'utf8',
  });
  if (init.status !== 0) throw new Error(`git init --bare failed: ${init.stderr}`);
  spawnSync('git', ['-C', bareDir, 'config', 'http.receivepack', 'true']);
  const expected = `Basic ${Buffer.from(`${username}:${token}`).toString('base64')}`;
  const requests: GitHttpServer['requests'] = [];

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const authorised = req.headers.authorization === expected;
    requests.push({ method: req.method ?? 'GET', path: url.pathname, authorised });
    if (!authorised) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="test"' });
      res.end('authentication required\n');
      return;
    }
    const cgi = spawn(BACKEND, [], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        REMOTE_USER: username,
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-encoding']
          ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] }
          : {}),
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    req.pipe(cgi.stdin);
    // CGI output: headers, a blank line, then the body.
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        if (name === 'status') status = Number(value.split(' ')[0]);
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    const isPush = req.method === 'POST' && url.pathname.endsWith('/git-receive-pack');
    // The response ends once the backend has exited (the refs are updated by then).
    cgi.on('close', (code) => {
      try {
        if (isPush && code === 0) options.onPush?.(listHeads(bareDir));
      } finally {
        res.end();
      }
    });
  };

  const server: Server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/repo.git`,
    bareDir,
    requests,
    heads: () => listHeads(bareDir),
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
