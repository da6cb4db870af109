// IndexNow (DECISIONS.md "Signal, feeds, replies, push"): when INDEXNOW_ENDPOINT and INDEXNOW_KEY
// are set, each emission tells the endpoint which URLs changed. The key file is served at
// /{key}.txt (routes/signal.ts). Fire and forget: a slow endpoint never holds the tick.
import type { Ctx } from '../../domain/ports.js';

export function indexNowBody(ctx: Ctx, urls: string[], key: string) {
  const base = new URL(ctx.publicUrl());
  return { host: base.host, key, keyLocation: `${ctx.publicUrl()}/${key}.txt`, urlList: urls };
}

export async function pingIndexNow(ctx: Ctx, urls: string[], timeoutMs: number): Promise<number | null> {
  const { endpoint, key } = ctx.config.indexNow;
  if (!endpoint || !key) return null;
  try {
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify(indexNowBody(ctx, urls, key)),
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.arrayBuffer();
    if (res.status >= 300) ctx.log.warn({ status: res.status }, 'IndexNow ping refused');
    return res.status;
  } catch (err) {
    ctx.log.warn({ err }, 'IndexNow ping failed');
    return null;
  }
}
