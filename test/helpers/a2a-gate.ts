// The A2A half of the contract gate: answers checked against the official SDK's protocol types
// (@a2a-js/sdk, generated from the A2A 1.0 definitions). A value conforms when the SDK's decoder
// and encoder carry it over unchanged: a field the types do not know, or one of the wrong type,
// does not survive the round trip.
import { isDeepStrictEqual } from 'node:util';
import { AgentCard, SendMessageResponse } from '@a2a-js/sdk';
import { isLegacyAgentCard, parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { AGENT_CARD_PATH, LEGACY_AGENT_CARD_PATH } from '../../src/transport/documents/agent-card.js';
import { A2A_PATH } from '../../src/transport/paths.js';

/** Top-level card fields that 0.3 clients read; not part of the 1.0 types (DECISIONS.md "Protocol specifics"). */
const V03_CARD_FIELDS = ['url', 'protocolVersion', 'preferredTransport'];

function roundTrips(codec: { fromJSON(o: unknown): unknown; toJSON(m: never): unknown }, value: unknown): boolean {
  return isDeepStrictEqual(codec.toJSON(codec.fromJSON(value) as never), value);
}

function rpcMethod(requestBody: unknown): string | null {
  if (typeof requestBody !== 'string') return null;
  try {
    const m = (JSON.parse(requestBody) as { method?: unknown }).method;
    return typeof m === 'string' ? m : null;
  } catch {
    return null;
  }
}

/** Checks one A2A answer (the agent card, or a 1.0 SendMessage result); empty when it conforms. */
export function checkA2a(pathname: string, status: number, requestBody: unknown, body: unknown): string[] {
  if (status !== 200 || body === null || typeof body !== 'object') return [];
  if (pathname === LEGACY_AGENT_CARD_PATH) {
    // The 0.3 card: what the SDK's 0.3 compatibility layer recognises and translates.
    if (!isLegacyAgentCard(body)) return [`GET ${pathname}: not recognised as an A2A 0.3 card: ${JSON.stringify(body).slice(0, 200)}`];
    try {
      const core = parseLegacyAgentCard(body as never);
      return roundTrips(AgentCard, AgentCard.toJSON(core)) ? [] : [`GET ${pathname}: the 0.3 card does not translate to a 1.0 AgentCard`];
    } catch (err) {
      return [`GET ${pathname}: the 0.3 parser refuses the card: ${(err as Error).message}`];
    }
  }
  if (pathname === AGENT_CARD_PATH) {
    const v1 = Object.fromEntries(Object.entries(body).filter(([k]) => !V03_CARD_FIELDS.includes(k)));
    return roundTrips(AgentCard, v1) ? [] : [`GET ${pathname}: the card is not an A2A 1.0 AgentCard: ${JSON.stringify(v1).slice(0, 200)}`];
  }
  if (pathname === A2A_PATH && rpcMethod(requestBody) === 'SendMessage') {
    const result = (body as { result?: unknown }).result;
    if (result === undefined) return [];
    return roundTrips(SendMessageResponse, result)
      ? []
      : [`POST ${pathname} SendMessage: the result is not an A2A 1.0 SendMessageResponse: ${JSON.stringify(result).slice(0, 200)}`];
  }
  return [];
}
