/** Registration of the `echo` kind. */
import { registerAgent } from '../registry.js';
import { echoBlock } from './config.js';

registerAgent('echo', { validateConfig: echoBlock.validate });
