// Types for scripts/esm-view-loads.mjs (imported by scripts/check-deploy.ts).
export declare const ESM_VIEW_LOADS: string[];
