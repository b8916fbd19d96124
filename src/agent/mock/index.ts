/** Registration of the `mock` kind. */
import { registerAgent } from '../registry.js';
import { mockBlock } from './config.js';

registerAgent('mock', { validateConfig: mockBlock.validate });
