// Display names (DECISIONS.md "Beyond the spec"): every Bidi_Control and
// Default_Ignorable_Code_Point character is stripped (Unicode properties, so new characters of
// those classes are covered without a hand list), the result NFC-normalised and trimmed; control
// characters are refused; a few names are reserved. A name empty after this is refused.

/** The characters stripped from a name, as a character class body of a Unicode (`u`) pattern
 * (published in the names' patterns: src/transport/runner/schemas.ts). */
export const INVISIBLE_CLASS = '\\p{Bidi_Control}\\p{Default_Ignorable_Code_Point}';
const INVISIBLE = new RegExp(`[${INVISIBLE_CLASS}]`, 'gu');
/** The control characters a name may not hold, as a character class body (published as a pattern). */
export const CONTROL_CLASS = '\\u0000-\\u001F\\u007F-\\u009F';
const CONTROL = new RegExp(`[${CONTROL_CLASS}]`);
export const RESERVED_NAMES = new Set(['system', 'operator', 'admin', 'moderator', 'commons']);

export const cleanName = (raw: string): string => raw.replace(INVISIBLE, '').normalize('NFC').replace(INVISIBLE, '').trim();
export const hasControl = (s: string): boolean => CONTROL.test(s);
export const isReservedName = (name: string): boolean => RESERVED_NAMES.has(name.trim().toLowerCase());
