/**
 * The tool block of the managed config.toml: composed after the operator's configuration
 * with the tables of the same names taken out, kept when the copy is refreshed from the
 * source or the source is gone, replaced by a session with tools and never removed by one
 * without; the same servers as `-c` overrides for a session on an SSH host (the table's
 * keys as one inline table, no value of the environment); and the wait for a session's
 * servers to start.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { contractDelivery } from '../../../internal-contracts/agent/tool-delivery.js';
import { codexBlock } from '../../../src/agent/codex/config.js';
import { prepareManagedHome } from '../../../src/agent/codex/home.js';
import { ToolServerStartup } from '../../../src/agent/codex/tool-startup.js';
import {
  composeConfig,
  disabledServers,
  headerPath,
  placedTables,
  toolOverrideArgs,
  toolTables,
} from '../../../src/agent/codex/tool-tables.js';
import type { ToolDelivery } from '../../../src/domain/tool-delivery.js';
import { HTTP, STDIO, TOKEN, URL } from '../core/tool-deliveries.js';

const BLOCK = toolTables(contractDelivery());

describe('the tool block', () => {
  it('follows the operator’s configuration, without their tables (and sub-tables) of the same names', () => {
    const operator = [
      'model = "gpt-5.5"',
      '[mcp_servers."orchestrator"]',
      'command = "old"',
      "[ mcp_servers . 'orchestrator' . tools . tracker_comment ]  # theirs",
      'approval_mode = "prompt"',
      '[[mcp_servers.orchestrator.extra]]',
      'x = 1',
      '[mcp_servers.orchestrator_docs]',
      'command = "docs"',
      'args = [',
      '  ["nested", "array"],',
      ']',
      '',
    ].join('\n');
    const text = composeConfig(operator, null, BLOCK) as string;
    expect(text).toBe(
      [
        'model = "gpt-5.5"',
        '[mcp_servers.orchestrator_docs]',
        'command = "docs"',
        'args = [',
        '  ["nested", "array"],',
        ']',
        '',
        BLOCK.text,
        '',
      ].join('\n'),
    );
    expect(text.match(/^\[mcp_servers\.orchestrator\]$/gm)).toHaveLength(1);
    expect(placedTables(text)).toEqual(BLOCK);
  });

  it('replaces the block a copy holds, keeps it when the session brings none, and is the block alone without a base', () => {
    const old = composeConfig('model = "a"\n', null, {
      text: BLOCK.text.replace('/usr/bin/node', '/old/node'),
      names: BLOCK.names,
    });
    expect(composeConfig(old, old, BLOCK)).toBe(`model = "a"\n\n${BLOCK.text}\n`);
    expect(composeConfig('model = "b"\n', old, null)).toBe(`model = "b"\n\n${placedTables(old)?.text}\n`);
    expect(composeConfig(null, old, null)).toBe(`${placedTables(old)?.text}\n`);
    expect(composeConfig(null, null, BLOCK)).toBe(`${BLOCK.text}\n`);
    expect(composeConfig(null, null, null)).toBeNull();
    expect(composeConfig('model = "c"\n', 'model = "c"\n', null)).toBe('model = "c"\n');
  });

  it('switches off the block’s servers that a -c path can name', () => {
    expect(disabledServers(BLOCK)).toEqual({ 'mcp_servers.orchestrator.enabled': false });
    expect(disabledServers({ text: '', names: ['a.b', 'ok'] })).toEqual({ 'mcp_servers.ok.enabled': false });
    expect(disabledServers(null)).toEqual({});
    expect(placedTables('model = "x"\n')).toBeNull();
  });

  it('reads table headers and nothing else as headers', () => {
    expect(headerPath('[mcp_servers.orchestrator]')).toEqual(['mcp_servers', 'orchestrator']);
    expect(headerPath('[ a . "b.c\\"d" . \'e\' ] # note')).toEqual(['a', 'b.c"d', 'e']);
    expect(headerPath('[[a.b]]')).toEqual(['a', 'b']);
    expect(headerPath('args = ["x"]')).toBeNull();
    expect(headerPath('  ["nested", "array"],')).toBeNull();
    expect(headerPath('[1, 2]')).toBeNull();
    expect(headerPath('[a.]')).toBeNull();
  });
});

describe('the managed config.toml with tools', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'codex-tool-home-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const source = path.join(root, 'source');
  mkdirSync(source);
  writeFileSync(path.join(source, 'auth.json'), '{}');
  const sourceToml = path.join(source, 'config.toml');
  const parsed = codexBlock.parse({ credentials_home: source, home_root: path.join(root, 'homes') });
  if (!parsed.ok) throw new Error('bad block');
  const prepare = (tables: typeof BLOCK | null) => {
    const home = prepareManagedHome({
      config: parsed.config,
      env: { HOME: root },
      command: null,
      toolTables: tables,
    });
    if (!home.ok) throw new Error(home.message);
    return path.join(home.home, 'config.toml');
  };
  const touchLater = (file: string, secondsAhead: number) => {
    const when = new Date(Date.now() + secondsAhead * 1000);
    utimesSync(file, when, when);
  };

  it('keeps the block through a source edit and a source removal, and removes the file only with no block', () => {
    writeFileSync(sourceToml, 'model = "one"\n');
    const managed = prepare(BLOCK);
    expect(readFileSync(managed, 'utf8')).toBe(`model = "one"\n\n${BLOCK.text}\n`);
    // The operator edits the source: the copy follows it, the block stays for a session without tools.
    writeFileSync(sourceToml, 'model = "two"\n');
    touchLater(sourceToml, 60);
    prepare(null);
    expect(readFileSync(managed, 'utf8')).toBe(`model = "two"\n\n${BLOCK.text}\n`);
    // A session without tools leaves an unchanged copy untouched.
    const before = readFileSync(managed, 'utf8');
    prepare(null);
    expect(readFileSync(managed, 'utf8')).toBe(before);
    // The source config goes: the block alone remains.
    rmSync(sourceToml);
    prepare(null);
    expect(readFileSync(managed, 'utf8')).toBe(`${BLOCK.text}\n`);
    expect(existsSync(sourceToml)).toBe(false);
  });
});

describe('waiting for the tool servers to start', () => {
  const report = (name: string, status: string, error: string | null = null) => ({ name, status, error });

  it('settles once every server of the session is ready or failed, and names a failure of its own', async () => {
    const startup = new ToolServerStartup(['orchestrator'], 5_000);
    startup.observe(report('orchestrator', 'starting'));
    const settled = startup.settled();
    expect(startup.observe(report('docs', 'failed', 'not ours'))).toBeNull();
    setTimeout(() => startup.observe(report('orchestrator', 'failed', 'no endpoint')), 20);
    const started = Date.now();
    expect(await settled).toEqual([]);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(startup.observe(report('orchestrator', 'failed', 'no endpoint'))).toBe(
      'tool server orchestrator failed to start: no endpoint',
    );
  });

  it('gives up after the wait on a server still starting, and waits only the grace for one never reported', async () => {
    const startup = new ToolServerStartup(['a', 'b'], 150);
    startup.observe(report('a', 'starting'));
    const started = Date.now();
    expect(await startup.settled(50)).toEqual(['a']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);

    const silent = new ToolServerStartup(['a'], 10_000);
    const quiet = Date.now();
    expect(await silent.settled(60)).toEqual([]);
    expect(Date.now() - quiet).toBeLessThan(1_000);
  });

  it('does not wait at all with no servers, or once a new process is reported ready', async () => {
    expect(await new ToolServerStartup([], 10_000).settled()).toEqual([]);
    const startup = new ToolServerStartup(['a'], 10_000);
    startup.observe(report('a', 'ready'));
    expect(await startup.settled()).toEqual([]);
    startup.reset();
    startup.observe(report('a', 'starting'));
    setTimeout(() => startup.observe(report('a', 'ready')), 10);
    expect(await startup.settled()).toEqual([]);
  });
});

describe('the servers as -c overrides (a session on an SSH host)', () => {
  /** Codex's own keys, after the dialect's. */
  const CODEX_KEYS = 'startup_timeout_sec = 30, default_tools_approval_mode = "approve"';

  it('gives a stdio server as one inline table: command, args, the variables it passes through, Codex’s keys', () => {
    const delivery: ToolDelivery = {
      servers: { orchestrator: STDIO },
      env: { ORCHESTRATOR_TOOLS_URL: URL, ORCHESTRATOR_TOOLS_TOKEN: TOKEN },
    };
    const args = toolOverrideArgs(delivery);
    expect(args).toEqual([
      '-c',
      'mcp_servers.orchestrator={ command = "/usr/bin/node", ' +
        'args = ["/opt/orchestrator/dist/cli/main.js", "mcp-server"], ' +
        `env_vars = ["ORCHESTRATOR_TOOLS_URL", "ORCHESTRATOR_TOOLS_TOKEN"], ${CODEX_KEYS} }`,
    ]);
    for (const arg of args) {
      expect(arg).not.toContain(TOKEN);
      expect(arg).not.toContain(URL);
    }
  });

  it('gives an http server its URL and the names of its token’s and headers’ variables, one override per server', () => {
    const delivery: ToolDelivery = {
      servers: {
        orchestrator: HTTP,
        'docs_2-b': {
          transport: 'http',
          url: 'http://127.0.0.1:9/mcp?a="b"',
          headers: {
            authorization: { prefix: 'Bearer ', variable: 'DOCS_TOKEN' },
            'X-Tenant': { prefix: '', variable: 'DOCS_TENANT' },
          },
        },
      },
      env: { ORCHESTRATOR_TOOLS_TOKEN: TOKEN, DOCS_TOKEN: 'docs-secret-1', DOCS_TENANT: 'tenant-secret-2' },
    };
    const args = toolOverrideArgs(delivery);
    expect(args).toEqual([
      '-c',
      `mcp_servers.orchestrator={ url = "${URL}", bearer_token_env_var = "ORCHESTRATOR_TOOLS_TOKEN", ${CODEX_KEYS} }`,
      '-c',
      'mcp_servers.docs_2-b={ url = "http://127.0.0.1:9/mcp?a=\\"b\\"", bearer_token_env_var = "DOCS_TOKEN", ' +
        `env_http_headers = { "X-Tenant" = "DOCS_TENANT" }, ${CODEX_KEYS} }`,
    ]);
    for (const secret of Object.values(delivery.env)) {
      for (const arg of args) expect(arg).not.toContain(secret);
    }
  });

  it('says exactly what the table in config.toml says: one rendering, two forms', () => {
    const delivery = contractDelivery();
    const inline = (toolOverrideArgs(delivery)[1] as string).replace(
      /^mcp_servers\.orchestrator=\{ | \}$/g,
      '',
    );
    const table = BLOCK.text.split('\n').filter((l) => / = /.test(l));
    expect(inline).toBe(table.join(', '));
  });

  it('refuses a header it could only write with its value, as the table does', () => {
    const delivery: ToolDelivery = {
      servers: {
        remote: {
          transport: 'http',
          url: URL,
          headers: { Authorization: { prefix: 'Token ', variable: 'API_KEY' } },
        },
      },
      env: { API_KEY: 'key-secret-3' },
    };
    expect(() => toolOverrideArgs(delivery)).toThrow(/tool server remote: header Authorization .*API_KEY/);
    expect(() => toolTables(delivery)).toThrow(/tool server remote: header Authorization .*API_KEY/);
  });

  it('refuses a server name that is not a bare key: Codex splits an override’s key on dots and reads no quotes', () => {
    for (const name of ['with.dot', 'web "tools"', 'a b', '']) {
      const delivery: ToolDelivery = { servers: { [name]: STDIO }, env: {} };
      expect(() => toolOverrideArgs(delivery), name).toThrow(/only a name of letters, digits/);
    }
  });

  it('gives no arguments for a delivery with no servers', () => {
    expect(toolOverrideArgs({ servers: {}, env: {} })).toEqual([]);
  });
});
