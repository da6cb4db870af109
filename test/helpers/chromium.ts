// Where the browser suites find Chromium, and the one command that installs it.
import { existsSync } from 'node:fs';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const FIX_CHROMIUM = 'sudo apt-get install -y chromium   (Debian; or set CHROMIUM_PATH to a Chromium binary)';
export const chromiumMissing = (): boolean => !existsSync(CHROMIUM_PATH);
