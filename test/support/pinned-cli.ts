/** What every real-CLI test file checks first. */
import { existsSync } from 'node:fs';
import { expect, it } from 'vitest';

/**
 * The test that the pinned CLI at `bin` is there: CI installs it, so under CI a
 * missing CLI fails here (elsewhere the file skips and says why).
 */
export function itHasThePinnedCli(bin: string): void {
  it('the pinned CLI is installed (CI runs scripts/install-agent-clis.sh)', () => {
    expect(existsSync(bin), `${bin} is missing`).toBe(true);
  });
}
