// Fan-out benchmark (issue 3; not a test): N WebSocket subscribers and one publisher, against the
// Commons stream (uWS topics) and a plain `ws` broadcast server doing the same work, side by side.
// Run: npx tsx bench/fanout.ts [--n 1000,5000] [--seconds 4]
// Each server runs in its own process; the subscribers run in one client process that counts
// frames from raw sockets (cheap, and the same for both servers); the publisher sends chat ops.
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket, { WebSocketServer } from 'ws';

const args = process.argv.slice(2);
const arg = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? (args[i + 1] as string) : dflt;
};
const now = () => performance.timeOrigin + performance.now();
/** Messages in flight during the saturation phase. */
const WINDOW = Number(arg('window', '64'));

// ---- role: plain ws broadcast server (the baseline) ----------------------------------------
function baselineServer(): void {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 64 * 1024 });
  const subs = new Set<WebSocket>();
  let seq = 0;
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const op = JSON.parse(data.toString()) as { op: string; body?: string };
      if (op.op === 'subscribe') subs.add(ws);
      if (op.op === 'chat') {
        // The same work as the stream: one serialization, then a send per subscriber.
        const frame = JSON.stringify({ op: 'event', topic: 'chat', id: String(++seq), data: { body: op.body } });
        for (const s of subs) s.send(frame);
      }
    });
    ws.on('close', () => subs.delete(ws));
  });
  wss.on('listening', () => process.send?.({ port: (wss.address() as { port: number }).port }));
}

