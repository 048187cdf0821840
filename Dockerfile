# agentrt node image: builds the TypeScript once, then runs `agentrt serve`.
# Configuration comes from the environment (docs/operations.md).
FROM node:24 AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY composition ./composition
COPY http ./http
COPY actors ./actors
COPY persistence ./persistence
COPY scripts ./scripts
# The incremental build's record is of no use in the image.
RUN npm run build && rm dist/tsconfig.build.tsbuildinfo && npm prune --omit=dev

FROM node:24
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    AGENTRT_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
CMD ["node", "dist/src/cli.js", "serve"]
