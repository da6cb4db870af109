// Global setup of the browser group (vitest.config.ts): the page suites drive Debian's Chromium,
// which a fresh machine does not have. When it is missing and this process may install packages
// (root, apt-get present), it installs Debian's `chromium` once, saying so; otherwise it says
// which command fixes it, and launchChromium() (browser.ts) fails the browser suites with the
// same line. Nothing else in the run depends on it.
import { execFileSync } from 'node:child_process';
import { chromiumMissing, FIX_CHROMIUM } from './chromium.js';

export default function setup(): void {
  if (!chromiumMissing()) return;
  const canInstall = process.getuid?.() === 0 && hasApt();
  if (!canInstall) {
    console.error(`browser suites: Chromium is missing; they will fail until you run: ${FIX_CHROMIUM}`);
    return;
  }
  console.error("browser suites: Chromium is missing; installing Debian's chromium with apt-get (once, about a minute)");
  try {
    // The lock timeout lets two runs that start together take turns instead of failing.
    const apt = ['-o', 'DPkg::Lock::Timeout=600', '-qq'];
    execFileSync('apt-get', [...apt, 'update'], { stdio: ['ignore', 'ignore', 'inherit'] });
    execFileSync('apt-get', [...apt, 'install', '-y', '--no-install-recommends', 'chromium'], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (e) {
    console.error(`browser suites: installing Chromium failed (${(e as Error).message.split('\n')[0]}); fix it with: ${FIX_CHROMIUM}`);
    return;
  }
  console.error(`browser suites: Chromium installed${chromiumMissing() ? ', but not found where expected' : ''}`);
}

function hasApt(): boolean {
  try {
    execFileSync('which', ['apt-get'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
