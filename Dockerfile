# syntax=docker/dockerfile:1
# The commons service as a container image (docs/operations.md "Container"). Two stages: the
# build stage bundles the TypeScript into dist/ with the dev dependencies; the runtime stage holds
# dist/, sql/, public/ (the page's assets) and the production dependencies only, and runs as the
# unprivileged `node` user.
# test/deploy.test.ts runs this file's build, start and health-check command lines as plain
# processes, so they cannot rot. Install scripts are off: no dependency needs one (package.json
# allowScripts), and `prepare` would bundle a second time; so the postgres.js guard (our own
# postinstall, scripts/patch-postgres.mjs) is applied by hand before bundling, and
# `npm run check:deploy` refuses a dist/ whose bundled driver lacks it.
# The base is the supported runtime (DECISIONS.md "Runtime"): Node 24 on Debian 13, whose glibc
# (2.41) loads the current uWebSockets.js build; the 20.30 fallback is never used in the image.

FROM node:24.21.0-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm ci --ignore-scripts --no-audit --no-fund && node scripts/patch-postgres.mjs && npm run build

# Production dependencies in a stage of their own, so npm's download cache stays out of the image.
FROM node:24.21.0-trixie-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24.21.0-trixie-slim AS runtime
# pg_dump / pg_restore for `npm run backup` against PostgreSQL, from the same image.
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-client-17 \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
# One malloc arena for all the process's threads, as `npm start` runs it (package.json).
ENV MALLOC_ARENA_MAX=1
WORKDIR /app
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY sql ./sql
COPY public ./public
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 8080
# /healthz answers 200 while the process serves; readiness (/readyz) is the balancer's business.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
# Exec form: node is PID 1 and receives SIGTERM itself (src/main.ts drains and exits 0); run with
# `--init` (compose: `init: true`) so a reaper sits above it for the backup command's children.
# --liftoff-only: the embedded store's WebAssembly on the baseline compiler (src/store/pglite-worker.mjs);
# --max-semi-space-size=4 and MALLOC_ARENA_MAX=1 (above): the memory at rest (docs/operations.md "Memory").
# No --enable-source-maps: it keeps the bundle's maps (and, once a stack is formatted, their
# parsed form) for good; docs/operations.md "Memory at rest" says how to turn it on.
CMD ["node", "--liftoff-only", "--max-semi-space-size=4", "dist/main.js"]
