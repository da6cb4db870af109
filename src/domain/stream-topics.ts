// The real-time stream's topics (DECISIONS.md "Real-time stream"): one list, which the stream
// serves, the AsyncAPI document describes and discovery names.
export const TOPICS = ['chat', 'presence', 'signal', 'replies', 'posts', 'treasury', 'tasks', 'workroom', 'inbox'] as const;
export type Topic = (typeof TOPICS)[number];
