// The layer rules of ../shared/DESIGN.md "Shape", checked by `npm run check`:
// transport -> domain -> store; machines are pure; nothing below the composition root knows it.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'domain-not-transport',
      comment: 'The domain holds the use cases; it never knows HTTP, WebSocket or protocol code.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/transport/' },
    },
    {
      name: 'transport-not-store',
      comment: 'Transport is thin: it calls the domain, which calls the store.',
      severity: 'error',
      from: { path: '^src/transport/' },
      to: { path: '^src/store/' },
    },
    {
      name: 'store-not-upwards',
      comment: 'The store is plain SQL; it knows no use case, actor or transport.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/(domain|actors|transport)/' },
    },
    {
      name: 'machines-pure',
      comment: 'Machines are pure lifecycle definitions: they import nothing of ours.',
      severity: 'error',
      from: { path: '^src/machines/' },
      to: { path: '^src/', pathNot: '^src/machines/' },
    },
    {
      name: 'only-the-root-wires',
      comment: 'Only the composition root (app.ts, main.ts) imports the composition root.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(app|main)\\.ts$' },
      to: { path: '^src/(app|main)\\.ts$' },
    },
    {
      name: 'transport-protocols-apart',
      comment:
        'The protocol edges (http, ws, mcp, a2a) do not import each other: what they share is the runner (src/transport/runner: credential, limits, deadline, validation, envelope), the operation table (src/transport/routes), the documents and pages it serves (src/transport/documents, src/transport/pages, src/transport/paths.ts) and the uWS answer helpers (src/transport/edge).',
      severity: 'error',
      from: { path: '^src/transport/(http|ws|mcp|a2a)/' },
      to: { path: '^src/transport/(http|ws|mcp|a2a)/', pathNot: '^src/transport/$1/' },
    },
    {
      name: 'runner-below-protocols',
      comment: 'The admission path, the runner and the edge helpers serve every protocol: they import none of them, nor the operation table.',
      severity: 'error',
      from: { path: '^src/transport/(admission|runner|edge)/' },
      to: { path: '^src/transport/(http|ws|mcp|a2a|nostr|routes)/' },
    },
    {
      name: 'routes-below-protocols',
      comment:
        'The operation table is what every protocol serves: the protocols import it, never the other way (src/transport/all-routes.ts adds what comes from a protocol folder).',
      severity: 'error',
      from: { path: '^src/transport/routes/' },
      to: { path: '^src/transport/(http|ws|mcp|a2a|nostr)/' },
    },
    {
      name: 'published-below-routes',
      comment:
        'The documents (documents/), the HTML pages (pages/) and the fixed paths (paths.ts) are rendered from data for both the table and the protocols: they import neither.',
      severity: 'error',
      from: { path: '^src/transport/(documents/|pages/|paths\\.ts$)' },
      to: { path: '^src/transport/(http|ws|mcp|a2a|nostr|routes)/' },
    },
    {
      name: 'cli-is-a-client',
      comment:
        'The command line (src/cli) reaches the service over the wire only: it imports the service\'s schemas as types (so it cannot drift from them) and no code, so its bundle carries none of the service.',
      severity: 'error',
      from: { path: '^src/cli/' },
      to: { path: '^src/', pathNot: '^src/cli/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'nothing-knows-the-cli',
      comment: 'The service does not import the command line.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'no-circular',
      comment: 'No import circles anywhere in src/, type imports included: a module never reaches itself.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs'] },
  },
};
