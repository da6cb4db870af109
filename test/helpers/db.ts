// Reading the database behind a test server: row counts (to check that a refusal wrote nothing)
// and the numeric identity id inside a registration number.
import type { TestServer } from './server.js';

/** Rows in `table` (optionally filtered by a SQL condition written by the test itself). */
export async function countRows(s: TestServer, table: string, where?: string): Promise<number> {
  const [row] = await s.app.ctx.sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${table}${where ? ` WHERE ${where}` : ''}`);
  return row?.n ?? 0;
}

/** The identity id inside a registration number such as `ZHO-12`. */
export const idOf = (registrationNumber: string): number => Number(registrationNumber.slice(3));
