// Display names (DECISIONS.md "Beyond the spec"): bidi-control and zero-width characters are
// stripped, the result trimmed; control characters are refused; a few names are reserved.

const INVISIBLE = /[\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find control characters.
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;
export const RESERVED_NAMES = new Set(['system', 'operator', 'admin', 'moderator', 'commons']);

export const cleanName = (raw: string): string => raw.replace(INVISIBLE, '').trim();
export const hasControl = (s: string): boolean => CONTROL.test(s);
export const isReservedName = (name: string): boolean => RESERVED_NAMES.has(name.trim().toLowerCase());
