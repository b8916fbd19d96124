/**
 * A real browser for the dashboard tests: Debian's chromium driven by playwright-core (no
 * browser download). The launch flags keep it hermetic: no sandbox (CI runs as root), no
 * background networking, component updates, sync or QUIC, so the only traffic a test sees is
 * the page's own.
 *
 * When /usr/bin/chromium is absent the browser tests skip with a message, except under CI
 * (env CI set), where `.ci/run` installs it and its absence is a failure.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { REPO_ROOT } from './cli.js';

export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Why browser tests cannot run here, or null when they can (or must: under CI). */
export function browserSkipReason(): string | null {
  if (existsSync(CHROMIUM_PATH)) return null;
  if (process.env.CI !== undefined && process.env.CI !== '') return null;
  return `${CHROMIUM_PATH} is missing (apt-get install -y chromium); browser tests skipped outside CI`;
}

/** Headless chromium with the hermetic flags; the caller closes it (afterEach or finally). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

/** `test-results/dashboard/<name>.png`, its folder created (test-results/ is git-ignored). */
export function screenshotPath(name: string): string {
  const dir = path.join(REPO_ROOT, 'test-results', 'dashboard');
  mkdirSync(dir, { recursive: true });
  return path.join(dir, `${name}.png`);
}

/** What a page did that a test should see: foreign requests, dialogs, script errors, CSP reports. */
export interface PageWatch {
  /** Every URL the page requested. */
  readonly requests: string[];
  /** Requests to anything but `origin` (data: URLs excepted). */
  foreignRequests(): string[];
  /** Messages of alert/confirm/prompt dialogs (each is dismissed). */
  readonly dialogs: string[];
  /** Uncaught exceptions in the page. */
  readonly pageErrors: string[];
  /** console.error lines, which include Content-Security-Policy violations. */
  readonly consoleErrors: string[];
}

/** Starts recording `page`'s traffic and failures against the server at `origin`. */
export function watchPage(page: Page, origin: string): PageWatch {
  const watch: PageWatch = {
    requests: [],
    dialogs: [],
    pageErrors: [],
    consoleErrors: [],
    foreignRequests: () =>
      watch.requests.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin),
  };
  page.on('request', (request) => {
    watch.requests.push(request.url());
  });
  page.on('dialog', (dialog) => {
    watch.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss().catch(() => {});
  });
  page.on('pageerror', (error) => {
    watch.pageErrors.push(String(error));
  });
  page.on('console', (message) => {
    if (message.type() === 'error') watch.consoleErrors.push(message.text());
  });
  return watch;
}
