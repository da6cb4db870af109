// Values built once per version of what they show (DESIGN.md "Reads are built once per change"): a serialized page of the
// chat is built when the chat changes, not per request. Node-local, on the context
// (ctx.services.memo), so every reader of a node shares one copy and a test's context gets its own.

export class VersionedMemo {
  private readonly entries = new Map<string, { version: number; value: unknown }>();
  /** The entry last read (a hot read asks for one key over and over: no lookup). */
  private lastKey: string | null = null;
  private last: { version: number; value: unknown } | undefined;

  /** The value stored under `key` for exactly this version, if any. */
  get<T>(key: string, version: number): T | undefined {
    let e = this.last;
    if (key !== this.lastKey) {
      e = this.entries.get(key);
      this.lastKey = key;
      this.last = e;
    }
    return e && e.version === version ? (e.value as T) : undefined;
  }

  /** Stores a value built from what `version` names (read before the value was built). */
  set(key: string, version: number, value: unknown): void {
    // Keys are few (a route and its page size); a bound keeps a caller varying limits harmless.
    if (this.entries.size >= 256 && !this.entries.has(key)) this.entries.clear();
    this.entries.set(key, { version, value });
    this.lastKey = null;
    this.last = undefined;
  }
}
