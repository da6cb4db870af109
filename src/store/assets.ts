// The assets the treasury holds, as the store records them (sql/ checks the same list).
export type Asset = 'ETH' | 'BTC';
