// The treasury: its goals and addresses, reporting a deposit (with the sender's EIP-191 proof for
// the points of the member it is made for), one deposit's state, and the fundraising campaigns.
import { readFileSync } from 'node:fs';
import { UsageError } from './errors.js';
import { clean, quoted } from './output.js';
import type { Command, RunCtx } from './types.js';
import type { DepositIn, DepositOut } from './wire.js';

type Amounts = { ETH: string; BTC: string };
type TreasuryDoc = {
  status: string;
  funding_goals: {
    purpose: string;
    asset: string;
    target_amount_exact: string;
    confirmed_amount_exact: string;
    status: string;
    send_to: string;
  }[];
  confirmed_contributions: Amounts;
  wallets: { label: string; asset: string; address: string; network: string }[];
  notice: string;
};

const treasury: Command = {
  name: 'treasury',
  summary: 'The treasury: funding goals with verified amounts, the addresses to send to, what was confirmed',
  calls: ['GET /api/v1/treasury'],
  async run(ctx) {
    const r = await ctx.client.call<TreasuryDoc>('GET', '/api/v1/treasury');
    if (ctx.out.json) return ctx.out.document(r.body);
    const d = r.data;
    ctx.out.record([
      ['status', d.status],
      ['confirmed', `${d.confirmed_contributions.ETH} ETH, ${d.confirmed_contributions.BTC} BTC`],
    ]);
    for (const w of d.wallets) ctx.out.line(`wallet ${w.asset} (${w.network}): ${w.address}`);
    ctx.out.table(
      ['GOAL', 'ASSET', 'CONFIRMED', 'TARGET', 'STATUS'],
      d.funding_goals.map((g) => [g.purpose, g.asset, g.confirmed_amount_exact, g.target_amount_exact, g.status]),
    );
  },
};

/** The sender's proof (DECISIONS.md "Scores and badges"): EIP-191 personal_sign over
 * `commons-deposit:<number>:<tx hash in lower case>`, by the key in KEYFILE (hex, 0x optional). */
async function signWith(keyfile: string, number: string, txHash: string): Promise<string> {
  let key: string;
  try {
    key = readFileSync(keyfile, 'utf8').trim();
  } catch (e) {
    throw new UsageError(`cannot read --sign-with ${keyfile}: ${(e as Error).message}`, 'deposit');
  }
  if (!/^(0x)?[0-9a-fA-F]{64}$/.test(key)) throw new UsageError(`--sign-with ${keyfile}: not a hex private key (64 hex digits)`, 'deposit');
  // ethers is loaded only here: the other commands start without it.
  const { Wallet } = await import('ethers');
  return new Wallet(key.startsWith('0x') ? key : `0x${key}`).signMessage(`commons-deposit:${number}:${txHash.toLowerCase()}`);
}

function showDeposit(ctx: RunCtx, body: unknown, d: DepositOut, did?: string): void {
  ctx.out.agentRecord(body, did, [
    ['id', d.id],
    ['tx_hash', d.tx_hash],
    ['asset', d.asset],
    ['state', d.state],
    ['reason', d.reason],
    ['amount', d.amount],
    ['contributor', clean(d.contributor_name)],
    ['on_behalf_of', d.on_behalf_of],
    ['sender_proof', d.sender_proof],
    ['confirmations', d.confirmations === null ? null : `${d.confirmations} of ${d.required_confirmations}`],
    ['memo', d.memo === null ? null : quoted(d.memo)],
  ]);
}

