/**
 * The tool-delivery contract every kind with a tool channel must pass: what its adapter put
 * on the runtime's launch surface (argv, environment, files it wrote) for a session given a
 * tool delivery. Every server of the delivery is named there, none the delivery left out (a
 * disabled one), and no secret value of the delivery appears on the argv or in a file: those
 * travel only in the environment, which must carry every one so the references resolve.
 */
import { expect } from 'vitest';
import type { ToolDelivery } from '../../src/domain/tool-delivery.js';

/** What a runtime was launched with. */
export interface ToolSurface {
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  /** Files the adapter wrote for the runtime (its config), with their text. */
  files: readonly { path: string; text: string }[];
}

/** A delivery for contract tests: one stdio server whose token is a secret value. */
export function contractDelivery(): ToolDelivery {
  return {
    servers: {
      orchestrator: {
        transport: 'stdio',
        command: '/usr/bin/node',
        args: ['/opt/orchestrator/dist/cli/main.js', 'mcp-server'],
        envNames: ['ORCHESTRATOR_TOOLS_URL', 'ORCHESTRATOR_TOOLS_TOKEN'],
      },
    },
    env: {
      ORCHESTRATOR_TOOLS_URL: 'http://127.0.0.1:40123/mcp',
      ORCHESTRATOR_TOOLS_TOKEN: 'contract-token-9f8e7d6c5b4a39281706',
    },
  };
}

/**
 * Checks the surface. `disabled` names servers that must not appear (given to the kind and
 * turned off); `secretNames` are the delivery's variables whose values are secret (default:
 * every variable whose name ends in `_TOKEN`).
 */
export function assertToolDelivery(
  delivery: ToolDelivery,
  surface: ToolSurface,
  options: { disabled?: readonly string[]; secretNames?: readonly string[] } = {},
): void {
  const places = [...surface.argv, ...surface.files.map((f) => f.text)];
  const everywhere = places.join('\n');
  for (const name of Object.keys(delivery.servers)) {
    expect(everywhere, `server ${name} is on the launch surface`).toContain(name);
  }
  for (const name of options.disabled ?? []) {
    expect(everywhere, `disabled server ${name} is left out`).not.toContain(name);
  }
  const secretNames = options.secretNames ?? Object.keys(delivery.env).filter((n) => n.endsWith('_TOKEN'));
  expect(secretNames.length, 'the delivery has a secret to check').toBeGreaterThan(0);
  for (const name of secretNames) {
    const value = delivery.env[name] as string;
    for (const arg of surface.argv) expect(arg, `${name}'s value is on no argument`).not.toContain(value);
    for (const file of surface.files)
      expect(file.text, `${name}'s value is in no file (${file.path})`).not.toContain(value);
  }
  for (const [name, value] of Object.entries(delivery.env)) {
    expect(surface.env[name], `the runtime's environment carries ${name}`).toBe(value);
  }
}
