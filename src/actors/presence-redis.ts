// Presence shared by every node through Redis (DESIGN.md "Presence across nodes"): one sorted
// set of expiry times per deployment. Each change is one atomic script, so exactly one node
// sees a resident come online (its touch created the entry) or go offline (its ZREM removed it),
// and only that node announces it.
import { Redis } from 'ioredis';

// The whole set expires two windows after the last heartbeat anywhere (it would be empty then).
// 0: was online; 1: was absent; 2: was expired but not yet removed (the caller announces the
// missed offline, then online). The score only moves forward.
const TOUCH = `
local old = redis.call('ZSCORE', KEYS[1], ARGV[1])
if old == false or tonumber(old) < tonumber(ARGV[2]) then redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
if old == false then return 1 end
if tonumber(old) <= tonumber(ARGV[3]) then return 2 end
return 0`;

// Removes one resident if its expiry has passed; 1 when this call removed it.
const EXPIRE = `
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s ~= false and tonumber(s) <= tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0`;

// Removes up to ARGV[2] expired residents (those whose node died) and returns them.
const SWEEP = `
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
if #ids > 0 then redis.call('ZREM', KEYS[1], unpack(ids)) end
return ids`;

type Scripted = Redis & {
  presenceTouch(key: string, id: number, expiry: number, now: number, keyTtl: number): Promise<number>;
  presenceExpire(key: string, id: number, now: number): Promise<number>;
  presenceSweep(key: string, now: number, limit: number): Promise<string[]>;
};

export type TouchResult = 'was_online' | 'new' | 'was_expired';

export class RedisPresence {
  private readonly redis: Scripted;
  private readonly key: string;

  constructor(url: string, prefix: string) {
    const redis = new Redis(url, { maxRetriesPerRequest: 2, enableAutoPipelining: true, commandTimeout: 1000 });
    redis.defineCommand('presenceTouch', { numberOfKeys: 1, lua: TOUCH });
    redis.defineCommand('presenceExpire', { numberOfKeys: 1, lua: EXPIRE });
    redis.defineCommand('presenceSweep', { numberOfKeys: 1, lua: SWEEP });
    // Faults are seen through the commands' failures (residents.ts falls back to this node's view).
    redis.on('error', () => {});
    this.redis = redis as Scripted;
    this.key = `${prefix}presence:online`;
  }

  /** Connected: commands are sent (otherwise callers use the node's own view at once instead of
   * waiting out reconnection attempts). */
  get ready(): boolean {
    return this.redis.status === 'ready';
  }

  async touch(id: number, expiry: number, now: number): Promise<TouchResult> {
    const r = await this.redis.presenceTouch(this.key, id, expiry, now, 2 * (expiry - now));
    return r === 1 ? 'new' : r === 2 ? 'was_expired' : 'was_online';
  }

  async expire(id: number, now: number): Promise<boolean> {
    return (await this.redis.presenceExpire(this.key, id, now)) === 1;
  }

  async sweep(now: number, limit = 500): Promise<number[]> {
    return (await this.redis.presenceSweep(this.key, now, limit)).map(Number);
  }

  async count(now: number): Promise<number> {
    return this.redis.zcount(this.key, `(${now}`, '+inf');
  }

  async isOnline(id: number, now: number): Promise<boolean> {
    const s = await this.redis.zscore(this.key, String(id));
    return s !== null && Number(s) > now;
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
