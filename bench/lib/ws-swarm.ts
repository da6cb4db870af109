// The subscriber swarm of the fan-out benchmark: N raw TCP WebSocket clients in one process, made
// cheaper than any server they load. Sockets read with `onread` into one shared buffer (no stream
// machinery, no allocation per read), and a socket's bytes are never copied or decoded: the reader
// walks frame headers only (2-10 bytes a frame) and skips payloads by length, so its cost is per
// chunk received, not per frame. One socket in SAMPLE_EVERY also keeps its payloads to read the
// publisher's timestamp (`t=<ms>`) for delivery latency. Driven over IPC by bench/fanout.ts.
import { connect, type Socket } from 'node:net';

const SAMPLE_EVERY = 50;
const now = () => performance.timeOrigin + performance.now();

/** A masked client text frame (zero mask key: legal, and the payload needs no XOR). */
export function clientFrame(text: string): Buffer {
  const p = Buffer.from(text);
  if (p.length >= 126) throw new Error('bench frames stay under 126 bytes');
  return Buffer.concat([Buffer.from([0x81, 0x80 | p.length, 0, 0, 0, 0]), p]);
}

interface Reader {
  /** Payload bytes of the current frame still to skip. */
  skip: number;
  /** A header split across chunks. */
  head: Buffer | null;
  /** The current frame counts (text or binary data frame). */
  data: boolean;
  sample: Buffer[] | null;
}

let delivered = 0;
let counting = false;
const lat: number[] = [];

function readChunk(r: Reader, chunk: Buffer): void {
  let buf = chunk;
  let off = 0;
  if (r.head) {
    buf = Buffer.concat([r.head, chunk]);
    r.head = null;
  }
  while (off < buf.length) {
    if (r.skip > 0) {
      const n = Math.min(r.skip, buf.length - off);
      // The read buffer is shared and reused: a sampled payload is copied.
      if (r.sample && r.data) r.sample.push(Buffer.from(buf.subarray(off, off + n)));
      r.skip -= n;
      off += n;
      if (r.skip === 0 && r.sample && r.data) endSample(r);
      continue;
    }
    const avail = buf.length - off;
    if (avail < 2) break;
    const b0 = buf[off] as number;
    let len = (buf[off + 1] as number) & 0x7f;
    let head = 2;
    if (len === 126) {
      if (avail < 4) break;
      len = buf.readUInt16BE(off + 2);
      head = 4;
    } else if (len === 127) {
      if (avail < 10) break;
      len = Number(buf.readBigUInt64BE(off + 2));
      head = 10;
    }
    const op = b0 & 0x0f;
    r.data = op === 1 || op === 2;
    if (r.data && counting) delivered++;
    off += head;
    r.skip = len;
    if (len === 0 && r.sample && r.data) endSample(r);
  }
  if (off < buf.length) r.head = Buffer.from(buf.subarray(off));
}

function endSample(r: Reader): void {
  const parts = r.sample as Buffer[];
  const payload = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
  parts.length = 0;
  if (!counting) return;
  const i = payload.indexOf('t=');
  if (i < 0) return;
  const t = Number.parseFloat(payload.subarray(i + 2, i + 22).toString('latin1'));
  if (Number.isFinite(t)) lat.push(now() - t);
}

const sockets: Socket[] = [];

/** One read buffer for every socket: a read is consumed synchronously before the next. */
const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);

function open(port: number, path: string, subscribe: Buffer, sample: boolean): Promise<void> {
  return new Promise((ok, ko) => {
    const r: Reader = { skip: 0, head: null, data: false, sample: sample ? [] : null };
    let upgraded = false;
    let pre: Buffer = Buffer.alloc(0);
    const s = connect({
      port,
      host: '127.0.0.1',
      noDelay: true,
      onread: {
        buffer: READ_BUFFER,
        callback: (n: number, buf: Uint8Array) => {
          const chunk = Buffer.from(buf.buffer, buf.byteOffset, n);
          if (upgraded) {
            readChunk(r, chunk);
            return true;
          }
          pre = Buffer.concat([pre, chunk]);
          const end = pre.indexOf('\r\n\r\n');
          if (end < 0) return true;
          if (!pre.subarray(0, 12).toString().includes('101')) {
            ko(new Error(pre.subarray(0, 200).toString()));
            return true;
          }
          upgraded = true;
          s.write(subscribe);
          sockets.push(s);
          if (pre.length > end + 4) readChunk(r, pre.subarray(end + 4));
          ok();
          return true;
        },
      },
    });
    s.on('error', ko);
    s.on('connect', () =>
      s.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
      ),
    );
  });
}

let cpu0 = process.cpuUsage();
let t0 = now();

process.on('message', async (m: { cmd: string; port?: number; n?: number; path?: string; subscribe?: string }) => {
  if (m.cmd === 'open') {
    const sub = clientFrame(m.subscribe as string);
    const n = m.n as number;
    for (let i = 0; i < n; i += 250) {
      const batch = Array.from({ length: Math.min(250, n - i) }, (_, j) =>
        open(m.port as number, m.path as string, sub, (i + j) % SAMPLE_EVERY === 0),
      );
      await Promise.all(batch);
    }
    // Let every subscribe be processed before the measurement starts.
    setTimeout(() => process.send?.({ opened: sockets.length }), 1000);
  } else if (m.cmd === 'start') {
    delivered = 0;
    lat.length = 0;
    counting = true;
    cpu0 = process.cpuUsage();
    t0 = now();
    process.send?.({ started: true });
  } else if (m.cmd === 'stop') {
    counting = false;
    const cpu = process.cpuUsage(cpu0);
    process.send?.({ delivered, lat, cpu_ms: (cpu.user + cpu.system) / 1000, wall_ms: now() - t0 });
  } else if (m.cmd === 'peek') {
    process.send?.({ delivered });
  } else if (m.cmd === 'exit') {
    for (const s of sockets) s.destroy();
    process.exit(0);
  }
});
process.send?.({ ready: true });
