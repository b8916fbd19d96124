/**
 * The owner tag: every process the service starts (agents and workspace hooks) carries
 * it in its environment, so a restarted service can find what an earlier, killed one
 * left running, even a process that left its group, because the environment is
 * inherited. It names the database (a hash of its path), not a secret.
 */

/** The environment variable that holds the owner tag. */
export const OWNER_ENV = 'ORCHESTRATOR_OWNER';
