import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';

const HERE = path.dirname(fileURLToPath(import.meta.url));

describe('serveStdio', () => {
  it('serves the catalog over a real child process stdin/stdout', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', path.join(HERE, 'stdio-fixture.ts')],
      cwd: path.resolve(HERE, '../..'),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(7);
      const result = await client.callTool({ name: 'tracker_transition', arguments: { state: 'Nope' } });
      expect(result.isError).toBe(true);
      expect((result.content as { text: string }[])[0]?.text.split(':')[0]).toBe('tool_state_not_configured');
    } finally {
      await client.close();
    }
  }, 20_000);
});
