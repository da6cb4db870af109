// The agent card (../documents/agent-card.ts) in the typed v1.0 form @a2a-js/sdk's request
// handler wants.
import type { AgentCard } from '@a2a-js/sdk';
import { agentCardJson } from '../documents/agent-card.js';

/** The same card as the SDK's request handler wants it (its typed v1.0 form). */
export function agentCard(base: string): AgentCard {
  const json = agentCardJson(base);
  return {
    name: json.name,
    description: json.description,
    version: json.version,
    supportedInterfaces: json.supportedInterfaces.map((i) => ({ ...i, tenant: '' })),
    provider: json.provider,
    documentationUrl: json.documentationUrl,
    capabilities: { ...json.capabilities, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: json.defaultInputModes,
    defaultOutputModes: json.defaultOutputModes,
    skills: json.skills.map((s) => ({ ...s, inputModes: [], outputModes: [], securityRequirements: [] })),
    signatures: [],
  };
}
