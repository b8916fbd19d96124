/** Registration of the `mock` kind. */
import { registerAgent } from '../registry.js';
import { createMockAdapter } from './adapter.js';
import { mockBlock } from './config.js';
import { MOCK_USAGE_SOURCES } from './usage.js';

registerAgent('mock', {
  validateConfig: mockBlock.validate,
  runtime: {
    factory: createMockAdapter,
    requiresCommand: false,
    defaultCommand: null,
    mcpDialect: 'none',
    mcpDialectNoneReason: 'the mock runtime calls no tools of ours',
    callsNoTools: true,
    usageSources: MOCK_USAGE_SOURCES,
    // Never checked by the runtime; declared so a credential travels the way a real kind's does.
    credentialEnv: ['MOCK_API_KEY'],
    effortForwarding: 'not_forwarded',
    verificationContext: [],
    usageLimitRecognition: 'not_recognized',
    usageLimitNotRecognizedReason: 'the mock runtime has no provider and so no usage limit',
    sandbox: {
      kind: 'none',
      reason: 'the mock runtime acts out directives from the prompt and runs no command a model chose',
    },
  },
});
