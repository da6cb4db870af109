// The deposit verifier (DESIGN.md "Actors"; DECISIONS.md "Treasury and deposits"). Durable: what
// is due lives in the database (next_check_at, attempts), so a restart neither loses nor repeats a
// check, and several nodes share the work (leases taken with FOR UPDATE SKIP LOCKED).
import type { Asset } from '../domain/amounts.js';
import type { ChainChecker, SenderProof } from '../domain/chain.js';
import { senderProofOf } from '../domain/deposits.js';
import { countDbError } from '../domain/metrics.js';
import type { Ctx } from '../domain/ports.js';
import { applyCheck, type CheckOutcome } from '../domain/verification.js';
import { walletsOf } from '../domain/wallets.js';
import { leaseDue } from '../store/deposits.js';
import { btcChecker } from '../transport/chain/btc.js';
import { ethChecker } from '../transport/chain/eth.js';
import { type Actor, ActorLoop } from './loop.js';

// How often due deposits are looked for (DEPOSIT_POLL_MS, 5 s; their own backoff, 15 s .. 10 min,
// spaces the checks), and how long a leased deposit is left alone (DEPOSIT_LEASE_MS, 2 min): a
// verifier that died mid-check is taken over after it.
const BATCH = 10;
const MAX_BATCHES = 50;

export interface DepositVerifier extends Actor {
  /** Checks every deposit due now (by ctx.clock); resolves with how many were checked. */
  runDue(): Promise<number>;
}

/** The verifier an app runs (tests call its runDue instead of waiting). */
export function depositVerifierOf(app: { actors: { deposits: DepositVerifier | null } }): DepositVerifier | undefined {
  return app.actors.deposits ?? undefined;
}

function checkersFor(ctx: Ctx): Partial<Record<Asset, ChainChecker>> {
  const w = walletsOf(ctx.config);
  const out: Partial<Record<Asset, ChainChecker>> = {};
  const { eth, btc } = ctx.config;
  if (w.ETH.address && eth.rpcUrl) {
    out.ETH = ethChecker({ rpcUrl: eth.rpcUrl, chainId: eth.chainId, minConfirmations: eth.minConfirmations, treasury: w.ETH.address });
  }
  if (w.BTC.address && btc.esploraUrl) {
    out.BTC = btcChecker({ esploraUrl: btc.esploraUrl, minConfirmations: btc.minConfirmations, treasury: w.BTC.address });
  }
  return out;
}

export function createDepositVerifier(ctx: Ctx, opts: { pollMs?: number | null } = {}): DepositVerifier {
  const checkers = checkersFor(ctx);

  async function check(asset: Asset, txHash: string, proof: SenderProof | undefined): Promise<CheckOutcome> {
    const checker = checkers[asset];
    if (!checker) return { kind: 'error', message: `${asset} verification is not configured` };
    try {
      return await checker.check(txHash, proof);
    } catch (err) {
      // The peer is down or answered garbage: nothing is verified, the deposit waits (backoff).
      return { kind: 'error', message: err instanceof Error ? err.message : String(err) };
    }
  }

  async function once(signal: AbortSignal): Promise<number> {
    ctx.metrics.schedulerTicks.inc({ scheduler: 'deposit_verifier' });
    try {
      return await leaseAndCheck(signal);
    } catch (err) {
      countDbError(ctx.metrics, err);
      throw err;
    }
  }

  async function leaseAndCheck(signal: AbortSignal): Promise<number> {
    let checked = 0;
    for (let i = 0; i < MAX_BATCHES && !signal.aborted; i++) {
      const now = ctx.clock.now();
      const rows = await leaseDue(ctx.sql, now, new Date(now.getTime() + ctx.config.depositLeaseMs), BATCH);
      await Promise.all(rows.map(async (row) => applyCheck(ctx, row, await check(row.asset, row.tx_hash, senderProofOf(row)))));
      checked += rows.length;
      if (rows.length < BATCH) break;
    }
    return checked;
  }

  // One run at a time per node: a runDue() call waits for the run in progress, then runs.
  const pollMs = opts.pollMs === undefined ? ctx.config.depositPollMs : opts.pollMs;
  const loop = new ActorLoop(ctx, { name: 'deposit-verifier', pass: once, next: () => pollMs, first: pollMs }).start();

  return {
    name: 'deposit-verifier',
    runDue: () => loop.run(),
    async stop() {
      await loop.stop();
      for (const c of Object.values(checkers)) c.close();
    },
  };
}
