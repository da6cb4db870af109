// postgres.js sends `unsafe` statements unprepared unless told: each call is parsed, described and
// planned again by PostgreSQL, and its row description parsed again here (both costs showed in CPU
// profiles of task moves and chat writes). The statements of hot paths pass this to be prepared
// once per connection, as tagged statements are. Searches stay unprepared on purpose: each is
// planned for its own words (src/store/search.ts).
export const PREPARED = { prepare: true } as const;
