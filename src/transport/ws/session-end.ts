// Ending stream sessions whose credential died (DECISIONS.md "Identities and numbers": a rotated,
// recovered or revoked token ends the sessions it opened, on every node, within a second, with
// 1008). Three ways reach a session: the token change announced on the bus (every node), the
// check before each op that acts (dispatch.ts: an op never runs on a token HTTP would refuse),
// and a sweep that re-checks every member session once a ping period (a change whose bus message
// was lost, e.g. while Redis was down).
import { memberOfTokenHashes } from '../../domain/identity.js';
import type { Ctx } from '../../domain/ports.js';
import { TOKENS_TOPIC, type TokenChange } from '../../domain/token-cache.js';
import type { Socket } from './session.js';

/** The close reason of a session whose token an op or the sweep found dead. */
export const DEAD_TOKEN_REASON = 'token no longer valid';

export class SessionEnds {
  private readonly pending = new Map<Socket, [number, string]>();
  private readonly unsubscribe: () => void;
  private checking = false;

  constructor(
    private readonly ctx: Ctx,
    private readonly sockets: ReadonlySet<Socket>,
  ) {
    this.unsubscribe = ctx.bus.subscribe(TOKENS_TOPIC, (m) => {
      const change = m.data as TokenChange | null;
      if (change?.identity_id !== undefined) this.changed(change);
    });
  }

  /** Every session of the identity opened with a token other than the one it keeps ends. */
  private changed(change: TokenChange): void {
    for (const ws of this.sockets) {
      const s = ws.getUserData();
      if (s.caller.kind === 'member' && s.caller.member.id === change.identity_id && s.memberKey !== change.keep) {
        this.end(ws, 1008, change.reason);
      }
    }
  }

  /**
   * Ends one session. It stops at once (no frame is sent to it and no op of it runs from here on:
   * `open` is false), and its close is written on the next turn of the loop (setImmediate),
   * outside every uWS callback, inside that socket's own cork. A bus message can arrive while uWS
   * is inside another socket's callback (the local bus delivers synchronously to the publisher's
   * stack); closing there once shut an unrelated session (1006).
   */
  end(ws: Socket, code: number, reason: string): void {
    const s = ws.getUserData();
    if (!s.open) return;
    s.open = false;
    if (this.pending.size === 0) setImmediate(() => this.flush());
    this.pending.set(ws, [code, reason]);
  }

  private flush(): void {
    const due = [...this.pending];
    this.pending.clear();
    for (const [ws, [code, reason]] of due) {
      // A socket the peer closed meanwhile is gone from the set (and may not be touched).
      if (this.sockets.has(ws)) ws.cork(() => ws.end(code, reason));
    }
  }

  /** Re-checks every open member session's token in one query; ends those it no longer names. */
  async recheck(): Promise<void> {
    if (this.checking) return;
    const members = [...this.sockets].filter((ws) => {
      const s = ws.getUserData();
      return s.open && s.caller.kind === 'member' && s.caller.tokenHash !== undefined;
    });
    if (members.length === 0) return;
    this.checking = true;
    try {
      const hashes = members.map((ws) => (ws.getUserData().caller as { tokenHash: Buffer }).tokenHash);
      const rows = await memberOfTokenHashes(this.ctx, hashes);
      members.forEach((ws, i) => {
        const c = ws.getUserData().caller;
        if (c.kind === 'member' && rows[i]?.id !== c.member.id && this.sockets.has(ws)) this.end(ws, 1008, DEAD_TOKEN_REASON);
      });
    } catch (err) {
      // The database is out: the next sweep tries again; ops are refused by their own checks.
      this.ctx.log.warn({ err }, 'stream: re-checking session tokens failed');
    } finally {
      this.checking = false;
    }
  }

  close(): void {
    this.unsubscribe();
  }
}
