/** Serves the tool server over stdio with the fake backend; spawned by stdio.test.ts. */
import { createToolServer, serveStdio } from '../../src/tools/mcp-server.js';
import { fakeBackend, POLICY, SESSION_A } from './fake-backend.js';

await serveStdio(createToolServer({ session: SESSION_A, backend: fakeBackend(), policy: POLICY }));
