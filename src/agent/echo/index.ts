/** Registration of the `echo` kind. */
import { registerAgent } from '../registry.js';
import { createEchoAdapter } from './adapter.js';
import { echoBlock } from './config.js';
import { ECHO_USAGE_SOURCES } from './usage.js';

registerAgent('echo', {
  validateConfig: echoBlock.validate,
  runtime: {
    factory: createEchoAdapter,
    requiresCommand: false,
    defaultCommand: null,
    mcpDialect: 'none',
    mcpDialectNoneReason: 'the echo runtime calls no tools',
    callsNoTools: true,
    usageSources: ECHO_USAGE_SOURCES,
    credentialEnv: [],
    effortForwarding: 'not_forwarded',
    verificationContext: [],
    usageLimitRecognition: 'not_recognized',
    usageLimitNotRecognizedReason: 'the echo runtime has no provider and so no usage limit',
    sandbox: { kind: 'none', reason: 'the echo runtime runs no tool commands' },
  },
});
