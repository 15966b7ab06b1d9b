# Quire: one image for every role (`serve`, `serve --no-worker`, `worker`), chosen by the command.
# Debian bookworm, because LibreOffice, poppler and the fonts come from Debian's packages.

# Dependencies are installed in the full image, which has the compilers native modules
# (better-sqlite3, sharp) fall back to when no prebuilt binary matches.
FROM node:20-bookworm AS deps
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/
COPY src ./src
# Every dependency, so that npm ci's `prepare` compiles src/ into dist/ (tsc); then the development
# ones are dropped. The image runs dist/ only: no process pays the TypeScript compiler at start.
RUN npm ci && npm prune --omit=dev && npm cache clean --force

FROM node:20-bookworm-slim
WORKDIR /app

# LibreOffice (headless: Writer, Impress, Calc, Draw), python3-uno, poppler-utils, Tesseract with its
# language data, bubblewrap (the converters' sandbox) and the fonts faithful conversion needs: the
# packages scripts/install-system-deps.sh installs on a developer's machine, but Chromium, which
# only the browser tests use (with its libraries, about 600 MB of the image).
# scripts/check-image.ts checks that the two lists agree. util-linux has unshare and prlimit.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libreoffice-writer-nogui libreoffice-impress-nogui libreoffice-calc-nogui libreoffice-draw-nogui \
      python3-uno poppler-utils bubblewrap \
      tesseract-ocr tesseract-ocr-osd tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-fra tesseract-ocr-spa \
      tesseract-ocr-ita tesseract-ocr-por \
      fonts-dejavu fonts-liberation2 fonts-crosextra-carlito fonts-crosextra-caladea fonts-noto-core fonts-noto-cjk \
      util-linux ca-certificates \
 && rm -rf /var/lib/apt/lists/*

COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/dist ./dist
COPY package.json package-lock.json ./
COPY bin ./bin

# Quire runs as an unprivileged user of its own, owning only /data; its converters run further
# confined, in bubblewrap (uid 65534 in a user namespace of their own: see src/convert/sandbox.ts).
RUN useradd --system --uid 10001 --user-group --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin quire \
 && mkdir -p /data && chown quire:quire /data

ENV NODE_ENV=production \
    QUIRE_HOST=0.0.0.0 \
    QUIRE_PORT=8080 \
    QUIRE_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8080

# Liveness of the API; a worker container overrides it with its QUIRE_METRICS_PORT (see compose.yaml).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.QUIRE_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"

# Not root. A worker builds each converter's sandbox with bubblewrap, which needs user namespaces:
# Docker's default seccomp profile allows them only to a container granted CAP_SYS_ADMIN (the worker
# service in compose.yaml; `docker run --cap-add SYS_ADMIN …` for the default `serve`, which runs a
# worker too). The capability stays in the bounding set only: a non-root process does not hold it.
# Without it the worker refuses to start (QUIRE_UNSAFE_NO_SANDBOX=1 overrides, unsafely).
USER quire
# With the flags of bin/node-flags.js, as `quire` and `npm start` give them (docs/scaling.md, "Operating notes").
ENTRYPOINT ["node", "--min-semi-space-size=16", "bin/quire.js"]
CMD ["serve"]
