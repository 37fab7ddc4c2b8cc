import { describe, expect, it } from 'vitest';
import { AgentConfig, referencedSecrets, secretReferences } from '#contracts/agent';
import { canonicalJson, revisionOf } from '#core/revision';

const minimal = { model: { name: 'gpt-4.1', provider: { name: 'openai', credential: '{{secret:OPENAI}}' } } };

describe('agent configuration', () => {
  it('accepts a complete configuration and lists its secrets once each', () => {
    const config = AgentConfig.parse({
      ...minimal,
      tools: { web_search: { provider: 'searxng', url: 'http://127.0.0.1:8080' }, terminal: { timeout_seconds: 10 } },
      memory: { group: 'team', generation: ['agent'] },
      system_prompt: 'Be brief.',
      max_steps: 5,
      mcp_servers: [{ name: 'docs', url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer {{secret:MCP}} and {{secret:OPENAI}}' }, allowed_tools: [] }],
      output_format: { type: 'json_schema', schema: { type: 'object' } },
    });

    expect(referencedSecrets(config)).toEqual(['OPENAI', 'MCP']);
  });

  it.each([
    ['a missing model', {}, 'model'],
    ['an unknown tool', { ...minimal, tools: { browser: {} } }, 'browser'],
    ['a literal credential', { model: { name: 'm', provider: { name: 'openai', credential: 'sk-live-123' } } }, 'secret reference'],
    ['a malformed credential reference', { model: { name: 'm', provider: { name: 'openai', credential: '{{secret:bad name}}' } } }, 'secret reference'],
    ['a malformed header reference', { ...minimal, mcp_servers: [{ name: 'a', url: 'http://x', headers: { h: '{{ secret:X}}' } }] }, 'malformed secret reference'],
    ['an MCP server without url', { ...minimal, mcp_servers: [{ name: 'a' }] }, 'url'],
    ['an MCP server with a bad name', { ...minimal, mcp_servers: [{ name: 'a b', url: 'http://x' }] }, 'name'],
    ['duplicate MCP server names', { ...minimal, mcp_servers: [{ name: 'a', url: 'http://x' }, { name: 'a', url: 'http://y' }] }, 'unique'],
    ['an MCP url that is not http', { ...minimal, mcp_servers: [{ name: 'a', url: 'file:///etc/passwd' }] }, 'http'],
    ['max_steps above 200', { ...minimal, max_steps: 201 }, 'max_steps'],
    ['an unknown generation', { ...minimal, memory: { group: 'g', generation: ['always'] } }, 'generation'],
    ['an unknown output type', { ...minimal, output_format: { type: 'xml' } }, 'output_format'],
    ['a credential for bedrock', { model: { name: 'm', provider: { name: 'bedrock', credential: '{{secret:AWS}}' } } }, 'bedrock takes no credential'],
    ['a url for bedrock', { model: { name: 'm', provider: { name: 'bedrock', url: 'https://bedrock.example.com' } } }, 'bedrock takes no url'],
  ])('refuses %s', (_case, input, hint) => {
    const result = AgentConfig.safeParse(input);

    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error!.issues)).toContain(hint);
  });

  it('accepts bedrock with neither credential nor url, and the others with both', () => {
    expect(AgentConfig.safeParse({ model: { name: 'm', provider: { name: 'bedrock' } } }).success).toBe(true);
    const elsewhere = { credential: '{{secret:K}}', url: 'https://models.example.com' };
    expect(AgentConfig.safeParse({ model: { name: 'm', provider: { name: 'anthropic', ...elsewhere } } }).success).toBe(true);
  });

  it('finds references embedded in text and refuses near-misses', () => {
    expect(secretReferences('Bearer {{secret:A.b-c_1}}')).toEqual(['A.b-c_1']);
    expect(secretReferences('no references here')).toEqual([]);
    expect(() => secretReferences('{{secret:A}')).toThrow(/malformed/);
    expect(() => secretReferences('{{secret:}}')).toThrow(/malformed/);
  });
});

describe('revisionOf', () => {
  it('is the same for the same configuration whatever the key order', () => {
    const a = { model: { name: 'm', provider: { name: 'openai' } }, max_steps: 3 };
    const b = { max_steps: 3, model: { provider: { name: 'openai' }, name: 'm' } };

    expect(revisionOf(a)).toBe(revisionOf(b));
    expect(revisionOf(a)).toMatch(/^[0-9a-f]{16}$/);
    expect(canonicalJson(b)).toBe('{"max_steps":3,"model":{"name":"m","provider":{"name":"openai"}}}');
  });

  it('differs for different configurations', () => {
    expect(revisionOf({ max_steps: 3 })).not.toBe(revisionOf({ max_steps: 4 }));
  });
});
