/**
 * The conversation as the Messages and Converse APIs want it: strictly alternating user
 * and assistant turns of content blocks. Tool results are user content there, so
 * consecutive results (and anything else that lands on the same side) share one turn.
 */
import type { ConversationMessage } from '../types';

export type TurnBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; id: string; content: string };

export interface Turn {
  role: 'user' | 'assistant';
  blocks: TurnBlock[];
}

/**
 * A tool call's arguments as the object both APIs require. They are the JSON text the
 * same API produced, so anything else only comes from a model that wrote invalid JSON;
 * the tool's result already told it so, and an empty object keeps the history sendable.
 */
function argumentsObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function blocksOf(message: ConversationMessage): TurnBlock[] {
  switch (message.role) {
    case 'user':
      return message.content === '' ? [] : [{ type: 'text', text: message.content }];
    case 'tool':
      return [{ type: 'tool_result', id: message.tool_call_id, content: message.content }];
    case 'assistant':
      return [
        // Both APIs refuse empty text blocks; an empty answer is simply no block.
        ...(message.content ? [{ type: 'text' as const, text: message.content }] : []),
        ...(message.tool_calls ?? []).map((call) => ({ type: 'tool_use' as const, id: call.id, name: call.name, input: argumentsObject(call.arguments) })),
      ];
  }
}

/** Alternating turns; a message with nothing to send is left out and its neighbours merge. */
export function toTurns(messages: ConversationMessage[]): Turn[] {
  const turns: Turn[] = [];
  for (const message of messages) {
    const blocks = blocksOf(message);
    if (blocks.length === 0) continue;
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const last = turns.at(-1);
    if (last?.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  }
  return turns;
}
