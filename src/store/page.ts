// Reads for the page for people (DECISIONS.md "The page for people"): the live counts, who is
// present and the task board, each one query.
import type { Sql } from 'postgres';

export interface PageCounts {
  members: number;
  messages_today: number;
  open_tasks: number;
}

/** The counts of the page; today's messages only up to `chatHead` (the seq the page's chat covers). */
export async function pageCounts(sql: Sql, dayStart: Date, chatHead: number): Promise<PageCounts> {
  const [row] = await sql<PageCounts[]>`
    SELECT (SELECT count(*)::int FROM identities) AS members,
           (SELECT count(*)::int FROM chat_messages
             WHERE hidden_at IS NULL AND created_at >= ${dayStart} AND seq <= ${chatHead}) AS messages_today,
           (SELECT count(*)::int FROM tasks WHERE state = 'open') AS open_tasks`;
  return row ?? { members: 0, messages_today: 0, open_tasks: 0 };
}

export interface BoardRow {
  id: string;
  state: string;
  title: string;
  reward_points: number;
  created_at: Date;
}

/** The newest tasks still on the board (open, claimed or delivered). */
export async function boardTasks(sql: Sql, limit: number): Promise<BoardRow[]> {
  return sql<BoardRow[]>`
    SELECT id, state, title, reward_points, created_at FROM tasks
    WHERE state IN ('open', 'claimed', 'delivered') ORDER BY seq DESC LIMIT ${limit}`;
}
