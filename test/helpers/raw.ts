// Raw TCP requests for what fetch cannot send (malformed request lines, slow headers, odd framing).
import { connect } from 'node:net';

/**
 * Writes `payload` to 127.0.0.1:port and resolves with everything received until the server
 * closes the connection or `waitMs` passes (then the socket is destroyed).
 */
export function rawRequest(port: number, payload: string, waitMs = 3000): Promise<string> {
  return new Promise((ok) => {
    const sock = connect(port, '127.0.0.1', () => sock.write(payload));
    let out = '';
    sock.on('data', (d) => {
      out += d.toString();
    });
    sock.on('close', () => ok(out));
    sock.on('error', () => ok(out));
    const timer = setTimeout(() => sock.destroy(), waitMs);
    sock.on('close', () => clearTimeout(timer));
  });
}

/**
 * Writes `payload` and resolves with what came back and whether the server ended the connection
 * (FIN or reset) before `waitMs`; a connection still open then counts as not ended.
 */
export function rawExchange(port: number, payload: string, waitMs = 10_000): Promise<{ text: string; ended: boolean }> {
  return new Promise((ok) => {
    const sock = connect(port, '127.0.0.1', () => sock.write(payload));
    let out = '';
    let ended = false;
    sock.on('data', (d) => {
      out += d.toString();
    });
    sock.on('end', () => {
      ended = true;
      sock.destroy();
    });
    sock.on('error', () => {
      ended = true;
    });
    sock.on('close', () => ok({ text: out, ended }));
    const timer = setTimeout(() => sock.destroy(), waitMs);
    sock.on('close', () => clearTimeout(timer));
  });
}
