// What the generated-client tests ask of a client written against generated types: strict tsc's
// complaints (none wanted), and its escapes from the types (non-null assertions and casts: none
// wanted, so every success answer's data is typed as present).
import { readFileSync } from 'node:fs';
import ts from 'typescript';

/** Strict tsc's complaints about `file`, as "file:line: message"; `lib` adds libraries (e.g. DOM). */
export function typeErrors(file: string, lib?: string[]): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    noUncheckedIndexedAccess: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    ...(lib ? { lib } : {}),
    types: ['node'],
    skipLibCheck: true,
    noEmit: true,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const at = d.file && d.start !== undefined ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : '';
    return `${at}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

/** Non-null assertions (`x!`) and casts (`x as T`, `<T>x`) in a source file. */
export function escapes(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isNonNullExpression(n) || ts.isAsExpression(n) || ts.isTypeAssertionExpression(n)) found.push(n.getText(source));
    ts.forEachChild(n, visit);
  };
  visit(source);
  return found;
}
