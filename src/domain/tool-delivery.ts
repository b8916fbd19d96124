/**
 * The tool servers a session's runtime is pointed at, in neutral terms: each runtime's
 * adapter declares a dialect, and the agent core renders this into it. Values that are
 * secrets (the session's token) never appear in a server's definition, only the name of the
 * variable that carries them; `env` holds the values, for the runtime's environment.
 */

/** One tool server, as the runtime is told to start or reach it. */
export type ToolServerSpec =
  | {
      transport: 'stdio';
      command: string;
      args: readonly string[];
      /** Variables the server needs, passed through from the runtime's environment by name. */
      envNames: readonly string[];
    }
  | {
      transport: 'http';
      url: string;
      /** Headers whose value is `prefix` followed by the value of the named variable. */
      headers: Readonly<Record<string, { prefix: string; variable: string }>>;
    };

/** What a session is given to reach its tools. */
export interface ToolDelivery {
  /** Servers by name. */
  servers: Readonly<Record<string, ToolServerSpec>>;
  /** Values the runtime's environment must carry for the servers' references to resolve. */
  env: Readonly<Record<string, string>>;
}

/** The name our own server goes by in every runtime's configuration. */
export const OWN_TOOL_SERVER = 'orchestrator';
