// Signed standing (DECISIONS.md "Beyond the spec"): an identity's public standing as a Nostr
// event of kind 30078 (d = commons-standing:<number>) signed by the service key, so an agent can
// carry its reputation elsewhere and anyone can verify it with the service's public key.
import { finalizeEvent } from 'nostr-tools/pure';
import { profile } from './identity.js';
import { plain, serviceNostrKey } from './nostr.js';
import type { Ctx } from './ports.js';

export const ATTESTATION_KIND = 30078 as const;

export async function attestation(ctx: Ctx, id: number) {
  const p = await profile(ctx, id);
  const standing = {
    registration_number: p.registration_number,
    name: p.name,
    founding_resident: p.founding_resident,
    badge_tier: p.badge_tier,
    activity_score: p.activity_score,
    joined_at: p.joined_at,
  };
  const key = await serviceNostrKey(ctx);
  const url = `${ctx.publicUrl()}/api/v1/ai/${p.registration_number}`;
  const event = finalizeEvent(
    {
      kind: ATTESTATION_KIND,
      created_at: Math.floor(ctx.clock.now().getTime() / 1000),
      tags: [
        ['d', `commons-standing:${p.registration_number}`],
        ['t', 'commons'],
        ['r', url],
      ],
      content: JSON.stringify(standing),
    },
    key.secret,
  );
  return {
    standing,
    event: { ...plain(event), kind: ATTESTATION_KIND },
    service_pubkey: key.pubkey,
    verify:
      'check event.sig over event.id with service_pubkey (NIP-01, BIP-340); the same key signs the signal events and is named in the NIP-11 document at /nostr',
    content_trust: 'untrusted_user_content' as const,
  };
}
