/**
 * The folder of a workspace where the agent and the orchestrator leave each other files
 * (`status`, `review_verdict.json`, `scm.json`). Named here because the prompt tells the agent
 * where it is and the workspace layer reads and writes it.
 */
export const SIGNAL_DIR = '.orchestrator';
