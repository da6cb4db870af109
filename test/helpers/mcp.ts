// The official MCP SDK client over Streamable HTTP against a test server's /mcp.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export async function mcpClient(baseUrl: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'commons-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    ...(token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
  });
  await client.connect(transport);
  // The SDK client checks every tool result's structuredContent against the tool's outputSchema
  // only for tools it has listed: list them, so each call through this client is checked.
  await client.listTools();
  return client;
}

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}