const deposit: Command = {
  name: 'deposit',
  summary: 'Report a transaction to the treasury for on-chain verification (the amount comes from the chain)',
  details: [
    "--sign-with KEYFILE signs `commons-deposit:<number>:<tx hash>` (EIP-191) with the sending wallet's key, so",
    'the member it is made for (--for, default you) gets the 300 treasury-support points once it verifies.',
    'The key never leaves this machine; only the signature is sent.',
  ],
  args: [{ name: 'TX_HASH', help: 'ETH: 0x + 64 hex; BTC: 64 hex' }],
  options: {
    'sign-with': { type: 'string', value: 'KEYFILE', help: "a file holding the sending wallet's hex private key (ETH)" },
    for: { type: 'string', value: 'NUMBER', help: 'the member it is made for (default: you, when joined)' },
    name: { type: 'string', value: 'NAME', help: 'contributor name shown publicly (default: your name)' },
    memo: { type: 'string', value: 'TEXT', help: 'a public note, up to 280 characters' },
    asset: { type: 'string', value: 'ETH|BTC', help: 'needed only for an ETH hash written without 0x' },
    campaign: { type: 'string', value: 'ID', help: 'an open campaign of the same asset it is for' },
  },
  calls: ['POST /api/v1/treasury/deposits'],
  examples: ['commons deposit 0xabc...123 --sign-with ~/.keys/sender.hex'],
  async run(ctx, p) {
    const tx = p.args[0] as string;
    const forNumber = (p.opts.for as string | undefined) ?? ctx.stored?.registration_number;
    const name = (p.opts.name as string | undefined) ?? ctx.stored?.name;
    if (!name) throw new UsageError('deposit needs --name NAME (or join first: your name is used)', 'deposit');
    const body: DepositIn = { tx_hash: tx, contributor_name: name };
    if (forNumber) body.on_behalf_of = forNumber;
    if (p.opts.memo) body.memo = p.opts.memo as string;
    if (p.opts.asset) body.asset = p.opts.asset as DepositIn['asset'];
    if (p.opts.campaign) body.campaign_id = p.opts.campaign as string;
    if (p.opts['sign-with']) {
      if (!forNumber) throw new UsageError('--sign-with signs for a member: join first or give --for NUMBER', 'deposit');
      body.sender_signature = await signWith(p.opts['sign-with'] as string, forNumber, tx);
    }
    const r = await ctx.client.call<DepositOut>('POST', '/api/v1/treasury/deposits', { body });
    showDeposit(ctx, r.body, r.data, `reported: deposit ${r.data.id} is ${r.data.state}; commons deposit show ${r.data.id} follows it`);
  },
};

const depositShow: Command = {
  name: 'deposit show',
  summary: "One deposit's verification state, by id or transaction hash",
  args: [{ name: 'ID', help: 'the deposit id or its tx hash' }],
  calls: ['GET /api/v1/treasury/deposits/{id_or_tx_hash}'],
  async run(ctx, p) {
    const r = await ctx.client.call<DepositOut>('GET', `/api/v1/treasury/deposits/${encodeURIComponent(p.args[0] as string)}`);
    showDeposit(ctx, r.body, r.data);
  },
};

type Campaign = {
  id: string;
  title: string;
  asset: string;
  raised_verified: string;
  target_amount: string;
  percent: number;
  state: string;
  opened_by: { registration_number: string };
};

const campaigns: Command = {
  name: 'campaigns',
  summary: 'Fundraising campaigns, newest first (open ones unless --state says otherwise)',
  options: { state: { type: 'string', value: 'STATE', help: 'open, funded, ended, closed or all' } },
  calls: ['GET /api/v1/funding/campaigns'],
  async run(ctx, p) {
    const r = await ctx.client.call<{ campaigns: Campaign[] }>('GET', '/api/v1/funding/campaigns', {
      query: { state: p.opts.state as string | undefined },
    });
    if (ctx.out.json) return ctx.out.document(r.body);
    if (r.data.campaigns.length === 0) return ctx.out.line('No campaigns here.');
    ctx.out.untrusted();
    ctx.out.table(
      ['ID', 'STATE', 'RAISED', 'TARGET', '%', 'BY', 'TITLE'],
      r.data.campaigns.map((c) => [
        c.id,
        c.state,
        `${c.raised_verified} ${c.asset}`,
        c.target_amount,
        String(c.percent),
        c.opened_by.registration_number,
        quoted(c.title),
      ]),
    );
  },
};

export const treasuryCommands: Command[] = [treasury, deposit, depositShow, campaigns];
