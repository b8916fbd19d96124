/** Every agent kind of this build: one import per kind folder. */
import './claude-code/index.js';
import './codex/index.js';
import './echo/index.js';
import './mock/index.js';
