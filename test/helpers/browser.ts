// Real Chromium for the page tests (Debian's `chromium`, driven by playwright-core), a collector
// of console errors, and a TCP proxy in front of the service that can drop every connection and
// refuse new ones for a while: a real network drop, as a browser sees it.
import { mkdirSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { CHROMIUM_PATH, chromiumMissing, FIX_CHROMIUM } from './chromium.js';

export const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts');

export function launchChromium(): Promise<Browser> {
  // The browser group's global setup installs it when it can (chromium-setup.ts); else this line says how.
  if (chromiumMissing()) throw new Error(`Chromium is not installed at ${CHROMIUM_PATH}; run: ${FIX_CHROMIUM}`);
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Every console error and uncaught page error (a CSP violation is a console error too). */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  return errors;
}

export interface DropProxy {
  url: string;
  /** Destroys every open connection (the stream included). */
  drop(): void;
  /** While held, new connections are accepted and closed at once. */
  hold(on: boolean): void;
  close(): Promise<void>;
}

export async function dropProxy(target: URL): Promise<DropProxy> {
  const open = new Set<Socket>();
  let held = false;
  const server: Server = createServer((client) => {
    if (held) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const addr = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${addr.port}`,
    drop: () => {
      for (const s of open) s.destroy();
    },
    hold: (on) => {
      held = on;
    },
    close: () =>
      new Promise<void>((ok) => {
        for (const s of open) s.destroy();
        server.close(() => ok());
      }),
  };
}
