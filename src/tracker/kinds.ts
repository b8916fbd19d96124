/**
 * Every built-in tracker kind, loaded for its registration side effect. Adding a
 * kind is one line here; nothing else in core code names it.
 */
import './file/index.js';
import './github/index.js';
import './jira/index.js';
import './gitlab/index.js';
import './linear/index.js';