// ---- role: subscriber swarm over raw sockets ----------------------------------------------
function clients(): void {
  let delivered = 0;
  const lat: number[] = [];
  let sampling = false;
  const mask = (text: string) => {
    const p = Buffer.from(text);
    return Buffer.concat([Buffer.from([0x81, 0x80 | p.length, 0, 0, 0, 0]), p]); // zero mask key
  };
  function open(port: number, sample: boolean): Promise<Socket> {
    return new Promise((ok, ko) => {
      const s = connect(port, '127.0.0.1');
      let buf: Buffer = Buffer.alloc(0);
      let upgraded = false;
      s.on('error', ko);
      s.on('connect', () =>
        s.write(
          `GET /api/v1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        ),
      );
      s.on('data', (chunk: Buffer) => {
        buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
        if (!upgraded) {
          const end = buf.indexOf('\r\n\r\n');
          if (end < 0) return;
          upgraded = true;
          buf = buf.subarray(end + 4);
          s.write(mask('{"op":"subscribe","topic":"chat","ref":"s"}'));
          ok(s);
        }
        let off = 0;
        for (;;) {
          if (buf.length - off < 2) break;
          let len = (buf[off + 1] as number) & 0x7f;
          let head = 2;
          if (len === 126) {
            if (buf.length - off < 4) break;
            len = buf.readUInt16BE(off + 2);
            head = 4;
          } else if (len === 127) {
            if (buf.length - off < 10) break;
            len = Number(buf.readBigUInt64BE(off + 2));
            head = 10;
          }
          if (buf.length - off < head + len) break;
          const payload = buf.subarray(off + head, off + head + len);
          if (payload.indexOf('"event"') >= 0) {
            delivered++;
            if (sample && sampling) {
              const i = payload.indexOf('t=');
              if (i >= 0)
                lat.push(
                  now() -
                    Number(
                      payload
                        .subarray(i + 2, i + 20)
                        .toString()
                        .split(/[^0-9.]/)[0],
                    ),
                );
            }
          }
          off += head + len;
        }
        buf = buf.subarray(off);
      });
    });
  }
  process.on('message', async (m: { cmd: string; port?: number; n?: number }) => {
    if (m.cmd === 'open') {
      for (let i = 0; i < (m.n as number); i += 100) {
        await Promise.all(Array.from({ length: Math.min(100, (m.n as number) - i) }, (_, j) => open(m.port as number, (i + j) % 50 === 0)));
      }
      setTimeout(() => process.send?.({ opened: true }), 500);
    } else if (m.cmd === 'start') {
      delivered = 0;
      lat.length = 0;
      sampling = true;
    } else if (m.cmd === 'stop') {
      sampling = false;
      process.send?.({ delivered, lat });
    } else if (m.cmd === 'exit') process.exit(0);
  });
}

// ---- orchestration ----------------------------------------------------------------------
interface Result {
  server: string;
  n: number;
  saturated_deliveries_per_s: number;
  half_rate_msgs_per_s: number;
  half_deliveries_per_s: number;
  p50_ms: number;
  p99_ms: number;
}

const ask = <T>(c: ChildProcess, msg: object, key: string) =>
  new Promise<T>((ok) => {
    const h = (m: Record<string, unknown>) => {
      if (key in m) {
        c.off('message', h);
        ok(m as T);
      }
    };
    c.on('message', h);
    c.send(msg);
  });

async function startCommons(dir: string): Promise<{ port: number; stop: () => void }> {
  const child = spawn('npx', ['tsx', 'src/main.ts'], {
    env: { ...process.env, PORT: '0', DATA_DIR: dir, RATE_LIMITS: 'off', LOG_LEVEL: 'info', REDIS_URL: '', DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  const port = await new Promise<number>((ok) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /"url":"http:\/\/127\.0\.0\.1:(\d+)".*commons listening/.exec(out);
      if (m) ok(Number(m[1]));
    });
  });
  return { port, stop: () => process.kill(-(child.pid as number), 'SIGTERM') };
}

async function startBaseline(): Promise<{ port: number; stop: () => void }> {
  const child = fork(new URL(import.meta.url).pathname, ['--role', 'baseline'], { execArgv: ['--import', 'tsx'] });
  const { port } = await ask<{ port: number }>(child, {}, 'port');
  return { port, stop: () => child.kill() };
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};

async function measure(server: string, port: number, n: number, seconds: number): Promise<Result> {
  const swarm = fork(new URL(import.meta.url).pathname, ['--role', 'clients'], { execArgv: ['--import', 'tsx'] });
  await ask(swarm, { cmd: 'open', port, n }, 'opened');
  const pub = new WebSocket(`ws://127.0.0.1:${port}/api/v1/stream`);
  await new Promise((ok) => pub.once('open', ok));
  const send = () => pub.send(JSON.stringify({ op: 'chat', body: `t=${now().toFixed(3)} bench` }));

  // Saturation: a closed loop keeping a window of messages in flight, paced by the server's
  // answers to the publisher (ack or, for the baseline, its own copy of the broadcast).
  pub.send(JSON.stringify({ op: 'subscribe', topic: 'chat' }));
  let inFlight = 0;
  let sent = 0;
  let running = true;
  pub.on('message', (d) => {
    const s = d.toString();
    if (!s.includes('"event"')) return;
    inFlight--;
    while (running && inFlight < WINDOW) {
      inFlight++;
      sent++;
      send();
    }
  });
  await new Promise((ok) => setTimeout(ok, 300));
  swarm.send({ cmd: 'start' });
  const t0 = now();
  inFlight = 1;
  sent = 1;
  send();
  await new Promise((ok) => setTimeout(ok, seconds * 1000));
  running = false;
  const sat = await ask<{ delivered: number }>(swarm, { cmd: 'stop' }, 'delivered');
  const satSecs = (now() - t0) / 1000;
  const saturated = sat.delivered / satSecs;
  const satMsgs = sent / satSecs;
  await new Promise((ok) => setTimeout(ok, 1000));

  // Half of saturation, open loop: latency at a sustainable rate.
  const rate = Math.max(1, satMsgs / 2);
  swarm.send({ cmd: 'start' });
  const t1 = now();
  let due = 0;
  const timer = setInterval(() => {
    const target = Math.floor(((now() - t1) / 1000) * rate);
    for (; due < target; due++) send();
  }, 2);
  await new Promise((ok) => setTimeout(ok, seconds * 1000));
  clearInterval(timer);
  await new Promise((ok) => setTimeout(ok, 500));
  const half = await ask<{ delivered: number; lat: number[] }>(swarm, { cmd: 'stop' }, 'delivered');
  const halfSecs = (now() - t1) / 1000;
  pub.close();
  swarm.send({ cmd: 'exit' });
  return {
    server,
    n,
    saturated_deliveries_per_s: Math.round(saturated),
    half_rate_msgs_per_s: Math.round(rate),
    half_deliveries_per_s: Math.round(half.delivered / halfSecs),
    p50_ms: Number(pct(half.lat, 50).toFixed(2)),
    p99_ms: Number(pct(half.lat, 99).toFixed(2)),
  };
}

async function main(): Promise<void> {
  const ns = arg('n', '1000,5000').split(',').map(Number);
  const seconds = Number(arg('seconds', '4'));
  const results: Result[] = [];
  for (const n of ns) {
    const dir = mkdtempSync(join(tmpdir(), 'commons-bench-'));
    const commons = await startCommons(dir);
    results.push(await measure('commons (uWS topics)', commons.port, n, seconds));
    commons.stop();
    const base = await startBaseline();
    results.push(await measure('ws broadcast', base.port, n, seconds));
    base.stop();
    await new Promise((ok) => setTimeout(ok, 1500));
    rmSync(dir, { recursive: true, force: true });
  }
  console.log('\nserver                 |     N | deliveries/s (saturated) | half rate msg/s | p50 ms | p99 ms');
  for (const r of results) {
    console.log(
      `${r.server.padEnd(22)} | ${String(r.n).padStart(5)} | ${String(r.saturated_deliveries_per_s).padStart(24)} | ${String(r.half_rate_msgs_per_s).padStart(15)} | ${String(r.p50_ms).padStart(6)} | ${String(r.p99_ms).padStart(6)}`,
    );
  }
  for (const n of ns) {
    const [c, b] = [
      results.find((r) => r.n === n && r.server.startsWith('commons')),
      results.find((r) => r.n === n && r.server.startsWith('ws')),
    ];
    if (c && b)
      console.log(
        `N=${n}: commons / ws deliveries per second = ${(c.saturated_deliveries_per_s / b.saturated_deliveries_per_s).toFixed(2)}x`,
      );
  }
  mkdirSync('bench/results', { recursive: true });
  const file = `bench/results/fanout-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
  writeFileSync(file, JSON.stringify({ command: `npx tsx bench/fanout.ts ${args.join(' ')}`.trim(), results }, null, 2));
  console.log(`wrote ${file}`);
  process.exit(0);
}

const role = arg('role', 'main');
if (role === 'baseline') baselineServer();
else if (role === 'clients') clients();
else await main();
