// A real local HTTP receiver for push callbacks and IndexNow pings: records every request and
// answers as the test says (a status, or never: a hanging callback).
import http from 'node:http';

export interface Received {
  at: number;
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  /** Decides the answer to the n-th request (0-based): a status code or 'hang'. */
  respond: (n: number, req: Received) => number | 'hang';
  close: () => Promise<void>;
}

export async function startReceiver(respond: Receiver['respond'] = () => 200): Promise<Receiver> {
  const requests: Received[] = [];
  const hanging = new Set<http.ServerResponse>();
  const r: Receiver = { url: '', port: 0, requests, respond, close: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec: Received = {
        at: Date.now(),
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const n = requests.length;
      requests.push(rec);
      const answer = r.respond(n, rec);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  r.port = (server.address() as { port: number }).port;
  r.url = `http://127.0.0.1:${r.port}`;
  r.close = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((ok) => server.close(() => ok()));
  };
  return r;
}
