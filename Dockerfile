# syntax=docker/dockerfile:1
# Local BigQuery emulator (spec §1.4): REST on 9050, engine gRPC (Storage Read/Write API) on 9060.
# The image installs the same npm tarball users get (`npm pack`), so what runs
# here is what `npx warehouse-emulator` runs. linux/amd64 only (spec §1.4.1).
#   docker build --platform linux/amd64 -t warehouse-emulator .
#   docker run --rm -p 9050:9050 -p 9060:9060 warehouse-emulator [gateway flags...]
# Local files for load/extract jobs, LOAD DATA and friends: /data (the entrypoint's
# --local-files default), e.g. -v "$PWD/fixtures:/data", then file:///data/x.csv.

FROM --platform=linux/amd64 node:20.20-bookworm-slim AS pack
WORKDIR /src
COPY package.json package-lock.json ./
# npm install, not npm ci: see .ci/run (the lock lists only one platform's optional duckdb bindings).
RUN npm install --no-audit --no-fund --ignore-scripts
COPY README.md tsconfig.json ./
COPY scripts ./scripts
COPY grammar ./grammar
COPY proto ./proto
COPY src ./src
# prepack builds dist/ (scripts/build.mjs --clean); the tarball holds only what runs.
RUN npm pack --pack-destination /tmp && mv /tmp/warehouse-emulator-*.tgz /tmp/warehouse-emulator.tgz

FROM --platform=linux/amd64 node:20.20-bookworm-slim
# python3 runs Python UDFs (CREATE FUNCTION ... LANGUAGE python).
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=pack /tmp/warehouse-emulator.tgz /tmp/warehouse-emulator.tgz
# isolated-vm (JavaScript UDF isolates; an optional peer of the package) is compiled
# here by node-gyp, never fetched prebuilt; the compilers go again in the same layer.
RUN apt-get update \
    && apt-get install -y --no-install-recommends make g++ \
    && npm_config_build_from_source=true npm install --global --omit=dev --no-audit --no-fund /tmp/warehouse-emulator.tgz isolated-vm@5.0.4 \
    && apt-get purge -y --auto-remove make g++ \
    && rm -rf /var/lib/apt/lists/* \
    && rm /tmp/warehouse-emulator.tgz \
    && npm cache clean --force \
    && mkdir -p /var/lib/warehouse-emulator /data \
    && chown node:node /var/lib/warehouse-emulator /data
COPY docker/seed/public.yaml /usr/local/share/warehouse-emulator/seed/public.yaml
COPY scripts/smoke.mjs /usr/local/share/warehouse-emulator/smoke.mjs
COPY docker/entrypoint.sh /usr/local/bin/warehouse-emulator-entrypoint
USER node
WORKDIR /var/lib/warehouse-emulator
VOLUME /var/lib/warehouse-emulator
EXPOSE 9050 9060
HEALTHCHECK --interval=10s --timeout=10s --start-period=20s --retries=3 \
    CMD ["node", "/usr/local/share/warehouse-emulator/smoke.mjs", "http://127.0.0.1:9050"]
ENTRYPOINT ["/usr/local/bin/warehouse-emulator-entrypoint"]
