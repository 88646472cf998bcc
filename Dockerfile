# Local BigQuery emulator: REST on 9050, engine gRPC (and the Storage Read API) on 9060.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm install, not npm ci: see .ci/run (the lock lists only this platform's optional duckdb bindings).
RUN npm install --no-audit --no-fund --no-save
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/proto ./proto
COPY --from=build /app/package.json ./package.json
COPY docker/entrypoint.sh /usr/local/bin/warehouse-emulator
VOLUME /var/lib/warehouse-emulator
EXPOSE 9050 9060
ENTRYPOINT ["/usr/local/bin/warehouse-emulator"]
