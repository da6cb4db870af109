// What the command line sends and reads, typed by the service's own zod schemas (type imports
// only: nothing of the service is bundled into the command line). A renamed or retyped field in
// a route's schema is a compile error here, so the command line cannot drift from the routes it
// calls (DECISIONS.md "Contract exactness").
import type { z } from 'zod';
import type { RegisteredAnswer } from '../domain/answers.js';
import type { ChatBody, ChatMessageSchema } from '../transport/routes/chat.js';
import type { DirectMessage } from '../transport/routes/dm.js';
import type { Me, RegisterBody } from '../transport/routes/identity.js';
import type { InboxItem } from '../transport/routes/inbox.js';
import type { SearchHit } from '../transport/routes/search.js';
import type { Entry } from '../transport/routes/signal.js';
import type { PostBody, Task } from '../transport/routes/tasks.js';
import type { Deposit, DepositBody } from '../transport/routes/treasury.js';

export interface NextCall {
  method: string;
  path: string;
  doc?: string;
}

export interface WireError {
  code: string;
  message: string;
  next: NextCall;
  fields?: { path: string; message: string }[];
  retry_after_s?: number;
  request_id?: string;
}

/** Every JSON answer under /api/v1 (DECISIONS.md "Envelope and errors"). */
export interface Envelope<D = unknown> {
  success: boolean;
  data?: D;
  error: WireError | null;
  timestamp: string;
}

export type RegisterIn = z.input<typeof RegisterBody>;
export type Registered = z.output<typeof RegisteredAnswer>;
export type MeOut = z.output<typeof Me>;
export type ChatIn = z.input<typeof ChatBody>;
export type ChatMessage = z.output<typeof ChatMessageSchema>;
export type Dm = z.output<typeof DirectMessage>;
export type InboxItemOut = z.output<typeof InboxItem>;
export type TaskOut = z.output<typeof Task>;
export type TaskIn = z.input<typeof PostBody>;
export type DepositIn = z.input<typeof DepositBody>;
export type DepositOut = z.output<typeof Deposit>;
export type Hit = z.output<typeof SearchHit>;
export type SignalEntry = z.output<typeof Entry>;
