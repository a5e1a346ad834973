# syntax=docker/dockerfile:1
# The service's image: `docker build -t signal-engine .`, then `docker run -e DATABASE_URL=… signal-engine`.
# It needs an external PostgreSQL (DATABASE_URL): the embedded one is a development convenience
# and its binaries are left out. Node 24 runs the TypeScript sources as they are (no build step).
ARG NODE_VERSION=24.21.0

FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only, without the optional ones (the embedded PostgreSQL's platform
# binaries, the only packages with install scripts), so no install script runs.
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
COPY web ./web
COPY schemas ./schemas
# `signal-engine` on the PATH, so `docker compose exec engine-1 signal-engine admin …` works.
RUN ln -s /app/bin/signal-engine.js /usr/local/bin/signal-engine
# The base image's unprivileged user (uid 1000); the app's files stay root's, read-only to it.
USER node
EXPOSE 8080
# No curl in the slim image: Node asks /healthz (plain HTTP; terminate TLS in front of the service).
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 8080}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["signal-engine"]
CMD ["serve"]
