/** Registration of the `codex` kind. */
import { registerAgent } from '../registry.js';
import { codexBlock } from './config.js';

registerAgent('codex', { validateConfig: codexBlock.validate });
