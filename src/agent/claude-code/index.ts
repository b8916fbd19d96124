/** Registration of the `claude-code` kind. */
import { registerAgent } from '../registry.js';
import { claudeCodeBlock } from './config.js';

registerAgent('claude-code', { validateConfig: claudeCodeBlock.validate });
