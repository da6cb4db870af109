// The floor for bench/start.ts: the smallest server of each kind, plain JavaScript run by node
// itself (as `npm start` runs dist/main.js), answering 200 on every GET. Port from PORT.
//   node bench/lib/start-baselines.mjs uws|fastify
const port = Number(process.env.PORT);
if (process.argv[2] === 'uws') {
  // The build the service would pick (src/transport/uws-build.ts, which this plain file cannot
  // import): the current one, else the 20.30 fallback's binary for this Node.
  // (A require, not import(): the current build's loader throws while it is evaluated, which an
  // import() of it on an old glibc did not turn into a rejection: the process died.)
  const { createRequire } = await import('node:module');
  const load = createRequire(import.meta.url);
  let uWS;
  try {
    uWS = load('uWebSockets.js');
  } catch {
    const dir = load.resolve('uws-fallback/package.json').replace(/package\.json$/, '');
    uWS = load(`${dir}binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  }
  uWS
    .App()
    .get('/*', (res) => res.end('{"status":"ok"}'))
    .listen('127.0.0.1', port, (s) => s && console.log('listening'));
} else {
  const { fastify } = await import('fastify');
  const app = fastify();
  app.get('/*', async () => ({ status: 'ok' }));
  await app.listen({ host: '127.0.0.1', port });
  console.log('listening');
  process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
}
