/** Every agent kind of this build: one import per kind folder. */
import './claude-code/index.js';
import './codex/index.js';
import './copilot-cli/index.js';
import './echo/index.js';
import './gemini/index.js';
import './mock/index.js';
import './opencode/index.js';
